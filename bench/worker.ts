import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { findBenchmark } from './benchmarks';
import { runNode } from './core/processes';
import { round, summarize } from './core/stats';
import type { BenchContext, SideResult } from './core/types';
import { loadWorkspace } from './core/workspaces';
import { RESULT_PREFIX, type WorkerInput } from './core/protocol';

/**
 * Runs ONE side (the benchmark or its raw baseline) of ONE case in a fresh process, so each
 * figure has its own heap and its own peak RSS. Started by run.ts with a JSON argument; prints
 * one `@@bench-result <json>` line.
 */
const collectGarbage = (): void => {
  (globalThis as { gc?: () => void }).gc?.();
};

async function main(): Promise<void> {
  const input = JSON.parse(process.argv[2] ?? '{}') as WorkerInput;
  const benchmark = findBenchmark(input.benchmark);
  if (benchmark === undefined || benchmark.kind === 'pending')
    throw new Error(`no runnable benchmark named ${input.benchmark}`);
  const workspace = input.workspaceRoot === null ? null : loadWorkspace(input.workspaceRoot);
  if (input.workspaceRoot !== null && workspace === null)
    throw new Error(`${input.workspaceRoot} is not a generated workspace`);
  const tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-bench-'));
  const ctx: BenchContext = {
    workspace,
    cliPath: input.cliPath,
    buildDir: input.buildDir,
    tmpDir,
    homeDir: os.homedir(),
    caseLabel: input.caseLabel,
  };
  try {
    collectGarbage();
    const idleRssMb =
      benchmark.kind === 'process' ? runNode(ctx, ['-e', '0']).childPeakRssMb : process.memoryUsage().rss / 1024 / 1024;
    const prepared = input.side === 'subject' ? await benchmark.prepare(ctx) : await benchmark.prepareBaseline(ctx);
    let childPeak = 0;
    const samples: number[] = [];
    let verification: string | null = null;
    try {
      for (let i = 0; i < input.warmup + input.runs; i++) {
        collectGarbage();
        const started = performance.now();
        const report = await prepared.run();
        const elapsed = performance.now() - started;
        if (i >= input.warmup) samples.push(report?.measuredMs ?? elapsed);
        if (report?.childPeakRssMb !== undefined) childPeak = Math.max(childPeak, report.childPeakRssMb);
      }
      verification = prepared.verify ? await prepared.verify() : null;
    } finally {
      await prepared.cleanup?.();
    }
    const peakRssMb = benchmark.kind === 'process' ? childPeak : process.resourceUsage().maxRSS / 1024;
    const result: SideResult = {
      ...summarize(samples),
      peak_rss_mb: round(peakRssMb, 1),
      idle_rss_mb: round(idleRssMb, 1),
      verification,
    };
    process.stdout.write(`${RESULT_PREFIX}${JSON.stringify(result)}\n`);
  } finally {
    fs.rmSync(tmpDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
