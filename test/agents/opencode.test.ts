/**
 * The real opencode CLI (pinned in support/agentClis.ts) in LoopX turns, against the scripted
 * Anthropic Messages API (opencode's anthropic provider, its baseURL set in an opencode config file named
 * by OPENCODE_CONFIG), each scenario in its own loopback-only network namespace. See
 * docs/agents-conformance.md for what each scenario proves.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import {
  describeReport,
  finalText,
  jsonOf,
  newWorkspace,
  RELATED_NOTE,
  resultObject,
  runOnceCommand,
  scenario,
  steps,
  text,
  type Workspace,
  withLoopxOnPath,
  LOOPX_QUOTA_STATUS,
  quotaStatus,
  budgetUsed,
  logOverhead,
  agentCommand,
  heartbeatCommands,
  loopxCommand,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'opencode';

interface OpencodeWorkspace extends Workspace {
  files: Record<string, string>;
  env: Record<string, string>;
}

interface OpencodeOptions {
  /** opencode's permission for its edit tools (write, edit, patch): `deny` is the denied-write scenario. */
  edit?: 'allow' | 'deny';
  /**
   * The provider options of the config file; by default the scripted server's URL and key written into it.
   * The gateway scenario names the user's variables instead (`{env:NAME}`, opencode's own substitution).
   */
  providerOptions?: Record<string, string>;
}

function opencodeWorkspace(executor: Record<string, unknown> = {}, options: OpencodeOptions = {}): OpencodeWorkspace {
  const ws = newWorkspace(AGENT, {
    preset: 'opencode',
    command: [agentClis().opencode],
    args: ['--model', 'anthropic/claude-sonnet-4-5'],
    timeout_minutes: 2,
    ...executor,
  });
  const configFile = join(ws.root, 'opencode-config.json');
  const config = {
    $schema: 'https://opencode.ai/config.json',
    autoupdate: false,
    share: 'disabled',
    permission: { edit: options.edit ?? 'allow', bash: 'allow' },
    provider: {
      anthropic: {
        options: options.providerOptions ?? { baseURL: '{{BASE_URL}}/v1', apiKey: 'sk-ant-scripted-test-key' },
        models: { 'claude-sonnet-4-5': { name: 'Claude Sonnet 4.5 (scripted)' } },
      },
    },
  };
  return {
    ...ws,
    files: { [configFile]: JSON.stringify(config, null, 2) },
    env: { OPENCODE_CONFIG: configFile },
  };
}

function write(ws: Workspace): ScriptedAnswer {
  return {
    kind: 'tool',
    name: 'write',
    input: { filePath: join(ws.project, 'notes', 'related.md'), content: RELATED_NOTE },
  };
}
function bash(command: string): ScriptedAnswer {
  return { kind: 'tool', name: 'bash', input: { command, description: 'run a command' } };
}

