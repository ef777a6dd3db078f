/**
 * The real Claude Code CLI (pinned in support/agentClis.ts) running a LoopX heartbeat through MCP: the
 * project's `.mcp.json` names `loopx mcp`, and the scripted Anthropic API answers with `mcp__loopx__…` tool
 * calls (should_run with a turn id → todo_complete → refresh_state → spend_slot), in a loopback-only
 * network namespace. The turn commits with one spend, as the same heartbeat through the CLI (docs/mcp.md).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import {
  describeReport,
  LOOPX_CLI,
  loopxEnv,
  newWorkspace,
  runRows,
  scenario,
  steps,
  text,
  type Workspace,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'claude';
const MODEL = 'claude-sonnet-4-5';
const GOAL = 'tidy-notes';
const TURN = '2026-12-03T19:00:00Z';
const TOOLS = ['should_run', 'todo_complete', 'refresh_state', 'spend_slot'].map((tool) => `mcp__loopx__${tool}`);

function mcp(tool: string, input: Record<string, unknown>): ScriptedAnswer {
  return { kind: 'tool', name: `mcp__loopx__${tool}`, input };
}

function rolloutKinds(ws: Workspace): string[] {
  return readFileSync(join(ws.runtimeGoalDir, 'rollout-event-log.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => String((JSON.parse(line) as Record<string, unknown>)['event_kind']));
}

describe('Claude Code 2.1.197 runs a LoopX heartbeat over MCP (real CLI, scripted Anthropic API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('calls mcp__loopx__ tools from the project .mcp.json; the turn commits with one spend', async () => {
    const ws = newWorkspace(AGENT, { preset: 'claude-code', command: [agentClis().claude] });
    const mcpConfig = join(ws.project, '.mcp.json');
    writeFileSync(
      mcpConfig,
      `${JSON.stringify({ mcpServers: { loopx: { command: process.execPath, args: [LOOPX_CLI, 'mcp'] } } }, null, 2)}\n`,
    );
    const spent = (): number => runRows(ws).filter((row) => row['classification'] === 'quota_slot_spent').length;
    const spentBefore = spent();
    const bound = { goalId: GOAL, agentId: AGENT, turnInstanceId: TURN };
    const script = steps(
      // Claude Code connects MCP servers in the background; a model that calls a tool before says to wait.
      { kind: 'tool', name: 'WaitForMcpServers', input: {} },
      mcp('should_run', bound),
      mcp('todo_complete', {
        ...bound,
        todoId: 'todo_related',
        evidence: 'notes/related.md lists notes sharing a tag',
        successorText: 'Link the related notes from the index.',
      }),
      mcp('refresh_state', { ...bound, classification: 'validated_progress', deliveryOutcome: 'outcome_progress' }),
      mcp('spend_slot', { ...bound, source: 'heartbeat', execute: true }),
      text('Heartbeat done: todo_related completed, state recorded, one slot spent.'),
    );
    const report = await scenario(script, [
      {
        argv: [
          agentClis().claude,
          '-p',
          'Run one LoopX heartbeat turn for goal tidy-notes as agent claude.',
          '--model',
          MODEL,
          '--mcp-config',
          mcpConfig,
          '--allowedTools',
          [...TOOLS, 'WaitForMcpServers'].join(','),
          '--output-format',
          'json',
        ],
        cwd: ws.project,
        env: loopxEnv(ws, { ANTHROPIC_BASE_URL: '{{BASE_URL}}' }),
        timeoutMs: 180_000,
      },
    ]);
    const run = report.commands[0];
    assert.equal(run?.code, 0, describeReport(report));
    // Each tool's result went back to the model (Claude Code hands it the structured content, the CLI's JSON).
    for (const fragment of [
      '"should_run":true',
      '"operation":"todo_complete"',
      '"classification":"validated_progress"',
      '"appended":true',
    ])
      assert.ok(
        report.toolResults.some((result) => result.includes(fragment)),
        `${fragment} not in the tool results: ${report.toolResults.join('\n')}\n${describeReport(report)}`,
      );
    assert.equal(spent(), spentBefore + 1, 'one spend');
    assert.deepEqual(
      rolloutKinds(ws).filter((kind) =>
        ['quota_should_run', 'todo_complete', 'refresh_state', 'quota_spend'].includes(kind),
      ),
      ['quota_should_run', 'todo_complete', 'refresh_state', 'quota_spend'],
    );
    const related = readFileSync(ws.statePath, 'utf8')
      .split('\n')
      .find((line) => line.includes('todo_id=todo_related'));
    assert.match(related ?? '', /status=done/);
  });
});
