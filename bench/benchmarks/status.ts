import { fixedClock } from '../../src/core/clock';
import { loadStatus } from '../../src/core/status/statusPayload';
import { statusQuotaSummaries } from '../../src/core/status/statusQuota';
import { scalingCases } from '../core/cases';
import { rawRead, requireWorkspace } from '../core/files';
import { cliRun, rawReadProcess } from '../core/processes';
import type { RunnableBenchmark } from '../core/types';
import { statusFiles } from './cli';

/**
 * `loopx status` over the whole workspace. The whole-process benchmark runs as soon as out/cli.js
 * has a `status` command; the in-process one times loadStatus.
 */
export const statusCli: RunnableBenchmark = {
  kind: 'process',
  name: 'status-cli',
  title: '`loopx status --format json` over every goal (whole process)',
  description:
    'node out/cli.js --registry <registry> status --format json: the attention queue of every goal (state, todos, gates, quota, run history)',
  baselineDescription:
    'a node process that reads registry.json, every state file and every run index (JSON.parse of each line)',
  requiresCli: 'status',
  cases: scalingCases({ S: 7, M: 5, L: 3, XL: 2 }),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: 'L',
      metric: 'median_ms',
      limit: 1300,
      text: '`status` for all of L under 1.3 s as a whole CLI process',
    },
    { caseLabel: 'L', metric: 'baseline_ratio', limit: 2, text: '`status` for all of L within 2× of the raw baseline' },
    { caseLabel: 'L', metric: 'peak_rss_mb', limit: 300, text: '`status` for all of L under 300 MB' },
    { caseLabel: 'M', metric: 'median_ms', limit: 400, text: '`status` on M under 0.4 s' },
  ],
  prepare: async (ctx) => cliRun(ctx, ['status', '--format', 'json']),
  prepareBaseline: async (ctx) => rawReadProcess(ctx, statusFiles(ctx)),
};

export const statusInProcess: RunnableBenchmark = {
  kind: 'in-process',
  name: 'status-in-process',
  title: 'Status read model of every goal (in-process)',
  description:
    'loadStatus over the whole registry with goalQuotaSummary per goal (reusing the registry entry and run index status read), as `loopx status` calls it, without a cache',
  baselineDescription: 'read registry.json, every state file and every run index (JSON.parse of each line)',
  cases: scalingCases({ S: 9, M: 5, L: 3, XL: 2 }),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const clock = fixedClock(workspace.now);
    return {
      run: async () => {
        const payload = await loadStatus({
          registryPath: workspace.registryPath,
          homeDir: ctx.homeDir,
          quotaSummary: statusQuotaSummaries({ registryPath: workspace.registryPath, clock, homeDir: ctx.homeDir }),
        });
        const goals = payload.goal_count;
        if (goals !== workspace.goalIds.length)
          throw new Error(`status listed ${goals} goals, expected ${workspace.goalIds.length}`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const files = statusFiles(ctx);
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
