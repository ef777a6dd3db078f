import { z } from 'zod';
import { isStoppedStatus, setGoalStopFlag } from '../agents/goalStop';
import { goalIdArg } from './common';
import { resolveGoalToWrite } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `goal-lifecycle --operation stop|resume`: the original's spelling of `goal pause` / `goal resume`,
 * over the same stop flag (the registry goal's `status`: `paused` stops, `active` resumes), answered
 * in the original's `loopx_goal_activation_transition_v1` shape with its `active`/`stopped` words.
 * Previews unless `execute`. The original also projects the change into the global registry
 * (`target_global_registry`, `authority_route`) and stores `--reason` in the goal's `activation`;
 * this one writes the project registry only and echoes the reason (docs/compatibility.md).
 */

export const GOAL_LIFECYCLE_OPERATIONS = ['stop', 'resume'] as const;
export type GoalActivationState = 'active' | 'stopped';

export interface GoalLifecycleResult {
  ok: boolean;
  schema_version: 'loopx_goal_activation_transition_v1';
  dry_run: boolean;
  execute: boolean;
  goal_id: string;
  operation: (typeof GOAL_LIFECYCLE_OPERATIONS)[number];
  before_state: GoalActivationState;
  after_state: GoalActivationState;
  changed: boolean;
  written: boolean;
  partial_write: boolean;
  source_registry: string;
  reason: string;
  readback: {
    schema_version: 'loopx_goal_activation_readback_v1';
    status: 'verified' | 'mismatch' | 'not_executed' | 'not_required';
    verified: boolean;
  };
}

const stateOf = (status: string | null): GoalActivationState => (isStoppedStatus(status) ? 'stopped' : 'active');

export const goalLifecycle = defineOperation({
  key: 'goalLifecycle',
  args: z.strictObject({
    goalId: goalIdArg('the goal to stop or resume'),
    operation: z
      .enum(GOAL_LIFECYCLE_OPERATIONS)
      .describe("stop (the owner's stop flag: no turn starts, as goal pause) or resume (as goal resume)"),
    reason: z
      .string()
      .max(600)
      .optional()
      .meta({ placeholder: 'text' })
      .describe('a short visible reason, at most 600 characters (echoed in the result)'),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  errorFields: (input) => ({
    schema_version: 'loopx_goal_activation_transition_v1',
    dry_run: input['execute'] !== true,
    execute: input['execute'] === true,
    goal_id: input['goalId'],
    changed: false,
    written: false,
  }),
  run: async (args, env): Promise<GoalLifecycleResult> => {
    const flag = await setGoalStopFlag(await resolveGoalToWrite(env, args.goalId), {
      action: args.operation === 'stop' ? 'pause' : 'resume',
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    });
    const after: GoalActivationState = args.operation === 'stop' ? 'stopped' : 'active';
    const readback: GoalLifecycleResult['readback'] = flag.dry_run
      ? {
          schema_version: 'loopx_goal_activation_readback_v1',
          status: flag.changed ? 'not_executed' : 'not_required',
          verified: !flag.changed,
        }
      : {
          schema_version: 'loopx_goal_activation_readback_v1',
          status: stateOf(flag.status_after) === after ? 'verified' : 'mismatch',
          verified: stateOf(flag.status_after) === after,
        };
    const reason = (args.reason ?? '').split(/\s+/).filter(Boolean).join(' ');
    return {
      ok: flag.dry_run ? flag.ok : readback.verified,
      schema_version: 'loopx_goal_activation_transition_v1',
      dry_run: flag.dry_run,
      execute: args.execute,
      goal_id: flag.goal_id,
      operation: args.operation,
      before_state: stateOf(flag.status_before),
      after_state: after,
      changed: flag.changed,
      written: flag.written,
      partial_write: flag.written && !readback.verified,
      source_registry: flag.registry,
      reason: reason !== '' ? reason : args.operation === 'stop' ? 'Stopped by owner' : 'Resumed by owner',
      readback,
    };
  },
});
