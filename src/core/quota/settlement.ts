import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { appendRun, type AppendRunResult } from '../runtime/runIndexWrite';
import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from './goal';
import { SettlementIdentitySchema, type SettlementIdentity } from './identity';
import { QUOTA_SLOT_SPENT, type QuotaLedger, type TurnUsage } from './ledger';
import {
  lockTimeouts,
  quotaCounts,
  reservedTotals,
  saveReservations,
  takeSnapshot,
  underQuotaLock,
  type QuotaCounts,
  type QuotaLockOptions,
  type QuotaSnapshot,
  type Reservation,
} from './reservations';
import { capacityProblem, estimateTurnUsage } from './admission';

/** Settlement: a turn's reservation turned into exactly one `quota_slot_spent` record (`settleReservation`). The store is `reservations.ts`. */

// ---------------------------------------------------------------------------------------------
// Settle

export const SPEND_SOURCES = ['heartbeat', 'controller', 'adapter', 'visible-goal'] as const;
export type SpendSource = (typeof SPEND_SOURCES)[number];

/** The decision the spend settles, as recorded in `quota_event.before`/`after`. */
export interface DecisionSnapshot {
  should_run: boolean;
  state: string;
  effective_action: string;
}

export interface SettleInput {
  identity: SettlementIdentity;
  /** Default 1; a reservation's own slots win. */
  slots?: number;
  usage?: TurnUsage;
  /**
   * The agent reported no usage (`--usage-unknown`): the budgets count the turn's reserved estimate,
   * else the estimate admission would reserve now, marked estimated (never 0).
   */
  usageUnknown?: boolean;
  source?: SpendSource;
  /** The next action of the accounted delivery (the record's `recommended_action`). */
  recommendedAction?: string;
  /** The accountable delivery run this spend pays for. */
  deliveryRun?: { generated_at: string; classification: string } | null;
  decision?: DecisionSnapshot;
  /** Compute everything, write nothing. */
  dryRun?: boolean;
  lock?: QuotaLockOptions;
}

export interface SettleResult {
  status: 'settled' | 'replayed' | 'refused' | 'preview';
  ok: boolean;
  appended: boolean;
  idempotent_replay: boolean;
  /**
   * How the slot was admitted: through a live reservation, directly at settle time, or not at all
   * (`over_limit`: the limit was reached, but the delivery it pays for is recorded, so its usage is
   * recorded too, marked `over_limit`; the goal is then throttled).
   */
  admission: 'reservation' | 'direct' | 'over_limit' | null;
  reason: string;
  effect_id: string;
  record: Record<string, unknown> | null;
  row: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
  reclaimed: Reservation[];
}

const DEFAULT_DECISION: DecisionSnapshot = { should_run: true, state: 'eligible', effective_action: 'normal_run' };

