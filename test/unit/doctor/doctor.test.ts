import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import {
  editorFindings,
  nodeFinding,
  runtimeRootFinding,
  statusPortFinding,
  type DoctorFinding,
} from '../../../src/core/doctor/checks';
import { doctor, type DoctorResult } from '../../../src/core/ops/doctor';
import type { OperationEnvironment } from '../../../src/core/ops/operation';
import { runOperation } from '../../../src/core/ops/run';
import { connectedProject, tempDir } from '../agents/helpers';
import { runLoopx } from '../cli/run';

/**
 * `loopx doctor` against stand-in agent CLIs: small scripts named `claude`, `codex` and `opencode` on
 * a PATH of their own, answering `--version` and `--help` the way the real ones do (or not, per test).
 */

interface FakeCli {
  version?: string | null;
  help?: string;
}

function fakeBin(clis: Record<string, FakeCli>): string {
  const bin = tempDir();
  for (const [name, cli] of Object.entries(clis)) {
    const file = path.join(bin, name);
    const version = cli.version === null ? 'exit 3' : `echo '${cli.version ?? `1.0.0 (${name})`}'`;
    fs.writeFileSync(
      file,
      `#!/bin/sh\ncase "$*" in\n  *--version*) ${version} ;;\n  *--help*) echo '${cli.help ?? ''}' ;;\nesac\n`,
    );
    fs.chmodSync(file, 0o755);
  }
  return bin;
}

const CLAUDE_HELP = 'Usage: claude [options] -p, --print  --output-format <format>  --resume';
const CODEX_HELP = 'Usage: codex exec [OPTIONS] --json  --sandbox <mode>';

async function runDoctor(
  registry: string,
  env: NodeJS.ProcessEnv,
  home = path.dirname(path.dirname(registry)),
): Promise<DoctorResult> {
  const environment: OperationEnvironment = {
    cwd: path.dirname(path.dirname(registry)),
    env,
    clock: fixedClock('2026-01-15T10:00:00Z'),
    homeDir: home,
    registryPath: registry,
  };
  return runOperation(doctor, { statusPort: 0 }, environment);
}

function byId(result: DoctorResult, id: string): DoctorFinding {
  const found = result.checks.find((check) => check.id === id);
  assert.ok(found, `no finding ${id} among ${result.checks.map((c) => c.id).join(', ')}`);
  return found;
}

function agentsProject(profiles: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return connectedProject({
    coordination: { registered_agents: Object.keys(profiles), agent_profiles: profiles },
    ...extra,
  });
}

