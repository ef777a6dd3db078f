/**
 * The real Claude Code CLI (pinned in support/agentClis.ts) running a LoopX heartbeat through MCP: the
 * project's `.mcp.json` names `loopx mcp`, and the scripted Anthropic API answers with `mcp__loopx__…` tool
 * calls (should_run with a turn id → todo_complete → refresh_state → spend_slot), in a loopback-only
 * network namespace. The turn commits with one spend, as the same heartbeat through the CLI (docs/mcp.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import type { ScenarioCommand } from './support/scenarioRunner';
import {
  describeReport,
  jsonOf,
  LOOPX_CLI,
  loopxCommand,
  loopxEnv,
  newWorkspace,
  rolloutKinds,
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

function claudeCommand(ws: Workspace, mcpConfig: string, tools: string[]): ScenarioCommand {
  return {
    argv: [
      agentClis().claude,
      '-p',
      'Run one LoopX heartbeat turn for goal tidy-notes as agent claude.',
      '--model',
      MODEL,
      '--mcp-config',
      mcpConfig,
      '--allowedTools',
      [...tools, 'WaitForMcpServers'].join(','),
      '--output-format',
      'json',
    ],
    cwd: ws.project,
    env: loopxEnv(ws, { ANTHROPIC_BASE_URL: '{{BASE_URL}}' }),
    timeoutMs: 180_000,
  };
}

function withMcpConfig(ws: Workspace): string {
  const mcpConfig = join(ws.project, '.mcp.json');
  writeFileSync(
    mcpConfig,
    `${JSON.stringify({ mcpServers: { loopx: { command: process.execPath, args: [LOOPX_CLI, 'mcp'] } } }, null, 2)}\n`,
  );
  return mcpConfig;
}

describe('Claude Code 2.1.197 runs a LoopX heartbeat over MCP (real CLI, scripted Anthropic API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('calls mcp__loopx__ tools from the project .mcp.json; the turn commits with one spend', async () => {
    const ws = newWorkspace(AGENT, { preset: 'claude-code', command: [agentClis().claude] });
    const mcpConfig = withMcpConfig(ws);
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
    const report = await scenario(script, [claudeCommand(ws, mcpConfig, TOOLS)]);
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
  it('an open user gate holds it as on the CLI: should_run says no, the gate cannot be approved through a tool, nothing is spent', async () => {
    const ws = newWorkspace(AGENT, { preset: 'claude-code', command: [agentClis().claude] });
    const mcpConfig = withMcpConfig(ws);
    // The human's gate, added with the CLI as a person would (no network: outside the namespace).
    const added = JSON.parse(
      execFileSync(
        process.execPath,
        [
          LOOPX_CLI,
          'todo',
          'add',
          '--goal-id',
          GOAL,
          '--text',
          'Approve linking the notes',
          '--global-gate',
          '--format',
          'json',
        ],
        { cwd: ws.project, env: loopxEnv(ws), encoding: 'utf8' },
      ),
    ) as { todo_id: string };
    const gate = added.todo_id;
    const spent = (): number => runRows(ws).filter((row) => row['classification'] === 'quota_slot_spent').length;
    const spentBefore = spent();
    const bound = { goalId: GOAL, agentId: AGENT, turnInstanceId: TURN };
    const script = steps(
      { kind: 'tool', name: 'WaitForMcpServers', input: {} },
      mcp('should_run', bound),
      // A model that tries to pass the gate itself: the tool has no decision field, so the call is refused.
      mcp('todo_complete', { ...bound, todoId: gate, decisionOutcome: 'approve', evidence: 'looks fine' }),
      text('Not now: the gate is open.'),
    );
    const report = await scenario(script, [
      claudeCommand(ws, mcpConfig, TOOLS),
      loopxCommand(ws, ['quota', 'should-run', '--goal-id', GOAL, '--agent-id', AGENT, '--format', 'json']),
    ]);
    assert.equal(report.commands[0]?.code, 0, describeReport(report));
    const [viaTool] = report.toolResults
      .filter((result) => result.includes('"should_run"'))
      .map((result) => JSON.parse(result.slice(result.indexOf('{'))) as Record<string, unknown>);
    assert.ok(viaTool, `no should_run result: ${describeReport(report)}`);
    const viaCli = jsonOf(report.commands[1]);
    assert.equal(viaTool['should_run'], false, JSON.stringify(viaTool));
    for (const key of ['should_run', 'decision', 'state', 'effective_action', 'reason', 'status'])
      assert.deepEqual(
        viaTool[key],
        viaCli[key],
        `${key}: over MCP ${JSON.stringify(viaTool[key])}, CLI ${JSON.stringify(viaCli[key])}`,
      );
    assert.ok(
      report.toolResults.some((result) => /decisionOutcome|unrecognized|Unrecognized/.test(result)),
      `the approve call was not refused by name: ${report.toolResults.join('\n')}`,
    );
    const gateLine = readFileSync(ws.statePath, 'utf8')
      .split('\n')
      .find((line) => line.includes(`todo_id=${gate}`));
    assert.match(gateLine ?? '', /status=open/, 'the gate is still open');
    assert.equal(spent(), spentBefore, 'nothing spent');
  });
});
