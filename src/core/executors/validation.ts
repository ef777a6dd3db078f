import * as os from 'node:os';
import { buildAgentEnv, DEFAULT_MAX_OUTPUT_BYTES, outputExcerpt, runBoundedProcess, type ProcessEnd } from './process';

/**
 * Independent validation (spec §3.5): the goal's `validation_command` (an argv array in the
 * registry, never a shell string) runs as a real process in the project root, with the same
 * environment allowlist, timeout, process-tree kill and output cap as agents. The host agent
 * does not control it. Mapping the run to a receipt status is the turn driver's job.
 */

export const DEFAULT_VALIDATION_TIMEOUT_MS = 5 * 60_000;

export interface ValidationRun {
  ok: boolean;
  exit_code: number | null;
  duration_ms: number;
  /** First bytes of stdout, then of stderr, scrubbed. */
  output_excerpt: string;
  /** How the process ended: `exited`, or `timeout` / `cancelled` / `output_too_large` / `spawn_failed`. */
  end: ProcessEnd;
  argv: string[];
}

export interface ValidationOptions {
  argv: readonly string[];
  /** The project root. */
  cwd: string;
  /** The environment to pick allowlisted variables from. */
  env: NodeJS.ProcessEnv;
  envAllowlist?: readonly string[];
  timeoutMs?: number;
  maxOutputBytes?: number;
  signal?: AbortSignal;
  /** Given to the validator on stdin, e.g. the normalized host result as JSON. */
  stdin?: string;
  killGraceMs?: number;
}

export async function runValidation(options: ValidationOptions): Promise<ValidationRun> {
  const maxOutputBytes = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
  const run = await runBoundedProcess({
    argv: options.argv,
    cwd: options.cwd,
    env: buildAgentEnv(options.env, options.envAllowlist ?? []),
    timeoutMs: options.timeoutMs ?? DEFAULT_VALIDATION_TIMEOUT_MS,
    maxOutputBytes,
    ...(options.stdin !== undefined ? { stdin: options.stdin } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
    ...(options.killGraceMs !== undefined ? { killGraceMs: options.killGraceMs } : {}),
  });
  const scrub = { projectRoots: [options.cwd], homeDir: options.env['HOME'] ?? os.homedir() };
  const parts = [outputExcerpt(run.stdout, run.stdoutBytes, scrub)];
  if (run.stderrBytes > 0) parts.push(`[stderr]\n${outputExcerpt(run.stderr, run.stderrBytes, scrub)}`);
  if (run.end === 'spawn_failed')
    parts.push(`[could not start ${options.argv[0] ?? ''}: ${run.spawnError ?? 'unknown error'}]`);
  return {
    ok: run.end === 'exited' && run.exitCode === 0,
    exit_code: run.exitCode,
    duration_ms: run.durationMs,
    output_excerpt: parts.filter((p) => p !== '').join('\n'),
    end: run.end,
    argv: [...options.argv],
  };
}
