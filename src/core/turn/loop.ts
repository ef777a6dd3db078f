import { z } from 'zod';
import { isLoopxError, LoopxError } from '../errors';
import { formatLocalIsoSeconds } from '../runtime/time';
import { loadTurnGoal, planGoalTurn, reloadTurnGoal, turnConcurrencyLimit } from './context';
import { loopDisposition, type DispositionResult, type LoopDisposition } from './disposition';
import { emitTo, LoopStopReasonSchema, type LoopStopReason, type TurnEventSink } from './events';
import type { TurnPlan } from './plan';
import { notRunMessage, TurnRunResultSchema, type TurnRunResult } from './result';
import { runOnce, type RunOnceOptions } from './runOnce';

/**
 * `loopx turn loop`: turns back to back until a stop disposition (docs/turns.md) or cancellation.
 * After every turn a fresh plan and the turn's receipt give the disposition: `run_now` goes on
 * (after the cadence), anything else stops the loop with a reason a person can act on.
 *
 * Several agents (`agentIds`) run side by side when the goal's spawn policy allows several turns at
 * once (`maxConcurrentTurns`); each takes its own todos, and a turn that finds every lane taken
 * waits for one instead of running. Without spawning they take turns one at a time.
 */

export const TURN_LOOP_SCHEMA_VERSION = 'loopx_turn_loop_v0';
/** How long an agent waits before asking again for a turn lane another agent holds. */
const BUSY_POLL_MS = 100;

export const LoopResultSchema = z.object({
  ok: z.boolean(),
  schema_version: z.literal(TURN_LOOP_SCHEMA_VERSION),
  goal_id: z.string(),
  agent_ids: z.array(z.string()),
  stop_reason: LoopStopReasonSchema,
  disposition: z.string().nullable(),
  message: z.string(),
  turns: z.array(TurnRunResultSchema),
  turn_count: z.number().int().nonnegative(),
  spend_count: z.number().int().nonnegative(),
  max_concurrent_turns: z.number().int().positive(),
  /** Open agent todos the agents did not take, and why (claimed by a peer, held by a gate, …). */
  skipped_todos: z.array(
    z.object({ agent_id: z.string(), todo_id: z.string(), reason: z.string(), detail: z.string().nullable() }),
  ),
});
export type LoopResult = z.infer<typeof LoopResultSchema>;

export interface RunLoopOptions extends Omit<
  RunOnceOptions,
  'agentId' | 'execute' | 'resumeTurnKey' | 'retryFailedTurn' | 'turnInstanceId' | 'onEvent'
> {
  agentIds: readonly string[];
  /** Stop after this many turns (all agents together); default unbounded. */
  maxTurns?: number | undefined;
  /** Pause between turns of one agent, in seconds; default 0. */
  cadenceSeconds?: number | undefined;
  onEvent?: TurnEventSink | undefined;
}

interface AgentStop {
  agentId: string;
  reason: LoopStopReason;
  disposition: LoopDisposition | null;
  message: string;
  plan: TurnPlan | null;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true || ms <= 0) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The stop reason a disposition means, given the turn and plan it came from. */
function stopReasonOf(disposition: DispositionResult, turn: TurnRunResult | null, plan: TurnPlan): LoopStopReason {
  switch (disposition.disposition) {
    case 'terminal':
      return 'terminal';
    case 'user_action_required':
      return 'user_action';
    case 'replan':
      return 'replan';
    case 'repair':
      return turn !== null && (turn.status === 'failed' || turn.result_kind === 'host_failure')
        ? 'error'
        : plan.route === 'contract_error'
          ? 'error'
          : 'repair';
    case 'wait':
      return plan.decision.state === 'throttled' ||
        (turn?.result_kind === 'wait' && turn.summary?.startsWith('quota refused') === true)
        ? 'budget'
        : 'wait';
    case 'run_now':
      return 'wait';
  }
}

function stopMessage(reason: LoopStopReason, turn: TurnRunResult | null, plan: TurnPlan): string {
  const skipped = plan.skipped_todos
    .filter(
      (s) =>
        s.reason === 'claimed_by_other_agent' ||
        s.reason === 'leased_to_other_agent' ||
        s.reason === 'excluded_agent' ||
        s.reason === 'in_flight',
    )
    .map((s) => `skipped ${s.todo_id} (${s.detail ?? s.reason})`);
  const tail = skipped.length > 0 ? `; ${skipped.join('; ')}` : '';
  switch (reason) {
    case 'terminal':
      return `the goal has no open agent work left: every agent todo is done${tail}`;
    case 'user_action': {
      if (turn !== null && turn.result_kind === 'user_action_required') return `${turn.message}${tail}`;
      return `${notRunMessage(plan)}${tail}`;
    }
    case 'budget':
      // A turn refused at admission (its estimate did not fit) says which budget; the plan does not know.
      return turn?.result_kind === 'wait' && turn.summary?.startsWith('quota refused') === true
        ? `the quota is used up: ${turn.summary}${tail}`
        : `the quota is used up: ${plan.decision.reason}${tail}`;
    case 'error':
      return turn !== null && turn.status === 'failed' ? turn.message : `${notRunMessage(plan)}${tail}`;
    case 'replan':
    case 'repair': {
      // An owed replan still standing names the command that records it once the todos are replanned.
      const owed = plan.replan_obligation ?? null;
      const next =
        owed === null
          ? ''
          : `; replan obligation ${owed.obligation_id} is still owed: replan the todos, then record it with ${owed.discharge_command}`;
      return turn !== null && turn.result_kind !== null
        ? `the agent reported ${turn.result_kind}: ${turn.summary ?? ''}; plan the next step before running again${next}${tail}`
        : `${notRunMessage(plan)}${next}${tail}`;
    }
    default:
      return `${notRunMessage(plan)}${tail}`;
  }
}

