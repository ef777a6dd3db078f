import { z } from 'zod';
import { goalQuotaSummary, type GoalQuotaSummary } from '../scheduling/shouldRun';
import { readQuotaView, type Reservation } from '../quota/reservations';
import { goalIdArg } from './common';
import { quotaGoalOf, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/** `quota status`: a goal's quota window, spend, budgets and the turns in flight (read-only). */

export type QuotaReservationSummary = Pick<
  Reservation,
  'effect_id' | 'slots' | 'reserved_at' | 'expires_at' | 'estimate'
>;

export type QuotaStatusOutput = { ok: true } & GoalQuotaSummary & {
    reservations: QuotaReservationSummary[];
    expired_reservations: string[];
  };

export const quotaStatus = defineOperation({
  key: 'quotaStatus',
  args: z.strictObject({
    goalId: goalIdArg('the goal whose quota to show'),
  }),
  run: async (args, env): Promise<QuotaStatusOutput> => {
    const goal = await resolveGoal(env, args.goalId);
    const quotaGoal = quotaGoalOf(goal);
    const summary = await goalQuotaSummary({
      registryPath: goal.registryPath,
      goalId: goal.goalId,
      clock: env.clock,
      runtimeRootOverride: env.runtimeRootOverride,
      homeDir: goal.homeDir,
      goal: quotaGoal,
    });
    const view = await readQuotaView(quotaGoal, env.clock);
    const reservations = view.live.map((r) => ({
      effect_id: r.effect_id,
      slots: r.slots,
      reserved_at: r.reserved_at,
      expires_at: r.expires_at,
      estimate: r.estimate,
    }));
    return { ok: true, ...summary, reservations, expired_reservations: view.expired.map((r) => r.effect_id) };
  },
});
