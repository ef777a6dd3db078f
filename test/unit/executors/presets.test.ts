import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createClaudeCodeExecutor } from '../../../src/core/executors/claudeCode';
import { createCodexExecutor, readCodexOutput } from '../../../src/core/executors/codex';
import { readOpencodeOutput } from '../../../src/core/executors/opencode';
import {
  createAgentExecutor,
  installDemoAgent,
  executorTimeoutMs,
  readAgentExecutorConfig,
} from '../../../src/core/executors/config';
import type { ExecutorFailure, ExecutorOutcome, ExecutorSuccess } from '../../../src/core/executors/types';
import { isLoopxError } from '../../../src/core/errors';
import { demoRequest, demoWorkspace, fakeToolBin, FIXTURES, runOptions, tempDir } from './helpers';

/** The turn keys the recorded samples answer to. */
const CLAUDE_SAMPLE_KEY = 'sha256:fec9ddb38c36754aab416829e37f6dbe9cba7aac1ac236791b10a4f6bc5cfd7f';
const CODEX_SAMPLE_KEY = 'sha256:35929876bd8579655a64f3a7b99ee5498c831d865c70a6653a40fb26020cff9b';
const FAKE_VARIABLES = ['FAKE_SAMPLE', 'FAKE_RECORD', 'FAKE_EXIT_CODE'];

interface FakeRun {
  env: NodeJS.ProcessEnv;
  recorded: () => { argv: string[]; stdin: string };
}

/** An environment whose PATH starts with a fake `tool` that prints `sample` and exits `exitCode`. */
function fakeTool(tool: string, sample: string, exitCode = 0): FakeRun {
  const record = path.join(tempDir(), 'record.json');
  const env = {
    PATH: `${fakeToolBin(tool)}${path.delimiter}${process.env['PATH'] ?? ''}`,
    HOME: os.homedir(),
    FAKE_SAMPLE: path.join(FIXTURES, sample),
    FAKE_RECORD: record,
    FAKE_EXIT_CODE: String(exitCode),
    ANTHROPIC_API_KEY: 'sk-ant-test-key-for-the-fake-tool-only',
    UNRELATED_SECRET: 'never-passed',
  };
  return { env, recorded: () => JSON.parse(fs.readFileSync(record, 'utf8')) as { argv: string[]; stdin: string } };
}

function success(outcome: ExecutorOutcome): ExecutorSuccess {
  if (!outcome.ok) assert.fail(`expected a result, got ${outcome.reason}: ${outcome.message}`);
  return outcome;
}

function failure(outcome: ExecutorOutcome, reason: ExecutorFailure['reason']): ExecutorFailure {
  if (outcome.ok) assert.fail(`expected ${reason}, got ${outcome.result_kind}`);
  assert.equal(outcome.reason, reason, outcome.message);
  return outcome;
}

