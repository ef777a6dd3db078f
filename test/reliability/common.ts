/**
 * Shared pieces of the chaos and fuzz suites (issue 14): a seeded PRNG, demo-workspace copies,
 * file hashing, real-process spawning with SIGKILL, and the summary file for scripts/test-all.mjs.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { materializeDemoWorkspace, REPO_ROOT } from '../support/demoWorkspace';

export { REPO_ROOT };
/** The built CLI; LOOPX_RELIABILITY_CLI points the suites at another build (e.g. one with a guard removed). */
export const CLI = process.env['LOOPX_RELIABILITY_CLI'] ?? path.join(REPO_ROOT, 'out', 'cli.js');
let processCli = CLI;

/** The CLI bundle runCliProcess starts (chaos uses one with the crash hook live). */
export function useCliForProcesses(cli: string): void {
  processCli = cli;
}

/** The name of the crash-hook variable: present in a bundle only when the hook is live in it. */
export const CRASH_HOOK_MARKER = 'LOOPX_TEST_CRASH_AT_PHASE';

/**
 * Chaos kills turns at crash checkpoints (LOOPX_TEST_CRASH_AT_PHASE), and every shipped bundle
 * compiles that hook out (scripts/build.mjs defines LOOPX_SHIPPED_BUILD). So chaos bundles the CLI
 * (and the demo agent next to it) once more with the hook live, into node_modules/.cache, never
 * into out/ (which the .vsix ships). Returns the CLI path.
 */
export async function buildCrashHookCli(): Promise<string> {
  const esbuild = await import('esbuild');
  const dir = path.join(REPO_ROOT, 'node_modules', '.cache', 'loopx-reliability');
  const common = {
    bundle: true,
    platform: 'node' as const,
    target: 'node20',
    format: 'cjs' as const,
    logLevel: 'warning' as const,
    absWorkingDir: REPO_ROOT,
  };
  await Promise.all([
    esbuild.build({ ...common, entryPoints: ['src/cli/main.ts'], outfile: path.join(dir, 'cli.js') }),
    esbuild.build({
      ...common,
      entryPoints: ['src/core/executors/demoAgentMain.ts'],
      outfile: path.join(dir, 'demoAgent.js'),
    }),
  ]);
  return path.join(dir, 'cli.js');
}

/** Whether the crash hook is live in a CLI bundle (or in the cli-main.js its launcher loads). */
export function hasCrashHook(cli: string): boolean {
  const files = [cli, path.join(path.dirname(cli), 'cli-main.js')].filter((f) => fs.existsSync(f));
  return files.some((f) => fs.readFileSync(f, 'utf8').includes(CRASH_HOOK_MARKER));
}
export const NOW = '2026-11-28T10:00:00Z';
export const GOAL = 'tidy-notes';

/** mulberry32: small, fast, and the same sequence on every platform for a given seed. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** The seed of case `index` of a run seeded with `seed` (so one case replays alone). */
export function caseSeed(seed: number, index: number): number {
  const h = createHash('sha256').update(`${seed}:${index}`).digest();
  return h.readUInt32LE(0);
}

export interface Args {
  [key: string]: string | undefined;
}
/**
 * The run's seed: `--seed`, else `LOOPX_SEED` (CI's reliability tier sets a new one each run and prints
 * it), else a new one. Always printed by the suites, so any failure can be replayed.
 */
export function runSeedOf(args: Args): number {
  const given = args['seed'] ?? process.env['LOOPX_SEED'];
  const seed = given === undefined || given.trim() === '' ? Date.now() % 1_000_000 : Number(given);
  if (!Number.isSafeInteger(seed) || seed < 0) throw new Error(`the seed must be a whole number ≥ 0, got ${given}`);
  return seed;
}

export function parseArgs(argv: readonly string[]): Args {
  const out: Args = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] ?? '';
    if (!a.startsWith('--')) continue;
    const eq = a.indexOf('=');
    if (eq > 0) out[a.slice(2, eq)] = a.slice(eq + 1);
    else if (i + 1 < argv.length && !(argv[i + 1] ?? '').startsWith('--')) out[a.slice(2)] = argv[++i];
    else out[a.slice(2)] = 'true';
  }
  return out;
}

const scratchRoot = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-reliability-')));
let counter = 0;
export function scratchDir(prefix: string): string {
  const dir = path.join(scratchRoot, `${prefix}-${counter++}`);
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}
export function cleanScratch(): void {
  fs.rmSync(scratchRoot, { recursive: true, force: true });
}

