import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import type { RunIndexEntry } from '../runtime/runIndex';
import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from './goal';
import { settlementIdentity, type SettlementIdentity } from './identity';
import { ACCOUNTABLE_OUTCOMES, isAccountable, isTransparent } from './deliveryScan';
import { isReservationHoldRow, QUOTA_SLOT_SPENT, type TurnUsage } from './ledger';
import { readQuotaView } from './quotaView';
import { settleReservation, type SettleResult, type SpendSource } from './settlement';
import { voidReservation, voidSpend } from './voids';
import type { QuotaCounts, QuotaLockOptions } from './reservations';

/**
 * The usage flags of a heartbeat spend, with the placeholders the agent fills in: one text for the
 * heartbeat prompt's spend step and the settlement plan `quota should-run` prints (issue 34).
 */
/**
 * The turn id each command carries, written into the command line itself: an agent CLI's shell
 * tool may start every call in a new shell (Claude Code does), so a variable exported in one call
 * is gone by the next.
 */
export const TURN_ID_PLACEHOLDER = '<turn_id>';
export const SPEND_USAGE_FLAGS = '--cost-usd <cost_usd> --tokens <tokens>';
/** When to write which: the agent CLI's own numbers, else `--usage-unknown` (the budget counts the estimate). */
export const SPEND_USAGE_NOTE =
  "the turn's cost and tokens as your agent CLI reports them (when it reports none, write --usage-unknown instead of both: the budget then counts the turn's estimate)";

/**
 * `quota spend-slot` (docs/quota.md): may this turn's slot be spent now, and on which identity?
 * Categories, first match wins:
 *   reserved_turn              the turn holds a live reservation (admitted earlier): always settles;
 *   eligible_spend             the fresh decision runs normal delivery on the same todo;
 *   safe_bypass_spend          safe bypass allowed and an unspent accountable delivery exists;
 *   repair_spend               the decision runs a repair action;
 *   delivery_completion_spend  an unspent accountable delivery exists (bound to this turn, or the
 *                              decision no longer runs), in a state that accepts it.
 * The write itself goes through `settleReservation`, so it is exactly-once per settlement identity
 * and can never exceed the limit.
 */

export { ACCOUNTABLE_OUTCOMES };
const NORMAL_DELIVERY_ACTIONS: ReadonlySet<string> = new Set([
  'normal_run',
  'coordinate_task_bundle',
  'scoped_user_gate_fallback',
]);
const COMPLETION_STATES: ReadonlySet<string> = new Set(['waiting', 'focus_wait', 'operator_gate', 'eligible']);
const SAFE_BYPASS_KINDS: ReadonlySet<string> = new Set([
  'operator_gate',
  'recovery',
  'outcome_floor_recovery',
  'scoped_user_gate_fallback',
]);

export type SpendCategory =
  'reserved_turn' | 'eligible_spend' | 'safe_bypass_spend' | 'repair_spend' | 'delivery_completion_spend';
export type SpendFailureKind =
  'invalid_identity' | 'identity_mismatch' | 'writeback_missing' | 'quota_spend_rejected' | 'binding_required';

function rowField(row: RunIndexEntry, key: string): unknown {
  return (row as Record<string, unknown>)[key];
}

/**
 * The latest unspent accountable delivery (newest first). Scoped to an agent, other agents' rows
 * are skipped and this agent's spend ends the search. Unscoped, a spend only consumes the
 * deliveries of the agent that spent it (the original stopped at any spend, so a peer's spend
 * hid another agent's unspent delivery).
 */
export function latestUnspentDelivery(
  rowsNewestFirst: readonly RunIndexEntry[],
  agentId: string | null,
): RunIndexEntry | null {
  const consumedAgents = new Set<string>();
  for (const row of rowsNewestFirst) {
    const rowAgent = row.agent_id ?? null;
    if (agentId !== null && rowAgent !== null && rowAgent !== agentId) continue;
    if (isTransparent(row)) continue;
    if (row.classification === QUOTA_SLOT_SPENT) {
      if (agentId !== null || rowAgent === null) return null;
      consumedAgents.add(rowAgent);
      continue;
    }
    if (agentId === null && rowAgent !== null && consumedAgents.has(rowAgent)) continue;
    if (isAccountable(row)) return row;
    if (agentId === null && rowAgent !== null) {
      // Another lane's non-delivery row: it says nothing about the remaining lanes.
      consumedAgents.add(rowAgent);
      continue;
    }
    return null;
  }
  return null;
}

