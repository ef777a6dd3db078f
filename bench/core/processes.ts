import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchContext, Prepared, RunReport } from './types';
import { requireWorkspace, writeFileList } from './files';

let spawned = 0;

export interface NodeRun extends Required<Pick<RunReport, 'childPeakRssMb'>> {
  stdout: string;
}

/**
 * Runs `node <args>` to completion with the peak-RSS probe preloaded; throws (with its stderr)
 * when it exits non-zero, so a failing command never yields a figure.
 */
export function runNode(
  ctx: BenchContext,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; okExitCodes?: readonly number[] } = {},
): NodeRun {
  const rssFile = path.join(ctx.tmpDir, `rss-${process.pid}-${spawned++}`);
  const result = spawnSync(process.execPath, ['--require', path.join(ctx.buildDir, 'peakRss.cjs'), ...args], {
    cwd: options.cwd ?? ctx.tmpDir,
    env: { ...process.env, ...options.env, LOOPX_BENCH_RSS_FILE: rssFile },
    encoding: 'utf8',
    maxBuffer: 1 << 30,
  });
  if (result.error) throw result.error;
  if (!(options.okExitCodes ?? [0]).includes(result.status ?? -1)) {
    throw new Error(
      `node ${args.join(' ')} exited with ${String(result.status ?? result.signal)}: ${(result.stderr || result.stdout).slice(0, 600)}`,
    );
  }
  const peakKb = Number(fs.readFileSync(rssFile, 'utf8'));
  fs.rmSync(rssFile, { force: true });
  return { stdout: result.stdout, childPeakRssMb: peakKb / 1024 };
}

/** A timed run of the whole `loopx` CLI process against the case's workspace, `LOOPX_NOW` pinned to the workspace's clock. */
export interface CliRunOptions {
  /** Checks the output of each run; throw to fail it. Default: one JSON object whose `ok` is not false. */
  check?: (stdout: string) => void;
  /** Exit codes that still count as an answer (e.g. 1 for a `quota should-run` that says "do not run"). */
  okExitCodes?: readonly number[];
  /** Extra environment of the CLI process (e.g. `LOOPX_STATUS_CACHE`). */
  env?: NodeJS.ProcessEnv;
  /** Runs before each timed run, inside the timing (keep it tiny: e.g. deleting the status cache). */
  beforeRun?: () => void;
}

export function cliRun(ctx: BenchContext, args: readonly string[], options: CliRunOptions = {}): Prepared {
  const workspace = requireWorkspace(ctx.workspace);
  const argv = [ctx.cliPath, '--registry', workspace.registryPath, ...args];
  const check = options.check ?? expectOkJson;
  return {
    run: async () => {
      options.beforeRun?.();
      const { stdout, childPeakRssMb } = runNode(ctx, argv, {
        cwd: workspace.root,
        env: { ...options.env, LOOPX_NOW: workspace.now },
        ...(options.okExitCodes ? { okExitCodes: options.okExitCodes } : {}),
      });
      check(stdout);
      return { childPeakRssMb };
    },
  };
}

/** The whole-process raw limit: a node process that only reads (and JSON.parses) `files`. */
export function rawReadProcess(ctx: BenchContext, files: readonly string[]): Prepared {
  const listFile = writeFileList(ctx.tmpDir, files);
  const script = path.join(ctx.buildDir, 'rawRead.cjs');
  return {
    run: async () => {
      const { childPeakRssMb } = runNode(ctx, [script, listFile]);
      return { childPeakRssMb };
    },
  };
}

/** Fails a run whose `--format json` output is not one JSON object with `ok` not false. */
export function expectOkJson(stdout: string): void {
  const parsed = JSON.parse(stdout) as { ok?: unknown };
  if (parsed.ok === false) throw new Error(`the command answered ok:false: ${stdout.slice(0, 400)}`);
}
