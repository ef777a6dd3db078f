/**
 * The real Codex CLI (pinned in support/agentClis.ts) in LoopX turns, against the scripted OpenAI
 * Responses API, each scenario in its own loopback-only network namespace. Codex reaches the server
 * through a model provider in its own config file ($CODEX_HOME/config.toml, base_url = the server),
 * except in the gateway scenario, which uses OPENAI_BASE_URL from the user's environment. See
 * docs/agents-conformance.md for what each scenario proves.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ScriptedAnswer } from './support/modelServer';
import {
  budgetUsed,
  describeReport,
  finalText,
  jsonOf,
  newWorkspace,
  quotaStatus,
  RELATED_NOTE,
  resultObject,
  runOnceCommand,
  scenario,
  steps,
  text,
  type Workspace,
  withLoopxOnPath,
  LOOPX_QUOTA_STATUS,
  agentCommand,
  heartbeatCommands,
  loopxCommand,
  logOverhead,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'codex';

interface CodexWorkspace extends Workspace {
  codexHome: string;
  /** $CODEX_HOME/config.toml with the scripted provider, `{{BASE_URL}}` filled in by the runner. */
  files: Record<string, string>;
  env: Record<string, string>;
}

function providerConfig(retries: { request?: number; stream?: number } = {}): string {
  return [
    'model = "gpt-5"',
    'model_provider = "scripted"',
    '[model_providers.scripted]',
    'name = "scripted"',
    'base_url = "{{BASE_URL}}/v1"',
    'env_key = "OPENAI_API_KEY"',
    'wire_api = "responses"',
    `request_max_retries = ${retries.request ?? 0}`,
    `stream_max_retries = ${retries.stream ?? 0}`,
    '',
  ].join('\n');
}

function codexWorkspace(
  executor: Record<string, unknown> = {},
  config: string | null = providerConfig(),
): CodexWorkspace {
  const ws = newWorkspace(AGENT, {
    preset: 'codex',
    command: [agentClis().codex],
    args: ['--skip-git-repo-check', '--sandbox', 'workspace-write'],
    timeout_minutes: 2,
    ...executor,
  });
  const codexHome = join(ws.home, '.codex');
  return {
    ...ws,
    codexHome,
    // Without a provider of ours Codex uses its built-in OpenAI provider (the gateway scenario).
    files: { [join(codexHome, 'config.toml')]: config ?? 'model = "gpt-5"\n' },
    env: { CODEX_HOME: codexHome },
  };
}

/** Codex's own edit tool: apply_patch, which Codex intercepts when the model runs it through exec_command. */
const ADD_RELATED: ScriptedAnswer = {
  kind: 'tool',
  name: 'exec_command',
  input: {
    cmd: `apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: notes/related.md\n${RELATED_NOTE.trimEnd()
      .split('\n')
      .map((l) => `+${l}`)
      .join('\n')}\n*** End Patch\nEOF\n`,
  },
};
function shell(cmd: string): ScriptedAnswer {
  return { kind: 'tool', name: 'exec_command', input: { cmd } };
}

