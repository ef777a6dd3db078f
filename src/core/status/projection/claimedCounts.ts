import { todoTaskClass } from './todoTaskClass';

/**
 * The original's claimed-todo counts on a todo summary (loopx/control_plane/todos/todo_summary.py `compact_todo_group`,
 * its `_todo_group_lanes`): when at least one open todo (not done or deferred) of the role is claimed,
 * `claimed_open_count` (the open todos with a valid `claimed_by`, read with the original's `normalize_todo_claimed_by`)
 * `unclaimed_open_count` (the other open todos), and of the claimed ones those actionable (open, and a `resume_when`
 * only when it holds) of class advancement (`claimed_advancement_open_count`) and monitor
 * (`claimed_monitor_open_count`), the class read as the original reads it (projection/todoTaskClass.ts); absent
 * otherwise.
 */

export interface ClaimedCounts {
  claimed_open_count: number;
  unclaimed_open_count: number;
  claimed_advancement_open_count: number;
  claimed_monitor_open_count: number;
}

export interface CountedTodo {
  status: string;
  claimed_by: string | null;
  task_class: string | null;
  action_kind?: string;
  text: string;
  /** The original's `todo_item_is_actionable_open`. */
  actionable: boolean;
}

const AGENT = /^[a-z][a-z0-9_.:@-]{0,79}$/;

/** contract.py `normalize_todo_claimed_by`: whitespace collapsed, lower-cased, spaces to `-`, the agent pattern. */
export function normalizedClaim(value: string | null): string | null {
  const candidate = (value ?? '')
    .split(/\s+/u)
    .filter((part) => part !== '')
    .join('-')
    .toLowerCase();
  return candidate !== '' && AGENT.test(candidate) ? candidate : null;
}

export function claimedCounts(todos: readonly CountedTodo[]): ClaimedCounts | null {
  const open = todos.filter((todo) => todo.status !== 'done' && todo.status !== 'deferred');
  const claimed = open.filter((todo) => normalizedClaim(todo.claimed_by) !== null);
  if (claimed.length === 0) return null;
  const actionableOf = (taskClass: string): number =>
    claimed.filter((todo) => todo.actionable && todoTaskClass(todo) === taskClass).length;
  return {
    claimed_open_count: claimed.length,
    unclaimed_open_count: open.length - claimed.length,
    claimed_advancement_open_count: actionableOf('advancement_task'),
    claimed_monitor_open_count: actionableOf('continuous_monitor'),
  };
}
