import { LoopxError } from '../errors';
import { completeTodo } from '../state/todos';
import { recordStepEvent, resolveChainBinding, stepEventRecorded, type TurnStep } from '../evidence/heartbeatChain';
import { checkTurnInstanceId } from '../quota/identity';
import { normalizeAgentId } from '../registry/agentIds';
import { crashCheckpoint } from '../turn/crashHook';
import { quotaGoalOf, resolveGoal, type ResolvedGoal } from './goalHandle';
import type { OperationEnvironment } from './operation';
import { editTodos, withOriginalGoalText } from './todoEdit';
import type { TodoCompleteOutput } from './todoFields';
import { completionFence } from './todoLease';

/**
 * A completion inside a heartbeat (docs/quota.md#heartbeat-receipts): the todo must be the one the
 * turn's receipt binds; the `todo_complete` event carries the settlement effect id; a retry of the
 * same step finds that event and writes nothing (the todo is not re-stamped).
 */
export async function completeInTurn(
  env: OperationEnvironment,
  args: {
    goalId: string;
    todoId: string;
    agentId?: string | undefined;
    turnInstanceId?: string | undefined;
    noFollowUp: boolean;
    leaseKey?: string | undefined;
    taskLeaseIdempotencyKey?: string | undefined;
    expectedVersion?: number | undefined;
    taskLeaseExpectedVersion?: number | undefined;
  },
  input: Parameters<typeof completeTodo>[1],
): Promise<TodoCompleteOutput> {
  if (args.agentId === undefined)
    throw new LoopxError(
      'usage',
      'todo complete --turn-instance-id checks the heartbeat receipt of one agent: pass --agent-id too',
    );
  const turnInstanceId = checkTurnInstanceId((args.turnInstanceId ?? '').trim());
  let goal: ResolvedGoal;
  try {
    goal = await resolveGoal(env, args.goalId);
  } catch (error) {
    throw withOriginalGoalText(error);
  }
  const agent = normalizeAgentId(args.agentId) ?? args.agentId;
  const step: TurnStep = {
    goalId: goal.goalId,
    goalDir: quotaGoalOf(goal).runtimeDir,
    agentId: agent,
    turnInstanceId,
  };
  const chain = await resolveChainBinding(step, { todoId: args.todoId, replanObligationId: null }, 'todo complete');
  const replay = await stepEventRecorded(step, chain, 'todo_complete');
  const output = await editTodos(
    env,
    args.goalId,
    'todo complete',
    (stateText, context) => {
      const result = completeTodo(stateText, input, context);
      // A replay keeps the file as it is: the completion of this turn is already recorded.
      return replay ? { ...result, text: stateText, changed: false } : result;
    },
    args.agentId,
    completionFence(env, args.todoId, args.agentId, args),
    { goal, recordEvent: false },
  );
  if (!replay) crashCheckpoint(env.env, 'todo_complete:effect');
  const recorded = await recordStepEvent(step, chain, {
    kind: 'todo_complete',
    clock: env.clock,
    status: 'completed',
    summary: `todo ${args.todoId} completed in turn ${turnInstanceId}`,
    details: { no_followup: args.noFollowUp },
    lock: { clock: env.clock, env: env.env, operation: 'todo complete' },
  });
  return {
    ...output,
    ...(replay ? { written: false, updated_at: null } : {}),
    idempotent_replay: replay,
    heartbeat_receipt: chain.receipt,
    rollout_event: recorded.event,
  };
}
