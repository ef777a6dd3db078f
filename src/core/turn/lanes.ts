import { registeredAgentsForGoal } from '../registry/agentIds';
import { laneIsolationOf, laneRef, type LaneRef } from '../lanes/lane';
import type { OperationContext } from '../state/todos';
import type { TurnSetup } from './context';

/**
 * How a turn uses its agent's lane (docs/lanes.md): the lane of an agent whose profile says
 * `isolation: "worktree"`, or null for an agent working in the main checkout.
 */
export function turnLaneOf(turnGoal: TurnSetup): LaneRef | null {
  if (laneIsolationOf(turnGoal.goal.rawEntry, turnGoal.agentId) !== 'worktree') return null;
  return laneRef({
    goalId: turnGoal.goal.goalId,
    agentId: turnGoal.agentId,
    runtimeRoot: turnGoal.goal.runtimeRoot,
    projectRoot: turnGoal.projectRoot,
    registryPath: turnGoal.goal.registryPath,
  });
}

/** The todo-edit context of a lane's gate written by a turn. */
export function laneGateContext(turnGoal: TurnSetup, now: string): OperationContext {
  const roster = registeredAgentsForGoal(turnGoal.goal.rawEntry);
  return { now, goalId: turnGoal.goal.goalId, roster: roster.length > 0 ? roster : null };
}
