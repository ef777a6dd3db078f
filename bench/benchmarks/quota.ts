import { fixedClock } from '../../src/core/clock';
import { shouldRunFor } from '../../test/support/goalRef';
import { BIG_GOAL, fixedCase } from '../core/cases';
import { rawRead, requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { cliRun, rawReadProcess } from '../core/processes';
import type { RunnableBenchmark } from '../core/types';
import { SIZES } from '../workspace/generate';

const ONE_GOAL_OF_L = 'one goal of L';

/** `quota should-run` for one goal. Exit 1 is an answer too ("do not run"), as long as it printed its JSON decision. */
export const quotaShouldRunCli: RunnableBenchmark = {
  kind: 'process',
  name: 'quota-should-run-cli',
  title: '`loopx quota should-run` for one goal (whole process)',
  description:
    'node out/cli.js quota should-run --goal-id goal-0001 --agent-id codex-main --format json, LOOPX_NOW pinned to the workspace clock',
  baselineDescription: "a node process that reads registry.json, the goal's state file and its run index",
  requiresCli: 'quota should-run',
  cases: [fixedCase(ONE_GOAL_OF_L, SIZES.L, 9)],
  unitLabel: 'goals in the registry',
  units: (shape) => shape?.goals ?? 0,
  targets: [
    {
      caseLabel: ONE_GOAL_OF_L,
      metric: 'median_ms',
      limit: 150,
      text: '`quota should-run` on one goal of L under 150 ms as a whole process',
    },
  ],
  prepare: async (ctx) =>
    cliRun(ctx, ['quota', 'should-run', '--goal-id', 'goal-0001', '--agent-id', 'codex-main', '--format', 'json'], {
      okExitCodes: [0, 1],
      check: (stdout) => {
        JSON.parse(stdout);
      },
    }),
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [
      workspace.registryPath,
      ...stateFiles(workspace).slice(0, 1),
      ...runIndexFiles(workspace).slice(0, 1),
    ]);
  },
};

const BIG = '1 goal × 500 todos × 10,000 runs';

export const quotaShouldRunInProcess: RunnableBenchmark = {
  kind: 'in-process',
  name: 'quota-should-run-in-process',
  title: '`quota should-run` decision for one goal (in-process)',
  description:
    'shouldRun for goal-0001 as agent codex-main (no turn id, so nothing is written), clock pinned to the workspace clock',
  baselineDescription: "read registry.json, the goal's state file and its run index",
  // The decision is made at every heartbeat of a long-lived process (the turn loop, the editor):
  // the figure is the steady state, after enough calls for the code to be optimized.
  cases: [fixedCase(ONE_GOAL_OF_L, SIZES.L, 15, 10), fixedCase(BIG, BIG_GOAL, 15, 10)],
  unitLabel: 'run rows of the goal',
  units: (shape) => shape?.runs ?? 0,
  targets: [
    {
      caseLabel: ONE_GOAL_OF_L,
      metric: 'median_ms',
      limit: 20,
      text: '`quota should-run` on one goal of L in-process under 20 ms',
    },
    {
      caseLabel: BIG,
      metric: 'median_ms',
      limit: 10,
      text: '`quota should-run` in-process on a goal with 10,000 run rows and 500 todos under 10 ms (issue 19)',
    },
  ],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const clock = fixedClock(workspace.now);
    return {
      run: async () => {
        const decision = await shouldRunFor({
          registryPath: workspace.registryPath,
          goalId: 'goal-0001',
          agentId: 'codex-main',
          clock,
          homeDir: ctx.homeDir,
        });
        if (typeof decision.should_run !== 'boolean') throw new Error('no decision');
      },
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
