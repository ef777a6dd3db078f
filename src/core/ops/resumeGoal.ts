import { z } from 'zod';
import { setGoalStopFlag, type GoalStopFlagResult } from '../agents/goalStop';
import { goalIdArg } from './common';
import { resolveGoalToWrite } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `goal resume` ("Resume Goal"): clears the owner's stop flag (registry `status: active`), so quota
 * computes the goal's state again and turns may start. Previews unless `execute`.
 */
export const resumeGoal = defineOperation({
  key: 'resumeGoal',
  args: z.strictObject({
    goalId: goalIdArg('the goal to resume'),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<GoalStopFlagResult> =>
    setGoalStopFlag(await resolveGoalToWrite(env, args.goalId), {
      action: 'resume',
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    }),
});

export type { GoalStopFlagResult } from '../agents/goalStop';