describe('opencode 1.18.33 in LoopX turns (real CLI, scripted Anthropic API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('a good turn: the model writes a file with write, runs bash, and the turn commits with usage and session from opencode', async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      steps(write(ws), bash('wc -l notes/related.md'), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const run = report.commands[0];
    const out = jsonOf(run);
    assert.equal(out['status'], 'committed', describeReport(report));
    logOverhead('opencode good turn', run);
    assert.equal(readFileSync(join(ws.project, 'notes', 'related.md'), 'utf8'), RELATED_NOTE);
    assert.ok(
      report.toolResults.some((t) => /3 notes\/related\.md/.test(t)),
      describeReport(report),
    );
    const usage = out['usage'] as Record<string, unknown>;
    assert.equal(usage['tokens'], 3300);
    assert.deepEqual(run?.survivors, []);
  });

  it('no JSON result: the turn fails malformed_result; nothing committed, and its tokens still count', async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      steps(write(ws), text('All done, the notes are linked now.')),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'malformed_result', describeReport(report));
    // Defect 3 of issue 28: opencode reported 2 steps of 1,100 tokens; the quota must see them.
    const status = await quotaStatus(ws);
    assert.equal(budgetUsed(status, 'max_tokens'), 2200, JSON.stringify(status['budgets']));
  });

  it('kill -9 of opencode mid-tool: the turn fails and the command it started does not survive', async () => {
    const ws = opencodeWorkspace();
    const marker = join(ws.root, 'tool-started');
    const report = await scenario(
      steps(bash(`echo $$ > ${marker}; sleep 300`), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env, kill: { whenFile: marker, processPattern: 'opencode(\\.exe)? run' } })],
      ws.files,
    );
    const run = report.commands[0];
    assert.ok((run?.killed.length ?? 0) >= 1, describeReport(report));
    assert.notEqual(jsonOf(run)['status'], 'committed');
    assert.deepEqual(
      run?.survivors.filter((p) => /sleep 300/.test(p.cmdline)),
      [],
      `processes that outlived the turn: ${JSON.stringify(run?.survivors)}`,
    );
  });
  it('API 4xx: an invalid_request_error ends the turn as a failure naming the API error; nothing committed (a "prompt is too long" 400 would make opencode compact and retry until the timeout)', async () => {
    const ws = opencodeWorkspace({ timeout_minutes: 0.5 });
    const report = await scenario(
      {
        steps: [
          {
            attempts: [
              {
                kind: 'http_error',
                status: 400,
                errorType: 'invalid_request_error',
                message: 'max_tokens: 64000 > 8192, the maximum for this model',
              },
            ],
          },
        ],
      },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.notEqual(out['status'], 'committed');
    assert.notEqual((out['failure'] as Record<string, unknown>)['reason'], 'timeout', describeReport(report));
    assert.match(JSON.stringify(out['failure']), /max_tokens: 64000 > 8192/, describeReport(report));
    assert.equal(existsSync(join(ws.project, 'notes', 'related.md')), false);
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it("API 5xx: the API answers 500 once; opencode's own retry gets the next answer and the turn commits", async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      {
        steps: [
          {
            attempts: [
              { kind: 'http_error', status: 500, errorType: 'api_error', message: 'Internal server error' },
              write(ws),
            ],
          },
          { attempts: [text(finalText())] },
        ],
      },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(report.requests.filter((r) => r.step === 0).length, 2, describeReport(report));
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
  });

  it("a failing tool: bash exits 3, opencode reports it to the model, and the model's honest result is recorded", async () => {
    const ws = opencodeWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'The tag check failed (exit 3); the Related section is not written yet.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
      changed_files: [],
    });
    const report = await scenario(
      steps(bash('echo checking tags; exit 3'), text(finalText(progress))),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.ok(
      report.toolResults.some((t) => /checking tags/.test(t)),
      report.toolResults.join('\n'),
    );
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.equal(out['result_kind'], 'validated_progress');
  });

  it('timeout: the API hangs; LoopX ends the turn at its timeout and nothing survives', async () => {
    const ws = opencodeWorkspace({ timeout_minutes: 0.5 });
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'hang' }] }] },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'timeout', describeReport(report));
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it("resume: a second turn on the in-progress todo continues the first turn's opencode session (--session)", async () => {
    const ws = opencodeWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'Started notes/related.md.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
    });
    const report = await scenario(
      steps(write(ws), text(finalText(progress)), text(finalText(resultObject({ changed_files: [] })))),
      [runOnceCommand(ws, AGENT, { env: ws.env }), runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
    logOverhead('opencode resume, first turn', report.commands[0]);
    logOverhead('opencode resume, second turn', report.commands[1]);
    const second = jsonOf(report.commands[1]);
    assert.equal(second['status'], 'committed', describeReport(report));
    const mainRequests = report.requests.filter((r) => r.step !== null);
    assert.deepEqual(
      mainRequests.map((r) => r.step),
      [0, 1, 2],
      `the second turn must continue the first turn's session (steps seen: ${mainRequests.map((r) => r.step).join(', ')})`,
    );
    assert.equal(second['result_kind'], 'validated_completion');
  });

  it('a transient stream error: the API drops the stream once; opencode retries and the turn commits', async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'drop' }, write(ws)] }, { attempts: [text(finalText())] }] },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(report.requests.filter((r) => r.step === 0).length, 2, describeReport(report));
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
  });

  it("a denied write: opencode's permission denies edits; the claimed change is not committed as done", async () => {
    const ws = opencodeWorkspace({}, { edit: 'deny' });
    const report = await scenario(
      steps(write(ws), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(existsSync(join(ws.project, 'notes', 'related.md')), false, describeReport(report));
    const out = jsonOf(report.commands[0]);
    assert.notEqual(out['status'], 'committed', `a denied write was committed as done:\n${describeReport(report)}`);
    assert.doesNotMatch(readFileSync(ws.statePath, 'utf8'), /todo_id=todo_related status=done/);
  });

  it("a gateway: the provider's base URL and key come from the user's ANTHROPIC_* variables (no env_allowlist)", async () => {
    const ws = opencodeWorkspace(
      {},
      { providerOptions: { baseURL: '{env:ANTHROPIC_BASE_URL}/v1', apiKey: '{env:ANTHROPIC_API_KEY}' } },
    );
    const report = await scenario(
      steps(write(ws), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: { ...ws.env, ANTHROPIC_BASE_URL: '{{BASE_URL}}/gateway' } })],
      ws.files,
    );
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
    assert.ok(
      report.requests.some((r) => r.path === '/gateway/v1/messages' && r.authorization),
      describeReport(report),
    );
  });

  it("the loop closed from inside a turn: the model runs LoopX's CLI through opencode's shell, as the installed prompts write it, and gets real output", async () => {
    const ws = opencodeWorkspace();
    const report = await scenario(
      steps(bash(LOOPX_QUOTA_STATUS), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: { ...ws.env, PATH: withLoopxOnPath(ws) } })],
      ws.files,
    );
    assert.ok(
      report.toolResults.some((t) => /"goal_id": "tidy-notes"/.test(t) && /"allowed_slots"/.test(t)),
      describeReport(report),
    );
  });
  it('the installed /loopx-heartbeat command, expanded by opencode itself (run --command), drives a whole heartbeat over its shell: should-run, work, refresh-state, spend-slot retried (one spend), todo complete', async () => {
    const ws = opencodeWorkspace();
    const hb = heartbeatCommands(AGENT);
    const report = await scenario(
      steps(
        bash(hb.shouldRun),
        write(ws),
        bash(hb.refresh),
        bash(hb.spend),
        bash(hb.spend),
        bash(hb.complete),
        text('Heartbeat done: notes/related.md written, recorded, one slot spent.'),
      ),
      [
        loopxCommand(ws, ['slash-commands', '--install', '--surface', 'opencode', '--format', 'json']),
        agentCommand(
          ws,
          [
            agentClis().opencode,
            'run',
            '--format',
            'json',
            '--model',
            'anthropic/claude-sonnet-4-5',
            '--command',
            'loopx-heartbeat',
            'goal tidy-notes, agent opencode',
          ],
          { ...ws.env, PATH: withLoopxOnPath(ws) },
        ),
        loopxCommand(ws, ['quota', 'status', '--goal-id', 'tidy-notes', '--format', 'json']),
      ],
      ws.files,
    );
    assert.equal(report.commands[0]?.code, 0, describeReport(report));
    assert.equal(report.commands[1]?.code, 0, describeReport(report));
    assert.ok(
      report.prompts.some((p) => /Commands of one turn, in order/.test(p) && /goal tidy-notes, agent opencode/.test(p)),
      `the model never saw the expanded /loopx-heartbeat command:\n${report.prompts.join('\n---\n').slice(0, 3000)}`,
    );
    const results = report.toolResults;
    assert.ok(
      results.some((t) => /"should_run": true/.test(t)),
      describeReport(report),
    );
    assert.ok(
      results.some((t) => /"appended": true/.test(t)),
      describeReport(report),
    );
    assert.ok(
      results.some((t) => /"idempotent_replay": true/.test(t)),
      describeReport(report),
    );
    assert.match(readFileSync(ws.statePath, 'utf8'), /todo_id=todo_related status=done/);
    const status = jsonOf(report.commands[2]);
    assert.equal(JSON.stringify(status).match(/"spent_slots":(\d+)/)?.[1], '1', JSON.stringify(status));
  });
});
