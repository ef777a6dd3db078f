import { normalizedClaim } from '../projection/claimedCounts';
import { todoId } from '../projection/standingDecisionAuthority';
import { publicSafeCompact } from '../projection/text';
import { attachHandoffNote, type TodoRow } from '../projection/handoffNote';
import { compareCodePoints } from './statusOrder';

/**
 * The status payload's `agent_management_projection` (the original's `agent_management_projection_v0`,
 * loopx/control_plane/agents/management_projection.py `build_agent_management_projection`): a read-only view of each
 * agent built from the payload, present only when it has agents.
 * - Agents: every registered agent of the listed goals (`coordination.registered_agents`, goals in id order,
 *   `agent_model: peer_v1`), and every agent a listed todo names (its `claimed_by`, else its `agent_id`).
 * - Todos, in this order, each identity (goal, todo id, index, text) once: per item its agent todo lists
 *   (`first_open_items`, `backlog_items`, `unclaimed_priority_open_items`, the claimed lists, `monitor_open_items`,
 *   `blocker_items`, `resume_blocked_items`, then the summary's budgeted `items`, `executable_backlog_items`,
 *   `deferred_items`, `deferred_resume_candidates`), then the todo index's agent rows not from the event log.
 * - Per agent (by id, 24 at most): `state` (no todo: unknown; none open: waiting; else by the current todo: blocked,
 *   monitoring or running), `current_todo` (the open todo to run first: runnable advancement work, then blocker,
 *   other, blocked, monitor; then priority P0…P2, position, id) as a `todo_row_v0`, `next_action`, `last_activity_at`
 *   (newest `updated_at`/`latest_event_at` of its first 8 todos), one evidence and one handoff ref, its first goal,
 *   `blocked_on` (its first blocked todo when not the current one), `workspace_ref` (from a current todo's write
 *   scopes), and `stale_claim_hint` for a claimed open current todo that is not a monitor: no activity time
 *   (`activity_missing`), one that does not parse, or one older than 36 hours (`suspected_stale`: depends on `now`).
 * `generated_at` is the time of the answer.
 */

export const AGENT_MANAGEMENT_PROJECTION_SCHEMA_VERSION = 'agent_management_projection_v0';
const MAX_AGENT_ROWS = 24;
const MAX_AGENT_TODOS = 8;
const MAX_REFS = 1;
const MAX_WORKSPACE_SCOPES = 4;
const STALE_CLAIM_THRESHOLD_HOURS = 36;

const LIST_KEYS_BEFORE_ITEMS = [
  'first_open_items',
  'backlog_items',
  'unclaimed_priority_open_items',
  'claimed_open_items',
  'claimed_advancement_open_items',
  'claimed_monitor_open_items',
  'monitor_open_items',
  'blocker_items',
  'resume_blocked_items',
] as const;
const LIST_KEYS_AFTER_ITEMS = ['executable_backlog_items', 'deferred_items', 'deferred_resume_candidates'] as const;

const PRIORITY_RANK: Record<string, number> = { P0: 0, 'P0-LOCAL': 0, 'P0-USER': 0, 'P0-DECISION': 0, P1: 1, P2: 2 };

/** A goal's todos as the projection reads them: its agent todo lists and its budgeted todos (`goalAgentRows`). */
export interface AgentTodoSource {
  goalId: string;
  /** The item's agent todo summary (its lists), or null. */
  agentTodos: Record<string, unknown> | null;
  /** The goal's budgeted agent todos an agent claims (reports/todoIndex.ts `GoalTodoIndex.budget`). */
  budget: readonly TodoRow[];
}

export interface AgentManagementSource extends AgentTodoSource {
  /** The registry goal's `coordination.registered_agents` as written. */
  registeredAgents: readonly unknown[];
  /**
   * `goalAgentRows` of this source, when the caller keeps them (status keeps them with the goal's item: they depend on
   * nothing else); computed here otherwise.
   */
  rows?: readonly TodoRow[];
}

function compact(value: unknown, limit = 220): string | null {
  if (value === null || value === undefined || value === false || value === '') return null;
  return publicSafeCompact(String(value), limit);
}

function empty(value: unknown): boolean {
  return (
    value === null ||
    value === undefined ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0)
  );
}

function withoutEmpty(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(row).filter(([, value]) => !empty(value)));
}

function str(value: unknown): string {
  return value === null || value === undefined || value === false || value === '' || value === 0 ? '' : String(value);
}

