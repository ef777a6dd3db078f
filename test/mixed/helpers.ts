import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The mixed-team tier's two programs: our CLI (`node out/cli.js`) and the original Python LoopX (`$LOOPX_PY_CLI`,
 * set up by scripts/test-mixed.mjs). Both run in one workspace with the same clean environment the compatibility
 * kit uses, so every difference is a difference of the programs.
 */
export const ROOT = path.resolve(__dirname, '..', '..');
export const OUR_CLI = path.join(ROOT, 'out', 'cli.js');

export function originalCli(): string {
  const cli = process.env['LOOPX_PY_CLI'];
  if (cli === undefined || cli === '' || !fs.existsSync(cli))
    throw new Error('LOOPX_PY_CLI is not set: run the mixed tier with `npm run test:mixed` (it sets the original up)');
  return cli;
}

export type Program = 'ours' | 'original';

export interface MixedWorkspace {
  dir: string;
  home: string;
  ws: string;
  registry: string;
  env: NodeJS.ProcessEnv;
}

export function mixedWorkspace(label: string): MixedWorkspace {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `loopx-mixed-${label}-`));
  const home = path.join(dir, 'home');
  const ws = path.join(dir, 'ws');
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(ws, { recursive: true });
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'],
    HOME: home,
    TZ: 'UTC',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TMPDIR: dir,
  };
  return { dir, home, ws, registry: path.join(ws, '.loopx', 'registry.json'), env };
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
  json: Record<string, unknown>;
}

export function commandOf(program: Program): string[] {
  return program === 'ours' ? [process.execPath, OUR_CLI] : [originalCli()];
}

/** Runs one program with `--format json` (global flags first, as the kit does), in the workspace. */
export function run(program: Program, w: MixedWorkspace, args: readonly string[], registry = true): RunResult {
  const [cmd = '', ...pre] = commandOf(program);
  const globals = registry ? ['--registry', w.registry, '--format', 'json'] : ['--format', 'json'];
  const result = spawnSync(cmd, [...pre, ...globals, ...args], { cwd: w.ws, env: w.env, encoding: 'utf8' });
  let json: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(result.stdout);
    if (typeof parsed === 'object' && parsed !== null) json = parsed as Record<string, unknown>;
  } catch {
    // not JSON: the assertion that reads it prints stdout and stderr
  }
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr, json };
}

/** Starts a program that waits until `goFile` exists (a shell loop), so two programs start in the same instant. */
export function startBehindBarrier(
  command: readonly string[],
  w: MixedWorkspace,
  goFile: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const quoted = command.map((c) => `'${c.replace(/'/g, `'\\''`)}'`).join(' ');
  const child = spawn('sh', ['-c', `while [ ! -e '${goFile}' ]; do sleep 0.005; done; exec ${quoted}`], {
    cwd: w.ws,
    env: w.env,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr })));
}

export const GOAL_STATE = `---
status: active
objective: "Mixed team fixture."
updated_at: 2026-07-03T09:55:53+00:00
---

# Active Goal State

## User Todo / Owner Review Reading Queue


## Agent Todo

- [ ] [P0] Do the work
  <!-- loopx:todo todo_id=todo_aaaaaaaaaaaa status=open task_class=advancement_task -->

## Next Action

- Do the work.

## Progress Ledger

- Fixture initialized.
`;

/** A project registry (runtime `./runtime`, as the kit's) with one goal and the given quota and agents. */
export function writeGoal(
  w: MixedWorkspace,
  goalId: string,
  quota: Record<string, number>,
  agents: readonly string[],
  state = GOAL_STATE,
): string {
  const stateRel = `.codex/goals/${goalId}/ACTIVE_GOAL_STATE.md`;
  fs.mkdirSync(path.dirname(path.join(w.ws, stateRel)), { recursive: true });
  fs.writeFileSync(path.join(w.ws, stateRel), state);
  fs.mkdirSync(path.dirname(w.registry), { recursive: true });
  const registry = {
    schema_version: '0.1',
    updated_at: '2026-01-01',
    common_runtime_root: './runtime',
    goals: [
      {
        id: goalId,
        domain: 'mixed',
        status: 'active',
        role: 'controller',
        repo: w.ws,
        state_file: stateRel,
        adapter: { kind: 'generic_project_goal_v0', status: 'connected' },
        quota,
        coordination: { agent_model: 'peer_v1', registered_agents: agents },
      },
    ],
  };
  fs.writeFileSync(w.registry, `${JSON.stringify(registry, null, 2)}\n`);
  return path.join(w.ws, stateRel);
}

/** The quota part of a should-run answer (both programs print `quota{state, allowed_slots, spent_slots}`). */
export function quotaOf(result: RunResult): { state: unknown; allowed_slots: number; spent_slots: number } {
  const quota = result.json['quota'] as Record<string, unknown> | undefined;
  if (quota === undefined) throw new Error(`no quota in: ${result.stdout}\n${result.stderr}`);
  return {
    state: quota['state'],
    allowed_slots: Number(quota['allowed_slots']),
    spent_slots: Number(quota['spent_slots']),
  };
}

/**
 * Ends what the original left running for this workspace (it starts an `effect_runtime_server` that outlives the
 * command), by process id: only processes whose command line names the workspace's folder.
 */
export function stopLeftovers(w: MixedWorkspace): void {
  if (!fs.existsSync('/proc')) return;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes(w.dir)) continue;
    try {
      process.kill(Number(pid), 'SIGTERM');
    } catch {
      // already gone
    }
  }
}
