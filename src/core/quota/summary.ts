import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from './goal';
import type { QuotaView } from './quotaView';
import { asRecord, computeQuotaStatus, deriveWaitingOn, focusMarkerOf, goalStopped, type QuotaStatus } from './state';

/** The quota numbers of one goal for status views (tree items, status bar); numbers are numbers. */
export interface GoalQuotaSummary {
  goal_id: string;
  state: QuotaStatus['state'];
  reason: string;
  compute: number;
  window_hours: number;
  slot_minutes: number;
  allowed_slots: number;
  spent_slots: number;
  reserved_slots: number;
  remaining_slots: number;
  budgets: QuotaStatus['budgets'];
  warn: boolean;
  exceeded: boolean;
  next_slot_frees_at: string | null;
  config_warnings: QuotaStatus['config_warnings'];
}

/**
 * What the quota summary is a function of, all of it loaded before: the goal (registry entry and quota
 * config), its ledger and reservations, and the newest run that speaks for it (its `waiting_on`). A
 * `GoalSnapshot` gives all three (`goalQuotaSummary` in `core/goal/quotaSummary.ts`).
 */
export interface QuotaSummaryInput {
  goal: Pick<GoalRef, QuotaRefKeys>;
  quota: Pick<QuotaView, 'ledger' | 'reserved'>;
  /** The goal's newest status run (`latestStatusRun`), or null when it has none. */
  latestStatusRun: object | null;
}

/** Quota state and usage of a goal without its todos (cheap enough for every refresh). Pure: it reads nothing. */
export function quotaSummary(input: QuotaSummaryInput): GoalQuotaSummary {
  const { goal, quota: view, latestStatusRun: latest } = input;
  const quota = computeQuotaStatus(quotaConfigOf(goal), view.ledger, view.reserved, {
    stopped: goalStopped(goal.rawEntry),
    health: { ok: true, reason: '' },
    waitingOn: deriveWaitingOn(goal.rawEntry, latest === null ? null : asRecord(latest)),
    focusMarker: focusMarkerOf(goal.rawEntry),
  });
  return {
    goal_id: goal.goalId,
    state: quota.state,
    reason: quota.reason,
    compute: quota.compute,
    window_hours: quota.window_hours,
    slot_minutes: quota.slot_minutes,
    allowed_slots: quota.allowed_slots,
    spent_slots: quota.spent_slots,
    reserved_slots: quota.reserved_slots,
    remaining_slots: quota.remaining_slots,
    budgets: quota.budgets,
    warn: quota.warn,
    exceeded: quota.exceeded,
    next_slot_frees_at: quota.next_slot_frees_at,
    config_warnings: quota.config_warnings,
  };
}
