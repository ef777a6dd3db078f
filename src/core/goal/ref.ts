import type { GoalRef } from '../registry/goalRef';
import { quotaGoalFromEntry, type QuotaGoal } from '../quota/goal';

/** `GoalRef` lives in `registry/goalRef.ts` (below the folders that take it); re-exported for `goal/`'s readers. */
export type { GoalRef, RegistryPlace } from '../registry/goalRef';

/** The quota view of a goal reference (what quota and turn code take), without reading anything. */
export function quotaGoalOfRef(goal: GoalRef): QuotaGoal {
  return quotaGoalFromEntry(goal.rawEntry, {
    goalId: goal.goalId,
    registryPath: goal.registryPath,
    projectRoot: goal.projectRoot,
    runtimeRoot: goal.runtimeRoot,
    homeDir: goal.homeDir,
  });
}
