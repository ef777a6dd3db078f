import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readGoalRuns } from '../../src/core/runtime/runIndex';
import { fixedCase } from '../core/cases';
import type { BenchContext, Prepared, RunnableBenchmark } from '../core/types';

export const APPEND_PROCESSES = 4;
export const APPEND_ROWS = 10_000;
const GOAL_ID = 'contended-goal';

interface ChildReport {
  appended: number;
  lock_timeouts: number;
  peak_rss_mb: number;
}

/** Starts the writer processes at once and waits for all of them; a failing writer fails the run. */
async function appendFromProcesses(
  ctx: BenchContext,
  mode: 'loopx' | 'raw',
  projectRoot: string,
): Promise<ChildReport[]> {
  const script = path.join(ctx.buildDir, 'appendRows.cjs');
  const runtimeRoot = path.join(projectRoot, '.loopx', 'runtime');
  const perChild = APPEND_ROWS / APPEND_PROCESSES;
  const children = Array.from(
    { length: APPEND_PROCESSES },
    (_, child) =>
      new Promise<ChildReport>((resolve, reject) => {
        const rssFile = path.join(ctx.tmpDir, `rss-${mode}-${child}`);
        const args = [
          '--require',
          path.join(ctx.buildDir, 'peakRss.cjs'),
          script,
          mode,
          runtimeRoot,
          GOAL_ID,
          String(child),
          String(APPEND_PROCESSES),
          String(perChild),
        ];
        const proc = spawn(process.execPath, args, {
          cwd: projectRoot,
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, LOOPX_BENCH_RSS_FILE: rssFile },
        });
        let stdout = '';
        let stderr = '';
        proc.stdout.on('data', (chunk: Buffer) => {
          stdout += chunk.toString();
        });
        proc.stderr.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        proc.on('error', reject);
        proc.on('close', (code) => {
          if (code === 0)
            resolve({
              ...(JSON.parse(stdout) as Omit<ChildReport, 'peak_rss_mb'>),
              peak_rss_mb: Number(fs.readFileSync(rssFile, 'utf8')) / 1024,
            });
          else reject(new Error(`writer ${child} exited with ${String(code)}: ${stderr.slice(0, 600)}`));
        });
      }),
  );
  return Promise.all(children);
}

function contention(ctx: BenchContext, mode: 'loopx' | 'raw'): Prepared {
  const projects: string[] = [];
  const reports: ChildReport[][] = [];
  return {
    run: async () => {
      const projectRoot = path.join(ctx.tmpDir, `${mode}-${projects.length}`);
      fs.mkdirSync(projectRoot, { recursive: true });
      projects.push(projectRoot);
      const childReports = await appendFromProcesses(ctx, mode, projectRoot);
      reports.push(childReports);
      return { childPeakRssMb: Math.max(...childReports.map((report) => report.peak_rss_mb)) };
    },
    verify: async () => {
      let lockTimeouts = 0;
      for (const [index, projectRoot] of projects.entries()) {
        const read = await readGoalRuns(path.join(projectRoot, '.loopx', 'runtime'), GOAL_ID, { projectRoot });
        const distinct = new Set(read.rows.map((row) => row.recommended_action));
        const problems: string[] = [];
        if (read.raw_count !== APPEND_ROWS) problems.push(`${read.raw_count} index lines`);
        if (read.skipped.length > 0) problems.push(`${read.skipped.length} torn or invalid lines`);
        if (distinct.size !== APPEND_ROWS) problems.push(`${distinct.size} distinct rows`);
        if (!read.rows.every((row) => row.json_exists && row.markdown_exists))
          problems.push('rows without both artifacts');
        if (problems.length > 0)
          throw new Error(
            `run ${index + 1}: expected ${APPEND_ROWS} rows, found ${problems.join(', ')}: rows were lost`,
          );
        lockTimeouts += (reports[index] ?? []).reduce((sum, report) => sum + report.lock_timeouts, 0);
      }
      const timeouts = mode === 'loopx' ? `; ${lockTimeouts} lock timeout(s) retried` : '';
      return `${projects.length} run(s) × ${APPEND_ROWS.toLocaleString('en-US')} rows from ${APPEND_PROCESSES} processes: every row present exactly once, no torn line, both artifacts of every row${timeouts}`;
    },
    cleanup: async () => {
      for (const projectRoot of projects) fs.rmSync(projectRoot, { recursive: true, force: true });
    },
  };
}

export const appendContention: RunnableBenchmark = {
  kind: 'process',
  name: 'run-index-append-contention',
  title: `Append ${APPEND_ROWS.toLocaleString('en-US')} run-index rows from ${APPEND_PROCESSES} processes`,
  description: `${APPEND_PROCESSES} processes each call appendRun ${APPEND_ROWS / APPEND_PROCESSES} times on the same goal (default lock policy; each call: reserve the artifact pair, write .json and .md atomically and fsync them, then under the index lock append the line); the figure is the wall time until all have exited, and the bench fails unless all rows are there`,
  baselineDescription: `the writes themselves: ${APPEND_PROCESSES} processes each write ${APPEND_ROWS / APPEND_PROCESSES} rows' records with plain fs calls (.json and .md each to a temp file, fsync, rename; the folder fsynced; the line appended with O_APPEND), no lock and no checks`,
  cases: [fixedCase(`${APPEND_PROCESSES} × ${APPEND_ROWS / APPEND_PROCESSES} rows`, null, 2, 0)],
  unitLabel: 'rows',
  units: () => APPEND_ROWS,
  prepare: async (ctx) => contention(ctx, 'loopx'),
  prepareBaseline: async (ctx) => contention(ctx, 'raw'),
};
