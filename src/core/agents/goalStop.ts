import type { Clock } from '../clock';
import { STOPPED_GOAL_STATUSES } from '../quota/state';
import type { GoalRef } from '../registry/goalRef';
import { readBackRegistryGoal, updateRegistryGoal } from '../registry/goalWrite';

/**
 * The owner's stop flag of a goal: the registry goal's `status`. `stopped` or `paused` make quota
 * answer `paused` (pause_cause `goal_stopped`) and no turn starts until the goal is resumed; resuming
 * sets `active`. The change is made under the registry lock, only when it changes something, and read
 * back; every other field of the goal is kept as it was.
 */

export type StopFlagAction = 'pause' | 'resume';

export interface GoalStopFlagResult {
  ok: boolean;
  schema_version: 'loopx_goal_stop_flag_v0';
  action: StopFlagAction;
  goal_id: string;
  registry: string;
  dry_run: boolean;
  /** The registry `status` before, and what it is (or would be) after. */
  status_before: string | null;
  status_after: string | null;
  changed: boolean;
  written: boolean;
  verified: boolean;
}

export const PAUSED_GOAL_STATUS = 'paused';
export const RESUMED_GOAL_STATUS = 'active';

export function isStoppedStatus(status: unknown): boolean {
  return typeof status === 'string' && STOPPED_GOAL_STATUSES.has(status.trim().toLowerCase());
}

/** The status a goal gets from `action`, or null when it already has it (nothing to write). */
export function stopFlagTarget(action: StopFlagAction, status: unknown): string | null {
  const stopped = isStoppedStatus(status);
  if (action === 'pause') return stopped ? null : PAUSED_GOAL_STATUS;
  return stopped ? RESUMED_GOAL_STATUS : null;
}

function statusOf(goal: Record<string, unknown>): string | null {
  const status = goal['status'];
  return typeof status === 'string' ? status : null;
}

export interface GoalStopFlagRequest {
  action: StopFlagAction;
  execute: boolean;
  clock: Clock;
  env: NodeJS.ProcessEnv;
}

/** Previews the flag on `goal` as the operation resolved it, or with `execute` sets it (the registry re-read under its lock) and reads it back. */
export async function setGoalStopFlag(goal: GoalRef, request: GoalStopFlagRequest): Promise<GoalStopFlagResult> {
  const base = {
    schema_version: 'loopx_goal_stop_flag_v0' as const,
    action: request.action,
    goal_id: goal.goalId,
    registry: goal.registryPath,
  };
  if (!request.execute) {
    const stored = goal.rawEntry;
    const target = stopFlagTarget(request.action, stored['status']);
    return {
      ...base,
      ok: true,
      dry_run: true,
      status_before: statusOf(stored),
      status_after: target ?? statusOf(stored),
      changed: target !== null,
      written: false,
      verified: false,
    };
  }
  const { written, outcome } = await updateRegistryGoal(
    goal,
    (entry) => {
      const before = statusOf(entry);
      const target = stopFlagTarget(request.action, entry['status']);
      if (target !== null) entry['status'] = target;
      return { write: target !== null, outcome: { before, after: target ?? before } };
    },
    { clock: request.clock, env: request.env, operation: `goal-${request.action}`, agentId: null },
  );
  const readback = statusOf(await readBackRegistryGoal(goal));
  const verified = readback === outcome.after;
  return {
    ...base,
    ok: verified,
    dry_run: false,
    status_before: outcome.before,
    status_after: readback,
    changed: outcome.before !== outcome.after,
    written,
    verified,
  };
}