function todoStatus(todo: TodoRow): string {
  const status = str(todo['status']).trim().toLowerCase();
  if (status !== '') return status;
  return todo['done'] ? 'done' : 'open';
}
function isDone(todo: TodoRow): boolean {
  return Boolean(todo['done']) || ['done', 'archive', 'archived'].includes(todoStatus(todo));
}
function priorityRank(todo: TodoRow): number {
  return PRIORITY_RANK[str(todo['priority']).trim().toUpperCase()] ?? 9;
}
function indexRank(todo: TodoRow): number {
  const value = todo['index'];
  return typeof value === 'number' && Number.isInteger(value) ? value : 999_999;
}
function isMonitor(todo: TodoRow): boolean {
  return todo['task_class'] === 'continuous_monitor' || str(todo['action_kind']).toLowerCase().includes('monitor');
}
function isLaneNextAction(todo: TodoRow): boolean {
  return (
    todo['schema_version'] === 'agent_lane_next_action_v0' ||
    str(todo['source']).endsWith('agent_lane_next_action') ||
    Boolean(todo['selected_by'])
  );
}
function executionRank(todo: TodoRow): number {
  if (todo['task_class'] === 'blocker') return 0;
  if (todoStatus(todo) === 'blocked') return 2;
  if (isMonitor(todo)) return 3;
  return 1;
}

function compareKeys(a: readonly (number | string)[], b: readonly (number | string)[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    if (x === y) continue;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    return String(x) < String(y) ? -1 : 1;
  }
  return 0;
}
function sortKey(todo: TodoRow): (number | string)[] {
  return [isDone(todo) ? 1 : 0, priorityRank(todo), indexRank(todo), str(todo['todo_id'])];
}
function currentKey(todo: TodoRow): (number | string)[] {
  const runnable = todoStatus(todo) === 'open' && todo['task_class'] !== 'blocker' && !isMonitor(todo);
  return [
    runnable ? 0 : 1,
    isLaneNextAction(todo) ? 0 : 1,
    executionRank(todo),
    priorityRank(todo),
    indexRank(todo),
    str(todo['todo_id']),
  ];
}
/**
 * The first `count` todos of a stable sort by `key` (ties keep their order), without sorting them all: an agent
 * may hold thousands of todos, the projection lists 8.
 */
function firstSorted(todos: readonly TodoRow[], key: (todo: TodoRow) => (number | string)[], count: number): TodoRow[] {
  const best: { todo: TodoRow; key: (number | string)[] }[] = [];
  for (const todo of todos) {
    const entry = { todo, key: key(todo) };
    // After every kept entry of an equal key (those came first); not kept when after the last of a full list.
    let at = best.length;
    while (at > 0 && compareKeys(entry.key, best[at - 1]!.key) < 0) at--;
    if (at >= count) continue;
    best.splice(at, 0, entry);
    if (best.length > count) best.pop();
  }
  return best.map((entry) => entry.todo);
}

/** Claims as normalized, per text (the same few agent ids on every listed todo). */
const claims = new Map<string, string | null>();
function claimOf(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  let claim = claims.get(value);
  if (claim === undefined) {
    claim = normalizedClaim(value);
    if (claims.size > 1024) claims.clear();
    claims.set(value, claim);
  }
  return claim;
}
/** `_todo_identity`: goal, todo id, index and text (or title), as text. */
function identityOf(goalId: unknown, todo: TodoRow): string {
  return `${str(goalId)}\u0000${str(todo['todo_id'])}\u0000${str(todo['index'])}\u0000${str(todo['text'] || todo['title'])}`;
}
function identity(todo: TodoRow): string {
  return identityOf(todo['goal_id'], todo);
}

function todoRow(todo: TodoRow): Record<string, unknown> {
  const row: Record<string, unknown> = {
    schema_version: 'todo_row_v0',
    todo_id: todoId(typeof todo['todo_id'] === 'string' ? todo['todo_id'] : undefined),
    goal_id: compact(todo['goal_id'], 180),
    role: 'agent',
    status: todoStatus(todo),
    priority: compact(todo['priority'], 40),
    title: compact(todo['title'] || todo['text'], 96),
    task_class: compact(todo['task_class'], 80),
    action_kind: compact(todo['action_kind'], 100),
    task_domain: compact(todo['task_domain'], 100),
    claimed_by: claimOf(todo['claimed_by']),
  };
  for (const key of [
    'required_capabilities',
    'required_write_scopes',
    'target_capabilities',
    'blocks_agent',
    'excluded_agents',
    'unblocks_todo_id',
    'successor_todo_ids',
    'resume_when',
    'updated_at',
  ]) {
    const value = todo[key];
    if (!empty(value)) row[key] = value;
  }
  return withoutEmpty(row);
}

