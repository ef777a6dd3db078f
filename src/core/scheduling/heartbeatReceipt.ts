import { isoSeconds, type Clock } from '../clock';
import { LoopxError } from '../errors';
import { findHeartbeatReceipt, type HeartbeatReceipt } from '../evidence/receipts';
import { appendRolloutEventsChecked, buildRolloutEvent, ofTurn, type RolloutEvent } from '../evidence/rolloutLog';
import type { LockOptions } from '../fs/fileLock';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from '../quota/goal';
import { settlementIdentity } from '../quota/identity';
import { readGoalStateFile } from '../goal/reads';
import { spendCommand } from './decisionAssembly';
import type { ShouldRunDecision } from './decisionContract';
import { selectedTodoView } from '../todo/runnable';
import { deliveryWorkspaceCausality, deliveryWorkspaceCausalityFields } from '../snapshots/deliveryWorkspace';

/**
 * Step 6 of the guard (docs/quota.md#heartbeat-receipts): `quota should-run --turn-instance-id T
 * --agent-id A` binds the turn. The first run that may deliver appends one `quota_should_run`
 * rollout event (run_id T) naming the todo or replan obligation and the settlement effect id; every
 * retry with the same T replays that receipt and keeps its binding even when the frontier moved.
 * The read-check-append runs under the log's lock, so concurrent retries append one receipt.
 */

export interface HeartbeatReceiptView extends HeartbeatReceipt {
  /** True when the receipt was already in the log (this run is a retry of the same heartbeat). */
  replayed: boolean;
}

export type ReceiptDecision = ShouldRunDecision & {
  /** The receipt that binds turn T, or null when the decision does not run (no receipt is written). */
  heartbeat_receipt: HeartbeatReceiptView | null;
};

export interface BindReceiptInput {
  agentId: string;
  turnInstanceId: string;
  /** An explicit `--todo-id`: must be the todo the receipt binds (or, fresh, the one the guard selected). */
  requestedTodoId: string | null;
  clock: Clock;
  lock?: LockOptions;
}

export async function bindHeartbeatReceipt(
  goal: Pick<GoalRef, QuotaRefKeys>,
  decision: ShouldRunDecision,
  input: BindReceiptInput,
): Promise<ReceiptDecision> {
  const { agentId, turnInstanceId } = input;
  const replanId = replanObligationOf(decision);
  const candidate = replanId === null ? (decision.selected_todo?.todo_id ?? null) : null;
  // Read before the log's lock (the state file is not the log): only a fresh receipt of this todo uses it.
  const causality = candidate === null || !decision.should_run ? null : await receiptCausality(goal, candidate);
  const fresh = await appendRolloutEventsChecked(
    goal.runtimeDir,
    (read): { append: RolloutEvent[]; result: { receipt: HeartbeatReceipt | null; replayed: boolean } } => {
      const existing = findHeartbeatReceipt(read.events, goal.goalId, agentId, turnInstanceId);
      if (existing !== null) return { append: [], result: { receipt: existing, replayed: true } };
      if (!decision.should_run) return { append: [], result: { receipt: null, replayed: false } };
      const todoId = replanId === null ? (decision.selected_todo?.todo_id ?? null) : null;
      if (input.requestedTodoId !== null && input.requestedTodoId !== todoId) {
        throw new LoopxError(
          'heartbeat_receipt_binding_mismatch',
          `quota should-run: --todo-id ${input.requestedTodoId} is not what the guard selects for turn ${turnInstanceId} (${todoId ?? (replanId === null ? 'no todo' : `replan obligation ${replanId}`)}); drop --todo-id or name the selected todo`,
          {
            step: 'validation',
            failure_kind: 'identity_mismatch',
            requested_todo_id: input.requestedTodoId,
            selected_todo_id: todoId,
          },
        );
      }
      const identity = settlementIdentity({
        goalId: goal.goalId,
        agentId,
        turnInstanceId,
        todoId,
        replanObligationId: replanId,
      });
      const event = buildRolloutEvent({
        goalId: goal.goalId,
        eventKind: 'quota_should_run',
        recordedAt: isoSeconds(input.clock.now()),
        agentId,
        todoId,
        runId: turnInstanceId,
        status: decision.state,
        classification: decision.effective_action,
        summary: `heartbeat receipt: ${decision.effective_action} bound to ${todoId ?? replanId ?? 'no todo'}`,
        details: {
          todo_id: todoId ?? undefined,
          replan_obligation_id: replanId ?? undefined,
          settlement_effect_id: identity.effect_id,
          should_run: decision.should_run,
          effective_action: decision.effective_action,
          // The original's receipt names whether the todo makes its delivery workspace causal: its spend-slot reads it.
          ...(causality === null ? {} : deliveryWorkspaceCausalityFields(causality)),
        },
      });
      const receipt = findHeartbeatReceipt([event], goal.goalId, agentId, turnInstanceId);
      return { append: [event], result: { receipt, replayed: false } };
    },
    { keep: ofTurn(turnInstanceId), ...(input.lock === undefined ? {} : { lock: input.lock }) },
  );
  if (fresh.receipt === null) return { ...decision, heartbeat_receipt: null };
  const receipt = fresh.receipt;
  if (fresh.replayed && input.requestedTodoId !== null && input.requestedTodoId !== receipt.todo_id) {
    throw new LoopxError(
      'heartbeat_receipt_binding_mismatch',
      `quota should-run: turn ${turnInstanceId} is bound by its heartbeat receipt to ${receipt.todo_id ?? receipt.replan_obligation_id ?? 'no todo'}, but --todo-id ${input.requestedTodoId} was given; keep the bound todo or start a new turn id`,
      {
        step: 'validation',
        failure_kind: 'identity_mismatch',
        receipt_event_id: receipt.event_id,
        receipt_todo_id: receipt.todo_id,
        requested_todo_id: input.requestedTodoId,
      },
    );
  }
  return replayedDecision(goal, decision, { ...receipt, replayed: fresh.replayed }, agentId);
}

