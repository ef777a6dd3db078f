import * as fs from 'node:fs';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { findRawRegistryGoal, readRegistry } from '../registry/read';
import { updateRegistry } from '../registry/update';
import { isRecord } from '../registry/schema';

/** Shared by register-agent and configure-goal: reading one goal, and changing it under the registry lock. */

export function registryMissing(registryPath: string): LoopxError {
  return new LoopxError(
    'registry_not_found',
    `${registryPath} does not exist. Connect the project first (loopx bootstrap), or point at a registry with --registry PATH.`,
    { file: registryPath },
  );
}

export function goalMissing(registryPath: string, goalId: string, registry: Record<string, unknown>): LoopxError {
  const goals = Array.isArray(registry['goals']) ? registry['goals'] : [];
  const ids = goals
    .filter(isRecord)
    .map((goal) => String(goal['id'] ?? ''))
    .filter((id) => id !== '');
  return new LoopxError(
    'goal_not_found',
    `goal '${goalId}' is not in ${registryPath}; goals: ${ids.length === 0 ? '(none)' : ids.join(', ')}`,
    { file: registryPath, goal_id: goalId, goal_ids: ids },
  );
}

/** Reads the registry and the raw goal entry; a missing file or goal is an error. */
export async function readRegistryGoal(registryPath: string, goalId: string): Promise<Record<string, unknown>> {
  if (!fs.existsSync(registryPath)) throw registryMissing(registryPath);
  const registry = await readRegistry(registryPath);
  const goal = findRawRegistryGoal(registry, goalId);
  if (!goal) throw goalMissing(registryPath, goalId, registry);
  return goal;
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
  registryPath: string,
  goalId: string,
  apply: (goal: Record<string, unknown>) => { write: boolean; outcome: T },
  options: GoalWriteOptions,
): Promise<{ written: boolean; outcome: T }> {
  const result = await updateRegistry(
    registryPath,
    (registry, context) => {
      if (!context.existed) throw registryMissing(registryPath);
      const goal = findRawRegistryGoal(registry, goalId);
      if (!goal) throw goalMissing(registryPath, goalId, registry);
      const draft = structuredClone(goal);
      const step = apply(draft);
      if (step.write) {
        for (const key of Object.keys(goal)) delete goal[key];
        Object.assign(goal, draft);
      }
      return step.outcome;
    },
    { clock: options.clock, env: options.env, operation: options.operation, agentId: options.agentId ?? null },
  );
  return { written: result.changed, outcome: result.value };
}
