import { normalizedClaim } from './claimedCounts';
import { isWatchOnly, monitorFields } from './monitorDue';
import { decisionScope, todoId } from './standingDecisionAuthority';
import { collapseWhitespace } from './text';
import { todoTaskClass } from './todoTaskClass';
import type { CompactTodo, ListedTodo } from './todoLists';

/**
 * The closure and succession reports of a todo summary, as the original's `compact_todo_group`
 * (loopx/control_plane/todos/todo_summary.py, handoff_gate.py) adds them beside its lists. Over every todo of the role
 * (`done` there is status done or deferred; the done lane is status done):
 * - watch-only monitors: open actionable `continuous_monitor` todos with `watch_only=true`; when there is one,
 *   `watch_only_monitor_count` and `convergence_open_count` (open todos that are not watch-only monitors);
 * - `recent_completed_advancement_items`: done `advancement_task` todos with a `completed_at`, newest
 *   (`updated_at`, else `completed_at`, then position) first, at most 16, without `note`/`evidence`/`reason`;
 * - succession gaps (`completed_without_successor_count`, `_items` (5) and `todo_succession_warning`): done
 *   `advancement_task` todos the original tracks (one of its lifecycle keys is read: `claimed_by`, `completed_at`,
 *   `updated_at`, `action_kind`, …) without `no_followup=true` and without a successor: `successor_todo_ids`,
 *   `superseded_by`, or an `advancement_task` of the role whose `unblocks_todo_id` or `resume_when=todo_done:` names it;
 * - `handoff_gates`: todos with `excluded_agents` and an `unblocks_todo_id`, each in a state (superseded, deferred,
 *   blocking, cleared with no follow-up, with or without a successor), by position;
 * - `source_proof`: when no open todo but watch-only monitors and no deferred one is left (`derived`: the role's
 *   section has a heading); `terminal_closure_proof`: when besides every todo is done (or a watch-only monitor), no
 *   succession gap and no handoff gate owes a route replan (an open gate labelled stale handoff closeout);
 *   `closure_intent`: when a closed todo says `no_followup=true`;
 * - `active_next_action_items` (and `_executable_items`): open todos (executable ones) the Next Action's first three
 *   entries name by todo id, only when there is one.
 * The monitor-due counts are projection/monitorDue.ts (they depend on the time of the read).
 */

export interface TodoSuccessionFields {
  watch_only_monitor_count?: number;
  convergence_open_count?: number;
  recent_completed_advancement_items?: Record<string, unknown>[];
  source_proof?: { schema_version: 'todo_source_proof_v0'; role: string; item_count: number; derived: boolean };
  terminal_closure_proof?: Record<string, unknown>;
  closure_intent?: { schema_version: 'todo_closure_intent_v0'; kind: 'no_followup'; derived: true; count: number };
  handoff_gates?: Record<string, unknown>[];
  completed_without_successor_count?: number;
  completed_without_successor_items?: Record<string, unknown>[];
  todo_succession_warning?: Record<string, unknown>;
  active_next_action_items?: Record<string, unknown>[];
  active_next_action_executable_items?: Record<string, unknown>[];
}

const RECENT_COMPLETED = 16;
const SUCCESSION_LISTED = 5;
const TODO_ID_TOKEN = /\btodo_[A-Za-z0-9_-]+\b/gu;
const RESUME_WHEN = /^[a-z][a-z0-9_-]{0,31}(?::[a-z0-9_.:@-]{1,96})?$/u;
const RESUME_PR_MERGED = /^pr_merged:(?:(?:[a-z0-9_.-]{1,80})\/(?:[a-z0-9_.-]{1,100}))?#[1-9][0-9]{0,8}$/u;
const ACTION_KIND = /^[a-z][a-z0-9_-]{0,63}$/u;
const CAPABILITY = /^[a-z][a-z0-9_:-]{0,63}$/u;
const TASK_DOMAIN = /^[a-z0-9][a-z0-9_.-]{0,63}$/u;
const CONTINUATION_POLICIES = new Set(['independent_handoff', 'same_agent_non_delivery']);
const SUCCESSION_WARNING_ACTION =
  'run loopx todo complete --no-follow-up for the completed Todo, or add/link a successor Todo before closing the slice; do not invent a user gate';