function stringList(value: unknown): string[] {
  const items = Array.isArray(value) ? value : empty(value) ? [] : [value];
  const out: string[] = [];
  for (const item of items) {
    const text = compact(item, 140);
    if (text !== null && !out.includes(text)) out.push(text);
    if (out.length >= MAX_WORKSPACE_SCOPES) break;
  }
  return out;
}

function workspaceRef(todo: TodoRow | null): Record<string, unknown> | null {
  if (todo === null) return null;
  const raw =
    typeof todo['workspace_ref'] === 'object' && todo['workspace_ref'] !== null
      ? (todo['workspace_ref'] as Record<string, unknown>)
      : {};
  const scopes = stringList(raw['write_scope'] || todo['required_write_scopes'] || todo['required_write_scope']);
  if (Object.keys(raw).length > 0) {
    const workspace: Record<string, unknown> = {
      kind: compact(raw['kind'] || 'unknown', 80),
      label: compact(raw['label'] || raw['branch'] || raw['kind'], 140),
      path_safe: raw['path_safe'] === true,
    };
    const branch = compact(raw['branch'], 120);
    if (branch !== null) workspace['branch'] = branch;
    if (scopes.length > 0) workspace['write_scope'] = scopes;
    return withoutEmpty(workspace);
  }
  const policy = compact(todo['worktree_policy'] || todo['workspace_policy'] || todo['workspace_kind'], 120);
  if (policy === null && scopes.length === 0) return null;
  return withoutEmpty({
    kind: (policy ?? '').toLowerCase().includes('worktree') ? 'worktree' : 'unknown',
    label: policy ?? 'workspace not projected',
    path_safe: false,
    write_scope: scopes,
  });
}

/** The original's `parse_timestamp`: an ISO time (a trailing Z or offset; naive read as UTC), else null. */
function parseTime(value: string): number | null {
  const text = value.trim();
  if (!/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/u.test(text)) return null;
  const zoned = /(?:Z|[+-]\d{2}:?\d{2})$/u.test(text) ? text : `${text}Z`;
  const ms = Date.parse(zoned.replace(' ', 'T'));
  return Number.isNaN(ms) ? null : ms;
}

function staleClaimHint(todo: TodoRow | null, agentId: string, nowMs: number): Record<string, unknown> | null {
  if (todo === null || isDone(todo) || todo['task_class'] === 'continuous_monitor') return null;
  const claimedBy = claimOf(todo['claimed_by']) ?? claimOf(todo['agent_id']) ?? agentId;
  const last = compact(todo['updated_at'] || todo['latest_event_at'], 80);
  if (last === null)
    return {
      state: 'activity_missing',
      claimed_by: claimedBy,
      reason: 'claimed open todo has no projected activity timestamp',
      recommended_operator_action: 'inspect evidence before considering reassignment',
    };
  const parsed = parseTime(last);
  if (parsed === null)
    return {
      state: 'activity_unparsed',
      claimed_by: claimedBy,
      last_activity_at: last,
      reason: 'projected activity timestamp could not be parsed',
      recommended_operator_action: 'inspect status/evidence before considering reassignment',
    };
  if ((nowMs - parsed) / 3_600_000 <= STALE_CLAIM_THRESHOLD_HOURS) return null;
  return {
    state: 'suspected_stale',
    claimed_by: claimedBy,
    last_activity_at: last,
    threshold_hours: STALE_CLAIM_THRESHOLD_HOURS,
    reason: 'last projected activity is older than the stale-claim warning threshold',
    recommended_operator_action: 'ask the same agent to resume or inspect evidence before manual handoff',
  };
}

function refs(todo: TodoRow): [string[], string[]] {
  const evidence: string[] = [];
  const handoffs: string[] = [];
  const note =
    typeof todo['handoff_note'] === 'object' && todo['handoff_note'] !== null
      ? (todo['handoff_note'] as Record<string, unknown>)
      : {};
  const handoffId = compact(note['handoff_id'], 140);
  if (handoffId !== null) handoffs.push(handoffId);
  for (const raw of Array.isArray(note['evidence_refs']) ? note['evidence_refs'] : []) {
    const ref = compact(raw, 180);
    if (ref !== null && !evidence.includes(ref)) evidence.push(ref);
  }
  const id = todoId(typeof todo['todo_id'] === 'string' ? todo['todo_id'] : undefined);
  if (todo['evidence'] && id !== null) evidence.push(`todo:${id}:evidence`);
  if (todo['note'] && id !== null) evidence.push(`todo:${id}:note`);
  const latestKind = compact(todo['latest_event_kind'], 80);
  if (latestKind !== null && id !== null) evidence.push(`rollout_event:${latestKind}:${id}`);
  return [evidence.slice(0, MAX_REFS), handoffs.slice(0, MAX_REFS)];
}

