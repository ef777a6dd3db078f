import { z } from 'zod';
import { isRecord } from '../registry/schema';
import { BUDGET_FIELDS, ConfigWarningSchema, type BudgetField, type QuotaConfig } from './config';
import type { QuotaLedger } from './ledger';

/**
 * Quota state of a goal (docs/quota.md). First match wins:
 *   1. goal stopped by its owner          → paused (pause_cause goal_stopped)
 *   2. compute ≤ 0                        → paused (compute_quota_zero)
 *   3. goal health failing                → blocked_health
 *   4. waiting_on controller / user_or_controller → operator_gate (safe bypass allowed)
 *   5. waiting_on external_evidence       → waiting
 *   6. waiting_on codex + focus marker    → focus_wait
 *   7. waiting_on codex                   → throttled when the slots (spent + reserved) or a budget
 *                                            is used up, else eligible
 *   8. otherwise                          → waiting
 * Reserved slots of turns in flight count as used, so admission can never overshoot the limit.
 */

export const QUOTA_STATES = [
  'blocked_health',
  'operator_gate',
  'focus_wait',
  'eligible',
  'waiting',
  'throttled',
  'paused',
] as const;
export const QuotaStateSchema = z.enum(QUOTA_STATES);
export type QuotaState = z.infer<typeof QuotaStateSchema>;

export const PauseCauseSchema = z.enum(['goal_stopped', 'compute_quota_zero']);
export type PauseCause = z.infer<typeof PauseCauseSchema>;

/** Registry goal `status` values that mean the owner stopped the goal. */
export const STOPPED_GOAL_STATUSES: ReadonlySet<string> = new Set(['stopped', 'paused']);
export const FOCUS_MARKERS: ReadonlySet<string> = new Set(['continuation_boundary', 'focus_wait']);
const OPERATOR_WAITS: ReadonlySet<string> = new Set(['controller', 'user_or_controller']);

export const BudgetUsageSchema = z.object({
  used: z.number(),
  /** Estimates held by reservations of turns in flight. */
  reserved: z.number(),
  limit: z.number().nullable(),
  ratio: z.number().nullable(),
  estimated: z.boolean(),
});
export type BudgetUsage = z.infer<typeof BudgetUsageSchema>;

export const QuotaStatusSchema = z.object({
  state: QuotaStateSchema,
  reason: z.string(),
  pause_cause: PauseCauseSchema.nullable(),
  waiting_on: z.string(),
  compute: z.number(),
  window_hours: z.number().int(),
  slot_minutes: z.number().int(),
  allowed_slots: z.number().int(),
  /** The configured values, kept visible while a pause shows 0. */
  configured_compute: z.number(),
  configured_allowed_slots: z.number().int(),
  spent_slots: z.number().int(),
  reserved_slots: z.number().int(),
  remaining_slots: z.number().int(),
  would_throttle: z.boolean(),
  throttle_cause: z.string().nullable(),
  budgets: z.object({
    max_cost_usd: BudgetUsageSchema,
    max_tokens: BudgetUsageSchema,
    max_turn_minutes: BudgetUsageSchema,
  }),
  warn_ratio: z.number(),
  warn: z.boolean(),
  exceeded: z.boolean(),
  safe_bypass_allowed: z.boolean(),
  window_start: z.string(),
  window_end: z.string(),
  next_slot_frees_at: z.string().nullable(),
  voided_slots: z.number().int(),
  duplicate_spends: z.number().int(),
  config_warnings: z.array(ConfigWarningSchema),
});
export type QuotaStatus = z.infer<typeof QuotaStatusSchema>;

export interface ReservedTotals {
  slots: number;
  tokens: number;
  cost_usd: number;
  minutes: number;
}

export const NO_RESERVATIONS: ReservedTotals = { slots: 0, tokens: 0, cost_usd: 0, minutes: 0 };

export interface GoalFacts {
  stopped: boolean;
  health: { ok: boolean; reason: string };
  waitingOn: string;
  focusMarker: string | null;
}

/** Whether the owner stopped the goal: registry `status` stopped/paused. */
export function goalStopped(goal: Record<string, unknown>): boolean {
  const status = goal['status'];
  return typeof status === 'string' && STOPPED_GOAL_STATUSES.has(status.trim().toLowerCase());
}

/**
 * Who the goal waits on: the registry's `waiting_on` when set, else the `waiting_on` recorded by the
 * latest status run, else `codex` (the agents' turn).
 */
export function deriveWaitingOn(
  goal: Record<string, unknown>,
  latestStatusRun: Record<string, unknown> | null,
): string {
  for (const source of [goal, latestStatusRun ?? {}]) {
    const value = source['waiting_on'];
    if (typeof value === 'string' && value.trim() !== '') return value.trim().toLowerCase();
  }
  return 'codex';
}

/** The first focus marker in the goal's `lifecycle_flags`, or null. */
export function focusMarkerOf(goal: Record<string, unknown>): string | null {
  const flags = goal['lifecycle_flags'];
  if (!Array.isArray(flags)) return null;
  const found = flags.find((flag): flag is string => typeof flag === 'string' && FOCUS_MARKERS.has(flag));
  return found ?? null;
}

const BUDGET_SOURCE: Record<
  BudgetField,
  { used: keyof QuotaLedger['usage']; reserved: keyof ReservedTotals; unit: string }