/** An accountable delivery written for exactly this turn (agent, todo and turn id), if any. */
export function boundDelivery(rows: readonly RunIndexEntry[], identity: SettlementIdentity): RunIndexEntry | null {
  return (
    rows.find(
      (row) =>
        row.classification !== QUOTA_SLOT_SPENT &&
        isAccountable(row) &&
        row.agent_id === identity.agent_id &&
        (row.todo_id ?? undefined) === identity.todo_id &&
        rowField(row, 'turn_instance_id') === identity.turn_instance_id,
    ) ?? null
  );
}

/** The turn id of the latest accountable row of this agent on this todo (to replay a spend given without one). */
export function recoverTurnInstanceId(rows: readonly RunIndexEntry[], agentId: string, todoId: string): string | null {
  for (const row of rows) {
    if (row.agent_id !== agentId || row.todo_id !== todoId) continue;
    const turn = rowField(row, 'turn_instance_id');
    if (
      typeof turn === 'string' &&
      turn !== '' &&
      (isAccountable(row) || (row.classification === QUOTA_SLOT_SPENT && !isReservationHoldRow(row)))
    )
      return turn;
  }
  return null;
}

/** A row of this turn (same agent, todo and turn) whose persisted identity names another effect id. */
function persistedIdentityMismatch(rows: readonly RunIndexEntry[], identity: SettlementIdentity): string | null {
  for (const row of rows) {
    if (
      row.agent_id !== identity.agent_id ||
      rowField(row, 'turn_instance_id') !== identity.turn_instance_id ||
      (row.todo_id ?? undefined) !== identity.todo_id
    )
      continue;
    const persisted = rowField(row, 'settlement_identity');
    const effectId =
      typeof persisted === 'object' && persisted !== null
        ? (persisted as Record<string, unknown>)['effect_id']
        : undefined;
    if (typeof effectId === 'string' && effectId !== identity.effect_id) return effectId;
  }
  return null;
}

/**
 * What settling a spend needs of a should-run decision. Scheduling (`scheduling/shouldRun.ts`)
 * produces the full decision; accounting only reads these fields, so it does not depend on it.
 */
export interface SpendDecision {
  ok: boolean;
  should_run: boolean;
  state: string;
  effective_action: string;
  safe_bypass_allowed: boolean;
  safe_bypass_kind: string | null;
  selected_todo: { todo_id: string } | null;
}

export interface SpendEvaluationInput {
  decision: SpendDecision;
  rows: readonly RunIndexEntry[];
  agentId: string | null;
  todoId: string | null;
  identity: SettlementIdentity | null;
  source: SpendSource;
  hasLiveReservation: boolean;
}

export interface SpendEvaluation {
  ok: boolean;
  category: SpendCategory | null;
  reason: string;
  failure_kind: SpendFailureKind | null;
  delivery_run: RunIndexEntry | null;
}

