import * as path from 'node:path';
import { z } from 'zod';
import { isoSeconds } from '../clock';
import { checkTurnInstanceId, settlementIdentity, type SettlementIdentity } from '../quota/identity';
import type { GoalRef } from '../registry/goalRef';
import { checkGoalIdSegment } from '../registry/goalId';
import { quotaConfigOf } from '../quota/goal';
import { readRolloutEvents, rolloutEventLogOf, ofTurn } from '../evidence/rolloutLog';
import { findHeartbeatReceipt } from '../evidence/receipts';
import type { TurnUsage } from '../quota/ledger';
import { profileEstimate, reserveTurn } from '../quota/admission';
import { originalFootprint, type Reservation } from '../quota/reservations';
import { SPEND_SOURCES, type SpendSource } from '../quota/settlement';
import { voidReservation } from '../quota/voids';
import { spendSlot, voidSlot, type SpendSlotResult, type VoidSlotResult } from '../quota/spend';
import { normalizeAgentId } from '../registry/agentIds';
import { shouldRunOnGoal } from '../scheduling/shouldRun';
import { goalNotFoundDecision, shouldRunRefusal } from '../scheduling/decisionAssembly';
import type { ShouldRunDecision, ShouldRunRefusal } from '../scheduling/decisionContract';
import { isLoopxError } from '../errors';
import { GoalLoader } from '../goal/loader';
import { goalQuotaSummary } from '../goal/quotaSummary';
import type { GoalQuotaSummary } from '../quota/summary';
import type { GoalSnapshot } from '../goal/snapshot';
import { goalIdArg, turnInstanceIdArg } from './common';
import { goalOf, quotaGoalOf, resolveGoal, resolveRegistry, type ResolvedGoal } from './goalHandle';
import { findRawRegistryGoal } from '../registry/read';
import { defineOperation, type OperationEnvironment } from './operation';
import { bindHeartbeatReceipt, type ReceiptDecision } from '../scheduling/heartbeatReceipt';
import { recordStepEvent, resolveChainBinding, type TurnStep } from '../evidence/heartbeatChain';
import type { HeartbeatReceipt } from '../evidence/receipts';
import type { RolloutEvent } from '../evidence/rolloutLog';
import { crashCheckpoint } from '../turn/crashHook';
import { LoopxError } from '../errors';
import { shouldRunNextActionWarning, shouldRunStateProjectionGap } from '../status/projection/shouldRunWarning';
import { persistentCacheEnabled } from '../goal/persistentCache';
import { recordTurnBase, snapshotProjectRoot } from '../snapshots/gitSnapshot';

/**
 * The quota guard: `quota status` (window, spend, budgets, turns in flight) and `quota should-run`
 * only read; `quota spend-slot` and `quota void-slot` preview unless `execute`.
 */

export type QuotaReservationSummary = Pick<
  Reservation,
  'effect_id' | 'slots' | 'reserved_at' | 'expires_at' | 'estimate'
>;

/**
 * The goal loaded once for a quota read (`quota status`, `history`, `plan`): the run index read whole, as
 * every quota read outside `should-run` does (`indexCache: 'off'`: no index cache decides what is shown).
 */
function loadQuotaSnapshot(goal: ResolvedGoal, env: OperationEnvironment): Promise<GoalSnapshot> {
  return new GoalLoader().load(goal, { clock: env.clock, indexCache: 'off' });
}

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
    const snapshot = await loadQuotaSnapshot(await resolveGoal(env, args.goalId), env);
    const summary = goalQuotaSummary(snapshot);
    const view = snapshot.quota;
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

/** An agent id as given: normalized when it is one, else passed on for the core to refuse. */
function agentOf(raw: string | undefined): string | null {
  const text = blankless(raw);
  if (text === null) return null;
  return normalizeAgentId(text) ?? text;
}

function blankless(raw: string | undefined): string | null {
  const text = raw?.trim();
  return text === undefined || text === '' ? null : text;
}

function turnOf(raw: string | undefined): string | null {
  const text = blankless(raw);
  return text === null ? null : checkTurnInstanceId(text);
}

