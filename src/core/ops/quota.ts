import { z } from 'zod';
import { checkTurnInstanceId } from '../quota/identity';
import type { TurnUsage } from '../quota/ledger';
import { readQuotaView, SPEND_SOURCES, type Reservation, type SpendSource } from '../quota/reservations';
import { spendSlot, voidSlot, type SpendSlotResult, type VoidSlotResult } from '../quota/spend';
import { normalizeAgentId } from '../registry/agentIds';
import {
  goalQuotaSummary,
  shouldRun,
  shouldRunRefusal,
  type GoalQuotaSummary,
  type ShouldRunDecision,
  type ShouldRunRefusal,
} from '../scheduling/shouldRun';
import { isLoopxError } from '../errors';
import { goalIdArg } from './common';
import { goalOf, quotaGoalOf, resolveGoal, resolveRegistry } from './goalHandle';
import { findRawRegistryGoal } from '../registry/read';
import { defineOperation } from './operation';
import { shouldRunNextActionWarning } from '../status/projection/shouldRunWarning';

/**
 * The quota guard: `quota status` (window, spend, budgets, turns in flight) and `quota should-run`
 * only read; `quota spend-slot` and `quota void-slot` preview unless `execute`.
 */

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
const optionalTurn = z
  .string()
  .optional()
  .meta({ placeholder: 'id' })
  .describe('the turn id (reuse it on retries: the spend is written once per turn)');
const execute = z.boolean().default(false).describe('write (default: preview only)');

export const quotaShouldRun = defineOperation({
  key: 'quotaShouldRun',
  args: z.strictObject({
    goalId: goalIdArg('the goal to decide for'),
    agentId: optionalAgent,
    availableCapability: z
      .array(z.string())
      .optional()
      .meta({ split: true, placeholder: 'name' })
      .describe('a capability this agent has'),
    turnInstanceId: z
      .string()
      .optional()
      .meta({ placeholder: 'id' })
      .describe('the turn id; the decision then names the settlement identity'),
  }),
  run: async (args, env): Promise<ShouldRunDecision | ShouldRunRefusal> => {
    const turnInstanceId = turnOf(args.turnInstanceId);
    const registry = await resolveRegistry(env);
    const common = {
      registryPath: registry.registryPath,
      goalId: args.goalId,
      agentId: agentOf(args.agentId),
      clock: env.clock,
      homeDir: registry.homeDir,
      runtimeRootOverride: env.runtimeRootOverride,
      ...(args.availableCapability === undefined ? {} : { availableCapabilities: args.availableCapability }),
      ...(turnInstanceId === null ? {} : { turnInstanceId }),
      nextActionWarning: shouldRunNextActionWarning,
    };
    // An unknown goal or an agent that may not ask is an answer (should_run false, ok false), not an error.
    if (findRawRegistryGoal(registry.document, args.goalId) === undefined)
      return shouldRunRefusal(await shouldRun(common));
    const goal = goalOf(registry, args.goalId);
    try {
      return await shouldRun({ ...common, goal: quotaGoalOf(goal) });
    } catch (error) {
      if (isLoopxError(error) && error.code.startsWith('quota_agent_'))
        return shouldRunRefusal(null, { goalId: args.goalId, agentId: common.agentId, error });
      throw error;
    }
  },
});

export type QuotaSpendSlotOutput = {
  goal_id: string;
  agent_id: string | null;
  todo_id: string | null;
  slots: number;
  source: SpendSource;
} & SpendSlotResult & {
    decision: {
      should_run: boolean;
      state: ShouldRunDecision['state'];
      effective_action: string;
      selected_todo_id: string | null;
    };
  };

export const quotaSpendSlot = defineOperation({
  key: 'quotaSpendSlot',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: optionalAgent,
    todoId: optionalTodo,
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
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<QuotaSpendSlotOutput> => {
    const agentId = agentOf(args.agentId);
    const todoId = blankless(args.todoId);
    const turnInstanceId = turnOf(args.turnInstanceId);
    const goal = await resolveGoal(env, args.goalId);
    const quotaGoal = quotaGoalOf(goal);
    const decision = await shouldRun({
      registryPath: goal.registryPath,
      goalId: goal.goalId,
      agentId,
      clock: env.clock,
      homeDir: goal.homeDir,
      runtimeRootOverride: env.runtimeRootOverride,
      goal: quotaGoal,
    });
    const usage: TurnUsage = { estimated: args.usageEstimated };
    if (args.tokens !== undefined) usage.tokens = args.tokens;
    if (args.costUsd !== undefined) usage.cost_usd = args.costUsd;
    if (args.turnMinutes !== undefined) usage.minutes = args.turnMinutes;
    const reported = args.tokens !== undefined || args.costUsd !== undefined || args.turnMinutes !== undefined;
    const spend = await spendSlot(quotaGoal, env.clock, {
      decision,
      agentId,
      todoId,
      turnInstanceId,
      slots: args.slots,
      source: args.source,
      execute: args.execute,
      ...(reported ? { usage } : {}),
    });
    return {
      goal_id: goal.goalId,
      agent_id: agentId,
      todo_id: todoId,
      slots: args.slots,
      source: args.source,
      ...spend,
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

export type { GoalQuotaSummary, ShouldRunDecision, ShouldRunRefusal } from '../scheduling/shouldRun';
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
    const goal = await resolveGoal(env, args.goalId);
    const quotaGoal = quotaGoalOf(goal);
    const view = await readQuotaView(quotaGoal, env.clock);
    const summary = await goalQuotaSummary({
      registryPath: goal.registryPath,
      goalId: goal.goalId,
      clock: env.clock,
      runtimeRootOverride: env.runtimeRootOverride,
      homeDir: goal.homeDir,
      goal: quotaGoal,
    });
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