/** Decides whether a spend is allowed (pure: no reads, no writes). */
export function evaluateSpend(input: SpendEvaluationInput): SpendEvaluation {
  const { decision, identity } = input;
  const fail = (reason: string, kind: SpendFailureKind, delivery: RunIndexEntry | null = null): SpendEvaluation => ({
    ok: false,
    category: null,
    reason,
    failure_kind: kind,
    delivery_run: delivery,
  });
  const allow = (category: SpendCategory, reason: string, delivery: RunIndexEntry | null): SpendEvaluation => ({
    ok: true,
    category,
    reason,
    failure_kind: null,
    delivery_run: delivery,
  });
  const bound = identity === null ? null : boundDelivery(input.rows, identity);
  const unspent = bound ?? latestUnspentDelivery(input.rows, input.agentId);
  if (input.hasLiveReservation)
    return allow('reserved_turn', 'the turn holds a live reservation: its admitted slot settles', unspent);
  if (!decision.ok) return fail('the quota decision failed; fix it before spending', 'quota_spend_rejected');

  const selected = decision.selected_todo?.todo_id ?? null;
  const normalDelivery = decision.should_run && NORMAL_DELIVERY_ACTIONS.has(decision.effective_action);
  // A replan-bound turn settles its obligation, not the todo the frontier selects now.
  const replanBound = identity?.replan_obligation_id !== undefined;
  if (normalDelivery && input.source === 'heartbeat' && selected !== null && bound === null && !replanBound) {
    if (input.todoId === null)
      return fail(
        `heartbeat spend for ${decision.effective_action} requires --todo-id ${selected} (the selected todo)`,
        'binding_required',
      );
    if (input.todoId !== selected)
      return fail(
        `todo binding mismatch: --todo-id ${input.todoId} but the decision selected ${selected}`,
        'identity_mismatch',
      );
  }
  const sameTodo = selected === null || input.todoId === null || input.todoId === selected;
  if (normalDelivery && decision.state === 'eligible' && sameTodo)
    return allow('eligible_spend', `eligible quota guard selected ${selected ?? 'no todo'}`, unspent);

  const bypassKind = decision.safe_bypass_kind ?? (decision.state === 'operator_gate' ? 'operator_gate' : null);
  if (decision.safe_bypass_allowed && bypassKind !== null && SAFE_BYPASS_KINDS.has(bypassKind)) {
    if (unspent === null)
      return fail(
        `safe bypass spend (${bypassKind}) requires a latest unspent accountable delivery writeback`,
        'writeback_missing',
      );
    return allow(
      'safe_bypass_spend',
      `safe bypass (${bypassKind}) accounts the delivery of ${unspent.generated_at ?? '?'}`,
      unspent,
    );
  }
  if (
    decision.should_run &&
    (decision.effective_action.endsWith('_repair') || decision.effective_action.endsWith('_repair_required'))
  ) {
    return allow('repair_spend', `repair turn ${decision.effective_action}`, unspent);
  }
  if (unspent !== null && COMPLETION_STATES.has(decision.state)) {
    const turnScoped = bound !== null;
    if (turnScoped || !decision.should_run || decision.effective_action === 'external_evidence_observe') {
      return allow(
        'delivery_completion_spend',
        `accounts the delivery of ${unspent.generated_at ?? '?'} (${unspent.classification ?? '?'})`,
        unspent,
      );
    }
  }
  if (bound !== null && decision.state === 'throttled') {
    // The work of this very turn is recorded: its cost is recorded too, over the limit if it must be
    // (settleReservation marks it), so the ledger never under-reports.
    return allow(
      'delivery_completion_spend',
      `accounts the delivery of ${bound.generated_at ?? '?'} (${bound.classification ?? '?'}) of this turn while the goal is throttled`,
      bound,
    );
  }
  if (unspent === null)
    return fail(
      `no spend is due: the decision is ${decision.effective_action} (${decision.state}) and there is no unspent accountable delivery writeback`,
      'writeback_missing',
    );
  return fail(
    `no spend category applies to ${decision.effective_action} in state ${decision.state}`,
    'quota_spend_rejected',
    unspent,
  );
}

// ---------------------------------------------------------------------------------------------

export interface SpendSlotInput {
  decision: SpendDecision;
  agentId: string | null;
  todoId: string | null;
  /** The replan obligation the turn discharged (instead of a todo). */
  replanObligationId?: string | null;
  turnInstanceId: string | null;
  slots: number;
  source: SpendSource;
  usage?: TurnUsage;
  /** No usage was reported: the budgets count the turn's estimate (see `SettleInput.usageUnknown`). */
  usageUnknown?: boolean;
  execute: boolean;
  lock?: QuotaLockOptions;
}

export interface SpendSlotResult {
  ok: boolean;
  dry_run: boolean;
  appended: boolean;
  idempotent_replay: boolean;
  category: SpendCategory | null;
  safe_bypass_spend: boolean;
  reason: string;
  failure_kind: SpendFailureKind | null;
  turn_instance_id: string | null;
  recovered_turn_instance_id: boolean;
  settlement_identity: SettlementIdentity | null;
  delivery_run: {
    generated_at: string | null;
    classification: string | null;
    agent_id: string | null;
    todo_id: string | null;
  } | null;
  admission: SettleResult['admission'];
  spend_record: Record<string, unknown> | null;
  quota_event: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
}

