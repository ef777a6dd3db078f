import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import {
  locateRegistry,
  PROJECT_REGISTRY_RELATIVE_PATH,
  registryProjectRoot,
  type LocatedRegistry,
  resolveGoalStatePath,
  resolveRuntimeRoot,
} from '../registry/locate';
import { quotaConfigOf } from '../quota/goal';
import type { GoalRef, RegistryPlace } from '../registry/goalRef';
import { goalMissing, registryMissing } from '../registry/goalWrite';
import { findRawRegistryGoal, registryGoals } from '../registry/read';
import { GoalLoader } from '../goal/loader';
import { RegistryGoalSchema } from '../registry/schema';
import { goalRuntimeDir } from '../runtime/layout';
import type { OperationEnvironment } from './operation';

/** A registry located and read once, for operations that work on a whole project. */
export interface ResolvedRegistry extends RegistryPlace {
  /** The raw document: writers mutate a copy of this, so nothing they do not understand is lost. */
  document: Record<string, unknown>;
}

/**
 * One goal, resolved once and passed down: its `GoalRef` (paths, typed and raw entry; what the goal
 * loader and everything below the operations take) plus the registry document it came from. Locked
 * re-reads (compare-and-swap writes) still read the files again inside their lock; everything else uses this handle.
 */
export interface ResolvedGoal extends ResolvedRegistry, GoalRef {}

/**
 * Where the registry is, the way the CLI documents (`--registry`, `LOOPX_REGISTRY`, `./.loopx`,
 * global), without reading it: for read-only operations that report a missing or unreadable
 * registry in their result instead of failing (`registry`, `registry-privacy`, `global-*`).
 */
export function locateRegistryOf(env: OperationEnvironment): LocatedRegistry {
  return locateRegistry({
    flag: env.registryPath,
    env: env.env,
    cwd: env.cwd,
    homeDir: env.homeDir,
    runtimeRootOverride: env.runtimeRootOverride,
  });
}

/**
 * The registry of a project folder, `<folder>/.loopx/registry.json`: the one `locateRegistryOf` finds
 * from that folder, and the one an editor host passes as `registryPath` for a workspace folder.
 */
export function projectRegistryPath(projectRoot: string): string {
  return path.join(projectRoot, PROJECT_REGISTRY_RELATIVE_PATH);
}

/** Locates the registry (see `locateRegistryOf`) and reads it; `registry_missing` when there is none. */
export async function resolveRegistry(env: OperationEnvironment): Promise<ResolvedRegistry> {
  const located = locateRegistryOf(env);
  if (!located.exists) {
    throw new LoopxError(
      'registry_missing',
      `registry file does not exist: ${located.path}; create it with "Create Goal" (loopx bootstrap) or point LoopX at the right registry`,
      { registry: located.path },
    );
  }
  const document = await new GoalLoader().registry(located.path);
  return {
    registryPath: located.path,
    source: located.source,
    projectRoot: registryProjectRoot(located.path),
    runtimeRoot: resolveRuntimeRoot({
      registryPath: located.path,
      registry: document,
      override: env.runtimeRootOverride,
      homeDir: env.homeDir,
    }),
    homeDir: env.homeDir,
    document,
  };
}

/** Resolves `goalId` in the environment's registry: `registry_missing`, `invalid_goal_id` or `goal_not_found` otherwise. */
export async function resolveGoal(env: OperationEnvironment, goalId: string): Promise<ResolvedGoal> {
  const id = checkGoalIdSegment(goalId);
  return goalOf(await resolveRegistry(env), id);
}

/**
 * `resolveGoal` as the registry writers answer it (configure-goal, configure-agent, remove-agent,
 * register-agent, goal pause/resume; `registry/goalWrite.ts`): the registry `at` (default: the located
 * one), a missing file `registry_not_found`, an unknown goal `goal_not_found` listing the
 * goals. The writers change the goal through `updateRegistryGoal`, which re-reads it under the lock.
 */
export async function resolveGoalToWrite(
  env: OperationEnvironment,
  goalId: string,
  at: Pick<LocatedRegistry, 'path' | 'source'> = locateRegistryOf(env),
): Promise<ResolvedGoal> {
  const registryPath = at.path;
  if (!fs.existsSync(registryPath)) throw registryMissing(registryPath);
  const document = await new GoalLoader().registry(registryPath);
  const registry: ResolvedRegistry = {
    registryPath,
    source: at.source,
    projectRoot: registryProjectRoot(registryPath),
    runtimeRoot: resolveRuntimeRoot({
      registryPath,
      registry: document,
      override: env.runtimeRootOverride,
      homeDir: env.homeDir,
    }),
    homeDir: env.homeDir,
    document,
  };
  return goalToWrite(registry, goalId);
}

/** `goalOf` with the registry writers' `goal_not_found` (every goal id listed): see `resolveGoalToWrite`. */
export function goalToWrite(registry: ResolvedRegistry, goalId: string): ResolvedGoal {
  if (findRawRegistryGoal(registry.document, goalId) === undefined)
    throw goalMissing(registry, goalId, registry.document);
  return goalOf(registry, goalId);
}

/** The handle of one goal of an already resolved registry (no further reads). */
export function goalOf(registry: ResolvedRegistry, goalId: string): ResolvedGoal {
  const rawEntry = findRawRegistryGoal(registry.document, goalId);
  if (rawEntry === undefined) {
    // The original's message first (agents match it), then the ids it could have meant.
    const known = registryGoals(registry.document).map((goal) => goal.id);
    const hint = known.length === 0 ? 'it has no goals yet' : `its goals: ${known.slice(0, 10).join(', ')}`;
    throw new LoopxError(
      'goal_not_found',
      `goal '${goalId}' is not in the registry ${registry.registryPath}; ${hint}`,
      {
        goal_id: goalId,
        registry: registry.registryPath,
      },
    );
  }
  return {
    ...registry,
    goalId,
    runtimeDir: goalRuntimeDir(registry.runtimeRoot, goalId),
    statePath: resolveGoalStatePath(rawEntry, goalId, registry.homeDir),
    entry: RegistryGoalSchema.parse(rawEntry),
    rawEntry,
  };
}

/**
 * The resolved goal for quota and turn code: the same handle, its quota window checked first
 * (`quota_window_out_of_range`), without reading anything again.
 */
export function quotaGoalOf(goal: ResolvedGoal): ResolvedGoal {
  quotaConfigOf(goal);
  return goal;
}

/** The goal's state file, or `state_file_unresolved` with the fix. */
export function requireStatePath(goal: ResolvedGoal): string {
  if (goal.statePath !== null) return goal.statePath;
  throw new LoopxError(
    'state_file_unresolved',
    `goal '${goal.goalId}' has no state_file and no absolute repo, so its ACTIVE_GOAL_STATE.md cannot be found; set state_file for it in ${goal.registryPath}`,
    { goal_id: goal.goalId, registry: goal.registryPath },
  );
}

/** A path for messages: relative to the project when inside it. */
export function displayPath(goal: ResolvedRegistry, filePath: string): string {
  const relative = path.relative(goal.projectRoot, filePath);
  return relative.startsWith('..') || path.isAbsolute(relative) ? filePath : relative;
}
