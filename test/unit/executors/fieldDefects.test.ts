import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createClaudeCodeExecutor } from '../../../src/core/executors/claudeCode';
import { createCodexExecutor } from '../../../src/core/executors/codex';
import { readAgentExecutorConfig, createAgentExecutor } from '../../../src/core/executors/config';
import { createOpencodeExecutor } from '../../../src/core/executors/opencode';
import { buildAgentEnv } from '../../../src/core/executors/process';
import type { ExecutorFailure, ExecutorOutcome, ExecutorSuccess } from '../../../src/core/executors/types';
import { isLoopxError, withReadOnlyHint } from '../../../src/core/errors';
import type { HostRequest } from '../../../src/core/protocol/contract';
import { demoRequest, demoWorkspace, fakeToolBin, FIXTURES, isAlive, runOptions, tempDir } from './helpers';
import { waitUntil } from '../../support/waitFor';

/**
 * The field defects of issue 28 at the executor level, each against a fake agent CLI that prints
 * the real CLI's output format (test/fixtures/executors/README.md).
 */

const CLAUDE_KEY = 'sha256:fec9ddb38c36754aab416829e37f6dbe9cba7aac1ac236791b10a4f6bc5cfd7f';
const CODEX_KEY = 'sha256:35929876bd8579655a64f3a7b99ee5498c831d865c70a6653a40fb26020cff9b';
const FAKE = ['FAKE_*'];

interface Fake {
  env: NodeJS.ProcessEnv;
  recorded: () => { argv: string[]; stdin: string; env: Record<string, string> };
}