function buildSpendRecord(
  goal: Pick<GoalRef, QuotaRefKeys>,
  identity: SettlementIdentity,
  slots: number,
  ledger: QuotaLedger,
  input: SettleInput,
  reservation: Reservation | null,
): { record: Record<string, unknown>; indexFields: Record<string, unknown> } {
  const decision = input.decision ?? DEFAULT_DECISION;
  const before = {
    ...decision,
    spent_slots: ledger.spent_slots,
    allowed_slots: quotaConfigOf(goal).slots.allowed_slots,
  };
  const after = { ...before, spent_slots: before.spent_slots + slots };
  const reasonSummary =
    decision.state === 'eligible'
      ? `${slots} automatic agent slot(s) completed under an eligible quota guard`
      : `${slots} automatic agent slot(s) settled for admitted work (quota state ${decision.state})`;
  const quotaEvent: Record<string, unknown> = {
    event_type: QUOTA_SLOT_SPENT,
    source: input.source ?? 'heartbeat',
    slots,
    todo_id: identity.todo_id ?? null,
    turn_instance_id: identity.turn_instance_id,
    settlement_identity: identity,
    reason_summary: reasonSummary,
  };
  if (input.deliveryRun) {
    quotaEvent['delivery_run_generated_at'] = input.deliveryRun.generated_at;
    quotaEvent['delivery_run_classification'] = input.deliveryRun.classification;
  }
  quotaEvent['before'] = before;
  quotaEvent['after'] = after;
  const record: Record<string, unknown> = {
    classification: QUOTA_SLOT_SPENT,
    recommended_action: input.recommendedAction ?? '',
    health_check: `quota should-run ${decision.state}; quota slot spend event public-safe`,
    agent_id: identity.agent_id,
    turn_instance_id: identity.turn_instance_id,
  };
  if (identity.todo_id !== undefined) record['todo_id'] = identity.todo_id;
  if (identity.replan_obligation_id !== undefined) record['replan_obligation_id'] = identity.replan_obligation_id;
  record['settlement_identity'] = identity;
  record['quota_event'] = quotaEvent;
  // Our additions; the original's fields above are unchanged.
  record['slots'] = slots;
  if (input.usage !== undefined) record['usage'] = input.usage;
  if (reservation !== null)
    record['reservation'] = { reserved_at: reservation.reserved_at, expires_at: reservation.expires_at };
  const indexFields: Record<string, unknown> = {
    turn_instance_id: identity.turn_instance_id,
    settlement_identity: identity,
    slots,
  };
  if (identity.replan_obligation_id !== undefined) indexFields['replan_obligation_id'] = identity.replan_obligation_id;
  if (input.usage !== undefined) indexFields['usage'] = input.usage;
  return { record, indexFields };
}

