import { scalingCases } from '../core/cases';
import { cliRun, rawReadProcess } from '../core/processes';
import type { PendingBenchmark, RunnableBenchmark } from '../core/types';
import { statusFiles } from './cli';

/**
 * `loopx status` over the whole workspace. The whole-process benchmark runs as soon as out/cli.js
 * has a `status` command; the in-process one needs src/core/readModel/goalStatus.ts.
 */
export const statusCli: RunnableBenchmark = {
  kind: 'process',
  name: 'status-cli',
  title: '`loopx status --format json` over every goal (whole process)',
  description: 'node out/cli.js --registry <registry> status --format json: the attention queue of every goal (state, todos, gates, quota, run history)',
  baselineDescription: 'a node process that reads registry.json, every state file and every run index (JSON.parse of each line)',
  requiresCli: 'status',
  cases: scalingCases({ S: 7, M: 7, L: 5, XL: 3 }),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    { caseLabel: 'L', metric: 'median_ms', limit: 1300, text: '`status` for all of L under 1.3 s as a whole CLI process' },
    { caseLabel: 'L', metric: 'baseline_ratio', limit: 2, text: '`status` for all of L within 2× of the raw baseline' },
    { caseLabel: 'L', metric: 'peak_rss_mb', limit: 300, text: '`status` for all of L under 300 MB' },
    { caseLabel: 'M', metric: 'median_ms', limit: 400, text: '`status` on M under 0.4 s' },
  ],
  prepare: async (ctx) => cliRun(ctx, ['status', '--format', 'json']),
  prepareBaseline: async (ctx) => rawReadProcess(ctx, statusFiles(ctx)),
};

export const statusInProcess: PendingBenchmark = {
  kind: 'pending',
  name: 'status-in-process',
  title: 'Status read model of every goal (in-process)',
  needs: 'src/core/readModel/goalStatus.ts: time the read model of every goal of S…XL against reading the same files (statusFiles in benchmarks/cli.ts)',
};
