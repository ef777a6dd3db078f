import * as fs from 'node:fs';
import * as path from 'node:path';
import { fixedCase, scalingCases } from '../core/cases';
import { requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { rawReadProcess } from '../core/processes';
import type { BenchContext, RunnableBenchmark } from '../core/types';
import { SIZES } from '../workspace/generate';
import { REPO_ROOT } from '../../test/support/demoWorkspace';
import type { Page } from 'playwright-core';
import { launchChromium, runTestsInWorkbench, startCodeServer } from '../../test/support/vscodeHost';

/**
 * Opens the LoopX container as soon as the workbench shows its activity bar, as for a person whose
 * sidebar shows LoopX when the window opens: the Goals view asks for its items as soon as LoopX is
 * active, so "shown" times LoopX, not when the benchmark's suite starts (after the host's start).
 */
async function openLoopxAtStart(page: Page): Promise<void> {
  await page.locator('.activitybar').getByRole('tab', { name: /LoopX/ }).click({ timeout: 120_000 });
}

const HOST_SUITE = path.join(REPO_ROOT, 'out', 'test', 'integration', 'bench', 'index');

interface HostTimings {
  activateToModelMs: number | null;
  activateToGoalsShownMs: number | null;
  activateToGoalsFilledShownMs?: number | null;
  activateToBenchStartMs?: number;
  activateToStartedMs: number | null;
  goalCount: number;
  extensionHostRssMb: number;
  phases?: [string, number][];
  /** What the mode timed (all modes but `activation`). */
  measuredMs?: number;
  refreshCostMs?: number | null;
  refreshedGoals?: string;
  /** `external`: the refreshes of the changes made after the first, and when each was shown. */
  laterRefreshCostsMs?: (number | null)[];
  laterShownMs?: number[];
}

/**
 * Opens `folder` in code-server with the development extension and runs the host side
 * (test/integration/bench/index.ts) in `mode`; returns what it measured.
 */
async function runInHost(
  ctx: BenchContext,
  folder: string,
  mode: string,
  env: Record<string, string> = {},
  onWorkbench?: (page: Page) => Promise<void>,
): Promise<HostTimings> {
  if (!fs.existsSync(`${HOST_SUITE}.js`))
    throw new Error('out/test/integration/bench/index.js is missing: run npm run build');
  const timingsFile = path.join(ctx.tmpDir, `timings-${Date.now()}.json`);
  const server = await startCodeServer({
    workspace: folder,
    rootDir: path.join(ctx.tmpDir, `host-${Date.now()}`),
    env: { LOOPX_BENCH_TIMINGS: timingsFile, LOOPX_BENCH_MODE: mode, ...env },
  });
  const browser = await launchChromium();
  try {
    const result = await runTestsInWorkbench({
      server,
      browser,
      workspace: folder,
      extensionDevelopmentPath: REPO_ROOT,
      extensionTestsPath: HOST_SUITE,
      timeoutMs: 300_000,
      ...(onWorkbench === undefined ? {} : { onWorkbench }),
    });
    if (result.exitCode !== 0 || !fs.existsSync(timingsFile))
      throw new Error(`the extension host run failed (exit ${result.exitCode}):\n${result.logs.slice(-20).join('\n')}`);
    return JSON.parse(fs.readFileSync(timingsFile, 'utf8')) as HostTimings;
  } finally {
    await browser.close();
    await server.stop();
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};

/** Activation in a folder with no LoopX registry: what every VS Code window that activates LoopX pays. */
export const extensionActivationEmpty: RunnableBenchmark = {
  kind: 'process',
  name: 'extension-activation-empty',
  title: 'Extension activation in a workspace with no registry (real VS Code host)',
  description:
    'code-server opens an empty folder with the development extension; inside the extension host: from the start of activate() until it returns (views, commands, status bar registered; nothing to load)',
  baselineDescription: 'an empty node process (nothing to read)',
  cases: [fixedCase('no registry', null, 5)],
  unitLabel: 'goals',
  units: () => 0,
  targets: [
    { caseLabel: 'no registry', metric: 'median_ms', limit: 50, text: 'activation with no registry under 50 ms' },
  ],
  prepare: async (ctx) => {
    const folder = path.join(ctx.tmpDir, 'empty-workspace');
    fs.mkdirSync(folder, { recursive: true });
    const samples: number[] = [];
    let phases: [string, number][] = [];
    return {
      run: async () => {
        const t = await runInHost(ctx, folder, 'empty');
        if (t.goalCount !== 0) throw new Error(`the empty folder showed ${t.goalCount} goals`);
        samples.push(t.measuredMs ?? NaN);
        phases = t.phases ?? [];
        return { measuredMs: t.measuredMs ?? Number.NaN, childPeakRssMb: t.extensionHostRssMb };
      },
      verify: async () =>
        `no goals; activate() returned in ${samples.map((v) => v.toFixed(1)).join(', ')} ms; last run's steps (ms since activate()): ${phases.map(([label, at]) => `${label} ${at.toFixed(1)}`).join(', ')}`,
    };
  },
  prepareBaseline: async (ctx) => {
    return rawReadProcess(ctx, []);
  },
};

/**
 * Another process changes one goal's state file while the Goals view shows M: from the write (its
 * rename) to the Goals view's change event for that goal, through VS Code's file watcher and
 * LoopX's debounced reload. The reload's own cost (its start to the tree's event) is in the
 * verification line.
 */
export const extensionExternalChange: RunnableBenchmark = {
  kind: 'process',
  name: 'extension-external-change',
  title: 'An external one-goal change shown in the Goals view (real VS Code host)',
  description:
    "another process adds a todo to one goal's state file (temporary file renamed over it) → VS Code's watcher → LoopX's debounced reload → the Goals view's change event for that goal",
  baselineDescription: "a node process that reads the changed goal's state file and run index",
  cases: [fixedCase('M', SIZES.M, 5)],
  unitLabel: 'goals',
  units: (shape) => shape?.goals ?? 0,
  targets: [{ caseLabel: 'M', metric: 'median_ms', limit: 1000, text: 'an external one-goal change shown under 1 s' }],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const goalId = workspace.goalIds[0] ?? 'goal-0001';
    const stateFile = stateFiles(workspace)[0] ?? '';
    const original = fs.readFileSync(stateFile, 'utf8');
    const costs: number[] = [];
    const refreshed: string[] = [];
    const laterCosts: number[] = [];
    const laterShown: number[] = [];
    return {
      run: async () => {
        try {
          const t = await runInHost(ctx, workspace.root, 'external', {
            LOOPX_NOW: workspace.now,
            LOOPX_BENCH_STATE_FILE: stateFile,
            LOOPX_BENCH_GOAL_ID: goalId,
          });
          costs.push(t.refreshCostMs ?? NaN);
          for (const c of t.laterRefreshCostsMs ?? []) laterCosts.push(c ?? NaN);
          for (const c of t.laterShownMs ?? []) laterShown.push(c);
          refreshed.push(t.refreshedGoals ?? '?');
          return { measuredMs: t.measuredMs ?? Number.NaN, childPeakRssMb: t.extensionHostRssMb };
        } finally {
          fs.writeFileSync(stateFile, original);
        }
      },
      verify: async () =>
        `the tree refreshed only ${[...new Set(refreshed)].join(' / ')}; the refresh (reload start → tree event) of the first change took ${costs.map((c) => c.toFixed(1)).join(', ')} ms, median ${median(costs).toFixed(1)} ms; of the ${laterCosts.length} later changes (a second apart) median ${median(laterCosts).toFixed(1)} ms (${Math.min(...laterCosts).toFixed(1)}–${Math.max(...laterCosts).toFixed(1)}), shown after a median ${median(laterShown).toFixed(0)} ms`,
      cleanup: async () => fs.writeFileSync(stateFile, original),
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [stateFiles(workspace)[0] ?? '', runIndexFiles(workspace)[0] ?? '']);
  },
};

function webviewPaint(mode: 'warnings' | 'goal-detail', title: string): RunnableBenchmark {
  return {
    kind: 'process',
    name: `extension-webview-${mode}`,
    title: `${title} webview first paint (real VS Code host)`,
    description: `with M shown: from executing the palette command to the webview's first message (\`ready\`, sent when its script has run and drawn the shell)`,
    baselineDescription:
      'the same window state (M shown), a minimal webview instead: one inline script posting a message (what VS Code itself takes to show a first webview)',
    cases: [fixedCase('M', SIZES.M, 5)],
    unitLabel: 'goals',
    units: (shape) => shape?.goals ?? 0,
    targets: [{ caseLabel: 'M', metric: 'median_ms', limit: 300, text: `${title} webview first paint under 300 ms` }],
    prepare: async (ctx) => {
      const workspace = requireWorkspace(ctx.workspace);
      const samples: number[] = [];
      return {
        run: async () => {
          const t = await runInHost(ctx, workspace.root, mode, {
            LOOPX_NOW: workspace.now,
            LOOPX_BENCH_GOAL_ID: workspace.goalIds[0] ?? 'goal-0001',
          });
          samples.push(t.measuredMs ?? NaN);
          return { measuredMs: t.measuredMs ?? Number.NaN, childPeakRssMb: t.extensionHostRssMb };
        },
        verify: async () =>
          `${samples.length} fresh windows; first message after ${samples.map((v) => v.toFixed(0)).join(', ')} ms`,
      };
    },
    prepareBaseline: async (ctx) => {
      const workspace = requireWorkspace(ctx.workspace);
      return {
        run: async () => {
          const t = await runInHost(ctx, workspace.root, 'webview-raw', { LOOPX_NOW: workspace.now });
          return { measuredMs: t.measuredMs ?? Number.NaN, childPeakRssMb: t.extensionHostRssMb };
        },
      };
    },
  };
}

export const extensionWebviewWarnings = webviewPaint('warnings', 'Projection warnings');
export const extensionWebviewGoalDetail = webviewPaint('goal-detail', 'Goal detail');

/**
 * Extension activation and view population in a real VS Code (code-server + Chromium), measured
 * inside the extension host with performance.now(): from `activate()` until the Goals view hands
 * VS Code its goals with their status read (the fill sets every goal's at once and refreshes their
 * nodes in one event). Peak memory is the extension host's RSS at that moment.
 * Needs `npm run build` (out/extension.js and out/test/integration/bench/index.js).
 */
export const extensionActivation: RunnableBenchmark = {
  kind: 'process',
  name: 'extension-activation',
  title: 'Extension activation until the Goals view shows every goal with its status (real VS Code host)',
  description:
    'code-server opens the workspace with the development extension and the LoopX sidebar open (clicked as soon as the activity bar shows); inside the extension host: activate() → goals listed → status and quota of every goal read → the Goals view hands VS Code the filled goals',
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
    let last: HostTimings | null = null;
    const fills: number[] = [];
    const asked: number[] = [];
    return {
      run: async () => {
        last = await runInHost(ctx, workspace.root, 'activation', { LOOPX_NOW: workspace.now }, openLoopxAtStart);
        fills.push(last.activateToModelMs ?? NaN);
        asked.push(last.activateToGoalsShownMs ?? NaN);
        if (last.goalCount !== workspace.goalIds.length)
          throw new Error(
            `the extension loaded ${last.goalCount} goals, the workspace has ${workspace.goalIds.length}`,
          );
        return {
          measuredMs: last.activateToGoalsFilledShownMs ?? Number.NaN,
          childPeakRssMb: last.extensionHostRssMb,
        };
      },
      verify: async () =>
        last === null
          ? 'no run'
          : `${last.goalCount} goals; every window (the first a warm-up): status and quota of every goal read at ${fills.map((v) => v.toFixed(0)).join(', ')} ms (median ${median(fills).toFixed(0)}), the view first asked for its goals at ${asked.map((v) => v.toFixed(0)).join(', ')} ms; last run (ms after activate()): listed in the view ${last.activateToGoalsShownMs?.toFixed(0)}, status and quota of every goal read ${last.activateToModelMs?.toFixed(0)}, filled goals in the view ${last.activateToGoalsFilledShownMs?.toFixed(0)}, this benchmark's suite started ${last.activateToBenchStartMs?.toFixed(0)}; host RSS ${last.extensionHostRssMb.toFixed(0)} MB; last run's steps (ms since activate()): ${(last.phases ?? []).map(([label, at]) => `${label} ${at.toFixed(1)}`).join(', ')}`,
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [workspace.registryPath, ...stateFiles(workspace), ...runIndexFiles(workspace)]);
  },
};
