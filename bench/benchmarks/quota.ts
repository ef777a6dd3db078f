import { BIG_GOAL, fixedCase } from '../core/cases';
import { requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import { cliRun, rawReadProcess } from '../core/processes';
import type { PendingBenchmark, RunnableBenchmark } from '../core/types';
import { SIZES } from '../workspace/generate';

const ONE_GOAL_OF_L = 'one goal of L';

/** `quota should-run` for one goal. Exit 1 is an answer too ("do not run"), as long as it printed its JSON decision. */
export const quotaShouldRunCli: RunnableBenchmark = {
  kind: 'process',
  name: 'quota-should-run-cli',
  title: '`loopx quota should-run` for one goal (whole process)',
  description: 'node out/cli.js quota should-run --goal-id goal-0001 --agent-id codex-main --format json, LOOPX_NOW pinned to the workspace clock',
  baselineDescription: "a node process that reads registry.json, the goal's state file and its run index",
  requiresCli: 'quota should-run',
  cases: [fixedCase(ONE_GOAL_OF_L, SIZES.L, 9)],
  unitLabel: 'goals in the registry',
  units: (shape) => shape?.goals ?? 0,
  targets: [{ caseLabel: ONE_GOAL_OF_L, metric: 'median_ms', limit: 150, text: '`quota should-run` on one goal of L under 150 ms as a whole process' }],
  prepare: async (ctx) => cliRun(ctx, ['quota', 'should-run', '--goal-id', 'goal-0001', '--agent-id', 'codex-main', '--format', 'json'], {
    okExitCodes: [0, 1],
    check: (stdout) => { JSON.parse(stdout); },
  }),
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    return rawReadProcess(ctx, [workspace.registryPath, ...stateFiles(workspace).slice(0, 1), ...runIndexFiles(workspace).slice(0, 1)]);
  },
};

export const quotaShouldRunInProcess: PendingBenchmark = {
  kind: 'pending',
  name: 'quota-should-run-in-process',
  title: '`quota should-run` decision for one goal (in-process)',
  needs: `src/core/quota/ (the should-run decision): time it on goal-0001 of L and on one goal with ${BIG_GOAL.todos} todos and ${BIG_GOAL.runs.toLocaleString('en-US')} run rows (BIG_GOAL in core/cases.ts)`,
  targets: [
    { caseLabel: ONE_GOAL_OF_L, metric: 'median_ms', limit: 20, text: '`quota should-run` on one goal of L in-process under 20 ms' },
    { caseLabel: '1 goal × 500 todos × 10,000 runs', metric: 'median_ms', limit: 20, text: '`quota should-run` in-process on a goal with 10,000 run rows and 500 todos under 20 ms' },
  ],
};