function spendMarkdown(
  goal: Pick<GoalRef, QuotaRefKeys>,
  identity: SettlementIdentity,
  slots: number,
  ledger: QuotaLedger,
  usage: TurnUsage | undefined,
): string {
  const binding =
    identity.todo_id ??
    (identity.replan_obligation_id !== undefined ? `replan ${identity.replan_obligation_id}` : '(unbound)');
  const lines = [
    `# ${goal.goalId} — ${QUOTA_SLOT_SPENT}`,
    '',
    `- agent: ${identity.agent_id}, todo: ${binding}, turn: ${identity.turn_instance_id}`,
    `- slots: ${slots} (${ledger.spent_slots} → ${ledger.spent_slots + slots} of ${quotaConfigOf(goal).slots.allowed_slots})`,
  ];
  if (usage !== undefined) {
    const parts = [
      usage.tokens !== undefined ? `${usage.tokens} tokens` : null,
      usage.cost_usd !== undefined ? `${usage.cost_usd} USD` : null,
      usage.minutes !== undefined ? `${usage.minutes} min` : null,
    ].filter((p) => p !== null);
    lines.push(
      `- usage: ${parts.length > 0 ? parts.join(', ') : 'none reported'}${usage.estimated ? ' (estimated)' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function settleWith(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: SettleInput,
  snapshot: QuotaSnapshot,
  write: boolean,
): Promise<SettleResult> {
  const identity = SettlementIdentitySchema.parse(input.identity);
  const { ledger } = snapshot;
  const reservation = snapshot.live.find((r) => r.effect_id === identity.effect_id) ?? null;
  const others = snapshot.live.filter((r) => r.effect_id !== identity.effect_id);
  const base = { effect_id: identity.effect_id, reclaimed: snapshot.expired };
  const result = (
    fields: Omit<SettleResult, 'effect_id' | 'reclaimed' | 'quota'>,
    kept: Reservation[],
    spentAfter = ledger.spent_slots,
  ): SettleResult => ({
    ...fields,
    ...base,
    quota: quotaCounts(goal, { ...ledger, spent_slots: spentAfter }, kept),
  });

  if (ledger.settled_effect_ids.has(identity.effect_id)) {
    if (write) await saveReservations(goal, snapshot, others, clock);
    return result(
      {
        status: 'replayed',
        ok: true,
        appended: false,
        idempotent_replay: true,
        admission: null,
        reason: `turn ${identity.effect_id} is already settled; replay wrote nothing`,
        record: null,
        row: null,
        json_file: null,
      },
      others,
    );
  }
  const slots = reservation?.slots ?? input.slots ?? 1;
  if (!Number.isInteger(slots) || slots < 1)
    throw new LoopxError('quota_slots_invalid', `slots must be a whole number of at least 1, got ${slots}`, { slots });
  if (input.usageUnknown === true && input.usage === undefined) {
    // Conservative: what the turn held, else what admitting it now would hold.
    const held = reservation?.estimate ?? estimateTurnUsage(goal, ledger, reservedTotals(others), {}).estimate;
    input = { ...input, usage: { ...held, estimated: true } };
  }
  let admission: SettleResult['admission'] = 'reservation';
  let overLimit: string | null = null;
  if (reservation === null) {
    // No live reservation (never reserved, or it expired): admit now, within the limit.
    admission = 'direct';
    const expired =
      snapshot.expired.some((r) => r.effect_id === identity.effect_id) ||
      (snapshot.file.reclaimed ?? []).some((r) => r.effect_id === identity.effect_id);
    const problem = capacityProblem(goal, ledger, reservedTotals(others), slots, input.usage ?? {});
    if (problem !== null && input.deliveryRun) {
      // The work happened and its delivery is recorded: refusing the spend would hide its cost.
      admission = 'over_limit';
      overLimit = problem;
    } else if (problem !== null) {
      if (write) await saveReservations(goal, snapshot, others, clock);
      const why = expired ? `the reservation of turn ${identity.effect_id} expired and ${problem}` : problem;
      return result(
        {
          status: 'refused',
          ok: false,
          appended: false,
          idempotent_replay: false,
          admission: null,
          reason: `quota refused: ${why}`,
          record: null,
          row: null,
          json_file: null,
        },
        others,
      );
    }
  }
  const { record, indexFields } = buildSpendRecord(goal, identity, slots, ledger, input, reservation);
  if (overLimit !== null) {
    record['over_limit'] = { reason: overLimit };
    indexFields['over_limit'] = true;
  }
  const appendOptions = {
    runtimeRoot: goal.runtimeRoot,
    goalId: goal.goalId,
    record,
    markdown: spendMarkdown(goal, identity, slots, ledger, input.usage),
    suffix: 'quota-slot-spent',
    indexFields,
    projectRoot: goal.projectRoot,
    clock,
    lock: { agentId: identity.agent_id, operation: 'quota_spend', ...lockTimeouts(input.lock) },
    dryRun: !write,
  };
  const appended: AppendRunResult = await appendRun(appendOptions);
  // Only after the spend is durable: a crash before this line leaves a reservation whose identity is spent, which
  // the next operation drops (releasing its hold). The hold is released after the spend, so the original's count
  // never dips below the truth in between.
  if (write) await saveReservations(goal, snapshot, others, clock, reservation === null ? [] : [reservation]);
  return result(
    {
      status: write ? 'settled' : 'preview',
      ok: true,
      appended: appended.appended,
      idempotent_replay: false,
      admission,
      reason:
        overLimit !== null
          ? `${write ? 'recorded' : 'would record'} ${slots} slot(s) for turn ${identity.effect_id} over the limit (${overLimit}): its delivery is recorded, so its usage is too; the goal is throttled`
          : write
            ? `settled ${slots} slot(s) for turn ${identity.effect_id}`
            : `would settle ${slots} slot(s) for turn ${identity.effect_id}`,
      record: { generated_at: appended.row.generated_at, goal_id: goal.goalId, ...record },
      row: appended.row,
      json_file: appended.json_file,
    },
    others,
    ledger.spent_slots + slots,
  );
}

/**
 * Turns the turn's reservation into exactly one `quota_slot_spent` record. Idempotent per
 * settlement identity: a replay writes nothing. Without a live reservation the slot is admitted
 * now, and refused when it would exceed the limit.
 */
export async function settleReservation(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: SettleInput,
): Promise<SettleResult> {
  if (input.dryRun === true) return settleWith(goal, clock, input, await takeSnapshot(goal, clock), false);
  return underQuotaLock(goal, clock, 'quota_settle', input.lock, async () =>
    settleWith(goal, clock, input, await takeSnapshot(goal, clock), true),
  );
}
