import * as fs from 'node:fs';
import * as path from 'node:path';
import { scalingCases } from '../core/cases';
import { requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { rawReadProcess } from '../core/processes';
import type { RunnableBenchmark } from '../core/types';
import { REPO_ROOT } from '../../test/support/demoWorkspace';
import { launchChromium, runTestsInWorkbench, startCodeServer } from '../../test/support/vscodeHost';

const HOST_SUITE = path.join(REPO_ROOT, 'out', 'test', 'integration', 'bench', 'index');

interface HostTimings {
  activateToModelMs: number | null;
  activateToGoalsShownMs: number | null;
  goalCount: number;
  extensionHostRssMb: number;
}

/**
 * Extension activation and view population in a real VS Code (code-server + Chromium), measured
 * inside the extension host with performance.now(): from `activate()` until the Goals view hands
 * VS Code the list of every goal. Peak memory is the extension host's RSS at that moment.
 * Needs `npm run build` (out/extension.js and out/test/integration/bench/index.js).
 */
export const extensionActivation: RunnableBenchmark = {
  kind: 'process',
  name: 'extension-activation',
  title: 'Extension activation until the Goals view lists every goal (real VS Code host)',
  description:
    'code-server opens the workspace with the development extension; inside the extension host: activate() → registries, status and quota of every goal loaded → Goals view populated',
  baselineDescription:
    'a node process that reads the registry, every state file and every run index (JSON.parse) with no logic',
  cases: scalingCases({ S: 3, M: 3, L: 2, XL: 1 }).map((c) => ({ ...c, warmup: c.size === 'XL' ? 0 : 1 })),
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    { caseLabel: 'L', metric: 'peak_rss_mb', limit: 300, text: "the extension host's memory for L under 300 MB" },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    if (!fs.existsSync(`${HOST_SUITE}.js`))
      throw new Error('out/test/integration/bench/index.js is missing: run npm run build');
    let last: HostTimings | null = null;
    return {
      run: async () => {
        const timingsFile = path.join(ctx.tmpDir, `timings-${Date.now()}.json`);
        const server = await startCodeServer({
          workspace: workspace.root,
          rootDir: path.join(ctx.tmpDir, `host-${Date.now()}`),
          env: { LOOPX_BENCH_TIMINGS: timingsFile, LOOPX_NOW: workspace.now },
        });
        const browser = await launchChromium();
        try {
          const result = await runTestsInWorkbench({
            server,
            browser,
            workspace: workspace.root,
            extensionDevelopmentPath: REPO_ROOT,
            extensionTestsPath: HOST_SUITE,
            timeoutMs: 300_000,
          });
          if (result.exitCode !== 0 || !fs.existsSync(timingsFile))
            throw new Error(
              `the extension host run failed (exit ${result.exitCode}):\n${result.logs.slice(-20).join('\n')}`,
            );
          last = JSON.parse(fs.readFileSync(timingsFile, 'utf8')) as HostTimings;
          if (last.goalCount !== workspace.goalIds.length)
            throw new Error(
              `the extension loaded ${last.goalCount} goals, the workspace has ${workspace.goalIds.length}`,
            );
          return { measuredMs: last.activateToGoalsShownMs ?? Number.NaN, childPeakRssMb: last.extensionHostRssMb };
        } finally {
          await browser.close();
          await server.stop();
        }
      },
      verify: async () =>
        last === null
          ? 'no run'
          : `${last.goalCount} goals; model loaded ${last.activateToModelMs?.toFixed(0)} ms after activate(); host RSS ${last.extensionHostRssMb.toFixed(0)} MB`,
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [workspace.registryPath, ...stateFiles(workspace), ...runIndexFiles(workspace)]);
  },
};