/** Checks and (with `execute`) writes one spend for a turn; previews by default. */
export async function spendSlot(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: SpendSlotInput,
): Promise<SpendSlotResult> {
  const view = await readQuotaView(goal, clock, { kind: 'read' });
  const allowed = quotaConfigOf(goal).slots.allowed_slots;
  const quotaNow: QuotaCounts = {
    allowed_slots: allowed,
    spent_slots: view.ledger.spent_slots,
    reserved_slots: view.reserved.slots,
    remaining_slots: Math.max(0, allowed - view.ledger.spent_slots - view.reserved.slots),
  };
  let turn = input.turnInstanceId;
  let recovered = false;
  if (turn === null && input.agentId !== null && input.todoId !== null) {
    turn = recoverTurnInstanceId(view.rows, input.agentId, input.todoId);
    recovered = turn !== null;
  }
  const result = (fields: Partial<SpendSlotResult> & Pick<SpendSlotResult, 'ok' | 'reason'>): SpendSlotResult => ({
    dry_run: !input.execute,
    appended: false,
    idempotent_replay: false,
    category: null,
    safe_bypass_spend: false,
    failure_kind: null,
    turn_instance_id: turn,
    recovered_turn_instance_id: recovered,
    settlement_identity: null,
    delivery_run: null,
    admission: null,
    spend_record: null,
    quota_event: null,
    json_file: null,
    quota: quotaNow,
    ...fields,
  });

  let identity: SettlementIdentity | null = null;
  if (input.agentId !== null && turn !== null) {
    identity = settlementIdentity({
      goalId: goal.goalId,
      agentId: input.agentId,
      turnInstanceId: turn,
      todoId: input.todoId,
      replanObligationId: input.replanObligationId ?? null,
    });
    const drifted = persistedIdentityMismatch(view.rows, identity);
    if (drifted !== null) {
      return result({
        ok: false,
        reason: `persisted settlement identity mismatch: a record of this turn carries effect id ${drifted}, expected ${identity.effect_id}`,
        failure_kind: 'identity_mismatch',
        settlement_identity: identity,
      });
    }
    if (view.ledger.settled_effect_ids.has(identity.effect_id)) {
      return result({
        ok: true,
        reason: `turn ${identity.effect_id} is already spent; replay wrote nothing`,
        idempotent_replay: true,
        settlement_identity: identity,
      });
    }
  }
  const evaluation = evaluateSpend({
    decision: input.decision,
    rows: view.rows,
    agentId: input.agentId,
    todoId: input.todoId,
    identity,
    source: input.source,
    hasLiveReservation: identity !== null && view.live.some((r) => r.effect_id === identity.effect_id),
  });
  const deliveryRun =
    evaluation.delivery_run === null
      ? null
      : {
          generated_at: evaluation.delivery_run.generated_at ?? null,
          classification: evaluation.delivery_run.classification ?? null,
          agent_id: evaluation.delivery_run.agent_id ?? null,
          todo_id: evaluation.delivery_run.todo_id ?? null,
        };
  const common = {
    category: evaluation.category,
    safe_bypass_spend: evaluation.category === 'safe_bypass_spend',
    settlement_identity: identity,
    delivery_run: deliveryRun,
  };
  if (!evaluation.ok)
    return result({ ok: false, reason: evaluation.reason, failure_kind: evaluation.failure_kind, ...common });
  if (identity === null) {
    return result({
      ok: false,
      reason:
        'a spend needs a settlement identity so it is written exactly once: pass --agent-id and --turn-instance-id (the turn id of the delivery it pays for)',
      failure_kind: 'invalid_identity',
      ...common,
    });
  }
  const settleInput: Parameters<typeof settleReservation>[2] = {
    identity,
    slots: input.slots,
    source: input.source,
    dryRun: !input.execute,
    decision: {
      should_run: input.decision.should_run,
      state: input.decision.state,
      effective_action: input.decision.effective_action,
    },
    deliveryRun:
      evaluation.delivery_run === null
        ? null
        : {
            generated_at: evaluation.delivery_run.generated_at ?? '',
            classification: evaluation.delivery_run.classification ?? '',
          },
  };
  const recommended = evaluation.delivery_run?.recommended_action;
  if (typeof recommended === 'string') settleInput.recommendedAction = recommended;
  if (input.usage !== undefined) settleInput.usage = input.usage;
  if (input.usageUnknown === true) settleInput.usageUnknown = true;
  if (input.lock !== undefined) settleInput.lock = input.lock;
  const settled = await settleReservation(goal, clock, settleInput);
  const event = settled.record?.['quota_event'];
  return result({
    ok: settled.ok,
    reason: settled.ok ? `${evaluation.reason}; ${settled.reason}` : settled.reason,
    failure_kind: settled.ok ? null : 'quota_spend_rejected',
    appended: settled.appended,
    idempotent_replay: settled.idempotent_replay,
    admission: settled.admission,
    spend_record: settled.record,
    quota_event: typeof event === 'object' && event !== null ? (event as Record<string, unknown>) : null,
    json_file: settled.json_file,
    quota: settled.quota,
    ...common,
  });
}

