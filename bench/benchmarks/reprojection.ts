import * as fs from 'node:fs';
import { GoalStatusCache } from '../../src/core/status/goalStatus';
import { statusTargets } from '../../src/core/status/statusPayload';
import { readRegistry } from '../../src/core/registry/read';
import { fixedCase } from '../core/cases';
import { rawRead, requireWorkspace, runIndexFiles, stateFiles } from '../core/files';
import type { RunnableBenchmark } from '../core/types';
import { SIZES } from '../workspace/generate';

/**
 * What the editor and the status server do when one goal's state file changes: the status cache
 * (warmed with every goal of L) re-reads and re-projects only that goal.
 */
export const reprojectionOneGoal: RunnableBenchmark = {
  kind: 'in-process',
  name: 'reprojection-one-goal',
  title: 'Incremental re-projection of one goal after a change',
  description:
    "GoalStatusCache warmed with every goal of L; each run appends a todo to one goal's state file and asks the cache for that goal's status item",
  baselineDescription: "read that goal's state file and JSON.parse its run index",
  cases: [fixedCase('one goal of L', SIZES.L, 15, 2)],
  unitLabel: 'goals re-projected',
  units: () => 1,
  targets: [{ caseLabel: 'one goal of L', metric: 'median_ms', limit: 20, text: 'one-goal re-projection under 20 ms' }],
  prepare: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const registry = await readRegistry(workspace.registryPath);
    const targets = statusTargets(registry, workspace.registryPath, { homeDir: ctx.homeDir });
    const cache = new GoalStatusCache();
    for (const target of targets) await cache.goalStatus(target, { homeDir: ctx.homeDir });
    const target = targets[0];
    const stateFile = stateFiles(workspace)[0];
    if (target === undefined || stateFile === undefined) throw new Error('the workspace has no goals');
    const original = fs.readFileSync(stateFile, 'utf8');
    const before = (await cache.goalStatus(target, { homeDir: ctx.homeDir })).agent_todos?.total_count ?? 0;
    let runs = 0;
    let lastCount = before;
    return {
      run: async () => {
        runs++;
        fs.appendFileSync(
          stateFile,
          `\n## Agent Todo\n- [ ] [P3] Benchmark todo ${runs}.\n  <!-- loopx:todo todo_id=todo_bench_${runs} status=open -->\n`,
        );
        lastCount = (await cache.goalStatus(target, { homeDir: ctx.homeDir })).agent_todos?.total_count ?? 0;
      },
      verify: async () => {
        if (lastCount <= before)
          throw new Error(`the re-projected item did not see the change (${before} → ${lastCount} agent todos)`);
        return `agent todos of the changed goal ${before} → ${lastCount}; the other ${targets.length - 1} goals were not re-read`;
      },
      cleanup: async () => fs.writeFileSync(stateFile, original),
    };
  },
  prepareBaseline: async (ctx) => {
    const workspace = requireWorkspace(ctx.workspace);
    const files = [stateFiles(workspace)[0] ?? '', runIndexFiles(workspace)[0] ?? ''];
    return {
      run: async () => {
        await rawRead(files);
      },
    };
  },
};
