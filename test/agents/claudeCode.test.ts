/**
 * The real Claude Code CLI (pinned in support/agentClis.ts) in LoopX turns, against the scripted
 * Anthropic Messages API, each scenario in its own loopback-only network namespace. See
 * docs/agents-conformance.md for what each scenario proves.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
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
  quotaStatus,
  budgetUsed,
  type Workspace,
  withLoopxOnPath,
  LOOPX_QUOTA_STATUS,
  agentCommand,
  heartbeatCommands,
  loopxCommand,
  logOverhead,
} from './support/scenario';
import { agentClis } from './support/setup';

const AGENT = 'claude';
const MODEL = 'claude-sonnet-4-5';
/** What the executor must pass for the scripted server to be reached at all on a LoopX without provider passing. */
const PROVIDER_ENV = ['ANTHROPIC_BASE_URL', 'DISABLE_TELEMETRY', 'CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC'];
const ALL_TOOLS = ['--permission-mode', 'acceptEdits', '--allowedTools', 'Bash,Edit,Write,Read'];

function claudeWorkspace(executor: Record<string, unknown> = {}): Workspace {
  return newWorkspace(AGENT, {
    preset: 'claude-code',
    command: [agentClis().claude],
    args: ['--model', MODEL, ...ALL_TOOLS],
    env_allowlist: PROVIDER_ENV,
    timeout_minutes: 2,
    ...executor,
  });
}

const BASE = { ANTHROPIC_BASE_URL: '{{BASE_URL}}' };