const GAP_ACTION = 'record no_followup=true or add/link a successor todo';
const STALE_CLOSEOUT_REASON = 'stale handoff closeout requires a bounded route continuation replan';

/** contract.py `normalize_todo_resume_when`. */
export function resumeWhen(value: string | undefined): string | null {
  const candidate = collapseWhitespace(value).toLowerCase();
  if (candidate === '') return null;
  return RESUME_PR_MERGED.test(candidate) || RESUME_WHEN.test(candidate) ? candidate : null;
}

/** contract.py `normalize_todo_id_list`: every todo id token, then the whole value, each once. */
function todoIdList(value: string | undefined): string[] {
  if (value === undefined) return [];
  const ids: string[] = [];
  for (const match of value.matchAll(TODO_ID_TOKEN)) {
    const id = todoId(match[0]);
    if (id !== null && !ids.includes(id)) ids.push(id);
  }
  const whole = todoId(value);
  if (whole !== null && !ids.includes(whole)) ids.push(whole);
  return ids;
}

/** The todo ids a Next Action entry names (status.py `active_next_action_todo_ids`). */
export function nextActionTodoIds(entries: readonly string[]): Set<string> {
  const ids = new Set<string>();
  for (const entry of entries)
    for (const match of entry.matchAll(TODO_ID_TOKEN)) {
      const id = todoId(match[0]);
      if (id !== null) ids.add(id);
    }
  return ids;
}

/** contract.py `normalize_todo_excluded_agents`: the valid agent tokens, sorted, each once. */
function excludedAgents(value: string | undefined): string[] {
  if (value === undefined) return [];
  const agents = new Set<string>();
  for (const part of value.split(',')) {
    const agent = normalizedClaim(part);
    if (agent !== null) agents.add(agent);
  }
  return [...agents].sort();
}