const optionalAgent = z
  .string()
  .optional()
  .meta({ placeholder: 'id' })
  .describe('the registered agent of the turn (omit for an unscoped decision)');
const optionalTodo = z.string().optional().meta({ placeholder: 'id' }).describe('the todo the turn worked on');
const optionalTurn = turnInstanceIdArg('reuse it on retries: the spend is written once per turn').optional();
const execute = z.boolean().default(false).describe('write (default: preview only)');

const shouldRunArgs = z.strictObject({
  goalId: goalIdArg('the goal to decide for'),
  agentId: optionalAgent,
  availableCapabilities: z
    .array(z.string())
    .optional()
    .meta({ flag: '--available-capability', split: true, placeholder: 'name' })
    .describe('a capability this agent has'),
  turnInstanceId: turnInstanceIdArg(
    'with --agent-id, appends one heartbeat receipt binding the turn; a retry with the same id replays it',
  ).optional(),
  todoId: z
    .string()
    .optional()
    .meta({ placeholder: 'id' })
    .describe('with --turn-instance-id: the todo the turn must be bound to (refused when it is not)'),
});

export const quotaShouldRun = defineOperation({
  key: 'quotaShouldRun',
  args: shouldRunArgs,
  run: async (args, env): Promise<ShouldRunDecision | ReceiptDecision | ShouldRunRefusal> =>
    withOriginalNote(env, args.goalId, await decideShouldRun(args, env)),
});

/** The hard limit with the original in the loop, said plainly where it is active on the goal. */
export const ORIGINAL_HARD_LIMIT_NOTE =
  "the original LoopX also spends on this goal: our turns' reservations are written as quota_slot_spent hold rows it counts, and a delivery it has not spent for yet counts as held; it takes no lock of ours, so a spend of it that reads the quota before one of our holds is written and appends after our recheck can still pass allowed_slots by one (two of its own agents race the same way); run one program per goal where that matters";

async function withOriginalNote<T extends ShouldRunDecision | ReceiptDecision | ShouldRunRefusal>(
  env: OperationEnvironment,
  goalId: string,
  decision: T,
): Promise<T> {
  if (!('quota' in decision)) return decision;
  const registry = await resolveRegistry(env);
  if (findRawRegistryGoal(registry.document, goalId) === undefined) return decision;
  const footprint = originalFootprint(quotaGoalOf(goalOf(registry, goalId)));
  if (footprint === null) return decision;
  return Object.assign(decision, {
    original_loopx: {
      active: true as const,
      footprint: path.basename(footprint),
      hard_limit: ORIGINAL_HARD_LIMIT_NOTE,
    },
  });
}

