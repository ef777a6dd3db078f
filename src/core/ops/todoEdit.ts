import { registeredAgentsForGoal } from '../registry/agentIds';
import { isoSeconds } from '../clock';
import { isLoopxError, LoopxError } from '../errors';
import { applyStateEdit } from '../state/stateFile';
import type { OperationContext, TodoEditResult } from '../state/todos';
import { appendRolloutEvents, buildRolloutEvent, rolloutEventLogOf } from '../evidence/rolloutLog';
import { LOCK_FILE_SUFFIX, reclaimAbandonedLock } from '../fs/fileLock';
import { quotaGoalOf, requireStatePath, resolveGoal, type ResolvedGoal } from './goalHandle';
import type { OperationEnvironment } from './operation';
import { TodoEditResultSchema, type TodoEditOutput } from './todoFields';

/**
 * The locked edit pipeline of the todo operations: resolve the goal, run the pure edit inside one
 * locked compare-and-swap write of the state file (optionally behind the todo's task lease), append
 * the rollout event of a written edit, and shape the result as the edit's JSON contract.
 */

/**
 * The original's goal-not-found text for todo commands comes first (agents match it), then ours.
 */
export function withOriginalGoalText(error: unknown): unknown {
  if (isLoopxError(error, 'goal_not_found'))
    return new LoopxError(
      'goal_not_found',
      `state file is required when the goal is not resolvable from registry: ${error.message}`,
      error.details,
    );
  return error;
}

/** Edits whose rollout event (docs/turns.md#the-rollout-event-log) is appended after a written edit. */
const EVENT_KINDS = {
  todo_add: 'added',
  todo_claim: 'claimed',
  todo_update: 'updated',
  todo_complete: 'completed',
} as const;

/** Runs one edit as a locked compare-and-swap write of the goal's state file. */
export async function editTodos(
  env: OperationEnvironment,
  id: string,
  operation: string,
  edit: (stateText: string, context: OperationContext) => TodoEditResult,
  actorAgentId?: string,
  around?: LeaseWrap,
  options: { goal?: ResolvedGoal; recordEvent?: boolean } = {},
): Promise<TodoEditOutput> {
  let goal: ResolvedGoal;
  try {
    goal = options.goal ?? (await resolveGoal(env, id));
  } catch (error) {
    throw withOriginalGoalText(error);
  }
  const write = () => writeEdit(env, goal, operation, edit, actorAgentId, options.recordEvent !== false);
  return around === undefined ? write() : around(goal, write);
}

/** Runs a todo write behind the todo's task lease (the completion fence, or hard_lease's acquire-on-claim). */
export type LeaseWrap = (goal: ResolvedGoal, write: () => Promise<TodoEditOutput>) => Promise<TodoEditOutput>;

async function writeEdit(
  env: OperationEnvironment,
  goal: ResolvedGoal,
  operation: string,
  edit: (stateText: string, context: OperationContext) => TodoEditResult,
  actorAgentId: string | undefined,
  recordEvent: boolean,
): Promise<TodoEditOutput> {
  const statePath = requireStatePath(goal);
  const context = operationContextOf(goal, env, actorAgentId);
  // This command may append to the event log. A run of it killed while holding that lock left the
  // lock behind, and a rerun whose edit is a no-op would never take it: reclaim it now (dead holders only).
  if (recordEvent) reclaimAbandonedLock(`${rolloutEventLogOf(quotaGoalOf(goal).runtimeDir)}${LOCK_FILE_SUFFIX}`);
  const result = await applyStateEdit(statePath, (stateText) => edit(stateText, context), {
    operation,
    lock: { clock: env.clock, env: env.env },
  });
  const { todo, added_todos, ...summary } = result.summary;
  const kind = summary.operation;
  if (result.written && recordEvent && kind in EVENT_KINDS) {
    const eventKind = kind as keyof typeof EVENT_KINDS;
    await appendRolloutEvents(
      quotaGoalOf(goal).runtimeDir,
      [
        buildRolloutEvent({
          goalId: goal.goalId,
          eventKind,
          recordedAt: context.now,
          agentId: context.actorAgentId ?? todo.claimed_by ?? null,
          todoId: summary.todo_id,
          status: EVENT_KINDS[eventKind],
          summary: `${operation} ${summary.todo_id}`,
          details: { todo_id: summary.todo_id, role: todo.role, todo_status: todo.status },
        }),
      ],
      { lock: { clock: env.clock, env: env.env, operation } },
    );
  }
  return TodoEditResultSchema.parse({
    ok: true,
    goal_id: goal.goalId,
    state_file: statePath,
    ...summary,
    role: todo.role,
    section: todo.section,
    status: todo.status,
    claimed_by: todo.claimed_by,
    task_class: todo.task_class,
    todo: todo.text,
    ...(kind === 'todo_add'
      ? {
          added: result.added ?? true,
          already_exists: result.added === false,
          metadata_updated: result.added === false && result.changed,
          changed: undefined,
        }
      : {}),
    ...(kind === 'todo_complete' ? { completed: true } : {}),
    agent_id: context.actorAgentId ?? null,
    updated_at: result.changed ? context.now : null,
    written: result.written,
    todo_item: todo,
    added_todos,
  });
}

function operationContextOf(goal: ResolvedGoal, env: OperationEnvironment, actorAgentId?: string): OperationContext {
  const registered = registeredAgentsForGoal(goal.rawEntry);
  return {
    now: isoSeconds(env.clock.now()),
    goalId: goal.goalId,
    roster: registered.length > 0 ? registered : null,
    actorAgentId: actorAgentId ?? null,
  };
}