/** contract.py `normalize_todo_no_followup` / `normalize_todo_global_gate`: the boolean words, else unknown. */
function flag(value: string | undefined, extra: readonly string[] = []): boolean | undefined {
  const candidate = (value ?? '').trim().toLowerCase();
  if (['1', 'true', 'yes', 'y', ...extra].includes(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return undefined;
}

function noFollowUp(meta: Readonly<Record<string, string>>): boolean {
  return flag(meta['no_followup'], ['no_followup', 'no-followup']) === true;
}

function nonEmpty(value: string | undefined): boolean {
  return collapseWhitespace(value) !== '';
}

function capabilities(value: string | undefined): boolean {
  return (value ?? '')
    .split(/[,;|]/u)
    .some((raw) => CAPABILITY.test(collapseWhitespace(raw).toLowerCase().replaceAll('-', '_').replaceAll(' ', '_')));
}

/**
 * The keys `todo_item_is_succession_tracked_completion` looks for, each as the original's parser reads it (a key
 * whose value it does not read is absent). `task_repository`, `required_write_scopes` and `explore_result_node_refs`
 * are read as written (non-empty): their validators are not ported.
 */
function succession_tracked_keys(meta: Readonly<Record<string, string>>): boolean {
  const action = (meta['action_kind'] ?? '').trim().toLowerCase();
  return (
    (action !== '' && ACTION_KIND.test(action)) ||
    nonEmpty(meta['task_repository']) ||
    CONTINUATION_POLICIES.has((meta['continuation_policy'] ?? '').trim().toLowerCase()) ||
    normalizedClaim(meta['claimed_by'] ?? null) !== null ||
    nonEmpty(meta['completed_at']) ||
    nonEmpty(meta['updated_at']) ||
    nonEmpty(meta['required_write_scopes']) ||
    capabilities(meta['required_capabilities']) ||
    capabilities(meta['target_capabilities']) ||
    nonEmpty(meta['explore_result_node_refs']) ||
    decisionScope(meta['decision_scope']) !== null ||
    (meta['required_decision_scopes'] ?? '').split(/[,;|]/u).some((raw) => decisionScope(raw) !== null) ||
    todoId(meta['unblocks_todo_id']) !== null ||
    resumeWhen(meta['resume_when']) !== null ||
    normalizedClaim(meta['blocks_agent'] ?? null) !== null ||
    excludedAgents(meta['excluded_agents']).length > 0 ||
    flag(meta['global_gate'], ['global_gate', 'global-gate']) !== undefined
  );
}

function isDone(todo: ListedTodo): boolean {
  return todo.status === 'done' || todo.status === 'deferred';
}

/** The task class of a todo, read once per todo (its text patterns are looked at by several rules). */
const classes = new WeakMap<ListedTodo, string>();
function classOf(todo: ListedTodo): string {
  let taskClass = classes.get(todo);
  if (taskClass === undefined) {
    taskClass = todoTaskClass(todo);
    classes.set(todo, taskClass);
  }
  return taskClass;
}

/** Whether `candidate` (an advancement todo) unblocks or resumes on the todo `id`. */
function continues(candidate: ListedTodo, id: string): boolean {
  if (todoId(candidate.metadata['unblocks_todo_id']) === id) return true;
  const resume = resumeWhen(candidate.metadata['resume_when']) ?? '';
  const colon = resume.indexOf(':');
  return colon >= 0 && resume.slice(0, colon) === 'todo_done' && todoId(resume.slice(colon + 1)) === id;
}

/**
 * The advancement todos of the role that continue each todo id (their `unblocks_todo_id` or `resume_when=todo_done:`
 * names it), in list order: read once for all the todos `todo_successor_todo_ids` looks at.
 */
function continuations(todos: readonly ListedTodo[]): Map<string, string[]> {
  const byTarget = new Map<string, string[]>();
  for (const candidate of todos) {
    const id = todoId(candidate.todo_id);
    if (id === null || classOf(candidate) !== 'advancement_task') continue;
    const resume = resumeWhen(candidate.metadata['resume_when']) ?? '';
    const colon = resume.indexOf(':');
    const targets = [
      todoId(candidate.metadata['unblocks_todo_id']),
      colon >= 0 && resume.slice(0, colon) === 'todo_done' ? todoId(resume.slice(colon + 1)) : null,
    ];
    for (const target of targets) {
      if (target === null) continue;
      const list = byTarget.get(target) ?? [];
      if (!list.includes(id)) list.push(id);
      byTarget.set(target, list);
    }
  }
  return byTarget;
}

/** `todo_successor_todo_ids` (`continued`: `continuations` of the role's todos). */
function successorIds(todo: ListedTodo, continued: ReadonlyMap<string, readonly string[]>): string[] {
  const ids = todoIdList(todo.metadata['successor_todo_ids']);
  const superseded = todoId(todo.metadata['superseded_by']);
  if (superseded !== null && !ids.includes(superseded)) ids.push(superseded);
  const own = todoId(todo.todo_id);
  if (own === null) return ids;
  for (const id of continued.get(own) ?? []) if (id !== own && !ids.includes(id)) ids.push(id);
  return ids;
}

/** `_completed_succession_sort_key`, newest first (a stable sort, as Python's `reverse=True`). */
function newestFirst<T extends Record<string, unknown>>(items: T[]): T[] {
  const key = (item: T): string => String(item['updated_at'] || item['completed_at'] || '');
  return items.sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    if (ka !== kb) return ka < kb ? 1 : -1;
    return Number(b['index']) - Number(a['index']);
  });
}

function without(item: CompactTodo, keys: readonly string[]): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...item };
  for (const key of keys) delete copy[key];
  return copy;
}

/** handoff_gate.py `_successor_todo_ids`. */
function gateSuccessorIds(gate: ListedTodo, todos: readonly ListedTodo[]): string[] {
  const gateId = todoId(gate.todo_id);
  const superseded = todoId(gate.metadata['superseded_by']);
  const ids: string[] = superseded !== null ? [superseded] : [];
  if (gateId === null) return ids;
  for (const candidate of todos) {
    if (classOf(candidate) !== 'advancement_task') continue;
    const id = todoId(candidate.todo_id);
    if (id === null || id === gateId) continue;
    if ((id === superseded || continues(candidate, gateId)) && !ids.includes(id)) ids.push(id);
  }
  return ids;
}

