import { registryProjectRoot } from '../../src/core/registry/locate';
import { readGoalRuns } from '../../src/core/runtime/runIndex';
import { scalingCases } from '../core/cases';
import { rawRead, requireWorkspace, runIndexFiles } from '../core/files';
import type { RunnableBenchmark } from '../core/types';

export const runIndexRead: RunnableBenchmark = {
  kind: 'in-process',
  name: 'run-index-read',
  title: 'Read the run index of every goal',
  description:
    'readGoalRuns for every goal: parse and validate each row, merge duplicates, sort newest first, check both artifacts of every row exist',
  baselineDescription: 'read every index.jsonl and JSON.parse each line',
  cases: scalingCases({ L: 5, XL: 5 }),
  unitLabel: 'run rows',
  units: (shape) => (shape === null ? 0 : shape.goals * shape.runs),
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const projectRoot = registryProjectRoot(workspace.registryPath);
    return {
      run: async () => {
        let rows = 0;
        for (const goalId of workspace.goalIds) {
          const read = await readGoalRuns(workspace.runtimeRoot, goalId, { projectRoot });
          rows += read.rows.length;
        }
        if (rows !== workspace.counts.runRows)
          throw new Error(`read ${rows} rows, expected ${workspace.counts.runRows}`);
      },
    };
  },
  prepareBaseline: async (ctx) => {
    const files = runIndexFiles(requireWorkspace(ctx.workspace));
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
