/**
 * The original's claimed-todo counts on a todo summary (loopx/control_plane/todos/todo_summary.py `compact_todo_group`,
 * its `_todo_group_lanes`): when at least one open todo (not done or deferred) of the role is claimed,
 * `claimed_open_count` (the open todos with a valid `claimed_by`, read with the original's `normalize_todo_claimed_by`)
 * and `unclaimed_open_count` (the other open todos); absent otherwise. The original adds
 * `claimed_advancement_open_count` and `claimed_monitor_open_count` beside them, which infer a task class from the text
 * when a todo has none; ours does not carry those two (docs/compatibility.md, `todo-summary-lists`).
 */

export interface ClaimedCounts {
  claimed_open_count: number;
  unclaimed_open_count: number;
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

export function claimedCounts(todos: readonly { status: string; claimed_by: string | null }[]): ClaimedCounts | null {
  const open = todos.filter((todo) => todo.status !== 'done' && todo.status !== 'deferred');
  const claimed = open.filter((todo) => normalizedClaim(todo.claimed_by) !== null).length;
  if (claimed === 0) return null;
  return { claimed_open_count: claimed, unclaimed_open_count: open.length - claimed };
}