/** handoff_gate.py `build_todo_handoff_gate_states`. */
function handoffGates(todos: readonly ListedTodo[], role: 'user' | 'agent'): Record<string, unknown>[] {
  const gates: Record<string, unknown>[] = [];
  const seen = new Set<string>();
  for (const todo of todos) {
    const excluded = excludedAgents(todo.metadata['excluded_agents']);
    const unblocks = todoId(todo.metadata['unblocks_todo_id']);
    if (excluded.length === 0 || unblocks === null) continue;
    const identity = `${todo.todo_id}\u0000${todo.text.trim()}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    const successors = gateSuccessorIds(todo, todos);
    const done = isDone(todo);
    const superseded = todoId(todo.metadata['superseded_by']);
    const state =
      superseded !== null
        ? 'superseded'
        : todo.status === 'deferred'
          ? 'deferred'
          : !done
            ? 'blocking'
            : noFollowUp(todo.metadata)
              ? 'cleared_no_followup'
              : successors.length > 0
                ? 'cleared_with_successor'
                : 'cleared_without_successor';
    const action = (todo.action_kind ?? '').trim().toLowerCase();
    const domain = (todo.metadata['task_domain'] ?? '').trim().toLowerCase();
    const policy = (todo.metadata['continuation_policy'] ?? '').trim().toLowerCase();
    const resume = resumeWhen(todo.metadata['resume_when']);
    const followUp = flag(todo.metadata['no_followup'], ['no_followup', 'no-followup']);
    const claim = normalizedClaim(todo.claimed_by);
    const nextDue = monitorFields(todo.metadata).next_due_at;
    const label = [
      action !== '' && ACTION_KIND.test(action) ? action : '',
      todo.priority !== null ? todo.title : '',
      todo.text,
    ]
      .filter((part) => part.trim() !== '')
      .join(' ')
      .toLowerCase();
    const staleCloseout = !done && label.includes('stale') && label.includes('handoff') && label.includes('closeout');
    const gate: Record<string, unknown> = {
      schema_version: 'todo_handoff_gate_v1',
      gate_state: state,
      index: todo.index,
      done,
      status: todo.status,
      text: todo.text.trim(),
      excluded_agents: excluded,
      successor_count: successors.length,
      todo_id: todo.todo_id,
      role,
      task_class: classOf(todo),
      ...(action !== '' && ACTION_KIND.test(action) ? { action_kind: action } : {}),
      ...(domain !== '' && TASK_DOMAIN.test(domain) ? { task_domain: domain } : {}),
      ...(nonEmpty(todo.metadata['task_repository'])
        ? { task_repository: (todo.metadata['task_repository'] as string).trim() }
        : {}),
      ...(CONTINUATION_POLICIES.has(policy) ? { continuation_policy: policy } : {}),
      ...(claim !== null ? { claimed_by: claim } : {}),
      unblocks_todo_id: unblocks,
      ...(resume !== null ? { resume_when: resume } : {}),
      ...(followUp !== undefined ? { no_followup: followUp } : {}),
      ...(superseded !== null ? { superseded_by: superseded } : {}),
      ...(staleCloseout
        ? { route_continuation_replan_required: true, route_continuation_reason: STALE_CLOSEOUT_REASON }
        : {}),
      ...(nextDue !== undefined ? { next_due_at: nextDue } : {}),
      ...(successors.length > 0 ? { successor_todo_ids: successors } : {}),
    };
    gates.push(Object.fromEntries(Object.entries(gate).filter(([, value]) => value !== '' && value !== null)));
  }
  return gates.sort(
    (a, b) =>
      (Number(a['index']) || 999999) - (Number(b['index']) || 999999) ||
      (String(a['todo_id']) < String(b['todo_id']) ? -1 : String(a['todo_id']) > String(b['todo_id']) ? 1 : 0),
  );
}

function priorityRank(priority: string | null): number {
  const match = /^P([0-4])/u.exec((priority ?? '').trim().toUpperCase());
  return match === null ? 50 : Number(match[1]);
}

export function todoSuccession(
  todos: readonly ListedTodo[],
  options: {
    role: 'user' | 'agent';
    sourceSection: string | null;
    /** The todo ids the Next Action's first entries name (`nextActionTodoIds`). */
    nextActionIds: ReadonlySet<string>;
    compact: (todo: ListedTodo) => CompactTodo;
  },
): TodoSuccessionFields {
  const { role, sourceSection, compact } = options;
  const open = [...todos.filter((t) => !isDone(t))].sort(
    (a, b) => priorityRank(a.priority) - priorityRank(b.priority) || a.index - b.index,
  );
  const done = todos.filter((t) => t.status === 'done');
  const deferredCount = todos.filter((t) => t.status === 'deferred').length;
  const actionable = (t: ListedTodo): boolean => t.status === 'open' && t.resumeHolds;
  const watchOnly = open.filter(
    (t) => actionable(t) && classOf(t) === 'continuous_monitor' && isWatchOnly(monitorFields(t.metadata)),
  );
  const watchOnlyIds = new Set(watchOnly.map((t) => todoId(t.todo_id)));
  const convergent = open.filter((t) => !watchOnlyIds.has(todoId(t.todo_id)));
  const noFollowUps = todos.filter((t) => isDone(t) && noFollowUp(t.metadata));
  const continued = continuations(todos);
  const gaps = newestFirst(
    done
      .filter(
        (t) =>
          classOf(t) === 'advancement_task' &&
          succession_tracked_keys(t.metadata) &&
          !noFollowUp(t.metadata) &&
          successorIds(t, continued).length === 0,
      )
      .map((t) => ({
        ...without(compact(t), ['note', 'evidence', 'reason']),
        succession_tracked: true,
        recommended_action: GAP_ACTION,
      })),
  );
  const recent = newestFirst(
    done
      .filter((t) => classOf(t) === 'advancement_task' && nonEmpty(t.metadata['completed_at']))
      .map((t) => without(compact(t), ['note', 'evidence', 'reason'])),
  ).slice(0, RECENT_COMPLETED);
  const gates = handoffGates(todos, role);
  const routeReplan = gates.some((gate) => gate['route_continuation_replan_required'] === true);
  const sourceValid = (sourceSection ?? '').trim() !== '';
  const named = (t: ListedTodo): boolean => options.nextActionIds.has(todoId(t.todo_id) ?? '');
  const nextActionCompact = (t: ListedTodo): Record<string, unknown> =>
    without(compact(t), ['note', 'evidence', 'reason', 'completed_at', 'updated_at', 'superseded_by']);
  const nextActionItems = open.filter(named);
  const nextActionExecutable = nextActionItems.filter((t) => actionable(t) && classOf(t) === 'advancement_task');
  const listedGaps = gaps.slice(0, SUCCESSION_LISTED);
  const out: TodoSuccessionFields = {};
  if (watchOnly.length > 0) {
    out.watch_only_monitor_count = watchOnly.length;
    out.convergence_open_count = convergent.length;
  }
  if (recent.length > 0) out.recent_completed_advancement_items = recent;
  if (convergent.length === 0 && deferredCount === 0)
    out.source_proof = { schema_version: 'todo_source_proof_v0', role, item_count: todos.length, derived: sourceValid };
  if (
    sourceValid &&
    done.length + watchOnly.length === todos.length &&
    convergent.length === 0 &&
    gaps.length === 0 &&
    !routeReplan
  )
    out.terminal_closure_proof = {
      schema_version: 'todo_terminal_closure_proof_v0',
      role,
      source_section: sourceSection,
      item_count: todos.length,
      all_todos_done: watchOnly.length === 0,
      monitor_open_count: watchOnly.length,
      successor_gap_count: 0,
      route_replan_count: 0,
      no_followup_count: noFollowUps.length,
      derived: true,
      ...(watchOnly.length > 0 ? { all_convergent_todos_done: true, watch_only_monitor_count: watchOnly.length } : {}),
    };
  if (noFollowUps.length > 0)
    out.closure_intent = {
      schema_version: 'todo_closure_intent_v0',
      kind: 'no_followup',
      derived: true,
      count: noFollowUps.length,
    };
  if (gates.length > 0) out.handoff_gates = gates;
  if (gaps.length > 0) {
    out.completed_without_successor_count = gaps.length;
    out.completed_without_successor_items = listedGaps;
    out.todo_succession_warning = {
      schema_version: 'todo_succession_warning_v0',
      reason_code: 'completed_advancement_without_successor',
      count: gaps.length,
      items: listedGaps,
      recommended_action: SUCCESSION_WARNING_ACTION,
    };
  }
  if (nextActionItems.length > 0) out.active_next_action_items = nextActionItems.map(nextActionCompact);
  if (nextActionExecutable.length > 0)
    out.active_next_action_executable_items = nextActionExecutable.map(nextActionCompact);
  return out;
}