describe('Codex 0.171.0 in LoopX turns (real CLI, scripted Responses API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('a good turn: the model adds a file with apply_patch, runs a command, and the turn commits with usage and thread id', async () => {
    const ws = codexWorkspace();
    const report = await scenario(
      steps(ADD_RELATED, shell('wc -l notes/related.md'), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const run = report.commands[0];
    const out = jsonOf(run);
    assert.equal(out['status'], 'committed', describeReport(report));
    logOverhead('codex good turn', run);
    assert.equal(readFileSync(join(ws.project, 'notes', 'related.md'), 'utf8'), RELATED_NOTE);
    assert.ok(
      report.toolResults.some((t) => /A notes\/related\.md/.test(t)),
      report.toolResults.join('\n'),
    );
    assert.ok(
      report.toolResults.some((t) => /3 notes\/related\.md/.test(t)),
      report.toolResults.join('\n'),
    );
    const usage = out['usage'] as Record<string, unknown>;
    assert.equal(usage['tokens'], 3300);
    assert.equal(usage['estimated'], false);
    // Codex reports tokens, not cost: unknown, never zero.
    assert.equal(usage['cost_usd'] ?? null, null);
    assert.deepEqual(run?.survivors, []);
    assert.ok(
      report.requests.every((r) => r.answer !== '404'),
      describeReport(report),
    );
  });

  it('no JSON result: the turn fails malformed_result and its tokens still count', async () => {
    const ws = codexWorkspace();
    const report = await scenario(
      steps(ADD_RELATED, text('All done, the notes are linked now.')),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'malformed_result', describeReport(report));
    const status = await quotaStatus(ws);
    assert.equal(budgetUsed(status, 'max_tokens'), 2200, JSON.stringify(status['budgets']));
  });

  it('API 4xx: a 400 from the Responses API ends the turn as a failure naming it; nothing committed', async () => {
    const ws = codexWorkspace();
    const report = await scenario(
      {
        steps: [
          {
            attempts: [
              { kind: 'http_error', status: 400, errorType: 'invalid_request_error', message: 'context too long' },
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
    assert.match(JSON.stringify(out['failure']), /400|context too long/, describeReport(report));
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it("API 5xx: a 500 (after Codex's configured retry) ends the turn as a failure; nothing committed", async () => {
    const ws = codexWorkspace({}, providerConfig({ request: 1 }));
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'http_error', status: 500, errorType: 'server_error', message: 'boom' }] }] },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.notEqual(out['status'], 'committed');
    assert.ok(report.requests.filter((r) => r.step === 0).length >= 2, describeReport(report));
  });

  it("a failing tool: the command exits 3, Codex reports it to the model, and the model's honest result is recorded", async () => {
    const ws = codexWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'The tag check failed (exit 3); the Related section is not written yet.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
      changed_files: [],
    });
    const report = await scenario(
      steps(shell('echo checking tags; exit 3'), text(finalText(progress))),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.ok(
      report.toolResults.some((t) => /code 3/.test(t) && /checking tags/.test(t)),
      report.toolResults.join('\n'),
    );
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.equal(out['result_kind'], 'validated_progress');
  });

  it('timeout: the API hangs; LoopX ends the turn at its timeout and nothing survives', async () => {
    const ws = codexWorkspace({ timeout_minutes: 0.1 });
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'hang' }] }] },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const out = jsonOf(report.commands[0]);
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'timeout', describeReport(report));
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it('kill -9 of codex mid-tool: the turn fails and the command it started does not survive', async () => {
    const ws = codexWorkspace();
    const marker = join(ws.root, 'tool-started');
    const report = await scenario(
      steps(shell(`echo $$ > ${marker}; sleep 300`), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env, kill: { whenFile: marker, processPattern: 'codex(\\.js)? exec' } })],
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

  it("resume: a second turn on the in-progress todo resumes the first turn's Codex thread", async () => {
    const ws = codexWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'Started notes/related.md.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
    });
    const report = await scenario(
      steps(
        ADD_RELATED,
        text(finalText(progress)),
        // The second turn changes nothing itself, so it claims no changed file (the claimed-change check).
        text(finalText(resultObject({ changed_files: [] }))),
      ),
      [runOnceCommand(ws, AGENT, { env: ws.env }), runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
    logOverhead('codex resume, first turn', report.commands[0]);
    logOverhead('codex resume, second turn', report.commands[1]);
    const second = jsonOf(report.commands[1]);
    assert.equal(second['status'], 'committed', describeReport(report));
    assert.deepEqual(
      report.requests.map((r) => r.step),
      [0, 1, 2],
      `the second turn must continue the first turn's thread (steps seen: ${report.requests.map((r) => r.step).join(', ')})`,
    );
  });

  it('a transient stream error: the stream drops once, Codex prints "Reconnecting…" and retries; the turn commits', async () => {
    const ws = codexWorkspace({}, providerConfig({ stream: 2 }));
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'drop' }, ADD_RELATED] }, { attempts: [text(finalText())] }] },
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(report.requests.filter((r) => r.step === 0).length, 2, describeReport(report));
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
  });

  it('a denied write: under --sandbox read-only the patch is refused; the claimed change is not committed as done', async () => {
    const ws = codexWorkspace({ args: ['--skip-git-repo-check', '--sandbox', 'read-only'] });
    const report = await scenario(
      steps(ADD_RELATED, text(finalText())),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    assert.equal(existsSync(join(ws.project, 'notes', 'related.md')), false, describeReport(report));
    const out = jsonOf(report.commands[0]);
    assert.notEqual(out['status'], 'committed', `a denied write was committed as done:\n${describeReport(report)}`);
  });

  it('a gateway provider whose key lives in its own variable (Codex config env_key, no env_allowlist) reaches Codex', async () => {
    const gateway = providerConfig()
      .replace('{{BASE_URL}}/v1', '{{BASE_URL}}/gateway/v1')
      .replace('env_key = "OPENAI_API_KEY"', 'env_key = "GATEWAY_API_KEY"');
    const ws = codexWorkspace({}, gateway);
    const report = await scenario(
      steps(ADD_RELATED, text(finalText())),
      [runOnceCommand(ws, AGENT, { env: { ...ws.env, GATEWAY_API_KEY: 'gw-scripted-test-key' } })],
      ws.files,
    );
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
    assert.ok(
      report.requests.some((r) => r.path === '/gateway/v1/responses' && r.authorization),
      describeReport(report),
    );
  });
  it("the loop closed from inside a turn: the model runs LoopX's CLI through Codex's shell, as the installed prompts write it, and gets real output", async () => {
    const ws = codexWorkspace();
    const report = await scenario(
      steps(shell(LOOPX_QUOTA_STATUS), text(finalText())),
      [runOnceCommand(ws, AGENT, { env: { ...ws.env, PATH: withLoopxOnPath(ws) } })],
      ws.files,
    );
    assert.ok(
      report.toolResults.some((t) => /"goal_id": "tidy-notes"/.test(t) && /"allowed_slots"/.test(t)),
      describeReport(report),
    );
  });

  it("the turn id and key reach Codex's shell: its default shell_environment_policy keeps LOOPX_TURN and LOOPX_TURN_KEY", async () => {
    const ws = codexWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
      changed_files: [],
    });
    const report = await scenario(
      steps(shell('echo "key=${LOOPX_TURN_KEY:-hidden} turn=${LOOPX_TURN:-hidden}"'), text(finalText(progress))),
      [runOnceCommand(ws, AGENT, { env: ws.env })],
      ws.files,
    );
    const echoed = report.toolResults.find((t) => /key=/.test(t)) ?? '';
    // A *KEY* name is not dropped by Codex 0.171.0's default policy (the variable is not a secret: it is in the prompt).
    assert.match(echoed, /key=sha256:[0-9a-f]{16,}/, describeReport(report));
    assert.match(echoed, /turn=\d{8}T\d{6}Z-[0-9a-f]+/, echoed);
  });
  it("the installed loopx skill, mentioned as $loopx and injected by Codex itself, drives a whole heartbeat through Codex's login shell: should-run, work, refresh-state, spend-slot retried (one spend), todo complete", async () => {
    const ws = codexWorkspace();
    const hb = heartbeatCommands(AGENT);
    const launcher = join(ws.root, 'bin', 'loopx');
    withLoopxOnPath(ws);
    const report = await scenario(
      steps(
        shell(hb.shouldRun),
        ADD_RELATED,
        shell(hb.refresh),
        shell(hb.spend),
        shell(hb.spend),
        shell(hb.complete),
        text('Heartbeat done: notes/related.md written, recorded, one slot spent.'),
      ),
      [
        loopxCommand(ws, ['slash-commands', '--install', '--surface', 'codex', '--format', 'json']),
        agentCommand(
          ws,
          [
            agentClis().codex,
            'exec',
            '--json',
            '--skip-git-repo-check',
            '--sandbox',
            'workspace-write',
            // Under workspace-write the project's .codex/ is read-only; the goal's state folder must be a
            // writable root (LoopX passes it itself in the turns it runs: docs/executors.md#codex-and-its-sandbox).
            '--add-dir',
            join(ws.project, '.codex', 'goals', 'tidy-notes'),
            '$loopx run one heartbeat turn: --goal-id tidy-notes --agent-id codex',
          ],
          // Codex's shell is `bash -lc`, which resets PATH: LOOPX_CLI is how the skill's commands find LoopX.
          { ...ws.env, LOOPX_CLI: launcher },
        ),
        loopxCommand(ws, ['quota', 'status', '--goal-id', 'tidy-notes', '--format', 'json']),
      ],
      ws.files,
    );
    assert.equal(report.commands[0]?.code, 0, describeReport(report));
    assert.equal(report.commands[1]?.code, 0, describeReport(report));
    // Codex put the skill's body into the conversation (not only its name and description).
    assert.ok(
      report.prompts.some((p) => /Commands of one turn, in order/.test(p)),
      `the model never saw the loopx skill's heartbeat section:\n${report.prompts.join('\n---\n').slice(0, 3000)}`,
    );
    const results = report.toolResults;
    assert.ok(
      results.some((t) => /\\?"should_run\\?": true/.test(t)),
      describeReport(report),
    );
    assert.ok(
      results.some((t) => /\\?"appended\\?": true/.test(t)),
      describeReport(report),
    );
    assert.ok(
      results.some((t) => /\\?"idempotent_replay\\?": true/.test(t)),
      describeReport(report),
    );
    assert.match(readFileSync(ws.statePath, 'utf8'), /todo_id=todo_related status=done/);
    const status = jsonOf(report.commands[2]);
    assert.equal(JSON.stringify(status).match(/"spent_slots":(\d+)/)?.[1], '1', JSON.stringify(status));
  });
});