async function decideShouldRun(
  args: z.infer<typeof shouldRunArgs>,
  env: OperationEnvironment,
): Promise<ShouldRunDecision | ReceiptDecision | ShouldRunRefusal> {
  const turnInstanceId = turnOf(args.turnInstanceId);
  const registry = await resolveRegistry(env);
  const common = {
    agentId: agentOf(args.agentId),
    clock: env.clock,
    ...(args.availableCapabilities === undefined ? {} : { availableCapabilities: args.availableCapabilities }),
    ...(turnInstanceId === null ? {} : { turnInstanceId }),
    nextActionWarning: shouldRunNextActionWarning,
    stateProjectionGap: shouldRunStateProjectionGap,
    indexCache: persistentCacheEnabled(env.env) ? ('memory' as const) : ('off' as const),
  };
  // An unknown goal or an agent that may not ask is an answer (should_run false, ok false), not an error.
  if (findRawRegistryGoal(registry.document, args.goalId) === undefined) {
    // An id that is no goal id is `invalid_goal_id`; one the registry lists once trimmed is still refused as
    // not found, with what the decision on it says.
    const trimmed = checkGoalIdSegment(args.goalId);
    if (findRawRegistryGoal(registry.document, trimmed) !== undefined)
      return shouldRunRefusal(await shouldRunOnGoal(quotaGoalOf(goalOf(registry, trimmed)), common));
    const requested = common.agentId;
    return shouldRunRefusal(
      goalNotFoundDecision(
        args.goalId,
        requested === null ? null : (normalizeAgentId(requested) ?? requested),
        isoSeconds(env.clock.now()),
      ),
    );
  }
  const goal = goalOf(registry, args.goalId);
  const quotaGoal = quotaGoalOf(goal);
  const requestedTodo = blankless(args.todoId);
  if (requestedTodo !== null && turnInstanceId === null)
    throw new LoopxError('usage', 'quota should-run --todo-id binds a heartbeat: pass --turn-instance-id too');
  try {
    if (turnInstanceId === null) return await shouldRunOnGoal(quotaGoal, common);
    // A retry of a turn that holds its reservation (or has spent) was admitted: it is not refused again.
    const bindingBefore =
      common.agentId === null ? null : await receiptIdentity(quotaGoal, common.agentId, turnInstanceId);
    let decision = await shouldRunOnGoal(quotaGoal, { ...common, admittedEffectId: bindingBefore?.effect_id });
    if (!decision.ok) return decision;
    if (decision.agent_id === null)
      throw new LoopxError(
        'quota_settlement_agent_required',
        'quota should-run --turn-instance-id writes a heartbeat receipt for one agent: pass --agent-id',
      );
    const turnAgent = decision.agent_id;
    // "run" holds the turn's slot and budget estimate (the turn driver's reservation, the same rule),
    // so the spend after the work always settles; a reservation refused (a race lost) answers throttled.
    let reserved: SettlementIdentity | null = null;
    if (decision.should_run) {
      const identity = bindingBefore ?? decisionIdentity(quotaGoal.goalId, decision, turnInstanceId);
      const reservation = await reserveTurn(quotaGoal, env.clock, {
        identity,
        estimate: profileEstimate(quotaGoal, turnAgent),
        estimateMissing: true,
        lock: { agentId: turnAgent },
      });
      if (reservation.status === 'refused')
        decision = await shouldRunOnGoal(quotaGoal, {
          ...common,
          refusedBy: reservation.reason.replace(/^quota refused: /, ''),
        });
      else {
        reserved = identity;
        // The heartbeat turn's base (docs/review.md): its delivery writeback pairs a head with it.
        await recordTurnBase(
          snapshotProjectRoot(goal.rawEntry, goal.homeDir, goal.projectRoot),
          goal.goalId,
          turnInstanceId,
        );
      }
    }
    const bound = await bindHeartbeatReceipt(quotaGoal, decision, {
      agentId: turnAgent,
      turnInstanceId,
      requestedTodoId: requestedTodo,
      clock: env.clock,
      lock: { clock: env.clock, env: env.env, operation: 'quota should-run' },
    });
    // Another process bound this turn id to another todo meanwhile: the reservation made for ours is released.
    if (reserved !== null && bound.settlement_identity?.effect_id !== reserved.effect_id)
      await voidReservation(quotaGoal, env.clock, { effectId: reserved.effect_id });
    // The receipt is in the log, the answer not yet printed: a retry must replay it.
    if (bound.heartbeat_receipt?.replayed === false) crashCheckpoint(env.env, 'should_run:receipt');
    return bound;
  } catch (error) {
    if (isLoopxError(error) && error.code.startsWith('quota_agent_'))
      return shouldRunRefusal(null, { goalId: args.goalId, agentId: common.agentId, error });
    throw error;
  }
}

/** The settlement identity the turn's heartbeat receipt binds, or null when it has none yet. */
async function receiptIdentity(
  goal: GoalRef,
  agentId: string,
  turnInstanceId: string,
): Promise<SettlementIdentity | null> {
  const read = await readRolloutEvents(rolloutEventLogOf(goal.runtimeDir), ofTurn(turnInstanceId));
  const receipt = findHeartbeatReceipt(read.events, goal.goalId, agentId, turnInstanceId);
  if (receipt === null) return null;
  return settlementIdentity({
    goalId: goal.goalId,
    agentId,
    turnInstanceId,
    todoId: receipt.todo_id,
    replanObligationId: receipt.replan_obligation_id,
  });
}

