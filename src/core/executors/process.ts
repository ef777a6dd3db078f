import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { StringDecoder } from 'node:string_decoder';
import { scrubText, type ScrubContext } from '../privacy/scrub';

/**
 * Runs one agent or validator process with hard bounds: an argv (never a shell string), an
 * explicit environment, a timeout, a byte cap per output stream and an AbortSignal. The process
 * gets its own process group, so a timeout or cancellation ends the whole tree it started
 * (SIGTERM to the group, SIGKILL after a grace period); whatever the main process leaves behind
 * when it exits is ended the same way, so nothing outlives a bounded turn.
 *
 * A process group is not the whole tree: Claude Code starts its tools in their own session
 * (setsid), so they leave the group and survive it. Every process is therefore also marked: its
 * environment holds `LOOPX_PROCESS_MARK=<random per run>`, which its children inherit, and on
 * Linux every process whose /proc/<pid>/environ holds the mark is signalled with the group
 * (docs/executors.md#the-process-tree-rule).
 *
 * Built on node:child_process directly: process-group kill is the one thing we need that the
 * usual wrappers do not do for us, and the rest is a few dozen lines.
 */

export const DEFAULT_MAX_OUTPUT_BYTES = 1024 * 1024;
export const DEFAULT_KILL_GRACE_MS = 2000;
export const DEFAULT_EXCERPT_BYTES = 2048;

/** How the process ended; the first cause wins (a timeout stays a timeout even if it exits later). */
export type ProcessEnd = 'exited' | 'timeout' | 'cancelled' | 'output_too_large' | 'spawn_failed';

export interface BoundedProcessOptions {
  argv: readonly string[];
  cwd: string;
  /** The child's whole environment (already filtered: see buildAgentEnv). */
  env: NodeJS.ProcessEnv;
  stdin?: string;
  timeoutMs: number;
  /** Cap per stream; going over ends the process with `output_too_large`. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
  killGraceMs?: number;
  /** Live output, decoded per stream (a character split across chunks arrives whole); errors are ignored. */
  onOutput?: ((text: string, stream: 'stdout' | 'stderr') => void) | undefined;
}

export interface BoundedProcessResult {
  end: ProcessEnd;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  /** At most `maxOutputBytes` of each stream. */
  stdout: Buffer;
  stderr: Buffer;
  /** Bytes the process wrote, including what went over the cap. */
  stdoutBytes: number;
  stderrBytes: number;
  durationMs: number;
  pid: number | null;
  /** Why the spawn failed, for `spawn_failed`. */
  spawnError: string | null;
}

class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  total = 0;
  constructor(private readonly cap: number) {}

  /** Returns false once the stream went over the cap. */
  push(chunk: Buffer): boolean {
    this.total += chunk.length;
    const room = this.cap - this.kept;
    if (room > 0) {
      const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
      this.chunks.push(part);
      this.kept += part.length;
    }
    return this.total <= this.cap;
  }

  value(): Buffer {
    return Buffer.concat(this.chunks, this.kept);
  }
}

/** Signals the whole process group of a detached child; a group that is gone already is fine. */
function signalTree(child: ChildProcess, signal: NodeJS.Signals): void {
  const pid = child.pid;
  if (pid === undefined) return;
  if (process.platform === 'win32') {
    // Windows has no process groups to signal; taskkill /T walks the tree (argv, no shell).
    const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
    killer.on('error', () => undefined);
    return;
  }
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: every process of the group has ended already.
  }
}

/** The variable that marks every process of one bounded run (see the header). */
export const PROCESS_MARK_VARIABLE = 'LOOPX_PROCESS_MARK';

/**
 * The processes (other than this one) whose environment holds `mark`: Linux reads /proc/<pid>/environ
 * (a process of another user is not readable and not ours); elsewhere none are found.
 */
export function markedProcesses(mark: string): number[] {
  if (process.platform !== 'linux') return [];
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return [];
  }
  const needle = Buffer.from(`\0${PROCESS_MARK_VARIABLE}=${mark}\0`);
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (pid === process.pid) continue;
    try {
      // Each variable is NUL-terminated; a leading NUL makes the first one match like the others.
      const environ = Buffer.concat([Buffer.from([0]), fs.readFileSync(`/proc/${entry}/environ`)]);
      if (environ.includes(needle)) found.push(pid);
    } catch {
      // Gone already, or not ours to read.
    }
  }
  return found;
}

