import type { RegistrySource } from './locate';
import type { RegistryGoal } from './schema';

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
 * It lives in `registry/`, below `quota/`, `leases/`, `turn/` and `status/`, so code there can name it
 * (or a `Pick` of it) instead of a goal type of its own.
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