function write(ws: Workspace): ScriptedAnswer {
  return {
    kind: 'tool',
    name: 'Write',
    input: { file_path: join(ws.project, 'notes', 'related.md'), content: RELATED_NOTE },
  };
}
function bash(command: string): ScriptedAnswer {
  return { kind: 'tool', name: 'Bash', input: { command, description: 'run a command' } };
}
describe('Claude Code 2.1.197 in LoopX turns (real CLI, scripted Anthropic API, loopback-only namespace)', function () {
  this.timeout(5 * 60_000);
  before(() => {
    agentClis();
  });

  it('a good turn: the model writes a file with Write, runs Bash, and the turn commits with usage, cost and session from the envelope', async () => {
    const ws = claudeWorkspace();
    const report = await scenario(steps(write(ws), bash('wc -l notes/related.md'), text(finalText())), [
      runOnceCommand(ws, AGENT, { env: BASE }),
    ]);
    const run = report.commands[0];
    const out = jsonOf(run);
    assert.equal(out['status'], 'committed', describeReport(report));
    logOverhead('claude good turn', run);
    assert.equal(readFileSync(join(ws.project, 'notes', 'related.md'), 'utf8'), RELATED_NOTE);
    // Claude Code ran its own tools: the Write and the Bash output went back to the model.
    assert.ok(
      report.toolResults.some((t) => /File created successfully/.test(t)),
      report.toolResults.join('\n'),
    );
    assert.ok(
      report.toolResults.some((t) => /3 notes\/related\.md/.test(t)),
      report.toolResults.join('\n'),
    );
    // 3 model calls of 1000 in + 100 out, as the server reported them; cost priced by Claude Code.
    const usage = out['usage'] as Record<string, unknown>;
    assert.equal(usage['tokens'], 3300);
    assert.equal(usage['estimated'], false);
    assert.ok(Number(usage['cost_usd']) > 0, `cost ${String(usage['cost_usd'])}`);
    const binding = JSON.parse(
      readFileSync(join(ws.runtimeGoalDir, 'turn-sessions', sessionBindingFile(ws)), 'utf8'),
    ) as Record<string, unknown>;
    assert.match(String(binding['session_id']), /^[0-9a-f-]{36}$/);
    assert.deepEqual(run?.survivors, []);
    assert.ok(
      report.requests.every((r) => r.answer !== '404' || r.method === 'HEAD'),
      describeReport(report),
    );
  });

  it('no JSON result: the turn fails malformed_result, nothing is written back, and its spend still counts', async () => {
    const ws = claudeWorkspace();
    const report = await scenario(steps(write(ws), text('All done, the notes are linked now.')), [
      runOnceCommand(ws, AGENT, { env: BASE }),
    ]);
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.notEqual(out['status'], 'committed');
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'malformed_result', describeReport(report));
    assert.doesNotMatch(readFileSync(ws.statePath, 'utf8'), /todo_id=todo_related status=done/);
    // Defect 3 of issue 28: the envelope reported 2 calls of 1,100 tokens; the quota must see them.
    const status = await quotaStatus(ws);
    assert.equal(budgetUsed(status, 'max_tokens'), 2200, JSON.stringify(status['budgets']));
  });

  it('API 4xx: an invalid_request_error ends the turn as a failure naming the API error; nothing committed', async () => {
    const ws = claudeWorkspace();
    const report = await scenario(
      {
        steps: [
          {
            attempts: [
              { kind: 'http_error', status: 400, errorType: 'invalid_request_error', message: 'prompt is too long' },
            ],
          },
        ],
      },
      [runOnceCommand(ws, AGENT, { env: BASE })],
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    const failure = out['failure'] as Record<string, unknown>;
    assert.ok(['agent_reported_error', 'non_zero_exit'].includes(String(failure['reason'])), JSON.stringify(failure));
    assert.match(JSON.stringify(out), /400|prompt is too long/);
    assert.equal(existsSync(join(ws.project, 'notes', 'related.md')), false);
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it("API 5xx: an overloaded API (after Claude Code's own retry) ends the turn as a failure; nothing committed", async () => {
    const ws = claudeWorkspace({ env_allowlist: [...PROVIDER_ENV, 'CLAUDE_CODE_MAX_RETRIES'] });
    const report = await scenario(
      {
        steps: [
          { attempts: [{ kind: 'http_error', status: 500, errorType: 'api_error', message: 'Internal server error' }] },
        ],
      },
      [runOnceCommand(ws, AGENT, { env: { ...BASE, CLAUDE_CODE_MAX_RETRIES: '1' } })],
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.match(JSON.stringify(out['failure']), /500|Internal server error|api_error/i);
    // Claude Code retried once (2 requests at step 0), then gave up.
    assert.equal(report.requests.filter((r) => r.step === 0).length, 2, describeReport(report));
    assert.notEqual(out['status'], 'committed');
  });

  it("a failing tool: Bash exits 3, Claude Code reports it to the model, and the model's honest result is recorded", async () => {
    const ws = claudeWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'The tag check failed (exit 3); the Related section is not written yet.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
      changed_files: [],
    });
    const report = await scenario(steps(bash('echo checking tags; exit 3'), text(finalText(progress))), [
      runOnceCommand(ws, AGENT, { env: BASE }),
    ]);
    const out = jsonOf(report.commands[0]);
    assert.ok(
      report.toolResults.some((t) => /exit code 3/i.test(t) && /checking tags/.test(t)),
      report.toolResults.join('\n'),
    );
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.equal(out['result_kind'], 'validated_progress');
  });

  it('over budget: --max-budget-usd stops Claude Code (error_max_budget_usd); the turn fails and its cost counts against the quota', async () => {
    const ws = claudeWorkspace({ args: ['--model', MODEL, ...ALL_TOOLS, '--max-budget-usd', '0.05'] });
    const report = await scenario(
      {
        steps: [
          { attempts: [write(ws)], usage: { input_tokens: 100_000, output_tokens: 1000 } },
          { attempts: [bash('true')], usage: { input_tokens: 100_000, output_tokens: 1000 } },
          { attempts: [text(finalText())] },
        ],
      },
      [runOnceCommand(ws, AGENT, { env: BASE })],
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(report.commands[0]?.code, 1, describeReport(report));
    assert.match(JSON.stringify(out['failure']), /max_budget/, describeReport(report));
    const status = await quotaStatus(ws);
    assert.ok(budgetUsed(status, 'max_cost_usd') >= 0.05, JSON.stringify(status['budgets']));
  });

  it('timeout: the API hangs; LoopX ends the turn at its timeout and nothing survives', async () => {
    const ws = claudeWorkspace({ timeout_minutes: 0.1 });
    const report = await scenario({ steps: [{ attempts: [{ kind: 'hang' }] }] }, [
      runOnceCommand(ws, AGENT, { env: BASE }),
    ]);
    const out = jsonOf(report.commands[0]);
    assert.equal((out['failure'] as Record<string, unknown>)['reason'], 'timeout', describeReport(report));
    assert.deepEqual(report.commands[0]?.survivors, []);
  });

  it('kill -9 of claude mid-tool: the turn fails and the tool it started (in its own session) does not survive', async () => {
    const ws = claudeWorkspace();
    const marker = join(ws.root, 'tool-started');
    const report = await scenario(steps(bash(`echo $$ > ${marker}; sleep 300`), text(finalText())), [
      runOnceCommand(ws, AGENT, { env: BASE, kill: { whenFile: marker, processPattern: '/claude(\\.exe)? -p' } }),
    ]);
    const run = report.commands[0];
    assert.ok((run?.killed.length ?? 0) >= 1, describeReport(report));
    const out = jsonOf(run);
    assert.notEqual(out['status'], 'committed');
    assert.deepEqual(
      run?.survivors.filter((p) => /sleep 300/.test(p.cmdline)),
      [],
      `processes that outlived the turn: ${JSON.stringify(run?.survivors)}`,
    );
  });

  it("resume: a second turn on the in-progress todo resumes the first turn's Claude session", async () => {
    const ws = claudeWorkspace();
    const progress = resultObject({
      result_kind: 'validated_progress',
      summary: 'Started notes/related.md.',
      todo: { todo_id: '{{TODO_ID}}', disposition: 'in_progress' },
    });
    // Step 0/1: the first turn. A resumed session carries both earlier assistant turns, so the second
    // turn's first request is step 2; a fresh session would start again at step 0 (Write, progress).
    const report = await scenario(
      steps(
        write(ws),
        text(finalText(progress)),
        // The second turn changes nothing itself, so it claims no changed file (the claimed-change check).
        text(finalText(resultObject({ changed_files: [] }))),
      ),
      [runOnceCommand(ws, AGENT, { env: BASE }), runOnceCommand(ws, AGENT, { env: BASE })],
    );
    assert.equal(jsonOf(report.commands[0])['status'], 'committed', describeReport(report));
    logOverhead('claude resume, first turn', report.commands[0]);
    logOverhead('claude resume, second turn', report.commands[1]);
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

  it('a transient stream error: the API drops the stream once; Claude Code retries and the turn commits', async () => {
    const ws = claudeWorkspace();
    const report = await scenario(
      { steps: [{ attempts: [{ kind: 'drop' }, write(ws)] }, { attempts: [text(finalText())] }] },
      [runOnceCommand(ws, AGENT, { env: BASE })],
    );
    const out = jsonOf(report.commands[0]);
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.equal(report.requests.filter((r) => r.step === 0).length, 2, describeReport(report));
  });

  it('a denied write: Claude Code denies Write (no permission granted); the claimed change is not committed as done', async () => {
    const ws = claudeWorkspace({ args: ['--model', MODEL] });
    const report = await scenario(steps(write(ws), text(finalText())), [runOnceCommand(ws, AGENT, { env: BASE })]);
    // Claude Code itself refused the tool call and told the model so.
    assert.ok(
      report.toolResults.some((t) => /permission|denied|haven't granted/i.test(t)),
      report.toolResults.join('\n'),
    );
    assert.equal(existsSync(join(ws.project, 'notes', 'related.md')), false);
    const out = jsonOf(report.commands[0]);
    assert.notEqual(out['status'], 'committed', `a denied write was committed as done:\n${describeReport(report)}`);
    assert.doesNotMatch(readFileSync(ws.statePath, 'utf8'), /todo_id=todo_related status=done/);
  });

  it("a proxy/gateway base URL in the user's environment (no env_allowlist) reaches Claude Code", async () => {
    const ws = claudeWorkspace({ env_allowlist: undefined, timeout_minutes: 0.5 });
    const report = await scenario(steps(write(ws), text(finalText())), [
      runOnceCommand(ws, AGENT, { env: { ANTHROPIC_BASE_URL: '{{BASE_URL}}/gateway' } }),
    ]);
    const out = jsonOf(report.commands[0]);
    assert.equal(out['status'], 'committed', describeReport(report));
    assert.ok(
      report.requests.some((r) => r.path === '/gateway/v1/messages' && r.authorization),
      describeReport(report),
    );
  });
  it("the loop closed from inside a turn: the model runs LoopX's CLI through Claude Code's shell, as the installed prompts write it, and gets real output", async () => {
    const ws = claudeWorkspace();
    const report = await scenario(steps(bash(LOOPX_QUOTA_STATUS), text(finalText())), [
      runOnceCommand(ws, AGENT, { env: { ...BASE, PATH: withLoopxOnPath(ws) } }),
    ]);
    assert.ok(
      report.toolResults.some((t) => /"goal_id": "tidy-notes"/.test(t) && /"allowed_slots"/.test(t)),
      describeReport(report),
    );
  });
  it('the installed /loopx-heartbeat prompt, expanded by Claude Code itself, drives a whole heartbeat over its shell: should-run, work, refresh-state, spend-slot retried (one spend), todo complete', async () => {
    const ws = claudeWorkspace();
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
        loopxCommand(ws, ['slash-commands', '--install', '--surface', 'claude-code', '--format', 'json']),
        agentCommand(
          ws,
          [
            agentClis().claude,
            '-p',
            '/loopx-heartbeat --goal-id tidy-notes --agent-id claude',
            '--output-format',
            'json',
            '--model',
            MODEL,
            ...ALL_TOOLS,
          ],
          { ...BASE, PATH: withLoopxOnPath(ws) },
        ),
        loopxCommand(ws, ['quota', 'status', '--goal-id', 'tidy-notes', '--format', 'json']),
      ],
    );
    assert.equal(report.commands[0]?.code, 0, describeReport(report));
    assert.equal(report.commands[1]?.code, 0, describeReport(report));
    // Claude Code expanded the installed prompt file (its body, with $ARGUMENTS filled), not the typed name.
    assert.ok(
      report.prompts.some(
        (p) => /Commands of one turn, in order/.test(p) && /--goal-id tidy-notes --agent-id claude/.test(p),
      ),
      `the model never saw the expanded /loopx-heartbeat prompt:\n${report.prompts.join('\n---\n').slice(0, 3000)}`,
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

function sessionBindingFile(ws: Workspace): string {
  return readdirSync(join(ws.runtimeGoalDir, 'turn-sessions')).filter((f) => f.endsWith('.json'))[0] as string;
}