/** The identity a fresh receipt will bind: the replan obligation the decision owes, else its selected todo. */
function decisionIdentity(goalId: string, decision: ShouldRunDecision, turnInstanceId: string): SettlementIdentity {
  const replan =
    decision.effective_action === 'autonomous_replan_required'
      ? (decision.replan_obligation?.obligation_id ?? null)
      : null;
  return settlementIdentity({
    goalId,
    agentId: decision.agent_id ?? '',
    turnInstanceId,
    todoId: replan === null ? (decision.selected_todo?.todo_id ?? null) : null,
    replanObligationId: replan,
  });
}

export type QuotaSpendSlotOutput = {
  goal_id: string;
  agent_id: string | null;
  todo_id: string | null;
  replan_obligation_id: string | null;
  slots: number;
  source: SpendSource;
} & SpendSlotResult & {
    decision: {
      should_run: boolean;
      state: ShouldRunDecision['state'];
      effective_action: string;
      selected_todo_id: string | null;
    };
    /** The heartbeat receipt of the turn (null: none, or no turn id). */
    heartbeat_receipt: HeartbeatReceipt | null;
    /** The `quota_spend` rollout event of this settlement (null when nothing was settled). */
    rollout_event: RolloutEvent | null;
    /** False on a replay that found the event already written. */
    rollout_event_appended: boolean;
  };

export const quotaSpendSlot = defineOperation({
  key: 'quotaSpendSlot',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: optionalAgent,
    todoId: optionalTodo,
    replanObligationId: z
      .string()
      .optional()
      .meta({ placeholder: 'id' })
      .describe('the autonomous replan obligation the turn discharged (replan-<16 hex>; not with --todo-id)'),
    turnInstanceId: optionalTurn,
    execute,
    slots: z.number().int().min(1).default(1).describe('a whole number ≥ 1: slots to spend (default 1: one turn)'),
    source: z
      .enum(SPEND_SOURCES)
      .default('heartbeat')
      .describe(`who spends: ${SPEND_SOURCES.join(', ')} (default heartbeat)`),
    tokens: z.number().int().min(0).optional().describe('a whole number ≥ 0: tokens the turn used'),
    costUsd: z.number().min(0).optional().describe('a number ≥ 0: what the turn cost, in USD'),
    turnMinutes: z.number().min(0).optional().describe('a number ≥ 0: how long the turn took, in minutes'),
    usageEstimated: z.boolean().default(false).describe('the usage numbers are estimates (e.g. characters / 4)'),
    usageUnknown: z
      .boolean()
      .default(false)
      .describe(
        "the agent CLI reported no usage: the budgets count the turn's reserved estimate, marked estimated (without usage flags a goal with a cost or token budget assumes this)",
      ),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<QuotaSpendSlotOutput> => {
    const agentId = agentOf(args.agentId);
    let todoId = blankless(args.todoId);
    let replanObligationId = blankless(args.replanObligationId);
    const turnInstanceId = turnOf(args.turnInstanceId);
    const goal = await resolveGoal(env, args.goalId);
    const quotaGoal = quotaGoalOf(goal);
    const step: TurnStep | null =
      agentId !== null && turnInstanceId !== null
        ? { goalId: goal.goalId, goalDir: quotaGoal.runtimeDir, agentId, turnInstanceId }
        : null;
    // The heartbeat receipt of the turn binds the todo: an explicit other one is refused, a missing one is taken from it.
    const chain =
      step === null ? null : await resolveChainBinding(step, { todoId, replanObligationId }, 'quota spend-slot');
    if (chain !== null) ({ todoId, replanObligationId } = chain);
    const decision = await shouldRunOnGoal(quotaGoal, { agentId, clock: env.clock });
    const usage: TurnUsage = { estimated: args.usageEstimated };
    if (args.tokens !== undefined) usage.tokens = args.tokens;
    if (args.costUsd !== undefined) usage.cost_usd = args.costUsd;
    if (args.turnMinutes !== undefined) usage.minutes = args.turnMinutes;
    const reported = args.tokens !== undefined || args.costUsd !== undefined || args.turnMinutes !== undefined;
    const spend = await spendSlot(quotaGoal, env.clock, {
      decision,
      agentId,
      todoId,
      replanObligationId,
      turnInstanceId,
      slots: args.slots,
      source: args.source,
      execute: args.execute,
      ...(reported ? { usage } : {}),
      // Nothing reported on a goal with a cost or token budget counts as unknown, never as free.
      ...(args.usageUnknown ||
      (!reported &&
        (quotaConfigOf(quotaGoal).budgets.max_cost_usd !== null ||
          quotaConfigOf(quotaGoal).budgets.max_tokens !== null))
        ? { usageUnknown: true }
        : {}),
    });
    let rolloutEvent: RolloutEvent | null = null;
    let rolloutAppended = false;
    const settled = spend.ok && !spend.dry_run && (spend.appended || spend.idempotent_replay);
    if (step !== null && chain !== null && settled) {
      crashCheckpoint(env.env, 'spend_slot:effect');
      const recorded = await recordStepEvent(step, chain, {
        kind: 'quota_spend',
        clock: env.clock,
        status: 'spent',
        classification: 'quota_slot_spent',
        summary: `${args.slots} slot(s) settled for turn ${step.turnInstanceId}`,
        details: { slots: args.slots, source: args.source, category: spend.category ?? undefined },
        lock: { clock: env.clock, env: env.env, operation: 'quota spend-slot' },
      });
      rolloutEvent = recorded.event;
      rolloutAppended = recorded.appended;
    }
    return {
      goal_id: goal.goalId,
      agent_id: agentId,
      todo_id: todoId,
      replan_obligation_id: replanObligationId,
      slots: args.slots,
      source: args.source,
      ...spend,
      heartbeat_receipt: chain?.receipt ?? null,
      rollout_event: rolloutEvent,
      rollout_event_appended: rolloutAppended,
      decision: {
        should_run: decision.should_run,
        state: decision.state,
        effective_action: decision.effective_action,
        selected_todo_id: decision.selected_todo?.todo_id ?? null,
      },
    };
  },
});