/** The decision as the receipt binds it: the bound todo, its settlement identity and spend command. */
async function replayedDecision(
  goal: Pick<GoalRef, QuotaRefKeys>,
  decision: ShouldRunDecision,
  receipt: HeartbeatReceiptView,
  agentId: string,
): Promise<ReceiptDecision> {
  const identity = settlementIdentity({
    goalId: goal.goalId,
    agentId,
    turnInstanceId: receipt.turn_instance_id,
    todoId: receipt.todo_id,
    replanObligationId: receipt.replan_obligation_id,
  });
  let selected = receipt.replan_obligation_id !== null ? null : decision.selected_todo;
  if (receipt.todo_id !== null && selected?.todo_id !== receipt.todo_id) {
    selected = null;
    if (goal.statePath !== null) {
      const snapshot = await readGoalStateFile(goal.statePath).catch(() => null);
      const item = snapshot?.document.todos.find((t) => t.todoId === receipt.todo_id && t.role === 'agent');
      if (item !== undefined)
        selected = selectedTodoView(item, `bound by the heartbeat receipt of turn ${receipt.turn_instance_id}`);
    }
  }
  return {
    ...decision,
    selected_todo: selected,
    settlement_identity: identity,
    interaction_contract: {
      ...decision.interaction_contract,
      cli_channel: {
        ...decision.interaction_contract.cli_channel,
        settlement_plan: [spendCommand(goal.goalId, agentId, receipt.todo_id, receipt.replan_obligation_id)],
      },
    },
    heartbeat_receipt: receipt,
  };
}

/** The selected todo's delivery workspace causality (snapshots/deliveryWorkspace.ts), read from the state file. */
async function receiptCausality(
  goal: Pick<GoalRef, QuotaRefKeys>,
  todoId: string,
): Promise<ReturnType<typeof deliveryWorkspaceCausality> | null> {
  if (goal.statePath === null) return null;
  const snapshot = await readGoalStateFile(goal.statePath).catch(() => null);
  const item = snapshot?.document.todos.find((t) => t.todoId === todoId && t.role === 'agent');
  return item === undefined ? null : deliveryWorkspaceCausality(item);
}

function replanObligationOf(decision: ShouldRunDecision): string | null {
  return decision.effective_action === 'autonomous_replan_required'
    ? (decision.replan_obligation?.obligation_id ?? null)
    : null;
}
