import { normalizedClaim } from './claimedCounts';
import { decisionScope, todoId, type DecisionScope } from './standingDecisionAuthority';
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
 * Not carried: the monitor-due lists and counts (they depend on the time of the read).
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
}

/** The original's `compact_todo_item`, for the fields ours reads: absent keys are the original's `None`. */
export interface CompactTodo {
  index: number;
  done: boolean;
  text: string;
  schema_version: 'todo_item_v0';
  todo_id: string;
  role: 'user' | 'agent';
  status: string;
  priority?: string;
  title?: string;
  archive_state: 'active';
  source_section: string | null;
  task_class: string;
  action_kind?: string;
  claimed_by?: string;
  decision_scope?: DecisionScope;
  required_decision_scopes?: DecisionScope[];
  bound_agent?: string;
  goal_bound?: boolean;
  blocks_agent?: string;
  global_gate?: boolean;
  unblocks_todo_id?: string;
  created_by?: string;
  last_actor_agent_id?: string;
  note?: string;
  evidence?: string;
  reason?: string;
  completed_at?: string;
  completion_turn_key?: string;
  updated_at?: string;
  superseded_by?: string;
}

/** Keys the original's `compact_todo_item` copies as the parser read them. */
const RAW_KEYS = [
  'created_by',
  'last_actor_agent_id',
  'note',
  'evidence',
  'reason',
  'completed_at',
  'completion_turn_key',
  'updated_at',
  'superseded_by',
] as const;

/** contract.py `normalize_todo_global_gate` (also `goal_bound`'s). */
function flag(value: string | undefined): boolean | undefined {
  const candidate = (value ?? '').trim().split(/\s+/u).join(' ').toLowerCase();
  if (['1', 'true', 'yes', 'y', 'global_gate', 'global-gate'].includes(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return undefined;
}

/** contract.py `normalize_todo_required_decision_scopes`: split on `,;|`, each read as a scope, the first of each. */
function requiredScopes(value: string | undefined): DecisionScope[] {
  const scopes: DecisionScope[] = [];
  const seen = new Set<string>();
  for (const raw of (value ?? '').split(/[,;|]/u)) {
    const scope = decisionScope(raw);
    if (scope === null) continue;
    const identity = `${scope.kind}\u0000${scope.granularity}\u0000${scope.scope_key}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    scopes.push(scope);
  }
  return scopes;
}

/** The per-todo fields of `compact_todo_item` after `claimed_by`, each only when the original reads a value. */
function metadataFields(meta: Readonly<Record<string, string>>): Partial<CompactTodo> {
  const out: Partial<CompactTodo> = {};
  const scope = decisionScope(meta['decision_scope']);
  if (scope !== null) out.decision_scope = scope;
  const required = requiredScopes(meta['required_decision_scopes']);
  if (required.length > 0) out.required_decision_scopes = required;
  const boundAgent = normalizedClaim(meta['bound_agent'] ?? null);
  if (boundAgent !== null) out.bound_agent = boundAgent;
  const goalBound = flag(meta['goal_bound']);
  if (goalBound !== undefined) out.goal_bound = goalBound;
  const blocksAgent = normalizedClaim(meta['blocks_agent'] ?? null);
  if (blocksAgent !== null) out.blocks_agent = blocksAgent;
  const globalGate = flag(meta['global_gate']);
  if (globalGate !== undefined) out.global_gate = globalGate;
  const unblocks = todoId(meta['unblocks_todo_id']);
  if (unblocks !== null) out.unblocks_todo_id = unblocks;
  for (const key of RAW_KEYS) {
    const value = meta[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}

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

/** The original's `compact_todo_item` of one todo, for the fields ours reads. */
export function compactTodo(item: ListedTodo, role: 'user' | 'agent', sourceSection: string | null): CompactTodo {
  const claim = normalizedClaim(item.claimed_by);
  return {
    index: item.index,
    done: item.status === 'done' || item.status === 'deferred',
    text: item.text,
    schema_version: 'todo_item_v0',
    todo_id: item.todo_id,
    role,
    status: item.status,
    ...(item.priority !== null ? { priority: item.priority, title: item.title } : {}),
    archive_state: 'active',
    source_section: sourceSection,
    task_class: todoTaskClass(item),
    ...(item.action_kind !== undefined && item.action_kind.trim() !== ''
      ? { action_kind: item.action_kind.trim().toLowerCase() }
      : {}),
    ...(claim !== null ? { claimed_by: claim } : {}),
    ...metadataFields(item.metadata),
  };
}

export function todoLists(
  todos: readonly ListedTodo[],
  role: 'user' | 'agent',
  sourceSection: string | null,
): TodoLists {
  const list = (items: readonly ListedTodo[]): CompactTodo[] =>
    items.map((item) => compactTodo(item, role, sourceSection));
  const open = projected(todos.filter((t) => t.status !== 'done' && t.status !== 'deferred'));
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
  };
}
