import { normalizedClaim } from './claimedCounts';
import { compactTodoItem, type TodoRecord } from './compactTodoItem';
import { todoTaskClass } from './todoTaskClass';

/**
 * The original's todo lists on a status todo summary (loopx/control_plane/todos/todo_summary.py `compact_todo_group`
 * and its `_todo_group_lanes`), each todo in the shape of its `compact_todo_item`. The lanes, over every todo of the
 * role:
 * - open: not done and not deferred (the original's `done` is true for both); projected open: the open ones by
 *   priority (P0 first, none last), then by position (`todo_projection_sort_key`); deferred likewise;
 * - executable: projected open todos actionable (status open, and a `resume_when` only when it holds) of class
 *   `advancement_task`; monitor: the same of class `continuous_monitor` (the class read as projection/todoTaskClass.ts);
 * - claimed / unclaimed: projected open todos with and without a valid `claimed_by`; the claimed lists keep at most
 *   16, shared fairly between claimants (`todo_claimed_visibility_items`);
 * - blocker: projected open todos of status blocked and class `blocker`; resume-blocked: projected open todos whose
 *   `resume_when` does not hold.
 * Always present: `first_open_items` (3), `first_executable_items` (3), `monitor_open_items` (all),
 * `unclaimed_priority_open_items` (8), `claimed_open_items`, `claimed_advancement_open_items`,
 * `claimed_monitor_open_items` (16 each), `backlog_items` (8), `executable_backlog_items` (8), `deferred_items` (8),
 * `deferred_resume_candidates` (deferred todos whose `resume_when` holds, 8). Only when not empty: `blocker_open_count`
 * and `blocker_items`, `resume_blocked_count` and `resume_blocked_items` (8).
 * The monitor-due lists and counts are projection/monitorDue.ts (they depend on the time of the read); the closure
 * and succession reports projection/todoSuccession.ts (`more`: built with the same `compact_todo_item`).
 */

export interface ListedTodo {
  index: number;
  status: string;
  text: string;
  todo_id: string;
  priority: string | null;
  title: string;
  claimed_by: string | null;
  task_class: string | null;
  action_kind?: string;
  /** `resume_when` holds (true when the todo has none). */
  resumeHolds: boolean;
  /** The todo has a `resume_when`. */
  hasResumeWhen: boolean;
  /** Its metadata comment's keys, decoded. */
  metadata: Readonly<Record<string, string>>;
  /** The original's structured todo (projection/compactTodoItem.ts), which the lists show compacted. */
  structured: TodoRecord;
}

/** The original's `compact_todo_item` (projection/compactTodoItem.ts). */
export type CompactTodo = TodoRecord;

export interface TodoLists {
  first_open_items: CompactTodo[];
  first_executable_items: CompactTodo[];
  monitor_open_items: CompactTodo[];
  unclaimed_priority_open_items: CompactTodo[];
  claimed_open_items: CompactTodo[];
  claimed_advancement_open_items: CompactTodo[];
  claimed_monitor_open_items: CompactTodo[];
  backlog_items: CompactTodo[];
  executable_backlog_items: CompactTodo[];
  deferred_items: CompactTodo[];
  deferred_resume_candidates: CompactTodo[];
  blocker_open_count?: number;
  blocker_items?: CompactTodo[];
  resume_blocked_count?: number;
  resume_blocked_items?: CompactTodo[];
}

const FIRST = 3;
const BACKLOG = 8;
const VISIBILITY = 16;
const DEFERRED = 8;

function priorityRank(priority: string | null): number {
  const match = /^P([0-4])/.exec((priority ?? '').trim().toUpperCase());
  return match === null ? 50 : Number(match[1]);
}

function projected<T extends ListedTodo>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => priorityRank(a.priority) - priorityRank(b.priority) || a.index - b.index);
}

