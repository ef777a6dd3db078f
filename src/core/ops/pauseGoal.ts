import { z } from 'zod';
import { readRegistryGoal, updateRegistryGoal } from '../agents/goalWrite';
import { STOPPED_GOAL_STATUSES } from '../quota/state';
import { goalIdArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';

/**
 * `pause-goal` / `resume-goal`: the owner's stop flag. LoopX reads a goal as stopped when its
 * registry `status` is `paused` or `stopped`: `quota should-run` then answers `paused`
 * (`pause_cause: goal_stopped`, scheduler `stop_until_explicit_resume`) and no turn starts, until
 * the owner resumes it. Both write the one field under the registry lock and read it back; asking
 * for the state the goal is already in writes nothing.
 */

export const GoalFlagResultSchema = z.object({
  ok: z.boolean(),
  schema_version: z.literal('loopx_goal_stop_flag_v0'),
  goal_id: z.string(),
  registry: z.string(),
  operation: z.enum(['pause', 'resume']),
  status_before: z.string().nullable(),
  status_after: z.string().nullable(),
  stopped: z.boolean(),
  written: z.boolean(),
  verified: z.boolean(),
});
export type GoalFlagResult = z.infer<typeof GoalFlagResultSchema>;

function statusOf(goal: Record<string, unknown>): string | null {
  const value = goal['status'];
  return typeof value === 'string' ? value : null;
}

export function isStoppedStatus(status: string | null): boolean {
  return status !== null && STOPPED_GOAL_STATUSES.has(status.trim().toLowerCase());
}

/** Sets (pause) or clears (resume) the stop flag of one goal, then reads it back. */
export async function setGoalStopFlag(
  env: OperationEnvironment,
  goalId: string,
  operation: 'pause' | 'resume',
): Promise<GoalFlagResult> {
  const registryPath = locateRegistryOf(env).path;
  const { written, outcome } = await updateRegistryGoal(
    registryPath,
    goalId,
    (goal) => {
      const before = statusOf(goal);
      const stopped = isStoppedStatus(before);
      if (operation === 'pause' ? stopped : !stopped) return { write: false, outcome: before };
      goal['status'] = operation === 'pause' ? 'paused' : 'active';
      return { write: true, outcome: before };
    },
    { clock: env.clock, env: env.env, operation: `${operation}-goal`, agentId: null },
  );
  const after = statusOf(await readRegistryGoal(registryPath, goalId));
  const stopped = isStoppedStatus(after);
  const verified = operation === 'pause' ? stopped : !stopped;
  return GoalFlagResultSchema.parse({
    ok: verified,
    schema_version: 'loopx_goal_stop_flag_v0',
    goal_id: goalId,
    registry: registryPath,
    operation,
    status_before: outcome,
    status_after: after,
    stopped,
    written,
    verified,
  });
}

export const pauseGoal = defineOperation({
  key: 'pauseGoal',
  args: z.strictObject({ goalId: goalIdArg('the goal to pause') }),
  run: (args, env) => setGoalStopFlag(env, args.goalId, 'pause'),
});
