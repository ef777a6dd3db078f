import type { RegistrySource } from '../registry/locate';
import type { RegistryGoal } from '../registry/schema';
import { quotaGoalFromEntry, type QuotaGoal } from '../quota/goal';

/** Where a registry is and what it resolves to, without its document. */
export interface RegistryPlace {
  /** Absolute path of the registry file. */
  registryPath: string;
  source: RegistrySource;
  /** The folder the registry belongs to (the parent of `.loopx/`). */
  projectRoot: string;
  runtimeRoot: string;
  homeDir: string;
}

/**
 * One goal of a registry, located once: every path the readers need, the typed registry entry for
 * readers and the raw entry for writers (the operations' `ResolvedGoal` is this plus the registry document).
 */
export interface GoalRef extends RegistryPlace {
  goalId: string;
  /** `<runtime root>/goals/<goal id>`. */
  runtimeDir: string;
  /** The goal's ACTIVE_GOAL_STATE.md, or null when neither `state_file` nor an absolute `repo` locates it. */
  statePath: string | null;
  entry: RegistryGoal;
  rawEntry: Record<string, unknown>;
}

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