/** projection.py `todo_claimed_visibility_items`: at most `limit`, each claimant's first ones first, in list order. */
export function claimedVisibility<T extends ListedTodo>(items: readonly T[], limit: number): T[] {
  if (items.length <= limit) return items.slice(0, limit);
  const buckets = new Map<string, T[]>();
  for (const item of items) {
    const claim = normalizedClaim(item.claimed_by);
    if (claim === null) continue;
    const bucket = buckets.get(claim) ?? [];
    bucket.push(item);
    buckets.set(claim, bucket);
  }
  if (buckets.size === 0) return items.slice(0, limit);
  const cap = Math.max(1, Math.floor(limit / buckets.size));
  const selected = new Set<T>();
  for (const bucket of buckets.values()) {
    for (const item of bucket.slice(0, cap)) {
      if (selected.size >= limit) break;
      selected.add(item);
    }
    if (selected.size >= limit) break;
  }
  for (const item of items) {
    if (selected.size >= limit) break;
    selected.add(item);
  }
  return items.filter((item) => selected.has(item)).slice(0, limit);
}

/** The original's `projected_open_items`: the todos not done and not deferred, by priority then position. */
export function projectedOpenTodos<T extends ListedTodo>(todos: readonly T[]): T[] {
  return projected(todos.filter((t) => t.status !== 'done' && t.status !== 'deferred'));
}

export function todoLists<M extends object = object>(
  todos: readonly ListedTodo[],
  more: (compact: (item: ListedTodo) => CompactTodo) => M = () => ({}) as M,
): TodoLists & M {
  const compacted = new Map<ListedTodo, CompactTodo>();
  const compact = (item: ListedTodo): CompactTodo => {
    let found = compacted.get(item);
    if (found === undefined) {
      found = compactTodoItem(item.structured);
      compacted.set(item, found);
    }
    return found;
  };
  const list = (items: readonly ListedTodo[]): CompactTodo[] => items.map(compact);
  const open = projectedOpenTodos(todos);
  const deferred = projected(todos.filter((t) => t.status === 'deferred'));
  const actionable = (t: ListedTodo): boolean => t.status === 'open' && t.resumeHolds;
  const executable = open.filter((t) => actionable(t) && todoTaskClass(t) === 'advancement_task');
  const monitor = open.filter((t) => actionable(t) && todoTaskClass(t) === 'continuous_monitor');
  const claimed = open.filter((t) => normalizedClaim(t.claimed_by) !== null);
  const unclaimed = open.filter((t) => normalizedClaim(t.claimed_by) === null);
  const claimedOf = (taskClass: string): ListedTodo[] =>
    claimed.filter((t) => actionable(t) && todoTaskClass(t) === taskClass);
  const blockers = open.filter((t) => t.status === 'blocked' && todoTaskClass(t) === 'blocker');
  const resumeBlocked = open.filter((t) => t.hasResumeWhen && !t.resumeHolds);
  return {
    first_open_items: list(open.slice(0, FIRST)),
    first_executable_items: list(executable.slice(0, FIRST)),
    monitor_open_items: list(monitor),
    unclaimed_priority_open_items: list(unclaimed.slice(0, BACKLOG)),
    claimed_open_items: list(claimedVisibility(claimed, VISIBILITY)),
    claimed_advancement_open_items: list(claimedVisibility(claimedOf('advancement_task'), VISIBILITY)),
    claimed_monitor_open_items: list(claimedVisibility(claimedOf('continuous_monitor'), VISIBILITY)),
    backlog_items: list(open.slice(0, BACKLOG)),
    executable_backlog_items: list(executable.slice(0, BACKLOG)),
    deferred_items: list(deferred.slice(0, DEFERRED)),
    deferred_resume_candidates: list(deferred.filter((t) => t.hasResumeWhen && t.resumeHolds).slice(0, DEFERRED)),
    ...(blockers.length > 0 ? { blocker_open_count: blockers.length, blocker_items: list(blockers) } : {}),
    ...(resumeBlocked.length > 0
      ? { resume_blocked_count: resumeBlocked.length, resume_blocked_items: list(resumeBlocked.slice(0, DEFERRED)) }
      : {}),
    ...more(compact),
  };
}
