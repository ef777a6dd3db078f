import type { GoalRef } from '../../src/core/registry/goalRef';
import { RegistryGoalSchema } from '../../src/core/registry/schema';
import type { StatusRefKeys } from '../../src/core/status/goalStatusSchema';
import {
  loadStatus,
  readStatusRegistry,
  type StatusPayload,
  type StatusRequest,
} from '../../src/core/status/statusPayload';

/**
 * `loopx status`'s two steps for tests: the registry read through the request's cache (`readStatusRegistry`),
 * then the payload projected from it (`loadStatus`).
 */
export async function loadStatusAt(
  request: Omit<StatusRequest, 'registry'> & {
    registryPath: string;
    homeDir: string;
    runtimeRootOverride?: string | null;
  },
): Promise<StatusPayload> {
  const { registryPath, homeDir, runtimeRootOverride, ...rest } = request;
  const registry = await readStatusRegistry(
    { registryPath, homeDir, runtimeRootOverride: runtimeRootOverride ?? null },
    rest.cache,
  );
  return loadStatus({ ...rest, registry });
}

/**
 * The part of a goal's `GoalRef` status reads, for a goal written as a registry entry (`entry`: its fields besides
 * the id, e.g. `state_file` as an absolute path, `display_name`, `adapter`). `homeDir` defaults to `projectRoot`.
 */
export function statusRef(goal: {
  goalId: string;
  projectRoot: string;
  runtimeRoot: string;
  homeDir?: string;
  entry?: Record<string, unknown>;
}): Pick<GoalRef, StatusRefKeys> {
  return {
    goalId: goal.goalId,
    projectRoot: goal.projectRoot,
    runtimeRoot: goal.runtimeRoot,
    homeDir: goal.homeDir ?? goal.projectRoot,
    entry: RegistryGoalSchema.parse({ ...goal.entry, id: goal.goalId }),
  };
}