export async function runLoop(options: RunLoopOptions): Promise<LoopResult> {
  if (options.agentIds.length === 0) throw new LoopxError('usage', 'a loop needs at least one agent (--agent-id)');
  const first = loadTurnGoal({ ...options, agentId: options.agentIds[0] ?? '' });
  const goalId = first.goal.goalId;
  const limit = turnConcurrencyLimit(first.goal);
  const turns: TurnRunResult[] = [];
  let turnBudgetUsed = 0;
  let maxTurnsHit = false;
  const stops: AgentStop[] = [];
  const skipped = new Map<string, { agent_id: string; todo_id: string; reason: string; detail: string | null }>();

  const agentLoop = async (agentId: string): Promise<void> => {
    // Read again before every turn and every disposition: a pause or a lowered limit written while
    // the loop runs holds from the next turn on (admission re-reads it under its lock as well).
    let turnGoal = loadTurnGoal({ ...options, agentId });
    const stop = (
      reason: LoopStopReason,
      disposition: LoopDisposition | null,
      message: string,
      plan: TurnPlan | null,
    ): void => {
      stops.push({ agentId: turnGoal.agentId, reason, disposition, message, plan });
    };
    for (;;) {
      if (options.signal?.aborted === true)
        return stop('cancelled', null, 'cancelled; the last turn stopped cleanly after its current phase', null);
      if (options.maxTurns !== undefined && turnBudgetUsed >= options.maxTurns) {
        maxTurnsHit = true;
        return stop('max_turns', null, `ran the ${options.maxTurns} turn(s) asked for`, null);
      }
      turnBudgetUsed++;
      let turn: TurnRunResult;
      try {
        turnGoal = await reloadTurnGoal(turnGoal);
        turn = await runOnce({
          ...options,
          goal: turnGoal.goal,
          registryDocument: turnGoal.registryDocument,
          agentId: turnGoal.agentId,
          execute: true,
          onEvent: options.onEvent,
        });
      } catch (error) {
        turnBudgetUsed--;
        if (isLoopxError(error)) return stop('error', null, error.message, null);
        throw error;
      }
      if (turn.status === 'busy') {
        turnBudgetUsed--;
        await sleep(BUSY_POLL_MS, options.signal);
        continue;
      }
      if (turn.status === 'not_run') turnBudgetUsed--;
      else turns.push(turn);
      if (turn.status === 'cancelled') return stop('cancelled', null, turn.message, turn.plan);

      try {
        turnGoal = await reloadTurnGoal(turnGoal);
      } catch (error) {
        if (isLoopxError(error)) return stop('error', null, error.message, null);
        throw error;
      }
      const { plan } = await planGoalTurn(turnGoal, {
        clock: options.clock,
        availableCapabilities: options.availableCapabilities,
      });
      for (const s of plan.skipped_todos)
        skipped.set(`${turnGoal.agentId}:${s.todo_id}`, { agent_id: turnGoal.agentId, ...s });
      const receipt =
        turn.status === 'not_run' || turn.receipt === null || turn.turn_key === null
          ? null
          : {
              goal_id: turn.goal_id,
              agent_id: turn.agent_id,
              todo_id: turn.todo_id,
              turn_key: turn.turn_key,
              status: turn.status,
              result_kind: turn.result_kind ?? turn.receipt.result_kind,
            };
      const disposition = loopDisposition(receipt, {
        goal_id: plan.goal_id,
        agent_id: plan.agent_id,
        route: plan.route,
        state: plan.decision.state,
        replan_turn: plan.would_invoke_host && (plan.replan_obligation ?? null) !== null,
      });
      if (disposition.disposition !== 'run_now') {
        const reason = stopReasonOf(disposition, turn.status === 'not_run' ? null : turn, plan);
        return stop(
          reason,
          disposition.disposition,
          stopMessage(reason, turn.status === 'not_run' ? null : turn, plan),
          plan,
        );
      }
      await sleep((options.cadenceSeconds ?? 0) * 1000, options.signal);
    }
  };

  await Promise.all(options.agentIds.map((agentId) => agentLoop(agentId)));

  // The loop's reason: cancellation first, then the most pressing stop of any agent.
  const order: LoopStopReason[] = [
    'cancelled',
    'error',
    'user_action',
    'budget',
    'repair',
    'replan',
    'max_turns',
    'wait',
    'terminal',
  ];
  const main = [...stops].sort((a, b) => order.indexOf(a.reason) - order.indexOf(b.reason))[0];
  const reason: LoopStopReason = main?.reason ?? (maxTurnsHit ? 'max_turns' : 'wait');
  const message =
    stops.length <= 1 ? (main?.message ?? '') : stops.map((s) => `${s.agentId}: ${s.message}`).join(' | ');
  const spendCount = turns.filter((t) => t.effects.quota_spent).length;
  const result: LoopResult = {
    ok: reason !== 'error',
    schema_version: TURN_LOOP_SCHEMA_VERSION,
    goal_id: goalId,
    agent_ids: [...options.agentIds],
    stop_reason: reason,
    disposition: main?.disposition ?? null,
    message,
    turns,
    turn_count: turns.length,
    spend_count: spendCount,
    max_concurrent_turns: limit,
    skipped_todos: [...skipped.values()],
  };
  emitTo(options.onEvent, {
    type: 'loop_stopped',
    goal_id: goalId,
    agent_ids: [...options.agentIds],
    at: formatLocalIsoSeconds(options.clock.now()),
    reason,
    disposition: result.disposition,
    message,
    turns: turns.length,
    spends: spendCount,
  });
  return result;
}