/** Signals every marked process found; returns how many were found. */
function signalMarked(mark: string, signal: NodeJS.Signals): number {
  const found = markedProcesses(mark);
  for (const pid of found) {
    try {
      process.kill(pid, signal);
    } catch {
      // Ended between the scan and the signal.
    }
  }
  return found.length;
}

/**
 * SIGKILL to every marked process, scanning again while any is found: a process that forks after a scan
 * read /proc (`setsid` does, to leave its group) has a child the scan missed; the next scan sees it.
 */
function killMarked(mark: string): void {
  for (let scan = 0; scan < 5 && signalMarked(mark, 'SIGKILL') > 0; scan++);
}

export function runBoundedProcess(options: BoundedProcessOptions): Promise<BoundedProcessResult> {
  const started = performance.now();
  const maxBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const grace = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const stdout = new CappedBuffer(maxBytes);
  const stderr = new CappedBuffer(maxBytes);
  const finish = (end: ProcessEnd, extra: Partial<BoundedProcessResult> = {}): BoundedProcessResult => ({
    end,
    exitCode: null,
    signal: null,
    stdout: stdout.value(),
    stderr: stderr.value(),
    stdoutBytes: stdout.total,
    stderrBytes: stderr.total,
    durationMs: Math.round(performance.now() - started),
    pid: null,
    spawnError: null,
    ...extra,
  });

  const [command, ...args] = options.argv;
  if (command === undefined || command === '')
    return Promise.resolve(finish('spawn_failed', { spawnError: 'the command argv is empty' }));
  if (options.signal?.aborted) return Promise.resolve(finish('cancelled'));

  const mark = randomUUID();
  return new Promise((resolve) => {
    let child: ChildProcess;
    try {
      child = spawn(command, args, {
        cwd: options.cwd,
        env: { ...options.env, [PROCESS_MARK_VARIABLE]: mark },
        stdio: ['pipe', 'pipe', 'pipe'],
        shell: false,
        windowsHide: true,
        detached: process.platform !== 'win32',
      });
    } catch (error) {
      resolve(finish('spawn_failed', { spawnError: error instanceof Error ? error.message : String(error) }));
      return;
    }

    const decoders = { stdout: new StringDecoder('utf8'), stderr: new StringDecoder('utf8') };
    const observe = (stream: 'stdout' | 'stderr', chunk: Buffer | null): void => {
      if (options.onOutput === undefined || settled) return;
      const text = chunk === null ? decoders[stream].end() : decoders[stream].write(chunk);
      if (text === '') return;
      try {
        options.onOutput(text, stream);
      } catch {
        // An observer's bug must not end the agent it watches.
      }
    };
    let end: ProcessEnd | null = null;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    const timers: NodeJS.Timeout[] = [];

    /** The group and every marked process: the whole tree, wherever its members went. */
    const signalAll = (signal: NodeJS.Signals): void => {
      signalTree(child, signal);
      signalMarked(mark, signal);
    };
    const settle = (result: BoundedProcessResult): void => {
      if (settled) return;
      observe('stdout', null);
      observe('stderr', null);
      settled = true;
      for (const timer of timers) clearTimeout(timer);
      // Whatever is still running when the run ends ends now, not after a grace period nobody waits for.
      signalTree(child, 'SIGKILL');
      killMarked(mark);
      options.signal?.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const stop = (cause: ProcessEnd): void => {
      if (end !== null) return;
      end = cause;
      signalAll('SIGTERM');
      timers.push(setTimeout(() => signalAll('SIGKILL'), grace));
      // Last resort: a process that escaped the group may hold our pipes open forever.
      timers.push(
        setTimeout(
          () => {
            child.stdout?.destroy();
            child.stderr?.destroy();
            settle(finish(cause, { exitCode, signal: exitSignal, pid: child.pid ?? null }));
          },
          grace * 2 + 1000,
        ),
      );
    };
    const onAbort = (): void => stop('cancelled');

    child.on('error', (error: NodeJS.ErrnoException) => {
      if (child.pid === undefined) {
        settle(finish('spawn_failed', { spawnError: `${command}: ${error.code ?? error.message}` }));
      }
    });
    child.stdin?.on('error', () => undefined); // the agent may exit without reading its stdin (EPIPE)
    child.stdout?.on('data', (chunk: Buffer) => {
      observe('stdout', chunk);
      if (!stdout.push(chunk)) stop('output_too_large');
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      observe('stderr', chunk);
      if (!stderr.push(chunk)) stop('output_too_large');
    });
    child.on('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // Anything the main process left running in its group ends with the turn.
      if (end === null) {
        signalAll('SIGTERM');
        timers.push(setTimeout(() => signalAll('SIGKILL'), grace));
      }
    });
    child.on('close', (code, signal) => {
      settle(
        finish(end ?? 'exited', { exitCode: exitCode ?? code, signal: exitSignal ?? signal, pid: child.pid ?? null }),
      );
    });

    if (child.pid !== undefined) {
      timers.push(setTimeout(() => stop('timeout'), options.timeoutMs));
      options.signal?.addEventListener('abort', onAbort, { once: true });
    }
    child.stdin?.end(options.stdin ?? '');
  });
}

