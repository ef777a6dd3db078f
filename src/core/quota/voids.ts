import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { parseIsoInstant } from '../isoTime';
import { appendRun } from '../runtime/runIndexWrite';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from './goal';
import { QUOTA_SLOT_SPENT, QUOTA_SLOT_VOIDED } from './ledger';
import {
  lockTimeouts,
  quotaCounts,
  saveReservations,
  takeSnapshot,
  underQuotaLock,
  type QuotaCounts,
  type QuotaLockOptions,
  type Reservation,
} from './reservations';

/** Voids: a reservation released without spending, expired ones reclaimed, a spend cancelled by a `quota_slot_voided` record. */

// ---------------------------------------------------------------------------------------------
// Void and reclaim

export interface VoidReservationResult {
  status: 'voided' | 'not_found' | 'already_settled';
  reservation: Reservation | null;
  quota: QuotaCounts;
  reclaimed: Reservation[];
}

/** Releases a turn's reservation without spending (the turn failed or stopped). */
export async function voidReservation(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: { effectId: string; lock?: QuotaLockOptions },
): Promise<VoidReservationResult> {
  return underQuotaLock(goal, clock, 'quota_void_reservation', input.lock, async () => {
    const snapshot = await takeSnapshot(goal, clock);
    const reservation = snapshot.live.find((r) => r.effect_id === input.effectId) ?? null;
    const kept = snapshot.live.filter((r) => r.effect_id !== input.effectId);
    await saveReservations(goal, snapshot, kept, clock, reservation === null ? [] : [reservation]);
    const status =
      reservation !== null
        ? 'voided'
        : snapshot.ledger.settled_effect_ids.has(input.effectId)
          ? 'already_settled'
          : 'not_found';
    return { status, reservation, quota: quotaCounts(goal, snapshot.ledger, kept), reclaimed: snapshot.expired };
  });
}

/** Releases expired reservations (and ones already spent); returns the expired ones. */
export async function reclaimExpiredReservations(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  lock?: QuotaLockOptions,
): Promise<Reservation[]> {
  return underQuotaLock(goal, clock, 'quota_reclaim', lock, async () => {
    const snapshot = await takeSnapshot(goal, clock);
    await saveReservations(goal, snapshot, snapshot.live, clock);
    return snapshot.expired;
  });
}

// ---------------------------------------------------------------------------------------------
// Void a spend (compensating record)

export interface VoidSpendInput {
  /** The spend to cancel: by settlement identity, or by its `generated_at`. */
  effectId?: string;
  generatedAt?: string;
  agentId?: string;
  reason: string;
  dryRun?: boolean;
  lock?: QuotaLockOptions;
}

export interface VoidSpendResult {
  ok: boolean;
  appended: boolean;
  reason: string;
  voided: { generated_at: string; effect_id: string | null; slots: number } | null;
  record: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
}

/**
 * Appends a `quota_slot_voided` record that cancels one spend (the spend itself stays: voids never
 * delete). Refuses when the spend cannot be found or is already fully voided.
 */
export async function voidSpend(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: VoidSpendInput,
): Promise<VoidSpendResult> {
  const run = async (write: boolean): Promise<VoidSpendResult> => {
    const snapshot = await takeSnapshot(goal, clock);
    const { ledger } = snapshot;
    const targetTime = input.generatedAt === undefined ? null : parseIsoInstant(input.generatedAt);
    if (input.generatedAt !== undefined && targetTime === null) {
      throw new LoopxError(
        'usage',
        `--void-generated-at must be an ISO-8601 time such as 2026-01-01T10:00:00+08:00, got ${JSON.stringify(input.generatedAt)}`,
      );
    }
    const target = ledger.spends.find(
      (s) =>
        !s.duplicate &&
        s.voided_slots < s.slots &&
        (input.effectId !== undefined ? s.effect_id === input.effectId : s.time === targetTime),
    );
    const quota = quotaCounts(goal, ledger, snapshot.live);
    if (target === undefined) {
      return {
        ok: false,
        appended: false,
        reason: `no unvoided ${QUOTA_SLOT_SPENT} record matches ${input.effectId ?? input.generatedAt ?? '(nothing given)'}`,
        voided: null,
        record: null,
        json_file: null,
        quota,
      };
    }
    const slots = target.slots - target.voided_slots;
    const record: Record<string, unknown> = {
      classification: QUOTA_SLOT_VOIDED,
      recommended_action: '',
      health_check: 'quota slot void event public-safe',
      agent_id: input.agentId ?? target.agent_id,
      quota_event: {
        event_type: QUOTA_SLOT_VOIDED,
        slots,
        voided_run_generated_at: target.generated_at,
        voided_effect_id: target.effect_id,
        reason_summary: input.reason,
        before: { spent_slots: ledger.spent_slots },
        after: { spent_slots: target.in_window ? ledger.spent_slots - slots : ledger.spent_slots },
      },
    };
    if (target.todo_id !== null) record['todo_id'] = target.todo_id;
    const indexFields: Record<string, unknown> = { voided_run_generated_at: target.generated_at, slots };
    if (target.effect_id !== null) indexFields['voided_effect_id'] = target.effect_id;
    const appended = await appendRun({
      runtimeRoot: goal.runtimeRoot,
      goalId: goal.goalId,
      record,
      indexFields,
      projectRoot: goal.projectRoot,
      clock,
      suffix: 'quota-slot-voided',
      markdown: `# ${goal.goalId} — ${QUOTA_SLOT_VOIDED}\n\n- voids the spend of ${target.generated_at}${target.effect_id === null ? '' : ` (${target.effect_id})`}: ${slots} slot(s)\n- reason: ${input.reason}\n`,
      lock: { operation: 'quota_void', ...lockTimeouts(input.lock) },
      dryRun: !write,
    });
    return {
      ok: true,
      appended: appended.appended,
      reason: write
        ? `voided ${slots} slot(s) of the spend at ${target.generated_at}`
        : `would void ${slots} slot(s) of the spend at ${target.generated_at}`,
      voided: { generated_at: target.generated_at, effect_id: target.effect_id, slots },
      record: { generated_at: appended.row.generated_at, goal_id: goal.goalId, ...record },
      json_file: appended.json_file,
      quota:
        write && target.in_window
          ? quotaCounts(goal, { ...ledger, spent_slots: ledger.spent_slots - slots }, snapshot.live)
          : quota,
    };
  };
  if (input.dryRun === true) return run(false);
  return underQuotaLock(goal, clock, 'quota_void', input.lock, async () => run(true));
}