> = {
  max_cost_usd: { used: 'cost_usd', reserved: 'cost_usd', unit: 'USD' },
  max_tokens: { used: 'tokens', reserved: 'tokens', unit: 'tokens' },
  max_turn_minutes: { used: 'minutes', reserved: 'minutes', unit: 'turn minutes' },
};

function budgetUsage(config: QuotaConfig, ledger: QuotaLedger, reserved: ReservedTotals): QuotaStatus['budgets'] {
  const entry = (field: BudgetField): BudgetUsage => {
    const limit = config.budgets[field];
    const used = ledger.usage[BUDGET_SOURCE[field].used] as number;
    const held = reserved[BUDGET_SOURCE[field].reserved];
    return {
      used,
      reserved: held,
      limit,
      ratio: limit === null ? null : round4((used + held) / limit),
      estimated: ledger.usage.estimated,
    };
  };
  return {
    max_cost_usd: entry('max_cost_usd'),
    max_tokens: entry('max_tokens'),
    max_turn_minutes: entry('max_turn_minutes'),
  };
}

function round4(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** The first exhausted budget (used + reserved at or over its limit), or null. */
export function exhaustedBudget(budgets: QuotaStatus['budgets']): BudgetField | null {
  return (
    BUDGET_FIELDS.find((field) => {
      const b = budgets[field];
      return b.limit !== null && b.used + b.reserved >= b.limit;
    }) ?? null
  );
}

export function computeQuotaStatus(
  config: QuotaConfig,
  ledger: QuotaLedger,
  reserved: ReservedTotals,
  facts: GoalFacts,
): QuotaStatus {
  const { slots } = config;
  const committed = ledger.spent_slots + reserved.slots;
  const remaining = Math.max(0, slots.allowed_slots - committed);
  const budgets = budgetUsage(config, ledger, reserved);
  const budgetOut = exhaustedBudget(budgets);
  const slotsOut = committed >= slots.allowed_slots;
  const ratios = [
    slots.allowed_slots === 0 ? 1 : committed / slots.allowed_slots,
    ...BUDGET_FIELDS.map((f) => budgets[f].ratio ?? 0),
  ];
  const base = {
    waiting_on: facts.waitingOn,
    compute: slots.compute,
    window_hours: slots.window_hours,
    slot_minutes: slots.slot_minutes,
    allowed_slots: slots.allowed_slots,
    configured_compute: slots.compute,
    configured_allowed_slots: slots.allowed_slots,
    spent_slots: ledger.spent_slots,
    reserved_slots: reserved.slots,
    remaining_slots: remaining,
    would_throttle: slotsOut || budgetOut !== null,
    throttle_cause: slotsOut ? 'allowed_slots' : budgetOut,
    budgets,
    warn_ratio: config.warn_ratio,
    warn: ratios.some((ratio) => ratio >= config.warn_ratio),
    exceeded: slotsOut || budgetOut !== null,
    safe_bypass_allowed: false,
    window_start: ledger.window_start,
    window_end: ledger.window_end,
    next_slot_frees_at: ledger.next_slot_frees_at,
    voided_slots: ledger.voided_slots,
    duplicate_spends: ledger.duplicate_spends,
    config_warnings: config.config_warnings,
  };
  const paused = (cause: PauseCause, reason: string): QuotaStatus => ({
    ...base,
    state: 'paused',
    reason,
    pause_cause: cause,
    compute: 0,
    allowed_slots: 0,
    remaining_slots: 0,
  });
  if (facts.stopped)
    return paused('goal_stopped', 'the goal is stopped by its owner; paused until it is explicitly resumed');
  if (slots.compute <= 0)
    return paused('compute_quota_zero', '0 compute quota; paused until compute is raised above 0');
  const status = (state: QuotaState, reason: string, extra: Partial<QuotaStatus> = {}): QuotaStatus => ({
    ...base,
    state,
    reason,
    pause_cause: null,
    ...extra,
  });
  if (!facts.health.ok) return status('blocked_health', facts.health.reason);
  if (OPERATOR_WAITS.has(facts.waitingOn)) {
    return status(
      'operator_gate',
      `waiting on the ${facts.waitingOn.replace(/_/g, ' ')}; one bounded non-gated step may run`,
      { safe_bypass_allowed: true },
    );
  }
  if (facts.waitingOn === 'external_evidence') return status('waiting', 'waiting on external evidence');
  if (facts.waitingOn !== 'codex') return status('waiting', `waiting on ${facts.waitingOn}`);
  if (facts.focusMarker !== null)
    return status('focus_wait', `focus marker ${facts.focusMarker}: the goal waits at a continuation boundary`);
  if (slotsOut) {
    const frees = ledger.next_slot_frees_at === null ? '' : `; the next slot frees at ${ledger.next_slot_frees_at}`;
    return status(
      'throttled',
      `${ledger.spent_slots} spent + ${reserved.slots} reserved of ${slots.allowed_slots} allowed slots in the last ${slots.window_hours} h; throttled${frees}`,
    );
  }
  if (budgetOut !== null) {
    const b = budgets[budgetOut];
    return status(
      'throttled',
      `${budgetOut} budget used: ${b.used} spent + ${b.reserved} reserved of ${b.limit ?? 0} ${BUDGET_SOURCE[budgetOut].unit} in the last ${slots.window_hours} h; throttled until usage leaves the window or the limit is raised`,
    );
  }
  return status('eligible', `${slots.compute} compute quota; eligible for the next automatic agent turn`);
}

/** The record's fields as a plain object (for latest-run lookups on loose rows). */
export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}