/** Variables every agent process gets when the parent has them. */
export const BASE_ENV_ALLOWLIST: readonly string[] = ['PATH', 'HOME', 'LANG'];
/** Without these a Windows process cannot even start its runtime. */
const WINDOWS_ENV_ALLOWLIST: readonly string[] = [
  'SystemRoot',
  'ComSpec',
  'PATHEXT',
  'USERPROFILE',
  'TEMP',
  'TMP',
  'windir',
];
export const ENV_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** LoopX's own variables (the status server token, the registry path, …): never copied into an agent's environment. */
export const LOOPX_ENV_PREFIX = 'LOOPX_';

/**
 * The environment of an agent process: only the allowlisted names copied from `source` (never
 * the whole parent environment), plus the variables LoopX sets itself. An allowlist entry ending
 * in `*` is a prefix (`ANTHROPIC_*`). LoopX's own variables (`LOOPX_*`) are never copied, whatever
 * the list says: `extra` sets the ones an agent gets on purpose.
 */
export function buildAgentEnv(
  source: NodeJS.ProcessEnv,
  allowlist: readonly string[],
  extra: Readonly<Record<string, string>> = {},
): NodeJS.ProcessEnv {
  const names = [...BASE_ENV_ALLOWLIST, ...(process.platform === 'win32' ? WINDOWS_ENV_ALLOWLIST : []), ...allowlist];
  const exact = names.filter((name) => ENV_NAME_PATTERN.test(name));
  const prefixes = names
    .filter((name) => name.endsWith('*') && ENV_NAME_PATTERN.test(name.slice(0, -1)))
    .map((name) => name.slice(0, -1));
  // Windows variable names are case-insensitive; elsewhere the exact name counts.
  const fold = (name: string): string => (process.platform === 'win32' ? name.toUpperCase() : name);
  const wanted = new Set(exact.map(fold));
  const env: NodeJS.ProcessEnv = {};
  for (const key of Object.keys(source)) {
    const folded = fold(key);
    if (folded.startsWith(LOOPX_ENV_PREFIX)) continue;
    if (!wanted.has(folded) && !prefixes.some((prefix) => folded.startsWith(fold(prefix)))) continue;
    const value = source[key];
    if (value === undefined) continue;
    // Keep the spelling the allowlist uses for an exact name (Windows: `Path` is passed as `PATH`).
    env[exact.find((name) => fold(name) === folded) ?? key] = value;
  }
  return { ...env, ...extra };
}

/**
 * The first bytes of an output stream as text, cut at a character boundary and scrubbed of
 * absolute paths and credentials, with a note of how much was left out.
 */
export function outputExcerpt(
  output: Buffer,
  totalBytes: number,
  scrub: ScrubContext,
  maxBytes: number = DEFAULT_EXCERPT_BYTES,
): string {
  let cut = Math.min(output.length, maxBytes);
  // Step back over UTF-8 continuation bytes so no character is split.
  if (cut < output.length) while (cut > 0 && ((output[cut] ?? 0) & 0xc0) === 0x80) cut--;
  const text = scrubText(output.subarray(0, cut).toString('utf8'), scrub);
  return cut < totalBytes ? `${text}\n[… ${totalBytes - cut} more bytes not shown]` : text;
}