describe('Claude Code preset', () => {
  let workspace: string;
  before(() => {
    workspace = demoWorkspace();
  });
  const claude = (): ReturnType<typeof createClaudeCodeExecutor> =>
    createClaudeCodeExecutor({ args: ['--model', 'sonnet'], envAllowlist: FAKE_VARIABLES });

  it('runs `claude -p --output-format json` with the turn prompt on stdin and reads the recorded envelope', async () => {
    const fake = fakeTool('claude', 'claude-code/success.json');
    const request = await demoRequest(workspace, { turnKey: CLAUDE_SAMPLE_KEY });
    const outcome = success(await claude().run(request, runOptions(workspace, fake.env)));
    const call = fake.recorded();
    assert.deepEqual(call.argv, ['-p', '--output-format', 'json', '--model', 'sonnet']);
    assert.match(call.stdin, /^# LoopX turn: tidy-notes/);
    assert.ok(call.stdin.includes(CLAUDE_SAMPLE_KEY), 'the prompt names the turn key to answer with');
    assert.ok(call.stdin.includes('`todo_related`'));
    assert.equal(outcome.executor, 'claude-code');
    assert.equal(outcome.result_kind, 'validated_completion');
    assert.deepEqual(outcome.result.changed_files, ['notes/bikes.md', 'notes/bread.md', 'notes/gardening.md']);
    assert.deepEqual(outcome.usage, {
      input_tokens: 31 + 10240 + 88412,
      output_tokens: 2210,
      cached_input_tokens: 88412,
      cost_usd: 0.18734,
      estimated: false,
      source: 'claude_code',
    });
    assert.equal(outcome.session_id, '4f1c2a9e-7b3d-4e8a-9c61-2d5f0b8e1a47');
  });

  it('reports a failed run (error sample, exit 1) as non_zero_exit and still records its cost', async () => {
    const fake = fakeTool('claude', 'claude-code/error-max-turns.json', 1);
    const outcome = failure(
      await claude().run(await demoRequest(workspace, { turnKey: CLAUDE_SAMPLE_KEY }), runOptions(workspace, fake.env)),
      'non_zero_exit',
    );
    assert.match(outcome.message, /error_max_turns/);
    assert.equal(outcome.usage?.cost_usd, 0.52117);
    assert.equal(outcome.usage?.output_tokens, 9120);
    assert.equal(outcome.session_id, '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a');
  });

  it('reports is_error with exit 0 as agent_reported_error', async () => {
    const fake = fakeTool('claude', 'claude-code/error-max-turns.json', 0);
    const outcome = failure(
      await claude().run(await demoRequest(workspace, { turnKey: CLAUDE_SAMPLE_KEY }), runOptions(workspace, fake.env)),
      'agent_reported_error',
    );
    assert.match(outcome.message, /error_max_turns/);
  });

  it('reports a final message without a result object as malformed_result, with usage', async () => {
    const fake = fakeTool('claude', 'claude-code/no-result-object.json');
    const outcome = failure(
      await claude().run(await demoRequest(workspace, { turnKey: CLAUDE_SAMPLE_KEY }), runOptions(workspace, fake.env)),
      'malformed_result',
    );
    assert.match(outcome.message, /no JSON result object/);
    assert.equal(outcome.usage?.cost_usd, 0.18734);
  });

  it('passes the tool its API key but not unrelated secrets', async () => {
    const fake = fakeTool('claude', 'claude-code/success.json');
    const probe = path.join(tempDir(), 'env.json');
    const script = path.join(tempDir(), 'claude');
    fs.writeFileSync(
      script,
      `#!/usr/bin/env node\nrequire('fs').writeFileSync(${JSON.stringify(probe)}, JSON.stringify(process.env));\nprocess.stdout.write(require('fs').readFileSync(process.env.FAKE_SAMPLE, 'utf8'));\n`,
    );
    fs.chmodSync(script, 0o755);
    const env = { ...fake.env, PATH: `${path.dirname(script)}${path.delimiter}${process.env['PATH'] ?? ''}` };
    success(
      await claude().run(await demoRequest(workspace, { turnKey: CLAUDE_SAMPLE_KEY }), runOptions(workspace, env)),
    );
    const seen = JSON.parse(fs.readFileSync(probe, 'utf8')) as Record<string, string>;
    assert.equal(seen['ANTHROPIC_API_KEY'], 'sk-ant-test-key-for-the-fake-tool-only');
    assert.equal(seen['UNRELATED_SECRET'], undefined);
  });
});

describe('Codex preset', () => {
  let workspace: string;
  before(() => {
    workspace = demoWorkspace();
  });
  const codex = (): ReturnType<typeof createCodexExecutor> =>
    createCodexExecutor({ args: ['--skip-git-repo-check'], envAllowlist: FAKE_VARIABLES });
  const request = (): ReturnType<typeof demoRequest> =>
    demoRequest(workspace, { agentId: 'codex-main', todoId: 'todo_index', turnKey: CODEX_SAMPLE_KEY });

  it('runs `codex exec --json … -` with the prompt on stdin and reads the final agent message and token usage', async () => {
    const fake = fakeTool('codex', 'codex/success.jsonl');
    const outcome = success(await codex().run(await request(), runOptions(workspace, fake.env)));
    const call = fake.recorded();
    assert.deepEqual(call.argv, ['exec', '--json', '--skip-git-repo-check', '-']);
    assert.match(call.stdin, /You are the agent `codex-main`/);
    assert.equal(outcome.result_kind, 'validated_completion');
    assert.deepEqual(outcome.result.todo, {
      todo_id: 'todo_index',
      disposition: 'done',
      evidence: 'notes/index.md lists 3 notes by tag',
      successor: { text: 'Link notes/index.md from the README.', priority: 'P3' },
    });
    assert.deepEqual(outcome.usage, {
      input_tokens: 24763,
      output_tokens: 1122,
      cached_input_tokens: 24448,
      cost_usd: null,
      estimated: false,
      source: 'codex',
    });
    assert.equal(outcome.session_id, '0199a213-81c0-7800-8aa1-bbab2a035a53');
  });

  it('reports turn.failed (error sample, exit 1) as non_zero_exit with the error message', async () => {
    const fake = fakeTool('codex', 'codex/turn-failed.jsonl', 1);
    const outcome = failure(await codex().run(await request(), runOptions(workspace, fake.env)), 'non_zero_exit');
    assert.match(outcome.message, /stream disconnected before completion/);
    assert.equal(outcome.usage, null, 'no turn completed, so Codex reported no usage');
  });

  it('reports turn.failed with exit 0 as agent_reported_error', async () => {
    const fake = fakeTool('codex', 'codex/turn-failed.jsonl', 0);
    failure(await codex().run(await request(), runOptions(workspace, fake.env)), 'agent_reported_error');
  });
});

describe('executor configuration in the registry', () => {
  const goal = (executor: unknown): Record<string, unknown> => ({
    id: 'g',
    coordination: { registered_agents: ['a'], agent_profiles: { a: { executor } } },
  });

  it('reads coordination.agent_profiles.<agent>.executor and builds the preset', () => {
    const config = readAgentExecutorConfig(
      goal({
        preset: 'codex',
        args: ['--skip-git-repo-check'],
        timeout_minutes: 5,
        env_allowlist: ['OPENAI_BASE_URL'],
      }),
      'a',
    );
    assert.ok(config !== null);
    assert.equal(executorTimeoutMs(config), 300_000);
    assert.equal(createAgentExecutor(config).kind, 'codex');
    assert.equal(readAgentExecutorConfig({ id: 'g' }, 'a'), null);
    assert.equal(executorTimeoutMs({ preset: 'claude-code' }), 20 * 60_000);
  });

  it('refuses an invalid configuration with the field and the fix', () => {
    const cases: [unknown, RegExp][] = [
      [{ preset: 'command' }, /executor\.command: is required for the command preset/],
      [{ preset: 'claude-code', timeout_minute: 5 }, /timeout_minute/],
      [{ preset: 'codex', env_allowlist: ['NOT-A-NAME'] }, /env_allowlist\.0: must be an environment variable name/],
      [{ preset: 'bash -c "evil"' }, /executor\.preset/],
      [{ preset: 'command', command: 'node agent.js' }, /executor\.command/],
    ];
    for (const [executor, message] of cases) {
      assert.throws(
        () => readAgentExecutorConfig(goal(executor), 'a'),
        (error: unknown) => isLoopxError(error, 'executor_config_invalid') && message.test(error.message),
      );
    }
  });

  it('accepts kind as an alias of preset, and refuses the two disagreeing', () => {
    const viaKind = readAgentExecutorConfig(goal({ kind: 'vscode-lm', vendor: 'copilot', family: 'gpt-4o' }), 'a');
    assert.deepEqual(viaKind, { preset: 'vscode-lm', vendor: 'copilot', family: 'gpt-4o' });
    assert.equal(executorTimeoutMs(viaKind!), 5 * 60_000);
    // kind's preset rules apply as preset's do.
    assert.throws(
      () => readAgentExecutorConfig(goal({ kind: 'command' }), 'a'),
      (error: unknown) =>
        isLoopxError(error, 'executor_config_invalid') && /executor\.command: is required/.test(error.message),
    );
    const both = readAgentExecutorConfig(goal({ preset: 'codex', kind: 'codex' }), 'a');
    assert.deepEqual(both, { preset: 'codex' });
    assert.throws(
      () => readAgentExecutorConfig(goal({ preset: 'codex', kind: 'vscode-lm' }), 'a'),
      (error: unknown) =>
        isLoopxError(error, 'executor_config_invalid') &&
        /executor\.kind: is an alias of preset and says 'vscode-lm' while preset says 'codex'/.test(error.message),
    );
    assert.throws(
      () => readAgentExecutorConfig(goal({ args: ['x'] }), 'a'),
      (error: unknown) =>
        isLoopxError(error, 'executor_config_invalid') &&
        /executor\.preset: is required \(or its alias kind\)/.test(error.message),
    );
    assert.throws(
      () => readAgentExecutorConfig(goal({ kind: 'bash' }), 'a'),
      (error: unknown) => isLoopxError(error, 'executor_config_invalid') && /executor\.kind/.test(error.message),
    );
  });

  it('needs the host to say how to start the demo agent', () => {
    // No host installed one (another suite of this process may have: set it aside).
    const installed = installDemoAgent(undefined);
    try {
      assert.throws(
        () => createAgentExecutor({ preset: 'demo' }),
        (error: unknown) => isLoopxError(error, 'demo_agent_unavailable'),
      );
      installDemoAgent([process.execPath, 'installed.js']);
      assert.equal(createAgentExecutor({ preset: 'demo' }).kind, 'demo', 'the installed demo agent is used');
    } finally {
      installDemoAgent(installed);
    }
    assert.equal(
      createAgentExecutor({ preset: 'demo' }, { demoAgentArgv: [process.execPath, 'demo.js'] }).kind,
      'demo',
    );
  });
});

describe('reading a final-message CLI (Codex, opencode)', () => {
  const codexEvents = (...events: object[]): string => events.map((event) => JSON.stringify(event)).join('\n');
  const codexMessage = (text: string): object => ({ type: 'item.completed', item: { type: 'agent_message', text } });
  const opencodeText = (text: string): object => ({ type: 'text', sessionID: 's1', part: { text } });

  it('takes the result object from the final message', () => {
    const codex = readCodexOutput(codexEvents(codexMessage('Done.\n{"result_kind":"no_progress"}')));
    assert.deepEqual(codex.candidate, { result_kind: 'no_progress' });
    assert.equal(codex.missing, null);
    const opencode = readOpencodeOutput(codexEvents(opencodeText('{"result_kind":"no_progress"}')));
    assert.deepEqual(opencode.candidate, { result_kind: 'no_progress' });
    assert.equal(opencode.sessionId, 's1');
  });

  it('says how to run the CLI when it printed no final message, and what the prompt asks when the message holds no object', () => {
    assert.match(readCodexOutput(codexEvents({ type: 'turn.started' })).missing ?? '', /run it as codex exec --json/);
    assert.match(readCodexOutput(codexEvents(codexMessage('all done'))).missing ?? '', /Codex's final message/);
    assert.match(readOpencodeOutput('').missing ?? '', /run it as opencode run --format json/);
    assert.match(readOpencodeOutput(codexEvents(opencodeText('all done'))).missing ?? '', /opencode's final message/);
  });

  it("reports the agent's own error instead of a missing result, even beside a final message", () => {
    const codex = readCodexOutput(
      codexEvents(codexMessage('{"result_kind":"no_progress"}'), { type: 'turn.failed', error: { message: 'boom' } }),
    );
    assert.deepEqual([codex.candidate, codex.missing, codex.agentError], [null, null, 'boom']);
    const opencode = readOpencodeOutput(
      codexEvents(opencodeText('{"result_kind":"no_progress"}'), { type: 'error', error: { message: 'bad key' } }),
    );
    assert.equal(opencode.candidate, null);
    assert.match(opencode.agentError ?? '', /bad key/);
  });
});
