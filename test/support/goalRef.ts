import * as os from 'node:os';
import * as path from 'node:path';
import { LoopxError } from '../../src/core/errors';
import { goalOf, quotaGoalOf, type ResolvedGoal } from '../../src/core/ops/goalHandle';
import { checkGoalIdSegment } from '../../src/core/registry/goalId';
import { registryProjectRoot, resolveRuntimeRoot } from '../../src/core/registry/locate';
import { findRawRegistryGoal, readRegistry, readRegistrySync } from '../../src/core/registry/read';
import { normalizeAgentId } from '../../src/core/registry/agentIds';
import { isoSeconds } from '../../src/core/clock';
import { goalNotFoundDecision } from '../../src/core/scheduling/decisionAssembly';
import type { ShouldRunDecision } from '../../src/core/scheduling/decisionContract';
import { shouldRunOnGoal, type GoalDecisionOptions } from '../../src/core/scheduling/shouldRun';

/** Where a test's goal is: its registry and id (`homeDir` defaults to the OS home, as the CLI's). */
export interface GoalPlace {
  registryPath: string;
  goalId: string;
  homeDir?: string | undefined;
  /** `--runtime-root`; default the registry's `common_runtime_root`. */
  runtimeRootOverride?: string | undefined;
}

/**
 * The goal's `GoalRef` as an operation resolves it (`goalOf`, its quota window checked: `quotaGoalOf`) from a
 * registry document already read, or null when the registry has no goal with this id.
 */
export function goalRefIn(registry: Record<string, unknown>, place: GoalPlace): ResolvedGoal | null {
  const goalId = checkGoalIdSegment(place.goalId);
  const registryPath = path.resolve(place.registryPath);
  if (findRawRegistryGoal(registry, goalId) === undefined) return null;
  const homeDir = place.homeDir ?? os.homedir();
  const resolved = {
    registryPath,
    source: 'flag' as const,
    projectRoot: registryProjectRoot(registryPath),
    runtimeRoot: resolveRuntimeRoot({ registryPath, registry, override: place.runtimeRootOverride, homeDir }),
    homeDir,
    document: registry,
  };
  return quotaGoalOf(goalOf(resolved, goalId));
}

function required(goal: ResolvedGoal | null, place: GoalPlace): ResolvedGoal {
  if (goal !== null) return goal;
  throw new LoopxError('goal_not_found', `goal '${place.goalId}' is not in the registry ${place.registryPath}`, {
    goal_id: place.goalId,
    registry: place.registryPath,
  });
}

/** The goal's `GoalRef`, its registry read now; `goal_not_found` when it has no such goal. */
export async function loadGoalRef(place: GoalPlace): Promise<ResolvedGoal> {
  return required(goalRefIn(await readRegistry(path.resolve(place.registryPath)), place), place);
}

/** `loadGoalRef`, reading the registry synchronously (worker processes, fixtures). */
export function goalRefOf(place: GoalPlace): ResolvedGoal {
  return required(goalRefIn(readRegistrySync(path.resolve(place.registryPath)), place), place);
}

/**
 * `quota should-run`'s decision for a goal named by registry and id, as the operation answers it: a goal the
 * registry does not list is the `goal_not_found` answer; otherwise the goal is loaded and decided on.
 */
export async function shouldRunFor(options: GoalPlace & GoalDecisionOptions): Promise<ShouldRunDecision> {
  const goal = goalRefIn(await readRegistry(path.resolve(options.registryPath)), options);
  if (goal !== null) return shouldRunOnGoal(goal, options);
  const requested = options.agentId ?? null;
  return goalNotFoundDecision(
    options.goalId,
    requested === null ? null : (normalizeAgentId(requested) ?? requested),
    isoSeconds(options.clock.now()),
  );
}
