import type { TodoItem } from '../state/document';

/**
 * When a set-aside todo resumes: its `resume_when` condition read back (`todo_done:<todo_id>`,
 * `pr_merged:[owner/repo]#<n>`, `capacity_available:<capability>`). The grammar a writer checks and
 * normalizes (`RESUME_CONDITION`, `supportedResumeWhen`) is the state file's, beside the edits that write
 * it (state/todos.ts): this folder reads the parsed state file, so it sits above `state/`.
 *
 * Of the conditions only `todo_done:<id>` can be checked from the state file; `pr_merged:#n` needs a forge
 * LoopX does not ask and `capacity_available:<capability>` a host capability it is not told, so neither
 * ever holds here. The readers ask three questions, kept side by side as they differ (each pinned in
 * `test/unit/todo/resume.test.ts`):
 * - `deferredTodoDue`: is this deferred todo due? (`quota should-run`'s successor fallback)
 * - `deferredTodoDueWithQuota`: the same, and a bare `capacity_available` (written before the original's
 *   grammar was followed) holds while the goal's quota has capacity (`global-todos`' `deferred_ready`)
 * - `openTodoResumeHolds`: may this open todo run, given its `resume_when`? (status's actionable open todo,
 *   LoopX's `todo_item_is_actionable_open`: no condition holds; the condition is read trimmed)
 */

const TODO_DONE = /^todo_done:(.+)$/;

/** The todo a `todo_done:<id>` condition waits on, or null for any other condition. */
export function resumeTodoDoneId(condition: string): string | null {
  return TODO_DONE.exec(condition)?.[1] ?? null;
}

/** Whether `condition` resumes once the todo `todoId` is done (a successor of it, for the goal frontier). */
export function resumesOnTodo(condition: string | undefined, todoId: string): boolean {
  return condition !== undefined && resumeTodoDoneId(condition) === todoId;
}

type TodoFacts = Pick<TodoItem, 'todoId' | 'status'>;

function todoDone(todos: readonly TodoFacts[], todoId: string): boolean {
  return todos.some((todo) => todo.todoId === todoId && todo.status === 'done');
}

/** Whether a deferred todo's `resume_when` holds now: only `todo_done:<id>` with that todo done (any section). */
export function deferredTodoDue(condition: string | undefined, todos: readonly TodoFacts[]): boolean {
  if (condition === undefined) return false;
  const id = resumeTodoDoneId(condition);
  return id !== null && todoDone(todos, id);
}

/**
 * `deferredTodoDue`, and a bare `capacity_available` holds while the goal has capacity (`quotaState`: the
 * goal's quota state, absent when it has no quota): slots left in the window and the goal not paused. An open
 * gate (operator_gate) does not take capacity away; it is reported by the todo's own gate reasons.
 */
export function deferredTodoDueWithQuota(
  condition: string | undefined,
  todos: readonly TodoFacts[],
  quotaState: string | undefined,
): boolean {
  if (condition === 'capacity_available')
    return quotaState !== undefined && quotaState !== 'throttled' && quotaState !== 'paused';
  return deferredTodoDue(condition, todos);
}

/** Whether an open todo's `resume_when` lets it run: none (or blank) does; else as `deferredTodoDue`, read trimmed. */
export function openTodoResumeHolds(condition: string | undefined, todos: readonly TodoFacts[]): boolean {
  const trimmed = (condition ?? '').trim();
  if (trimmed === '') return true;
  return deferredTodoDue(trimmed, todos);
}
