import { z } from 'zod';
import { LoopxError } from '../errors';
import { refuseCredentials } from '../privacy/refuse';

/**
 * Settlement identity (docs/quota.md): the plain-string `effect_id` that keys one turn's settlement,
 * so a retried spend replays instead of writing twice.
 *   todo-bound    `<goal>:<agent>:<todo_id>:<turn>`
 *   replan-bound  `<goal>:<agent>:autonomous_replan:<replan-id>:<turn>`
 *   unbound       `<goal>:<agent>::<turn>`
 */

export const SETTLEMENT_IDENTITY_SCHEMA = 'quota_settlement_identity_v0';
export const TURN_INSTANCE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/;
export const REPLAN_OBLIGATION_ID_PATTERN = /^replan-[0-9a-f]{16}$/;

export const SettlementIdentitySchema = z.looseObject({
  schema_version: z.literal(SETTLEMENT_IDENTITY_SCHEMA),
  effect_id: z.string().min(1),
  goal_id: z.string(),
  agent_id: z.string(),
  todo_id: z.string().optional(),
  replan_obligation_id: z.string().optional(),
  turn_instance_id: z.string(),
});
export type SettlementIdentity = z.infer<typeof SettlementIdentitySchema>;

export interface SettlementBinding {
  goalId: string;
  agentId: string;
  turnInstanceId: string;
  todoId?: string | null | undefined;
  replanObligationId?: string | null | undefined;
}

export function checkTurnInstanceId(value: string): string {
  if (!TURN_INSTANCE_ID_PATTERN.test(value)) {
    throw new LoopxError(
      'quota_turn_instance_id_invalid',
      `turn instance id ${JSON.stringify(value)} must start with a letter or digit and have at most 128 characters from A-Z, a-z, 0-9, ".", "_", ":" and "-"`,
      { turn_instance_id: value },
    );
  }
  // A turn id is written into the run index, the reservations and the event log, and looked up there
  // as written: one that holds a credential (an `sk-proj-…` key fits the pattern) is refused, never stored.
  refuseCredentials({ 'turn instance id': value });
  return value;
}

/** Builds the identity of one turn's settlement; refuses a binding to both a todo and a replan obligation. */
export function settlementIdentity(binding: SettlementBinding): SettlementIdentity {
  const todoId = nonEmpty(binding.todoId);
  const replanId = nonEmpty(binding.replanObligationId);
  if (todoId !== null && replanId !== null) {
    throw new LoopxError(
      'quota_settlement_binding_conflict',
      `a settlement binds either a todo (${todoId}) or a replan obligation (${replanId}), not both`,
      { todo_id: todoId, replan_obligation_id: replanId },
    );
  }
  if (binding.agentId.trim() === '')
    throw new LoopxError('quota_settlement_agent_required', 'a turn-scoped settlement needs an agent id (--agent-id)');
  const turn = checkTurnInstanceId(binding.turnInstanceId);
  if (replanId !== null && !REPLAN_OBLIGATION_ID_PATTERN.test(replanId)) {
    throw new LoopxError(
      'quota_replan_obligation_id_invalid',
      `replan obligation id ${JSON.stringify(replanId)} must look like replan-<16 hex digits>`,
      { replan_obligation_id: replanId },
    );
  }
  const bindingPart = todoId !== null ? todoId : replanId !== null ? `autonomous_replan:${replanId}` : '';
  const identity: SettlementIdentity = {
    schema_version: SETTLEMENT_IDENTITY_SCHEMA,
    effect_id: `${binding.goalId}:${binding.agentId}:${bindingPart}:${turn}`,
    goal_id: binding.goalId,
    agent_id: binding.agentId,
    turn_instance_id: turn,
  };
  if (todoId !== null) identity.todo_id = todoId;
  if (replanId !== null) identity.replan_obligation_id = replanId;
  return identity;
}

/** An absent effect id matches anything; two present ones must be equal. */
export function effectIdsMatch(expected: string | null | undefined, actual: string | null | undefined): boolean {
  if (expected === null || expected === undefined || expected === '') return true;
  return expected === actual;
}

function nonEmpty(value: string | null | undefined): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}
