/**
 * The real Codex CLI (pinned in support/agentClis.ts) running a LoopX heartbeat through MCP: `loopx mcp
 * install --target codex --execute` writes `[mcp_servers.loopx]` into the project's `.codex/config.toml`
 * (Codex reads it in a project the user trusts: the user config says so, as Codex's own trust prompt
 * writes it), and the scripted Responses API answers with calls of LoopX's tools (should_run with a turn
 * id → todo_complete → refresh_state → spend_slot), in a loopback-only network namespace. The turn commits
 * with one spend, as the same heartbeat through the CLI (docs/mcp.md).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import {
  describeReport,
  LOOPX_CLI,
  loopxEnv,
  newWorkspace,
  rolloutKinds,
  runRows,
  scenario,
  steps,
  text,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'codex';
const GOAL = 'tidy-notes';
const TURN = '2026-12-03T21:00:00Z';
/** Codex 0.171.0 offers an MCP server's tools to the model as one Responses API namespace, `mcp__<server>`. */
const NAMESPACE = 'mcp__loopx';

function mcp(tool: string, input: Record<string, unknown>): ScriptedAnswer {
  return { kind: 'tool', name: tool, namespace: NAMESPACE, input };
}

/** $CODEX_HOME/config.toml: the scripted provider, and the project trusted (what Codex's trust prompt writes). */
function userConfig(project: string): string {
  return [
    'model = "gpt-5"',
    'model_provider = "scripted"',
    '[model_providers.scripted]',
    'name = "scripted"',
    'base_url = "{{BASE_URL}}/v1"',
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    'request_max_retries = 0',
    'stream_max_retries = 0',
    `[projects.${JSON.stringify(project)}]`,
    'trust_level = "trusted"',
    '',
  ].join('\n');
}

describe('Codex 0.171.0 runs a LoopX heartbeat over MCP (real CLI, scripted Responses API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('loopx mcp install --target codex, then Codex calls LoopX tools from the project config; the turn commits with one spend', async () => {
    const ws = newWorkspace(AGENT, { preset: 'codex', command: [agentClis().codex] });
    const codexHome = join(ws.home, '.codex');
    // The install, as a person runs it in the project (the built CLI: the entry names its Node and cli.js).
    const install = spawnSync(
      process.execPath,
      [LOOPX_CLI, 'mcp', 'install', '--target', 'codex', '--execute', '--format', 'json'],
      { cwd: ws.project, env: loopxEnv(ws), encoding: 'utf8' },
    );
    assert.equal(install.status, 0, `${install.stdout}${install.stderr}`);
    const installed = JSON.parse(install.stdout) as Record<string, unknown>;
    assert.equal(installed['config_file'], join(ws.project, '.codex', 'config.toml'));
    // required: Codex waits for LoopX's server before the model's first request (without it, 0.171.0 offered
    // the tools from the fourth request on, and should_run was an "unsupported call").
    assert.match(
      readFileSync(join(ws.project, '.codex', 'config.toml'), 'utf8'),
      /\[mcp_servers\.loopx\]\ncommand = [^\n]+\nargs = [^\n]+\nrequired = true\n/,
    );

    const spent = (): number => runRows(ws).filter((row) => row['classification'] === 'quota_slot_spent').length;
    const spentBefore = spent();
    const bound = { goalId: GOAL, agentId: AGENT, turnInstanceId: TURN };
    const script = steps(
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
    const report = await scenario(
      script,
      [
        {
          argv: [
            agentClis().codex,
            'exec',
            '--json',
            '--skip-git-repo-check',
            '--sandbox',
            'workspace-write',
            'Run one LoopX heartbeat turn for goal tidy-notes as agent codex.',
          ],
          cwd: ws.project,
          env: loopxEnv(ws, { CODEX_HOME: codexHome }),
          timeoutMs: 180_000,
        },
      ],
      { [join(codexHome, 'config.toml')]: userConfig(ws.project) },
    );
    const run = report.commands[0];
    assert.equal(run?.code, 0, describeReport(report));
    // Codex offered LoopX's tools to the model from its first request, in the server's namespace.
    const first = report.requests.find((r) => r.path.endsWith('/responses'))?.tools ?? [];
    for (const tool of ['should_run', 'todo_complete', 'refresh_state', 'spend_slot'])
      assert.ok(
        first.includes(`${NAMESPACE}/${tool}`),
        `${NAMESPACE}/${tool} not offered: ${first.join(', ')}\n${describeReport(report)}\n${run?.stdout ?? ''}`,
      );
    // Each tool's result went back to the model (the CLI's JSON as the structured content).
    for (const fragment of ['should_run', 'todo_complete', 'validated_progress', 'appended'])
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