function fakeTool(tool: string, sample: string, extra: Record<string, string> = {}): Fake {
  const record = path.join(tempDir(), 'record.json');
  const env: NodeJS.ProcessEnv = {
    PATH: `${fakeToolBin(tool)}${path.delimiter}${process.env['PATH'] ?? ''}`,
    HOME: tempDir('loopx-home-'),
    FAKE_SAMPLE: path.join(FIXTURES, sample),
    FAKE_RECORD: record,
    FAKE_EXIT_CODE: '0',
    ...extra,
  };
  return { env, recorded: () => JSON.parse(fs.readFileSync(record, 'utf8')) as ReturnType<Fake['recorded']> };
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

function resuming(request: HostRequest, sessionId: string): HostRequest {
  return { ...request, session: { action: 'resume', session_id: sessionId } };
}

describe('issue 28 field defects: the executors', () => {
  let workspace: string;
  before(() => {
    workspace = demoWorkspace();
  });
  const claudeRequest = (): Promise<HostRequest> => demoRequest(workspace, { turnKey: CLAUDE_KEY });
  const codexRequest = (): Promise<HostRequest> =>
    demoRequest(workspace, { agentId: 'codex-main', todoId: 'todo_index', turnKey: CODEX_KEY });

  describe('2. provider settings reach the agent, LoopX secrets never do', () => {
    const provider = {
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:8787/gateway',
      ANTHROPIC_AUTH_TOKEN: 'gateway-token',
      CLAUDE_CODE_USE_BEDROCK: '1',
      AWS_REGION: 'eu-west-1',
      AWS_PROFILE: 'bedrock',
      CLAUDE_CODE_USE_VERTEX: '1',
      CLOUD_ML_REGION: 'europe-west4',
      ANTHROPIC_VERTEX_PROJECT_ID: 'my-project',
      GOOGLE_APPLICATION_CREDENTIALS: '/creds/vertex.json',
      HTTPS_PROXY: 'http://proxy:3128',
      https_proxy: 'http://proxy:3128',
      NO_PROXY: 'localhost',
      NODE_EXTRA_CA_CERTS: '/certs/corp.pem',
      SSL_CERT_FILE: '/certs/bundle.pem',
      DISABLE_TELEMETRY: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DO_NOT_TRACK: '1',
      OPENAI_BASE_URL: 'http://127.0.0.1:8788/v1',
      LOOPX_STATUS_TOKEN: 'status-token-never-passed',
      LOOPX_REGISTRY: '/elsewhere/registry.json',
      UNRELATED_SECRET: 'never-passed',
    };

    it('Claude Code gets the Anthropic, Bedrock, Vertex, proxy and telemetry variables, not OpenAI, LOOPX_* or others', async () => {
      const fake = fakeTool('claude', 'claude-code/success.json', provider);
      success(
        await createClaudeCodeExecutor({ envAllowlist: FAKE }).run(
          await claudeRequest(),
          runOptions(workspace, fake.env),
        ),
      );
      const seen = fake.recorded().env;
      for (const name of Object.keys(provider).filter((n) => !/^(OPENAI_|LOOPX_|UNRELATED)/.test(n)))
        assert.equal(seen[name], provider[name as keyof typeof provider], `${name} reaches Claude Code`);
      for (const name of ['OPENAI_BASE_URL', 'LOOPX_STATUS_TOKEN', 'LOOPX_REGISTRY', 'UNRELATED_SECRET'])
        assert.equal(seen[name], undefined, `${name} stays out`);
      assert.equal(seen['LOOPX_TURN'], 'turn-0002', 'the LOOPX_* set on purpose are there');
    });

    it("Codex gets OPENAI_*, CODEX_* and the variable its config's env_key names, not ANTHROPIC_*", async () => {
      const codexHome = tempDir('loopx-codex-home-');
      fs.writeFileSync(
        path.join(codexHome, 'config.toml'),
        'model_provider = "gateway"\n\n[model_providers.gateway]\nname = "Gateway"\nbase_url = "http://127.0.0.1:8788/v1"\nenv_key = "GATEWAY_API_KEY"\n',
      );
      const fake = fakeTool('codex', 'codex/success.jsonl', {
        ...provider,
        CODEX_HOME: codexHome,
        GATEWAY_API_KEY: 'gw-key',
      });
      success(
        await createCodexExecutor({ envAllowlist: FAKE }).run(await codexRequest(), runOptions(workspace, fake.env)),
      );
      const seen = fake.recorded().env;
      assert.equal(seen['OPENAI_BASE_URL'], provider.OPENAI_BASE_URL);
      assert.equal(seen['CODEX_HOME'], codexHome);
      assert.equal(seen['GATEWAY_API_KEY'], 'gw-key', "the config's env_key is passed");
      assert.equal(seen['HTTPS_PROXY'], provider.HTTPS_PROXY);
      assert.equal(seen['DO_NOT_TRACK'], '1');
      for (const name of ['ANTHROPIC_BASE_URL', 'AWS_REGION', 'LOOPX_STATUS_TOKEN', 'UNRELATED_SECRET'])
        assert.equal(seen[name], undefined, `${name} stays out`);
    });

    it('never copies LOOPX_* even when listed, and the schema refuses listing one', () => {
      const env = buildAgentEnv({ PATH: '/bin', LOOPX_STATUS_TOKEN: 't', ANTHROPIC_MODEL: 'm' }, [
        'LOOPX_STATUS_TOKEN',
        'LOOPX_*',
        'ANTHROPIC_*',
      ]);
      assert.deepEqual(env, { PATH: '/bin', ANTHROPIC_MODEL: 'm' });
      assert.throws(
        () =>
          readAgentExecutorConfig(
            {
              id: 'g',
              coordination: {
                agent_profiles: { a: { executor: { preset: 'claude-code', env_allowlist: ['LOOPX_STATUS_TOKEN'] } } },
              },
            },
            'a',
          ),
        (error: unknown) =>
          isLoopxError(error, 'executor_config_invalid') &&
          /env_allowlist\.0: LOOPX_STATUS_TOKEN is one of LoopX's own/.test(error.message),
      );
    });

    it('an authentication failure names the variables passed and env_allowlist', async () => {
      const fake = fakeTool('claude', 'claude-code/not-logged-in.json', {
        FAKE_EXIT_CODE: '1',
        ANTHROPIC_BASE_URL: 'http://gw',
      });
      const outcome = failure(
        await createClaudeCodeExecutor({ envAllowlist: FAKE }).run(
          await claudeRequest(),
          runOptions(workspace, fake.env),
        ),
        'non_zero_exit',
      );
      assert.match(outcome.message, /Not logged in/);
      assert.match(outcome.message, /authentication failure/);
      assert.match(outcome.message, /ANTHROPIC_\*, CLAUDE_CONFIG_DIR, CLAUDE_CODE_USE_BEDROCK/);
      assert.match(outcome.message, /set and passed: [^)]*ANTHROPIC_BASE_URL/);
      assert.match(outcome.message, /executor\.env_allowlist/);
    });
  });

  describe('4. resume reaches the CLI', () => {
    const SESSION = '4f1c2a9e-7b3d-4e8a-9c61-2d5f0b8e1a47';

    it('claude gets --resume <session> when the plan says resume, and not with resume: never', async () => {
      const fake = fakeTool('claude', 'claude-code/success.json');
      const request = resuming(await claudeRequest(), SESSION);
      success(
        await createClaudeCodeExecutor({ args: ['--model', 'sonnet'], envAllowlist: FAKE }).run(
          request,
          runOptions(workspace, fake.env),
        ),
      );
      assert.deepEqual(fake.recorded().argv, [
        '-p',
        '--output-format',
        'json',
        '--resume',
        SESSION,
        '--model',
        'sonnet',
      ]);
      success(
        await createClaudeCodeExecutor({ resume: 'never', envAllowlist: FAKE }).run(
          request,
          runOptions(workspace, fake.env),
        ),
      );
      assert.deepEqual(fake.recorded().argv, ['-p', '--output-format', 'json']);
      success(
        await createClaudeCodeExecutor({ envAllowlist: FAKE }).run(
          await claudeRequest(),
          runOptions(workspace, fake.env),
        ),
      );
      assert.deepEqual(fake.recorded().argv, ['-p', '--output-format', 'json'], 'start_new: no --resume');
    });

    it('codex runs `codex exec --json [exec options] resume <session> -`', async () => {
      const fake = fakeTool('codex', 'codex/success.jsonl');
      const request = resuming(await codexRequest(), SESSION);
      success(
        await createCodexExecutor({ args: ['--skip-git-repo-check'], envAllowlist: FAKE }).run(
          request,
          runOptions(workspace, fake.env),
        ),
      );
      assert.deepEqual(fake.recorded().argv, ['exec', '--json', '--skip-git-repo-check', 'resume', SESSION, '-']);
    });

    it('the registry takes resume: auto | never for the agent CLI presets only', () => {
      const goal = (executor: unknown): Record<string, unknown> => ({
        id: 'g',
        coordination: { agent_profiles: { a: { executor } } },
      });
      assert.deepEqual(readAgentExecutorConfig(goal({ preset: 'codex', resume: 'never' }), 'a'), {
        preset: 'codex',
        resume: 'never',
      });
      assert.throws(
        () => readAgentExecutorConfig(goal({ preset: 'command', command: ['x'], resume: 'auto' }), 'a'),
        (error: unknown) => isLoopxError(error, 'executor_config_invalid') && /executor\.resume/.test(error.message),
      );
      assert.throws(
        () => readAgentExecutorConfig(goal({ preset: 'codex', resume: 'always' }), 'a'),
        (error: unknown) => isLoopxError(error, 'executor_config_invalid') && /executor\.resume/.test(error.message),
      );
    });
  });

  describe("5. Codex's transient errors", () => {
    it('a "Reconnecting… 1/5" error event followed by a completed turn is a good turn', async () => {
      const fake = fakeTool('codex', 'codex/transient-error.jsonl');
      const outcome = success(
        await createCodexExecutor({ envAllowlist: FAKE }).run(await codexRequest(), runOptions(workspace, fake.env)),
      );
      assert.equal(outcome.result_kind, 'validated_completion');
      assert.equal(outcome.usage?.output_tokens, 1122);
    });

    it('an error no completed turn follows still fails the turn', async () => {
      const fake = fakeTool('codex', 'codex/fatal-error.jsonl');
      const outcome = failure(
        await createCodexExecutor({ envAllowlist: FAKE }).run(await codexRequest(), runOptions(workspace, fake.env)),
        'agent_reported_error',
      );
      assert.match(outcome.message, /stream disconnected before completion/);
    });
  });

  describe('6. the whole process tree of a turn ends', () => {
    let orphan: number | null = null;
    after(() => {
      if (orphan !== null && isAlive(orphan)) process.kill(orphan, 'SIGKILL');
    });

    it('a tool the agent started in its own session (setsid) does not outlive the agent killed with SIGKILL', async () => {
      const pidFile = path.join(tempDir(), 'orphan.pid');
      const fake = fakeTool('claude', 'claude-code/success.json', { FAKE_ORPHAN_PID: pidFile, FAKE_KILL_SELF: '1' });
      const outcome = failure(
        await createClaudeCodeExecutor({ envAllowlist: FAKE }).run(
          await claudeRequest(),
          runOptions(workspace, fake.env),
        ),
        'non_zero_exit',
      );
      assert.match(outcome.message, /killed by SIGKILL/);
      orphan = Number(fs.readFileSync(pidFile, 'utf8'));
      assert.ok(orphan > 0);
      // The run resolves only after the sweep: the orphan is gone (or a zombie about to be reaped).
      await waitUntil(() => !isAlive(orphan as number), `the setsid child ${orphan} survived the turn`, 10_000);
    });
  });

  describe('7. claimed changes against the working tree', () => {
    it("a write Claude's envelope lists in permission_denials, claimed in changed_files, is a problem", async () => {
      const fake = fakeTool('claude', 'claude-code/denied-write.json');
      const outcome = success(
        await createClaudeCodeExecutor({ envAllowlist: FAKE, changeSlackMs: 0 }).run(
          await claudeRequest(),
          runOptions(workspace, fake.env),
        ),
      );
      assert.deepEqual(outcome.claimed_changes?.denials, [{ tool: 'Write', path: 'notes/index.md' }]);
      assert.deepEqual(outcome.claimed_changes?.problems, [
        "notes/index.md: claimed as changed but the agent's Write of it was denied (permission_denials)",
      ]);
    });

    it('a claimed file left unchanged or missing is a problem; files really written are not', async () => {
      const ws = demoWorkspace();
      const request = await demoRequest(ws, { turnKey: CLAUDE_KEY });
      const claude = createClaudeCodeExecutor({ envAllowlist: FAKE, changeSlackMs: 0 });
      // The sample claims notes/bikes.md, notes/bread.md and notes/gardening.md.
      const partly = fakeTool('claude', 'claude-code/success.json', { FAKE_TOUCH: 'notes/bikes.md,notes/bread.md' });
      fs.rmSync(path.join(ws, 'notes', 'gardening.md'));
      const some = success(await claude.run(request, runOptions(ws, partly.env)));
      assert.deepEqual(some.claimed_changes?.problems, [
        'notes/gardening.md: claimed as changed but it does not exist in the working tree',
      ]);
      const untouched = fakeTool('claude', 'claude-code/success.json', { FAKE_TOUCH: 'notes/gardening.md' });
      const stale = success(await claude.run(request, runOptions(ws, untouched.env)));
      assert.deepEqual(stale.claimed_changes?.problems, [
        'notes/bikes.md: claimed as changed but it was not modified during the turn',
        'notes/bread.md: claimed as changed but it was not modified during the turn',
      ]);
      const all = fakeTool('claude', 'claude-code/success.json', {
        FAKE_TOUCH: 'notes/bikes.md,notes/bread.md,notes/gardening.md',
      });
      assert.deepEqual(success(await claude.run(request, runOptions(ws, all.env))).claimed_changes?.problems, []);
    });
  });

  describe('8. Codex: loopx by absolute path, a writable state location', () => {
    it('passes LOOPX_CLI as an absolute path and each writable root as --add-dir', async () => {
      const cliDir = tempDir('loopx-cli-');
      const cli = path.join(cliDir, 'loopx');
      fs.writeFileSync(cli, '#!/bin/sh\n');
      fs.chmodSync(cli, 0o755);
      const fake = fakeTool('codex', 'codex/success.jsonl');
      const env = { ...fake.env, PATH: `${fake.env['PATH'] ?? ''}${path.delimiter}${cliDir}` };
      const stateDir = path.join(workspace, '.codex', 'goals', 'tidy-notes');
      const runtimeDir = path.join(workspace, '.loopx', 'runtime', 'goals', 'tidy-notes');
      success(
        await createCodexExecutor({ envAllowlist: FAKE }).run(await codexRequest(), {
          ...runOptions(workspace, env),
          writableRoots: [stateDir, runtimeDir, stateDir],
        }),
      );
      const call = fake.recorded();
      assert.deepEqual(call.argv, ['exec', '--json', '--add-dir', stateDir, '--add-dir', runtimeDir, '-']);
      assert.equal(call.env['LOOPX_CLI'], cli, 'the loopx found on the PATH, as an absolute path');
    });
  });

  describe('the opencode preset', () => {
    it('runs `opencode run --format json` with the prompt on stdin and reads the last text, tokens, cost and session', async () => {
      const fake = fakeTool('opencode', 'opencode/success.jsonl', {
        ANTHROPIC_API_KEY: 'k',
        OPENCODE_CONFIG: '/c.json',
      });
      const executor = createAgentExecutor({
        preset: 'opencode',
        args: ['--model', 'anthropic/claude-sonnet-4-5'],
        env_allowlist: FAKE,
      });
      const outcome = success(await executor.run(await codexRequest(), runOptions(workspace, fake.env)));
      const call = fake.recorded();
      assert.deepEqual(call.argv, ['run', '--format', 'json', '--model', 'anthropic/claude-sonnet-4-5']);
      assert.match(call.stdin, /You are the agent `codex-main`/);
      assert.equal(call.env['ANTHROPIC_API_KEY'], 'k');
      assert.equal(call.env['OPENCODE_CONFIG'], '/c.json');
      assert.equal(outcome.executor, 'opencode');
      assert.equal(outcome.result_kind, 'validated_completion');
      assert.deepEqual(outcome.usage, {
        input_tokens: 1200 + 9000 + 500 + 300 + 10000,
        output_tokens: 300 + 40 + 700,
        cached_input_tokens: 19000,
        cost_usd: 0.02,
        estimated: false,
        source: 'opencode',
      });
      assert.equal(outcome.session_id, 'ses_3b11bfdcdffeITCXse4fCuIRnU');
    });

    it('resumes with --session <id>', async () => {
      const fake = fakeTool('opencode', 'opencode/success.jsonl');
      const request = resuming(await codexRequest(), 'ses_3b11bfdcdffeITCXse4fCuIRnU');
      success(await createOpencodeExecutor({ envAllowlist: FAKE }).run(request, runOptions(workspace, fake.env)));
      assert.deepEqual(fake.recorded().argv, [
        'run',
        '--format',
        'json',
        '--session',
        'ses_3b11bfdcdffeITCXse4fCuIRnU',
      ]);
    });

    it('an error event (exit 1) is non_zero_exit naming the error and, for a missing key, env_allowlist', async () => {
      const fake = fakeTool('opencode', 'opencode/auth-error.jsonl', { FAKE_EXIT_CODE: '1' });
      const outcome = failure(
        await createOpencodeExecutor({ envAllowlist: FAKE }).run(await codexRequest(), runOptions(workspace, fake.env)),
        'non_zero_exit',
      );
      assert.match(outcome.message, /ProviderAuthError: Missing API key/);
      assert.match(outcome.message, /env_allowlist/);
      assert.equal(outcome.session_id, 'ses_3b11bfdcdffeITCXse4fCuIRnU');
    });
  });
});

describe('issue 28 defect 8: EROFS is a clear error, not internal_error', () => {
  it('maps a read-only file system error to read_only_file_system naming the path and the Codex fix', () => {
    const erofs = Object.assign(
      new Error("EROFS: read-only file system, open '/p/.codex/goals/g/ACTIVE_GOAL_STATE.md'"),
      {
        code: 'EROFS',
        path: '/p/.codex/goals/g/ACTIVE_GOAL_STATE.md',
        syscall: 'open',
      },
    );
    const mapped = withReadOnlyHint(erofs);
    assert.ok(isLoopxError(mapped, 'read_only_file_system'));
    assert.match(mapped.message, /cannot write \/p\/\.codex\/goals\/g\/ACTIVE_GOAL_STATE\.md/);
    assert.match(mapped.message, /--add-dir/);
    const other = new Error('boom');
    assert.equal(withReadOnlyHint(other), other);
  });
});
