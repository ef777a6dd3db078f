import { fixedClock } from '../../src/core/clock';
import { loadStatus, readStatusRegistry } from '../../src/core/status/statusPayload';
import { statusQuotaSummaries } from '../../src/core/status/statusQuota';
import { scalingCases } from '../core/cases';
import { rawRead, requireWorkspace } from '../core/files';
import * as fs from 'node:fs';
import { statusCachePath } from '../../src/core/goal/persistentCache';
import { cliRun, rawReadProcess, runNode } from '../core/processes';
import type { BenchContext, RunnableBenchmark } from '../core/types';
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
  // Cold: no persistent cache (deleted before each run; the run writes it again).
  prepare: async (ctx) => cliRun(ctx, ['status', '--format', 'json'], { beforeRun: () => dropStatusCache(ctx) }),
  prepareBaseline: async (ctx) => rawReadProcess(ctx, statusFiles(ctx)),
};

function dropStatusCache(ctx: BenchContext): void {
  fs.rmSync(statusCachePath(requireWorkspace(ctx.workspace).runtimeRoot), { force: true });
}

/** The answer of the uncached path (`LOOPX_STATUS_CACHE=off`), which every cached run must repeat byte for byte. */
function uncachedStatus(ctx: BenchContext): string {
  const workspace = requireWorkspace(ctx.workspace);
  return runNode(ctx, [ctx.cliPath, '--registry', workspace.registryPath, 'status', '--format', 'json'], {
    cwd: workspace.root,
    env: { LOOPX_STATUS_CACHE: 'off', LOOPX_NOW: workspace.now },
  }).stdout;
}

export const statusCliWarm: RunnableBenchmark = {
  kind: 'process',
  name: 'status-cli-warm',
  title: '`loopx status --format json` with a warm persistent cache (whole process)',
  description:
    'node out/cli.js status --format json after a first run left the persistent cache (runtime root cache/status-cache.json) and nothing changed: a stat per input file and one cache read; every run checks its output is identical to the uncached path',
  baselineDescription:
    'a node process that reads registry.json, every state file and every run index (JSON.parse of each line)',
  requiresCli: 'status',
  cases: scalingCases({ S: 7, M: 7, L: 5, XL: 3 }),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [{ caseLabel: 'M', metric: 'median_ms', limit: 150, text: '`status` on M with a warm cache under 0.15 s' }],
  prepare: async (ctx) => {
    const expected = uncachedStatus(ctx);
    dropStatusCache(ctx);
    const check = (stdout: string): void => {
      if (stdout !== expected) throw new Error('the cached status differs from the uncached path');
    };
    // The first run writes the cache; the timed ones find it.
    await cliRun(ctx, ['status', '--format', 'json'], { check }).run();
    return cliRun(ctx, ['status', '--format', 'json'], { check });
  },
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
          registry: await readStatusRegistry({ registryPath: workspace.registryPath, homeDir: ctx.homeDir }),
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
