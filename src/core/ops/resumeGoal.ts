import { z } from 'zod';
import { goalIdArg } from './common';
import { defineOperation } from './operation';
import { setGoalStopFlag } from './pauseGoal';

/** `resume-goal`: clears the owner's stop flag (registry `status` back to `active`); see pauseGoal.ts. */
export const resumeGoal = defineOperation({
  key: 'resumeGoal',
  args: z.strictObject({ goalId: goalIdArg('the goal to resume') }),
  run: (args, env) => setGoalStopFlag(env, args.goalId, 'resume'),
});