export type QuotaVoidSlotOutput = { goal_id: string } & VoidSlotResult;

export const quotaVoidSlot = defineOperation({
  key: 'quotaVoidSlot',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: optionalAgent,
    todoId: optionalTodo,
    turnInstanceId: optionalTurn,
    execute,
    voidGeneratedAt: z
      .string()
      .optional()
      .meta({ placeholder: 'time' })
      .describe('generated_at of the spend to cancel'),
    reason: z.string().default('voided by operator').describe('why the spend is cancelled'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<QuotaVoidSlotOutput> => {
    const agentId = agentOf(args.agentId);
    const turnInstanceId = turnOf(args.turnInstanceId);
    const goal = await resolveGoal(env, args.goalId);
    const result = await voidSlot(quotaGoalOf(goal), env.clock, {
      agentId,
      todoId: blankless(args.todoId),
      turnInstanceId,
      generatedAt: blankless(args.voidGeneratedAt),
      reason: blankless(args.reason) ?? 'voided by operator',
      execute: args.execute,
    });
    return { goal_id: goal.goalId, ...result };
  },
});

export type { ShouldRunDecision, ShouldRunRefusal } from '../scheduling/decisionContract';
export type { GoalQuotaSummary } from '../quota/summary';
export type { SpendSlotResult, VoidSlotResult } from '../quota/spend';

/** One spend of the window, as the goal detail chart plots it. */
export interface QuotaHistorySpend {
  generated_at: string;
  /** Net slots (voids subtracted). */
  slots: number;
  tokens: number | null;
  cost_usd: number | null;
  agent_id: string | null;
  todo_id: string | null;
}

export type QuotaHistoryOutput = { ok: true } & GoalQuotaSummary & {
    window_start: string;
    window_end: string;
    /** Counted spends of the current window, oldest first (duplicates and fully voided ones left out). */
    spends: QuotaHistorySpend[];
  };

/** `quota history`: the spends of the rolling window with the limits, for charts (read-only). */
export const quotaHistory = defineOperation({
  key: 'quotaHistory',
  args: z.strictObject({
    goalId: goalIdArg('the goal whose spend history to show'),
  }),
  run: async (args, env): Promise<QuotaHistoryOutput> => {
    const snapshot = await loadQuotaSnapshot(await resolveGoal(env, args.goalId), env);
    const view = snapshot.quota;
    const summary = goalQuotaSummary(snapshot);
    const spends = view.ledger.spends
      .filter((s) => s.in_window && !s.duplicate && s.slots - s.voided_slots > 0)
      .map((s) => ({
        generated_at: s.generated_at,
        slots: s.slots - s.voided_slots,
        tokens: s.usage?.tokens ?? null,
        cost_usd: s.usage?.cost_usd ?? null,
        agent_id: s.agent_id,
        todo_id: s.todo_id,
      }))
      .reverse();
    return {
      ok: true,
      ...summary,
      window_start: view.ledger.window_start,
      window_end: view.ledger.window_end,
      spends,
    };
  },
});

/** The original's group order of `quota plan` (unknown states last). */
export const QUOTA_PLAN_STATE_ORDER = [
  'blocked_health',
  'operator_gate',
  'focus_wait',
  'eligible',
  'waiting',
  'throttled',
  'paused',
] as const;

export interface QuotaPlanGoal {
  goal_id: string;
  state: string;
  reason: string;
  compute: number;
  allowed_slots: number;
  spent_slots: number;
  reserved_slots: number;
  remaining_slots: number;
  next_slot_frees_at: string | null;
}

export interface QuotaPlanOutput {
  ok: boolean;
  schema_version: 'loopx_quota_plan_v0';
  generated_at: string;
  goal_count: number;
  /** Every state of the order, with its goals sorted by compute (high first), spent (low first), goal id. */
  groups: { state: string; goals: QuotaPlanGoal[] }[];
  /** The first eligible goal: which goal an outer scheduler would run next (advisory only). */
  next_automatic_turn: { goal_id: string; reason: string } | null;
  /** Goals whose quota could not be computed (broken config or records), with why. */
  errors: { goal_id: string; error: string }[];
}

/** `quota plan`: every registered goal's quota state, grouped in the original's order (read-only). */
export const quotaPlan = defineOperation({
  key: 'quotaPlan',
  args: z.strictObject({}),
  run: async (_args, env): Promise<QuotaPlanOutput> => {
    const registry = await resolveRegistry(env);
    const rows: QuotaPlanGoal[] = [];
    const errors: QuotaPlanOutput['errors'] = [];
    for (const entry of registeredGoalIds(registry.document)) {
      try {
        const s = goalQuotaSummary(await loadQuotaSnapshot(goalOf(registry, entry), env));
        rows.push({
          goal_id: s.goal_id,
          state: s.state,
          reason: s.reason,
          compute: s.compute,
          allowed_slots: s.allowed_slots,
          spent_slots: s.spent_slots,
          reserved_slots: s.reserved_slots,
          remaining_slots: s.remaining_slots,
          next_slot_frees_at: s.next_slot_frees_at,
        });
      } catch (error) {
        errors.push({ goal_id: entry, error: error instanceof Error ? error.message : String(error) });
      }
    }
    const order: string[] = [...QUOTA_PLAN_STATE_ORDER];
    const unknown = [...new Set(rows.map((r) => r.state).filter((s) => !order.includes(s)))].sort();
    const groups = [...order, ...unknown].map((state) => ({
      state,
      goals: rows
        .filter((r) => r.state === state)
        .sort((a, b) => b.compute - a.compute || a.spent_slots - b.spent_slots || a.goal_id.localeCompare(b.goal_id)),
    }));
    const first = groups.find((g) => g.state === 'eligible')?.goals[0];
    return {
      ok: errors.length === 0,
      schema_version: 'loopx_quota_plan_v0',
      generated_at: isoSeconds(env.clock.now()),
      goal_count: rows.length,
      groups,
      next_automatic_turn: first === undefined ? null : { goal_id: first.goal_id, reason: first.reason },
      errors,
    };
  },
});

function registeredGoalIds(document: Record<string, unknown>): string[] {
  const goals = document['goals'];
  if (!Array.isArray(goals)) return [];
  const ids: string[] = [];
  for (const goal of goals) {
    const id = (goal as Record<string, unknown> | null)?.['id'];
    if (typeof id === 'string' && id.trim() !== '') ids.push(id.trim());
  }
  return ids;
}
