import { z } from 'zod';
import { setHandoffMode, showHandoffMode, type HandoffModeSet, type HandoffModeShow } from '../leases/handoffMode';
import { HANDOFF_MODES } from '../leases/rules';
import { goalIdArg, nothingWrittenFields } from './common';
import { requireStatePath, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `handoff-mode show|set` (the original's command): which ownership authority governs a goal's
 * todo handoffs — `legacy`, `soft_claim` or `hard_lease` — kept in the state file's front matter.
 * `set` previews (what would change, or which claims and leases keep the goal from being quiescent)
 * and writes only with `execute`, like `configure-goal`.
 */

export const handoffModeShow = defineOperation({
  key: 'handoffModeShow',
  args: z.strictObject({ goalId: goalIdArg('the goal') }),
  run: async (args, env): Promise<HandoffModeShow> => {
    const goal = await resolveGoal(env, args.goalId);
    return showHandoffMode({ ...goal, statePath: requireStatePath(goal) });
  },
});

export const handoffModeSet = defineOperation({
  key: 'handoffModeSet',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    mode: z
      .enum(HANDOFF_MODES)
      .describe(
        'legacy (soft claims and optional leases), soft_claim (no leases) or hard_lease (ownership changes and completions need the todo lease)',
      ),
    execute: z.boolean().default(false).describe('write the state file (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<HandoffModeSet> => {
    const goal = await resolveGoal(env, args.goalId);
    return setHandoffMode({ ...goal, statePath: requireStatePath(goal) }, args.mode, {
      execute: args.execute,
      clock: env.clock,
    });
  },
  errorFields: nothingWrittenFields,
});
