// zod/mini: the same checks as zod, in a bundle small enough for the webview's first paint (zod's full API is ~450 KB of it).
import * as z from 'zod/mini';
import { l10nBundleSchema } from '../shared/protocol';

/** Messages of the goal-detail webview, validated with zod on both sides. */

const budgetSchema = z.nullable(z.object({ used: z.number(), limit: z.number() }));

/** One turn of the event timeline (events without a turn are grouped with `turn_instance_id: null`). */
export const timelineTurnSchema = z.object({
  turn_instance_id: z.nullable(z.string()),
  agent_id: z.nullable(z.string()),
  first_at: z.nullable(z.string()),
  last_at: z.nullable(z.string()),
  /** How many events the turn has in the read window (`events` lists the newest of them). */
  event_count: z.int().check(z.nonnegative()),
  events: z.array(
    z.object({
      kind: z.string(),
      at: z.nullable(z.string()),
      agent_id: z.nullable(z.string()),
      todo_id: z.nullable(z.string()),
      text: z.string(),
    }),
  ),
});
export type TimelineTurn = z.infer<typeof timelineTurnSchema>;

export const goalDetailSchema = z.object({
  goal_id: z.string(),
  goal_name: z.string(),
  quota: z.object({
    state: z.string(),
    reason: z.string(),
    window_start: z.string(),
    window_end: z.string(),
    window_hours: z.number(),
    allowed_slots: z.number(),
    spent_slots: z.number(),
    warn: z.boolean(),
    exceeded: z.boolean(),
    cost: budgetSchema,
    tokens: budgetSchema,
  }),
  /** Counted spends of the window, oldest first. */
  spends: z.array(
    z.object({ at: z.string(), slots: z.number(), tokens: z.nullable(z.number()), cost_usd: z.nullable(z.number()) }),
  ),
  frontier: z.object({
    open: z.int().check(z.nonnegative()),
    claimed: z.int().check(z.nonnegative()),
    blocked: z.int().check(z.nonnegative()),
    done: z.int().check(z.nonnegative()),
  }),
  runs: z.array(
    z.object({
      generated_at: z.nullable(z.string()),
      classification: z.nullable(z.string()),
      agent_id: z.nullable(z.string()),
      recommended_action: z.nullable(z.string()),
    }),
  ),
  /** The rollout event log's latest events by turn, newest turn first (`evidence-log`). */
  timeline: z.object({
    log_exists: z.boolean(),
    total_events: z.int().check(z.nonnegative()),
    turns: z.array(timelineTurnSchema),
    /** Set when the log could not be read (the rest of the detail still renders). */
    error: z.nullable(z.string()),
  }),
});
export type GoalDetail = z.infer<typeof goalDetailSchema>;

/** Kept by the webview (`setState`) so a restored panel knows its goal. */
export const detailStateSchema = z.object({
  registryPath: z.string().check(z.minLength(1)),
  goalId: z.string().check(z.minLength(1)),
});
export type DetailState = z.infer<typeof detailStateSchema>;

export const hostToDetailSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('render'),
    detail: goalDetailSchema,
    ref: detailStateSchema,
    /** The display language's l10n bundle (absent in English): the script's own texts. */
    l10n: z.optional(l10nBundleSchema),
  }),
  z.object({ type: z.literal('error'), message: z.string() }),
]);
export type HostToDetail = z.infer<typeof hostToDetailSchema>;

export const detailToHostSchema = z.discriminatedUnion('type', [z.strictObject({ type: z.literal('ready') })]);
export type DetailToHost = z.infer<typeof detailToHostSchema>;

/** The cumulative series the spend chart plots: time (s) against running totals. */
export interface SpendSeries {
  x: number[];
  slots: number[];
  cost: number[];
  tokens: number[];
}

/** Running totals of the window's spends, starting at 0 at the window's start and ending at its end. */
export function cumulativeSpend(detail: GoalDetail): SpendSeries {
  const series: SpendSeries = { x: [], slots: [], cost: [], tokens: [] };
  const start = Date.parse(detail.quota.window_start) / 1000;
  const end = Date.parse(detail.quota.window_end) / 1000;
  let slots = 0;
  let cost = 0;
  let tokens = 0;
  const push = (x: number) => {
    series.x.push(x);
    series.slots.push(slots);
    series.cost.push(Math.round(cost * 1e6) / 1e6);
    series.tokens.push(tokens);
  };
  push(start);
  for (const spend of detail.spends) {
    const at = Date.parse(spend.at) / 1000;
    if (!Number.isFinite(at)) continue;
    slots += spend.slots;
    cost += spend.cost_usd ?? 0;
    tokens += spend.tokens ?? 0;
    push(Math.max(start, Math.min(end, at)));
  }
  push(Math.max(end, series.x[series.x.length - 1] ?? end));
  return series;
}
