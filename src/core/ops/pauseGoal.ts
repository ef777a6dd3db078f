import { z } from 'zod';
import { setGoalStopFlag, type GoalStopFlagResult } from '../agents/goalStop';
import { goalIdArg } from './common';
import { resolveGoalToWrite } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `goal pause` ("Pause Goal"): sets the owner's stop flag (registry `status: paused`), so quota
 * answers `paused` and no turn starts until `goal resume`. Previews unless `execute`.
 */
export const pauseGoal = defineOperation({
  key: 'pauseGoal',
  args: z.strictObject({
    goalId: goalIdArg('the goal to pause'),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<GoalStopFlagResult> =>
    setGoalStopFlag(await resolveGoalToWrite(env, args.goalId), {
      action: 'pause',
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    }),
});

export type { GoalStopFlagResult } from '../agents/goalStop';
