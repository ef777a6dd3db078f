import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import type { GoalRef, RegistryPlace } from './goalRef';
import { expandHome } from './locate';
import { findRawRegistryGoal, readRegistry } from './read';
import { isRecord } from './schema';
import { updateRegistry } from './update';

/**
 * The registry writers' store for one goal (register-agent, configure-goal, configure-agent, remove-agent,
 * goal pause/resume): the goal, resolved once by the operation, changed under the registry lock (the file
 * re-read inside it) and read back. Their errors: `registry_not_found`, `goal_not_found` listing the goals.
 */

export function registryMissing(registryPath: string): LoopxError {
  return new LoopxError(
    'registry_not_found',
    `${registryPath} does not exist. Connect the project first (loopx bootstrap), or point at a registry with --registry PATH.`,
    { file: registryPath },
  );
}

/** `goal_not_found` for a goal the registry read from `place` does not hold (every goal id it holds listed). */
export function goalMissing(place: RegistryPlace, goalId: string, registry: Record<string, unknown>): LoopxError {
  const goals = Array.isArray(registry['goals']) ? registry['goals'] : [];
  const ids = goals
    .filter(isRecord)
    .map((goal) => String(goal['id'] ?? ''))
    .filter((id) => id !== '');
  return new LoopxError(
    'goal_not_found',
    `goal '${goalId}' is not in ${place.registryPath}; goals: ${ids.length === 0 ? '(none)' : ids.join(', ')}`,
    { file: place.registryPath, goal_id: goalId, goal_ids: ids },
  );
}

/**
 * The goal's raw entry as the registry holds it now (a writer's read-back after its locked write); the
 * registry or the goal gone since it was resolved is an error.
 */
export function readBackRegistryGoal(goal: GoalRef): Promise<Record<string, unknown>> {
  return readBackGoalIn(goal, goal.goalId);
}

/**
 * The raw entry of `goalId` as `registry` (located, not resolved as a goal: the global registry a
 * writer synced into) holds it now; a missing file or goal is an error.
 */
export async function readBackGoalIn(registry: RegistryPlace, goalId: string): Promise<Record<string, unknown>> {
  if (!fs.existsSync(registry.registryPath)) throw registryMissing(registry.registryPath);
  const document = await readRegistry(registry.registryPath);
  const entry = findRawRegistryGoal(document, goalId);
  if (!entry) throw goalMissing(registry, goalId, document);
  return entry;
}

/**
 * Whether the `global` registry's entry for `goal` was synced from the goal's registry (its
 * `source_registry` names it), so a write there should be synced into `global` too. An unreadable
 * global registry answers false: it is not a writer's to repair (sync-global reports it).
 */
export async function globalEntrySourcedFrom(global: RegistryPlace, goal: GoalRef): Promise<boolean> {
  if (!fs.existsSync(global.registryPath)) return false;
  let entry: Record<string, unknown> | undefined;
  try {
    entry = findRawRegistryGoal(await readRegistry(global.registryPath), goal.goalId);
  } catch {
    return false;
  }
  const source = entry?.['source_registry'];
  if (typeof source !== 'string' || source.trim() === '') return false;
  const resolved = path.resolve(path.dirname(global.registryPath), expandHome(source.trim(), global.homeDir));
  return realPath(resolved) === realPath(goal.registryPath);
}

function realPath(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

export interface GoalWriteOptions {
  clock: Clock;
  /** Recorded in the lock holder record; default env `LOOPX_AGENT_ID`. */
  agentId?: string | null;
  operation: string;
  env: NodeJS.ProcessEnv;
}

/**
 * Changes one goal of the registry through the registry's locked read-modify-write: the file is
 * re-read inside the lock, `apply` gets a copy of the raw goal, and the copy replaces the goal
 * only when `apply` asks to write. Unknown fields are kept as they are.
 */
export async function updateRegistryGoal<T>(
  goal: GoalRef,
  apply: (goal: Record<string, unknown>) => { write: boolean; outcome: T },
  options: GoalWriteOptions,
): Promise<{ written: boolean; outcome: T }> {
  const result = await updateRegistry(
    goal.registryPath,
    (registry, context) => {
      if (!context.existed) throw registryMissing(goal.registryPath);
      const entry = findRawRegistryGoal(registry, goal.goalId);
      if (!entry) throw goalMissing(goal, goal.goalId, registry);
      const draft = structuredClone(entry);
      const step = apply(draft);
      if (step.write) {
        for (const key of Object.keys(entry)) delete entry[key];
        Object.assign(entry, draft);
      }
      return step.outcome;
    },
    { clock: options.clock, env: options.env, operation: options.operation, agentId: options.agentId ?? null },
  );
  return { written: result.changed, outcome: result.value };
}