function agentState(todos: readonly TodoRow[], current: TodoRow | null): string {
  const open = todos.filter((todo) => !isDone(todo));
  if (open.length === 0) return todos.length > 0 ? 'waiting' : 'unknown';
  if (current !== null && !isDone(current)) {
    if (todoStatus(current) === 'blocked' || current['task_class'] === 'blocker') return 'blocked';
    if (isMonitor(current)) return 'monitoring';
    return 'running';
  }
  if (open.some((todo) => todoStatus(todo) === 'blocked' || todo['task_class'] === 'blocker')) return 'blocked';
  if (open.every(isMonitor)) return 'monitoring';
  return 'running';
}

function lastActivity(todos: readonly TodoRow[]): string | null {
  const times = todos
    .map((todo) => compact(todo['updated_at'] || todo['latest_event_at'], 80))
    .filter((t) => t !== null);
  return times.length === 0 ? null : [...times].sort().reverse()[0]!;
}

interface AgentAccumulator {
  agentId: string;
  model: string | null;
  goalIds: string[];
  todos: TodoRow[];
}

/**
 * The todos of one goal the projection gives its agents, in the order they are taken (each identity once, the first
 * kept): its agent lists before the summary's `items` (`LIST_KEYS_BEFORE_ITEMS`), its budgeted todos, the lists after
 * (`LIST_KEYS_AFTER_ITEMS`); only todos an agent claims, each with its handoff note, `goal_id` and `source`. A pure
 * function of the goal's item: status keeps it with the item. Never mutated.
 */
export function goalAgentRows(goal: AgentTodoSource): TodoRow[] {
  const rows: TodoRow[] = [];
  // A todo listed again (its lists overlap) is taken once: its first row (every row has an agent, so `add` keeps the
  // first of an identity and skips the rest anyway).
  const identities = new Set<string>();
  const push = (row: TodoRow): void => {
    const key = identity(row);
    if (identities.has(key)) return;
    identities.add(key);
    rows.push(row);
  };
  const goalId = compact(goal.goalId, 180);
  const budgetAgent = goal.budget.filter((row) => row['role'] === 'agent');
  let budgetById: Map<string, TodoRow> | undefined;
  const group = goal.agentTodos ?? {};
  const fromList = (key: string, entry: TodoRow): TodoRow => {
    // Our lists carry the fields ours reads; the budgeted row of the same todo has the rest.
    budgetById ??= new Map(budgetAgent.map((row) => [str(row['todo_id']), row]));
    const full = budgetById.get(str(entry['todo_id']));
    const row = attachHandoffNote({ ...(full ?? {}), ...entry });
    return { ...row, goal_id: goalId, source: `attention_queue.agent_todos.${key}` };
  };
  // A todo no agent claims is no agent's (list rows carry no `agent_id`): skipped before it is built.
  const claimedEntries = (key: string): TodoRow[] =>
    (Array.isArray(group[key]) ? (group[key] as TodoRow[]) : []).filter(
      (entry) => claimOf(entry['claimed_by']) !== null,
    );
  for (const key of LIST_KEYS_BEFORE_ITEMS) for (const entry of claimedEntries(key)) push(fromList(key, entry));
  if (goal.agentTodos !== null)
    for (const row of budgetAgent)
      if (claimOf(row['claimed_by']) !== null) push({ ...row, goal_id: goalId, source: 'attention_queue.agent_todos' });
  for (const key of LIST_KEYS_AFTER_ITEMS) for (const entry of claimedEntries(key)) push(fromList(key, entry));
  return rows;
}