// ---------------------------------------------------------------------------------------------

export interface VoidSlotInput {
  agentId: string | null;
  todoId: string | null;
  turnInstanceId: string | null;
  generatedAt: string | null;
  reason: string;
  execute: boolean;
  lock?: QuotaLockOptions;
}

export interface VoidSlotResult {
  ok: boolean;
  dry_run: boolean;
  appended: boolean;
  target: 'reservation' | 'spend' | null;
  reason: string;
  effect_id: string | null;
  voided: { generated_at: string | null; effect_id: string | null; slots: number } | null;
  void_record: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
}

/**
 * `quota void-slot`: releases a turn's live reservation, or appends a `quota_slot_voided` record
 * that cancels a spend (by turn identity or `--void-generated-at`). Previews by default.
 */
export async function voidSlot(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: VoidSlotInput,
): Promise<VoidSlotResult> {
  if (input.turnInstanceId === null && input.generatedAt === null) {
    throw new LoopxError(
      'usage',
      'void-slot needs the spend to cancel: --void-generated-at <time of the spend>, or --agent-id with --turn-instance-id (and --todo-id) of the turn',
    );
  }
  let effectId: string | null = null;
  if (input.turnInstanceId !== null) {
    if (input.agentId === null)
      throw new LoopxError('usage', 'void-slot --turn-instance-id needs --agent-id to name the turn');
    effectId = settlementIdentity({
      goalId: goal.goalId,
      agentId: input.agentId,
      turnInstanceId: input.turnInstanceId,
      todoId: input.todoId,
    }).effect_id;
  }
  const view = await readQuotaView(goal, clock, { kind: 'read' });
  const reservation = effectId === null ? undefined : view.live.find((r) => r.effect_id === effectId);
  if (reservation !== undefined) {
    const allowed = quotaConfigOf(goal).slots.allowed_slots;
    const quota: QuotaCounts = {
      allowed_slots: allowed,
      spent_slots: view.ledger.spent_slots,
      reserved_slots: view.reserved.slots,
      remaining_slots: Math.max(0, allowed - view.ledger.spent_slots - view.reserved.slots),
    };
    if (!input.execute) {
      return {
        ok: true,
        dry_run: true,
        appended: false,
        target: 'reservation',
        reason: `would release the reservation of turn ${reservation.effect_id} (${reservation.slots} slot(s))`,
        effect_id: effectId,
        voided: { generated_at: null, effect_id: effectId, slots: reservation.slots },
        void_record: null,
        json_file: null,
        quota,
      };
    }
    const released = await voidReservation(goal, clock, {
      effectId: reservation.effect_id,
      ...(input.lock ? { lock: input.lock } : {}),
    });
    return {
      ok: released.status === 'voided',
      dry_run: false,
      appended: false,
      target: 'reservation',
      reason:
        released.status === 'voided'
          ? `released the reservation of turn ${reservation.effect_id}`
          : `the reservation of turn ${reservation.effect_id} is gone (${released.status})`,
      effect_id: effectId,
      voided: { generated_at: null, effect_id: effectId, slots: reservation.slots },
      void_record: null,
      json_file: null,
      quota: released.quota,
    };
  }
  const voidInput: Parameters<typeof voidSpend>[2] = { reason: input.reason, dryRun: !input.execute };
  if (effectId !== null) voidInput.effectId = effectId;
  else if (input.generatedAt !== null) voidInput.generatedAt = input.generatedAt;
  if (input.agentId !== null) voidInput.agentId = input.agentId;
  if (input.lock !== undefined) voidInput.lock = input.lock;
  const voided = await voidSpend(goal, clock, voidInput);
  return {
    ok: voided.ok,
    dry_run: !input.execute,
    appended: voided.appended,
    target: voided.ok ? 'spend' : null,
    reason: voided.reason,
    effect_id: effectId ?? voided.voided?.effect_id ?? null,
    voided: voided.voided,
    void_record: voided.record,
    json_file: voided.json_file,
    quota: voided.quota,
  };
}
