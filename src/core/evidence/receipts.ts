import { LoopxError } from '../errors';
import type { RolloutEvent } from './rolloutLog';

/**
 * Heartbeat receipts (docs/quota.md#heartbeat-receipts): `quota should-run --turn-instance-id T
 * --agent-id A` appends one `quota_should_run` event (run_id = T) whose details bind the turn's
 * settlement: `todo_id` or `replan_obligation_id`, and `settlement_effect_id`. The later steps of the
 * same heartbeat (`refresh-state`, `todo complete`, `quota spend-slot`) find it here, check that
 * they name the same binding, and find their own step event to replay instead of writing twice.
 */

export const RECEIPT_EVENT_KIND = 'quota_should_run';

export interface HeartbeatReceipt {
  event_id: string | null;
  recorded_at: string | null;
  goal_id: string;
  agent_id: string;
  turn_instance_id: string;
  todo_id: string | null;
  replan_obligation_id: string | null;
  settlement_effect_id: string | null;
}

function detailText(event: RolloutEvent, key: string): string | null {
  const value = event.details?.[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

/** The first receipt of (goal, agent, turn): later duplicates (from a writer without our lock) never rebind. */
export function findHeartbeatReceipt(
  events: readonly RolloutEvent[],
  goalId: string,
  agentId: string,
  turnInstanceId: string,
): HeartbeatReceipt | null {
  for (const event of events) {
    if (event.event_kind !== RECEIPT_EVENT_KIND) continue;
    if (event.goal_id !== goalId || event.agent_id !== agentId || event.run_id !== turnInstanceId) continue;
    return {
      event_id: event.event_id ?? null,
      recorded_at: event.recorded_at ?? null,
      goal_id: goalId,
      agent_id: agentId,
      turn_instance_id: turnInstanceId,
      todo_id: detailText(event, 'todo_id') ?? event.todo_id ?? null,
      replan_obligation_id: detailText(event, 'replan_obligation_id'),
      settlement_effect_id: detailText(event, 'settlement_effect_id'),
    };
  }
  return null;
}

/** The step event (refresh_state, quota_spend, todo_complete) of a turn carrying this effect id. */
export function findStepEvent(
  events: readonly RolloutEvent[],
  kind: string,
  agentId: string,
  turnInstanceId: string,
  effectId: string,
): RolloutEvent | null {
  for (const event of events) {
    if (event.event_kind !== kind || event.agent_id !== agentId || event.run_id !== turnInstanceId) continue;
    if (detailText(event, 'settlement_effect_id') === effectId) return event;
  }
  return null;
}

export interface RequestedBinding {
  todoId: string | null;
  replanObligationId: string | null;
}

/**
 * Refuses a step whose explicit binding differs from the receipt's (`heartbeat_receipt_binding_mismatch`,
 * the original's `identity_mismatch` at step `validation`) and a receipt whose effect id does not
 * match its own binding. Returns the binding the step must use (the receipt's).
 */
export function checkReceiptBinding(
  receipt: HeartbeatReceipt,
  requested: RequestedBinding,
  expectedEffectId: (binding: RequestedBinding) => string,
  step: string,
): RequestedBinding {
  const bound: RequestedBinding = { todoId: receipt.todo_id, replanObligationId: receipt.replan_obligation_id };
  const details = {
    step,
    failure_kind: 'identity_mismatch',
    turn_instance_id: receipt.turn_instance_id,
    receipt_event_id: receipt.event_id,
    receipt_todo_id: receipt.todo_id,
    receipt_replan_obligation_id: receipt.replan_obligation_id,
    requested_todo_id: requested.todoId,
    requested_replan_obligation_id: requested.replanObligationId,
  };
  if (receipt.settlement_effect_id !== null && receipt.settlement_effect_id !== expectedEffectId(bound)) {
    const what = bound.todoId === null && bound.replanObligationId === null ? 'effect identity without a Todo' : '';
    throw new LoopxError(
      'heartbeat_receipt_binding_mismatch',
      `the heartbeat receipt of turn ${receipt.turn_instance_id} carries effect id ${receipt.settlement_effect_id}, which does not match its binding ${what === '' ? `(expected ${expectedEffectId(bound)})` : `(${what})`}; start a new turn id`,
      { ...details, receipt_effect_id: receipt.settlement_effect_id },
    );
  }
  const todoConflict = requested.todoId !== null && requested.todoId !== bound.todoId;
  const replanConflict =
    requested.replanObligationId !== null && requested.replanObligationId !== bound.replanObligationId;
  if (todoConflict || replanConflict) {
    const boundText =
      bound.todoId !== null
        ? `todo ${bound.todoId}`
        : bound.replanObligationId !== null
          ? `replan obligation ${bound.replanObligationId}`
          : 'no todo';
    const asked =
      requested.todoId !== null
        ? `--todo-id ${requested.todoId}`
        : `--replan-obligation-id ${requested.replanObligationId ?? ''}`;
    throw new LoopxError(
      'heartbeat_receipt_binding_mismatch',
      `${step}: turn ${receipt.turn_instance_id} is bound by its heartbeat receipt to ${boundText}, but ${asked} was given; pass the bound ${bound.todoId !== null ? `--todo-id ${bound.todoId}` : 'binding'} or start a new turn id`,
      details,
    );
  }
  return bound;
}