/** The projection, or null when it has no agents (the original leaves the key out then). */
export function agentManagementProjection(input: {
  goals: readonly AgentManagementSource[];
  todoIndexItems: readonly TodoRow[];
  goalFilter: string | null;
  now: Date;
}): Record<string, unknown> | null {
  const rows = new Map<string, AgentAccumulator>();
  const byGoalId = [...input.goals].sort((a, b) => compareCodePoints(a.goalId, b.goalId));
  for (const goal of byGoalId) {
    const goalId = compact(goal.goalId, 180);
    for (const raw of goal.registeredAgents) {
      const agentId = claimOf(raw);
      if (agentId === null) continue;
      let row = rows.get(agentId);
      if (row === undefined) {
        row = { agentId, model: 'peer_v1', goalIds: [], todos: [] };
        rows.set(agentId, row);
      }
      if (goalId !== null && !row.goalIds.includes(goalId)) row.goalIds.push(goalId);
    }
  }
  const seen = new Set<string>();
  const goalIds = new Map<string, string | null>();
  const add = (todo: TodoRow): void => {
    const agentId = claimOf(todo['claimed_by']) ?? claimOf(todo['agent_id']);
    if (agentId === null) return;
    const key = identity(todo);
    if (seen.has(key)) return;
    seen.add(key);
    let row = rows.get(agentId);
    if (row === undefined) {
      row = { agentId, model: null, goalIds: [], todos: [] };
      rows.set(agentId, row);
    }
    const goalText = str(todo['goal_id']);
    let goalId = goalIds.get(goalText);
    if (goalId === undefined) {
      goalId = compact(todo['goal_id'], 180);
      goalIds.set(goalText, goalId);
    }
    if (goalId !== null && !row.goalIds.includes(goalId)) row.goalIds.push(goalId);
    row.todos.push(todo);
  };
  for (const goal of input.goals) for (const todo of goal.rows ?? goalAgentRows(goal)) add(todo);
  for (const todo of input.todoIndexItems)
    if (todo['role'] === 'agent' && todo['source'] !== 'rollout_event_log')
      add({ ...todo, source: todo['source'] ?? 'todo_index' });

  const nowMs = input.now.getTime();
  const agents: Record<string, unknown>[] = [];
  for (const agentId of [...rows.keys()].sort()) {
    const raw = rows.get(agentId)!;
    const all = raw.todos;
    const openTodos = all.filter((todo) => !isDone(todo));
    const current = firstSorted(openTodos, currentKey, 1)[0] ?? null;
    const blockedTodos = all.filter(
      (todo) => !isDone(todo) && (todoStatus(todo) === 'blocked' || todo['task_class'] === 'blocker'),
    );
    const blocked = firstSorted(blockedTodos, sortKey, 1)[0] ?? null;
    // Each identity is listed once (`add`), so putting the current todo first drops at most one of the sorted ones.
    let todos = firstSorted(all, sortKey, MAX_AGENT_TODOS + 1);
    if (current !== null) {
      const currentIdentity = identity(current);
      todos = [current, ...todos.filter((todo) => identity(todo) !== currentIdentity)];
    }
    todos = todos.slice(0, MAX_AGENT_TODOS);
    const evidenceRefs: string[] = [];
    const handoffRefs: string[] = [];
    for (const todo of todos) {
      const [evidence, handoffs] = refs(todo);
      for (const ref of evidence) if (!evidenceRefs.includes(ref)) evidenceRefs.push(ref);
      for (const ref of handoffs) if (!handoffRefs.includes(ref)) handoffRefs.push(ref);
    }
    const currentId =
      current === null ? null : todoId(typeof current['todo_id'] === 'string' ? current['todo_id'] : undefined);
    const row: Record<string, unknown> = {
      agent_id: agentId,
      agent_model: raw.model ?? 'unregistered',
      state: agentState(all, current),
      current_todo: current === null ? null : todoRow(current),
      next_action:
        current === null
          ? 'Inspect status projection before taking work.'
          : currentId !== null
            ? `Continue projected todo ${currentId}.`
            : 'Inspect projected todo.',
      last_activity_at: lastActivity(todos),
      evidence_refs: evidenceRefs.slice(0, MAX_REFS),
      handoff_refs: handoffRefs.slice(0, MAX_REFS),
      goal_ids: raw.goalIds.slice(0, MAX_REFS),
    };
    const workspace = workspaceRef(current);
    if (workspace !== null) row['workspace_ref'] = workspace;
    if (blocked !== null && (current === null || identity(blocked) !== identity(current)))
      row['blocked_on'] = todoRow(blocked);
    const hint = staleClaimHint(current, agentId, nowMs);
    if (hint !== null) row['stale_claim_hint'] = hint;
    agents.push(withoutEmpty(row));
    if (agents.length >= MAX_AGENT_ROWS) break;
  }
  if (agents.length === 0) return null;
  return withoutEmpty({
    schema_version: AGENT_MANAGEMENT_PROJECTION_SCHEMA_VERSION,
    mode: 'read_only',
    goal_id: input.goalFilter === null ? null : compact(input.goalFilter, 180),
    generated_at: input.now.toISOString().replace(/\.\d{3}Z$/u, 'Z'),
    truth_contract: {
      todo_is_runtime_work_item: true,
      projection_is_writable: false,
      introduces_task_runtime: false,
      write_api: false,
    },
    source_summary: {
      registered_agent_count: rows.size,
      projected_agent_count: agents.length,
      todo_source:
        'status.attention_queue + authoritative status.todo_index rows; event-only rollout receipts are evidence, not runtime work',
    },
    agents,
  });
}