describe('doctor', () => {
  it("finds each agent's CLI with its version and headless flags, and names the provider variables set, never their values", async () => {
    const bin = fakeBin({
      claude: { version: '2.1.197 (Claude Code)', help: CLAUDE_HELP },
      codex: { version: 'codex-cli 0.171.0', help: CODEX_HELP },
    });
    const { registry } = agentsProject({
      claude: { executor: { preset: 'claude-code' } },
      cx: { executor: { preset: 'codex', args: ['--sandbox', 'workspace-write'] } },
    });
    const secret = 'sk-ant-api03-THIS-VALUE-MUST-NOT-APPEAR';
    const result = await runDoctor(registry, {
      PATH: bin,
      ANTHROPIC_API_KEY: secret,
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
      OPENAI_API_KEY: 'sk-other-secret-value',
    });
    assert.equal(result.ok, true, JSON.stringify(result.checks.filter((c) => c.level === 'error')));
    assert.match(byId(result, 'agent.g.claude.binary').message, /2\.1\.197 \(Claude Code\)/);
    assert.equal(byId(result, 'agent.g.claude.flags').level, 'ok');
    assert.match(byId(result, 'agent.g.cx.binary').message, /codex-cli 0\.171\.0/);
    assert.equal(byId(result, 'agent.g.cx.flags').level, 'ok');
    const provider = byId(result, 'agent.g.claude.provider');
    assert.equal(provider.level, 'ok');
    assert.match(provider.message, /ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL/);
    const everything = JSON.stringify(result);
    assert.ok(!everything.includes(secret) && !everything.includes('sk-other-secret-value'), 'no value is reported');
    // The original's check fields beside ours.
    for (const check of result.checks) {
      assert.deepEqual(Object.keys(check).sort(), ['detail', 'fix', 'id', 'level', 'message', 'ok', 'required']);
      assert.equal(check.ok, check.level === 'ok');
    }
    assert.equal(result.mode, 'standard');
    assert.equal(result.node.version, process.versions.node);
  });

  it('is an error, with the fix, when the CLI is missing or lacks a flag LoopX runs it with', async () => {
    const bin = fakeBin({ claude: { help: 'Usage: claude [options] -p, --print' } });
    const { registry } = agentsProject({
      claude: { executor: { preset: 'claude-code' } },
      cx: { executor: { preset: 'codex' } },
    });
    const result = await runDoctor(registry, { PATH: bin, ANTHROPIC_API_KEY: 'x' });
    assert.equal(result.ok, false);
    const flags = byId(result, 'agent.g.claude.flags');
    assert.equal(flags.level, 'error');
    assert.match(flags.message, /does not list --output-format/);
    const missing = byId(result, 'agent.g.cx.binary');
    assert.equal(missing.level, 'error');
    assert.match(missing.message, /codex was not found on PATH/);
    assert.match(missing.fix ?? '', /npm i -g @openai\/codex.*loopx agent configure --goal-id g --agent-id cx/);
    assert.equal(result.summary.error, 2);
  });

  it('warns when a CLI has neither a login nor provider credentials, and when env_allowlist names unset variables', async () => {
    const bin = fakeBin({ claude: { help: CLAUDE_HELP } });
    const { registry } = agentsProject({
      claude: { executor: { preset: 'claude-code', env_allowlist: ['MY_GATEWAY_TOKEN'] } },
    });
    const home = tempDir();
    const result = await runDoctor(registry, { PATH: bin }, home);
    assert.equal(byId(result, 'agent.g.claude.provider').level, 'warn');
    assert.match(byId(result, 'agent.g.claude.env_allowlist').message, /MY_GATEWAY_TOKEN/);
    // A login file counts as credentials.
    fs.mkdirSync(path.join(home, '.claude'));
    fs.writeFileSync(path.join(home, '.claude', '.credentials.json'), '{}');
    assert.equal(byId(await runDoctor(registry, { PATH: bin }, home), 'agent.g.claude.provider').level, 'ok');
  });

  it("warns about Codex's read-only default sandbox; a state file under .codex/ with workspace-write is ready (LoopX's turns pass --add-dir)", async () => {
    const bin = fakeBin({ codex: { help: CODEX_HELP } });
    const readOnly = agentsProject({ cx: { executor: { preset: 'codex' } } });
    const first = await runDoctor(readOnly.registry, { PATH: bin, OPENAI_API_KEY: 'x' });
    assert.equal(byId(first, 'agent.g.cx.codex_sandbox').level, 'warn');
    assert.match(byId(first, 'agent.g.cx.codex_sandbox').fix ?? '', /--permission-mode workspace-write/);
    // connectedProject keeps the state file at .codex/goals/g/ACTIVE_GOAL_STATE.md.
    const writeable = agentsProject({ cx: { executor: { preset: 'codex', args: ['--sandbox', 'workspace-write'] } } });
    const second = await runDoctor(writeable.registry, { PATH: bin, OPENAI_API_KEY: 'x' });
    assert.equal(byId(second, 'agent.g.cx.codex_sandbox').level, 'ok');
    // LoopX's own Codex turns get the state folder as a writable root: ready, with the flag a user needs named.
    assert.equal(byId(second, 'agent.g.cx.codex_folder').level, 'ok');
    assert.match(byId(second, 'agent.g.cx.codex_folder').message, /read-only.*--add-dir \.codex\/goals\/g\b/);
  });

  it('warns that Codex will not start outside a git repository, unless the project is one or the executor skips the check', async () => {
    const bin = fakeBin({ codex: { help: CODEX_HELP } });
    const args = ['--sandbox', 'workspace-write'];
    const plain = agentsProject({ cx: { executor: { preset: 'codex', args } } });
    const outside = byId(await runDoctor(plain.registry, { PATH: bin, OPENAI_API_KEY: 'x' }), 'agent.g.cx.codex_git');
    assert.equal(outside?.level, 'warn');
    assert.match(outside?.fix ?? '', /git init.*--skip-git-repo-check/);
    fs.mkdirSync(path.join(path.dirname(plain.registry), '..', '.git'));
    fs.writeFileSync(path.join(path.dirname(plain.registry), '..', '.git', 'HEAD'), 'ref: refs/heads/main\n');
    const inGit = await runDoctor(plain.registry, { PATH: bin, OPENAI_API_KEY: 'x' });
    assert.equal(
      inGit.checks.find((f) => f.id === 'agent.g.cx.codex_git'),
      undefined,
    );
    const skipping = agentsProject({ cx: { executor: { preset: 'codex', args: [...args, '--skip-git-repo-check'] } } });
    const skipped = await runDoctor(skipping.registry, { PATH: bin, OPENAI_API_KEY: 'x' });
    assert.equal(
      skipped.checks.find((f) => f.id === 'agent.g.cx.codex_git'),
      undefined,
    );
  });

  it('reports an agent without an executor, an invalid executor, and a registry it cannot parse', async () => {
    const { registry } = connectedProject({
      coordination: { registered_agents: ['bare', 'bad'], agent_profiles: { bad: { executor: { preset: 'nope' } } } },
    });
    const result = await runDoctor(registry, { PATH: '' });
    assert.equal(byId(result, 'agent.g.bare.executor').level, 'warn');
    assert.match(byId(result, 'agent.g.bare.executor').fix ?? '', /loopx agent configure --goal-id g --agent-id bare/);
    assert.equal(byId(result, 'agent.g.bad.executor').level, 'error');
    fs.writeFileSync(registry, '{ not json');
    const broken = await runDoctor(registry, { PATH: '' });
    assert.equal(byId(broken, 'registry_parses').level, 'error');
    assert.equal(broken.ok, false);
    assert.equal(fs.readFileSync(registry, 'utf8'), '{ not json', 'doctor writes nothing');
  });

  it("finds lock files left by processes that are gone, and leaves a live process's lock alone", async () => {
    const { registry } = connectedProject();
    const holder = (pid: number) =>
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: 'x',
        policy: 'mutation',
        pid,
        agent_id: 'a',
        operation: 'test',
        acquired_at: '2026-01-15T10:00:00Z',
        hostname: os.hostname(),
      });
    fs.writeFileSync(`${registry}.loopx-lock`, holder(process.pid));
    assert.equal(byId(await runDoctor(registry, {}), 'stale_locks').level, 'ok', 'our own live lock is not stale');
    // A pid above the kernel's maximum cannot be running.
    fs.writeFileSync(`${registry}.loopx-lock`, holder(2 ** 22 + 1));
    const stale = byId(await runDoctor(registry, {}), 'stale_locks');
    assert.equal(stale.level, 'warn');
    assert.match(stale.message, /registry\.json\.loopx-lock/);
  });

  it('warns on a goal the original LoopX also spends on (its lock files in the goal runtime folder), not before', async () => {
    const { registry } = connectedProject();
    const before = await runDoctor(registry, {});
    assert.equal(
      before.checks.find((c) => c.id === 'goal.g.original_loopx'),
      undefined,
      'no footprint, no warning',
    );
    assert.ok(before.runtime_root !== null);
    // Every quota command of the original leaves its flock file (never deleted) in <runtime>/goals/<goal>/.
    const goalRuntime = path.join(before.runtime_root, 'goals', 'g');
    fs.mkdirSync(goalRuntime, { recursive: true });
    fs.writeFileSync(path.join(goalRuntime, 'rollout-event-log.jsonl.lock'), '');
    const warned = byId(await runDoctor(registry, {}), 'goal.g.original_loopx');
    assert.equal(warned.level, 'warn');
    assert.equal(warned.required, false);
    assert.match(warned.message, /rollout-event-log\.jsonl\.lock/);
    assert.match(warned.message, /one slot past allowed_slots/);
  });

  it('says where the original cannot spend turns: a project that is no git checkout with an origin', async () => {
    const { registry, project } = connectedProject();
    const runtime = (await runDoctor(registry, {})).runtime_root;
    assert.ok(runtime !== null);
    const settlement = async () =>
      (await runDoctor(registry, {})).checks.find((c) => c.id === 'goal.g.original_settlement');
    assert.equal(await settlement(), undefined, 'the original is not active: nothing to say');
    fs.mkdirSync(path.join(runtime, 'goals', 'g'), { recursive: true });
    fs.writeFileSync(path.join(runtime, 'goals', 'g', 'rollout-event-log.jsonl.lock'), '');
    const warned = await settlement();
    assert.ok(warned, 'the original is active and the project has no origin');
    assert.equal(warned.level, 'warn');
    assert.match(warned.message, /valid delivery workspace snapshot/);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: project, stdio: 'ignore' });
    git('init', '-q');
    assert.ok(await settlement(), 'a checkout without an origin still gets no snapshot');
    git('remote', 'add', 'origin', 'https://github.com/example/project.git');
    assert.equal(await settlement(), undefined, 'with an origin the writeback carries the snapshot');
  });

  it('checks Node, the runtime root and the status port', async () => {
    assert.equal(nodeFinding('18.20.0').level, 'error');
    assert.equal(nodeFinding('20.19.0').level, 'ok');
    assert.equal(nodeFinding('24.1.0').level, 'ok');
    const folder = tempDir();
    assert.equal(runtimeRootFinding(path.join(folder, 'runtime', 'deep')).level, 'ok');
    fs.writeFileSync(path.join(folder, 'file'), '');
    const below = runtimeRootFinding(path.join(folder, 'file', 'runtime'));
    assert.equal(below.level, 'error');
    assert.match(below.message, /is a file/);
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as net.AddressInfo).port;
    try {
      assert.equal((await statusPortFinding(port)).level, 'warn');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
    assert.equal((await statusPortFinding(port)).level, 'ok');
  });

  it("adds the editor's findings: workspace trust and language models", () => {
    const [trust] = editorFindings({ trusted: false, languageModels: null, vscodeLmAgents: 0 });
    assert.equal(trust?.level, 'warn');
    const noModels = editorFindings({ trusted: true, languageModels: [], vscodeLmAgents: 1 });
    assert.equal(noModels.find((f) => f.id === 'language_models')?.level, 'error');
    // No vscode-lm agent: a missing model is no warning (a Claude Code user's doctor stays green).
    const unneeded = editorFindings({ trusted: true, languageModels: [], vscodeLmAgents: 0 });
    assert.equal(unneeded.find((f) => f.id === 'language_models')?.level, 'ok');
    const models = editorFindings({ trusted: true, languageModels: ['copilot/gpt-4o'], vscodeLmAgents: 1 });
    assert.equal(models.find((f) => f.id === 'language_models')?.level, 'ok');
  });

  it('loopx doctor exits 1 on an error and prints the findings as JSON with --format json', async () => {
    const { registry, project } = agentsProject({ cx: { executor: { preset: 'codex' } } });
    const run = await runLoopx(['--registry', registry, '--format', 'json', 'doctor', '--status-port', '0'], {
      cwd: project,
      env: { PATH: '', HOME: project },
    });
    assert.equal(run.code, 1);
    const json = run.json();
    assert.equal(json['ok'], false);
    assert.equal(json['schema_version'], 'loopx_doctor_v0');
    assert.ok(Array.isArray(json['checks']));
    assert.match(String(json['fix']), /codex/);
    const fine = await runLoopx(['--registry', registry, 'doctor', '--status-port', '0'], {
      cwd: project,
      env: { PATH: fakeBin({ codex: { help: CODEX_HELP } }), HOME: project, OPENAI_API_KEY: 'x' },
    });
    assert.equal(fine.code, 0, fine.stdout + fine.stderr);
    assert.match(fine.stdout, /# LoopX doctor/);
  });
});