export interface Workspace {
  root: string;
  home: string;
  registryPath: string;
  statePath: string;
  runtimeGoalDir: string;
  indexPath: string;
  reservationsPath: string;
}

/** A fresh copy of the demo workspace (goal tidy-notes, agents demo and codex-main) with its own HOME. */
export function demoWorkspace(prefix = 'ws'): Workspace {
  const dir = scratchDir(prefix);
  const root = materializeDemoWorkspace(path.join(dir, 'workspace'));
  const home = path.join(dir, 'home');
  fs.mkdirSync(home);
  const runtimeGoalDir = path.join(root, '.loopx', 'runtime', 'goals', GOAL);
  return {
    root,
    home,
    registryPath: path.join(root, '.loopx', 'registry.json'),
    statePath: path.join(root, '.codex', 'goals', GOAL, 'ACTIVE_GOAL_STATE.md'),
    runtimeGoalDir,
    indexPath: path.join(runtimeGoalDir, 'runs', 'index.jsonl'),
    reservationsPath: path.join(runtimeGoalDir, 'quota-reservations.json'),
  };
}

export function editRegistryGoal(ws: Workspace, edit: (goal: Record<string, unknown>) => void): void {
  const registry = JSON.parse(fs.readFileSync(ws.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
  edit(registry.goals[0] as Record<string, unknown>);
  fs.writeFileSync(ws.registryPath, `${JSON.stringify(registry, null, 2)}\n`);
}

/** Every regular file under `root` (relative path → sha256), symlinks and FIFOs left out. */
export function hashTree(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile())
        out.set(path.relative(root, full), createHash('sha256').update(fs.readFileSync(full)).digest('hex'));
    }
  };
  walk(root);
  return out;
}

/** Files of `before` that are changed or gone in `after`. */
export function changedFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  const out: string[] = [];
  for (const [file, hash] of before) if (after.get(file) !== hash) out.push(file);
  return out;
}

export function listFiles(root: string, match: (name: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (match(entry.name)) out.push(full);
    }
  };
  walk(root);
  return out;
}

export interface ProcResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
  killed: boolean;
}

export interface SpawnOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** SIGKILL the whole process group after this many milliseconds. */
  killAfterMs?: number;
  /** Hard limit, after which the group is killed and the case fails as a hang. */
  timeoutMs?: number;
  onStderr?: (text: string, kill: () => void) => void;
}

/** Runs the built CLI as a real process in its own process group (so a kill takes its agents too). */
export function runCliProcess(args: readonly string[], options: SpawnOptions): Promise<ProcResult> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(process.execPath, [processCli, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const kill = (): void => {
      if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
      killed = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      stderr += text;
      options.onStderr?.(stderr, kill);
    });
    const killTimer = options.killAfterMs !== undefined ? setTimeout(kill, options.killAfterMs) : undefined;
    const hangTimer = setTimeout(kill, options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(killTimer);
      clearTimeout(hangTimer);
      // Whatever the group left running (an agent, a validator) goes with it.
      if (child.pid !== undefined) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // none left
        }
      }
      resolve({ code, signal, stdout, stderr, ms: Date.now() - started, killed });
    });
  });
}

export function cliEnv(ws: Workspace, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: ws.home,
    LOOPX_NOW: NOW,
    LOOPX_REGISTRY: ws.registryPath,
    ...extra,
  };
}

/** A stack trace in output: the sign of an uncaught exception. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+(\(|:\d+:\d+)/.test(text) || /^(TypeError|RangeError|ReferenceError|SyntaxError): /m.test(text);
}

/** Writes the counts scripts/test-all.mjs reads ($LOOPX_TEST_SUMMARY), merged with what is there. */
export function writeSummary(passed: number, failed: number, failures: { title: string; message: string }[]): void {
  const file = process.env['LOOPX_TEST_SUMMARY'];
  if (!file) return;
  let prev = { passed: 0, failed: 0, failures: [] as { title: string; message: string }[] };
  if (fs.existsSync(file)) prev = JSON.parse(fs.readFileSync(file, 'utf8')) as typeof prev;
  fs.writeFileSync(
    file,
    JSON.stringify(
      { passed: prev.passed + passed, failed: prev.failed + failed, failures: [...prev.failures, ...failures] },
      null,
      2,
    ),
  );
}
