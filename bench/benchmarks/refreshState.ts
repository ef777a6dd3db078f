import { fixedClock } from '../../src/core/clock';
import { resolveGoal } from '../../src/core/ops/goalHandle';
import { refreshState } from '../../src/core/refresh/refreshState';
import { fixedCase } from '../core/cases';
import { rawRead, requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { preserveGoal } from '../core/preserve';
import { cliRun, rawReadProcess } from '../core/processes';
import type { RunnableBenchmark } from '../core/types';
import { SIZES } from '../workspace/generate';

const ONE_GOAL_OF_L = 'one goal of L';

/** `refresh-state` writes a run for the goal; the goal is restored afterwards so the cached workspace stays as generated. */
export const refreshStateCli: RunnableBenchmark = {
  kind: 'process',
  name: 'refresh-state-cli',
  title: '`loopx refresh-state` for one goal (whole process)',
  description:
    'node out/cli.js refresh-state --goal-id goal-0001 --agent-id codex-main --classification state_refreshed --format json (records one run; the goal is restored after the runs)',
  baselineDescription: "a node process that reads registry.json, the goal's state file and its run index",
  requiresCli: 'refresh-state',
  cases: [fixedCase(ONE_GOAL_OF_L, SIZES.L, 9)],
  unitLabel: 'goals in the registry',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: ONE_GOAL_OF_L,
      metric: 'median_ms',
      limit: 150,
      text: '`refresh-state` on one goal of L under 150 ms as a whole process',
    },
  ],
  prepare: async (ctx) => {
    const snapshot = preserveGoal(requireWorkspace(ctx.workspace), 'goal-0001');
    const prepared = cliRun(ctx, [
      'refresh-state',
      '--goal-id',
      'goal-0001',
      '--agent-id',
      'codex-main',
      '--classification',
      'state_refreshed',
      '--format',
      'json',
    ]);
    return { ...prepared, cleanup: async () => snapshot.restore() };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [
      workspace.registryPath,
      ...stateFiles(workspace).slice(0, 1),
      ...runIndexFiles(workspace).slice(0, 1),
    ]);
  },
};

export const refreshStateInProcess: RunnableBenchmark = {
  kind: 'in-process',
  name: 'refresh-state-in-process',
  title: '`refresh-state` for one goal (in-process)',
  description:
    'refreshState for goal-0001 as agent codex-main with classification state_refreshed (snapshot the state file, write the run record and index row; the goal is restored after the runs)',
  baselineDescription: "read registry.json, the goal's state file and its run index",
  cases: [fixedCase(ONE_GOAL_OF_L, SIZES.L, 15, 2)],
  unitLabel: 'run rows of the goal',
  units: (shape) => shape?.runs ?? 0,
  targets: [
    {
      caseLabel: ONE_GOAL_OF_L,
      metric: 'median_ms',
      limit: 20,
      text: '`refresh-state` on one goal of L in-process under 20 ms',
    },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const snapshot = preserveGoal(workspace, 'goal-0001');
    const clock = fixedClock(workspace.now);
    return {
      run: async () => {
        // As the operation does: the goal resolved once (the registry read), then planned and committed.
        const goal = await resolveGoal(
          { cwd: ctx.homeDir, env: {}, clock, homeDir: ctx.homeDir, registryPath: workspace.registryPath },
          'goal-0001',
        );
        await refreshState(goal, { agentId: 'codex-main', classification: 'state_refreshed' }, { clock });
      },
      cleanup: async () => snapshot.restore(),
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const files = [
      workspace.registryPath,
      ...stateFiles(workspace).slice(0, 1),
      ...runIndexFiles(workspace).slice(0, 1),
    ];
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
