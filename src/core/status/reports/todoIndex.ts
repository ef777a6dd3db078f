import { z } from 'zod';
import type { StructuredTodoItem } from '../../state/structured';
import { compactTodo } from '../projection/todoLists';
import { prMergedCondition } from '../projection/compactTodoItem';
import { repositoryIdentity } from '../../snapshots/deliveryWorkspace';
import { todoId } from '../projection/standingDecisionAuthority';
import { normalizedClaim } from '../projection/claimedCounts';
import { publicSafeCompact } from '../projection/text';
import { attachHandoffNote, type TodoRow } from './handoffNote';
import { compareCodePoints } from './statusOrder';

/**
 * The status payload's `todo_index` (the original's `todo_index_v0`, loopx/control_plane/todos/todo_index.py
 * `build_todo_index`): every todo the status items list, plus the todo events of each goal's rollout event log.
 *
 * Per goal (computed with the goal's item from the files it was projected from, and cached with it):
 * - the **budgeted todos** of each role, as the original's summary `items` lists them (its `compact_todo_group`):
 *   the open ones by priority (P0 first, none last) then position, then the deferred ones likewise, then the done
 *   ones in file order, the first 12 of each role; each row is the todo's `compact_todo_item` with
 *   `schema_version: todo_index_item_v0`, `goal_id`, `source: attention_queue`, `text` = its title (or text)
 *   public-safe (320), its `title` the same, and its handoff note (handoffNote.ts) attached for the goal and source;
 *   a todo whose title/text is not public-safe is left out;
 * - the **todo events** of its rollout event log: of the log's last 500 lines, the rows of schema
 *   `loopx_rollout_event_v0` whose `event_kind` starts with `todo_` (each counted in `rollout_event_count`); an event
 *   with a todo id and a goal id either updates the goal's row of that todo (`event_count` + 1, the kind added to
 *   `event_kinds`, `latest_event_kind`/`_at`/`_status`, its status and `done`, its `agent_id` when it names one), or
 *   becomes a row of its own (`source: rollout_event_log`, its summary as text and title, status from the event or
 *   its kind: complete/archive → done, supersede → deferred, else open).
 * At the top level: every goal's rows sorted open first, then by goal id, todo id, latest event time; the first
 * 240 (`item_limit`) listed, `total_count` all of them, `current_projected_count` the status rows.
 */

export const TODO_INDEX_SCHEMA_VERSION = 'todo_index_v0';
export const TODO_INDEX_ITEM_SCHEMA_VERSION = 'todo_index_item_v0';
export const TODO_INDEX_ITEM_LIMIT = 240;
/** The original's MAX_STATUS_TODOS_PER_ROLE: its summary `items` per role. */
export const TODO_INDEX_TODOS_PER_ROLE = 12;
/** The original's MAX_TODO_INDEX_ROLLOUT_EVENTS_PER_GOAL: the log's last lines read. */
export const TODO_INDEX_EVENTS_PER_GOAL = 500;
const ROLLOUT_EVENT_SCHEMA = 'loopx_rollout_event_v0';

/** A goal's part of the index, cached with its status item. */
export const GoalTodoIndexSchema = z.object({
  /**
   * Its budgeted agent todos that an agent claims, as the original's summary `items` hold them (no handoff note): the
   * agent view reads only claimed ones (reports/agentManagement.ts), so the cache keeps no others.
   */
  budget: z.array(z.record(z.string(), z.unknown())),
  /** Its index rows, events merged. */
  rows: z.array(z.record(z.string(), z.unknown())),
  current_count: z.number().int(),
  rollout_event_count: z.number().int(),
});
export type GoalTodoIndex = z.infer<typeof GoalTodoIndexSchema>;

export type TodoIndex = {
  schema_version: typeof TODO_INDEX_SCHEMA_VERSION;
  source: 'attention_queue_and_rollout_event_log';
  total_count: number;
  current_projected_count: number;
  rollout_event_count: number;
  item_limit: number;
  items: TodoRow[];
  payload_compaction?: Record<string, unknown>;
};

const STATUSES = new Set(['open', 'done', 'blocked', 'deferred']);
function normalStatus(value: unknown): string | null {
  const candidate = String(value ?? '')
    .trim()
    .toLowerCase();
  return STATUSES.has(candidate) ? candidate : null;
}
function doneFor(status: string | null): boolean {
  return status === 'done' || status === 'deferred';
}

function priorityRank(priority: string | null): number {
  const match = /^P([0-4])/.exec((priority ?? '').trim().toUpperCase());
  return match === null ? 50 : Number(match[1]);
}
function projected(items: readonly StructuredTodoItem[]): StructuredTodoItem[] {
  return [...items].sort((a, b) => priorityRank(a.priority) - priorityRank(b.priority) || a.index - b.index);
}

const RESUME_WHEN = /^[a-z][a-z0-9_-]{0,31}(?::[a-z0-9_.:@-]{1,96})?$/u;
const RESUME_PR = /^pr_merged:(?:(?:[a-z0-9_.-]{1,80})\/(?:[a-z0-9_.-]{1,100}))?#[1-9][0-9]{0,8}$/u;
function resumeWhenOf(value: string | undefined): string | null {
  const candidate = (value ?? '').trim().split(/\s+/u).filter(Boolean).join(' ').toLowerCase();
  return candidate !== '' && (RESUME_PR.test(candidate) || RESUME_WHEN.test(candidate)) ? candidate : null;
}

function idList(value: string | undefined): string[] {
  const out: string[] = [];
  for (const match of (value ?? '').matchAll(/\btodo_[A-Za-z0-9_-]+\b/gu)) {
    const id = todoId(match[0]);
    if (id !== null && !out.includes(id)) out.push(id);
  }
  return out;
}

const MONITOR_FIELDS = [
  'target_key',
  'cadence',
  'next_due_at',
  'expires_at',
  'last_checked_at',
  'result_hash',
  'consecutive_no_change',
  'material_change',
  'max_no_change_before_replan',
  'watch_only',
] as const;

/** contract.py's boolean metadata (`no_followup`, as `global_gate`). */
function flag(value: string | undefined): boolean | undefined {
  const candidate = (value ?? '').trim().split(/\s+/u).join(' ').toLowerCase();
  if (['1', 'true', 'yes', 'y'].includes(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return undefined;
}

/** `normalize_required_write_scopes`/`_capabilities`: split on `,;|`, compacted, each once. */
function textList(value: string | undefined, normalize: (raw: string) => string): string[] {
  const out: string[] = [];
  for (const raw of (value ?? '').split(/[,;|]/u)) {
    const item = normalize(raw.trim().split(/\s+/u).filter(Boolean).join(' '));
    if (item !== '' && !out.includes(item)) out.push(item);
  }
  return out;
}

/**
 * A todo as the original's summary `items` hold it (its `structured_todo_item` after `apply_resume_conditions`), in
 * the `compact_todo_item` shape for the fields ours reads.
 */
function budgetRow(
  item: StructuredTodoItem,
  role: 'user' | 'agent',
  sourceSection: string | null,
  all: readonly StructuredTodoItem[],
  rolloutEvents: readonly Record<string, unknown>[],
): TodoRow {
  const row: TodoRow = {
    ...compactTodo(
      { ...item, action_kind: item.metadata['action_kind'], resumeHolds: true, hasResumeWhen: false },
      role,
      sourceSection,
    ),
  };
  const meta = item.metadata;
  const resumeWhen = resumeWhenOf(meta['resume_when']);
  if (resumeWhen !== null) {
    row['resume_when'] = resumeWhen;
    const separator = resumeWhen.indexOf(':');
    const kind = separator < 0 ? resumeWhen : resumeWhen.slice(0, separator);
    const target = separator < 0 ? '' : resumeWhen.slice(separator + 1);
    const condition: Record<string, unknown> = {
      schema_version: 'todo_resume_condition_v0',
      resume_when: resumeWhen,
      satisfied: false,
      kind,
    };
    if (separator >= 0) condition['target'] = target;
    if (kind === 'todo_done' && target !== '') {
      const found = [...all].reverse().find((t) => t.todo_id === target);
      condition['target_todo_id'] = target;
      condition['target_status'] = found?.status ?? null;
      if (found !== undefined) {
        condition['target_archive_state'] = 'active';
        condition['target_source_section'] = found.source_section;
        condition['target_task_class'] = compactTodo(
          { ...found, action_kind: found.metadata['action_kind'], resumeHolds: true, hasResumeWhen: false },
          found.role,
          found.source_section,
        ).task_class;
        if (found.claimed_by !== null) condition['target_claimed_by'] = found.claimed_by;
      }
      condition['satisfied'] = condition['target_status'] === 'done';
    } else if (kind === 'capacity_available' && target !== '') {
      Object.assign(condition, {
        provider: 'runtime_available_capabilities',
        provider_required: true,
        capability: target,
      });
    } else if (kind === 'pr_merged' && target !== '') {
      Object.assign(
        condition,
        prMergedCondition(target, repositoryIdentity(meta['task_repository'] ?? null), rolloutEvents),
      );
    } else condition['unsupported'] = true;
    row['resume_condition'] = condition;
    row['resume_ready'] = condition['satisfied'] === true;
  }
  const successors = idList(meta['successor_todo_ids']);
  if (successors.length > 0) row['successor_todo_ids'] = successors;
  for (const key of ['completion_continuation', 'completion_recovery', 'decision_outcome'] as const) {
    const value = (meta[key] ?? '').trim().toLowerCase();
    if (value !== '') row[key] = value;
  }
  const excluded = [
    ...new Set(
      (meta['excluded_agents'] ?? '')
        .split(',')
        .map((agent) => normalizedClaim(agent))
        .filter((agent): agent is string => agent !== null),
    ),
  ].sort();
  if (excluded.length > 0) row['excluded_agents'] = excluded;
  const scopes = textList(meta['required_write_scopes'], (raw) => raw);
  if (scopes.length > 0) row['required_write_scopes'] = scopes;
  const capabilities = textList(meta['required_capabilities'], (raw) => raw.toLowerCase().replace(/[- ]/gu, '_'));
  if (capabilities.length > 0) row['required_capabilities'] = capabilities;
  const noFollowup = flag(meta['no_followup']);
  if (noFollowup !== undefined) row['no_followup'] = noFollowup;
  // The parser keeps the monitor fields as written (non-empty text).
  for (const key of MONITOR_FIELDS) {
    const value = meta[key];
    if (value !== undefined && value.trim() !== '') row[key] = value;
  }
  return row;
}

interface RolloutEventLike {
  schema_version?: unknown;
  event_kind?: unknown;
  todo_id?: unknown;
  goal_id?: unknown;
  status?: unknown;
  summary?: unknown;
  recorded_at?: unknown;
  agent_id?: unknown;
  details?: unknown;
  handoff?: unknown;
}

/** `load_rollout_events`: the last `limit` lines of the log (blank ones counted), each a JSON object of the schema. */
export function rolloutEventsOfLog(text: string, limit = TODO_INDEX_EVENTS_PER_GOAL): RolloutEventLike[] {
  const lines = text.split(/\r\n|\r|\n/u);
  if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
  const events: RolloutEventLike[] = [];
  for (const line of lines.slice(-Math.max(0, limit))) {
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      const event = parsed as RolloutEventLike;
      if (event.schema_version === ROLLOUT_EVENT_SCHEMA) events.push(event);
    }
  }
  return events;
}

function eventStatus(event: RolloutEventLike): string {
  const status = normalStatus(event.status);
  if (status !== null) return status;
  const kind = String(event.event_kind ?? '');
  if (kind === 'todo_complete' || kind === 'todo_archive_completed') return 'done';
  if (kind === 'todo_supersede') return 'deferred';
  return 'open';
}

function eventRow(event: RolloutEventLike): TodoRow | null {
  const id = todoId(typeof event.todo_id === 'string' ? event.todo_id : undefined);
  const goalId = String(event.goal_id ?? '').trim();
  if (goalId === '' || id === null) return null;
  const details =
    typeof event.details === 'object' && event.details !== null && !Array.isArray(event.details)
      ? (event.details as Record<string, unknown>)
      : {};
  let role = String(details['role'] ?? 'agent')
    .trim()
    .toLowerCase();
  if (role !== 'user' && role !== 'agent') role = 'agent';
  const status = eventStatus(event);
  const kind = String(event.event_kind || 'todo_event');
  const summary =
    publicSafeCompact(String(event.summary || `${String(event.event_kind || 'todo_event')} recorded for ${id}`), 320) ??
    `todo event recorded for ${id}`;
  const row: TodoRow = {
    schema_version: TODO_INDEX_ITEM_SCHEMA_VERSION,
    goal_id: goalId,
    todo_id: id,
    role,
    status,
    done: doneFor(status),
    index: 0,
    text: summary,
    title: summary,
    source: 'rollout_event_log',
    event_count: 1,
    event_kinds: [kind],
    latest_event_kind: kind,
    latest_event_at: publicSafeCompact(pyText(event.recorded_at), 80),
    latest_event_status: status,
    agent_id: publicSafeCompact(pyText(event.agent_id), 120),
  };
  const handoff = event.handoff || details['handoff'];
  if (typeof handoff === 'object' && handoff !== null && !Array.isArray(handoff)) row['handoff'] = handoff;
  return attachHandoffNote(row, { goalId, source: 'rollout_event_log' });
}

function pyText(value: unknown): string {
  return value === null || value === undefined || value === false || value === '' ? '' : String(value);
}

function indexKey(goalId: string, row: TodoRow): string {
  const id = todoId(typeof row['todo_id'] === 'string' ? row['todo_id'] : undefined) ?? '';
  if (id !== '') return `${goalId}\u0000${id}`;
  return `${goalId}\u0000synthetic:${pyText(row['role'])}:${pyText(row['index'])}:${pyText(row['text'])}`;
}

/**
 * A goal's part of the index from its parsed todos (`user`, `agent`: every todo of the role with its section's
 * title) and its rollout event log's text (null: no log).
 */
export function goalTodoIndex(
  goalId: string,
  todos: {
    user: { items: readonly StructuredTodoItem[]; sourceSection: string | null };
    agent: { items: readonly StructuredTodoItem[]; sourceSection: string | null };
  },
  rolloutLog: string | null,
): GoalTodoIndex {
  const indexed = new Map<string, TodoRow>();
  const budget: TodoRow[] = [];
  let currentCount = 0;
  const all = [...todos.user.items, ...todos.agent.items];
  const events = rolloutLog === null ? [] : rolloutEventsOfLog(rolloutLog);
  for (const role of ['user', 'agent'] as const) {
    const { items, sourceSection } = todos[role];
    const open = projected(items.filter((t) => t.status !== 'done' && t.status !== 'deferred'));
    const deferred = projected(items.filter((t) => t.status === 'deferred'));
    const done = items.filter((t) => t.status === 'done');
    for (const todo of [...open, ...deferred, ...done].slice(0, TODO_INDEX_TODOS_PER_ROLE)) {
      const base = budgetRow(todo, role, sourceSection, all, events as unknown as readonly Record<string, unknown>[]);
      if (role === 'agent' && typeof base['claimed_by'] === 'string') budget.push(base);
      const text = publicSafeCompact(String(base['title'] || base['text'] || ''), 320);
      if (text === null) continue;
      // compact_todo_item attaches a note first; the index's second note reads it as the raw handoff.
      const row = attachHandoffNote({ ...base });
      Object.assign(row, {
        schema_version: TODO_INDEX_ITEM_SCHEMA_VERSION,
        goal_id: goalId,
        role,
        source: 'attention_queue',
        text,
        title: publicSafeCompact(typeof base['title'] === 'string' ? base['title'] : null, 320) ?? text,
      });
      attachHandoffNote(row, { goalId, source: 'attention_queue' });
      indexed.set(indexKey(goalId, row), row);
      currentCount += 1;
    }
  }
  let rolloutEventCount = 0;
  for (const event of events) {
    if (!String(event.event_kind ?? '').startsWith('todo_')) continue;
    rolloutEventCount += 1;
    const row = eventRow(event);
    if (row === null) continue;
    const key = indexKey(goalId, row);
    const existing = indexed.get(key);
    if (existing === undefined) {
      indexed.set(key, row);
      continue;
    }
    existing['event_count'] = (typeof existing['event_count'] === 'number' ? existing['event_count'] : 0) + 1;
    const kinds = Array.isArray(existing['event_kinds']) ? [...(existing['event_kinds'] as unknown[])] : [];
    const latestKind = row['latest_event_kind'];
    if (latestKind && !kinds.includes(latestKind)) kinds.push(latestKind);
    existing['event_kinds'] = kinds;
    existing['latest_event_kind'] = latestKind;
    existing['latest_event_at'] = row['latest_event_at'];
    existing['latest_event_status'] = row['latest_event_status'];
    if (row['status']) {
      existing['status'] = row['status'];
      existing['done'] = row['done'] === true;
    }
    if (row['agent_id']) existing['agent_id'] = row['agent_id'];
  }
  return { budget, rows: [...indexed.values()], current_count: currentCount, rollout_event_count: rolloutEventCount };
}

function sortText(value: unknown): string {
  return value === null || value === undefined || value === '' ? '' : String(value);
}

/** The top-level index over the goals' parts, in the items' order; `agentLane`: the original's `--agent-id` compaction. */
export function todoIndex(
  goals: readonly GoalTodoIndex[],
  options: { limit?: number; agentLane?: boolean } = {},
): TodoIndex {
  const limit = options.limit ?? TODO_INDEX_ITEM_LIMIT;
  const rows = goals.flatMap((goal) => goal.rows);
  const keyed = rows.map((row, position) => ({
    row,
    position,
    key: [
      row['done'] ? 1 : 0,
      sortText(row['goal_id']),
      sortText(row['todo_id']),
      sortText(row['latest_event_at']),
    ] as const,
  }));
  keyed.sort(
    (a, b) =>
      a.key[0] - b.key[0] ||
      compareCodePoints(a.key[1], b.key[1]) ||
      compareCodePoints(a.key[2], b.key[2]) ||
      compareCodePoints(a.key[3], b.key[3]) ||
      a.position - b.position,
  );
  const items = keyed.slice(0, Math.max(0, limit)).map((entry) => entry.row);
  const index: TodoIndex = {
    schema_version: TODO_INDEX_SCHEMA_VERSION,
    source: 'attention_queue_and_rollout_event_log',
    total_count: rows.length,
    current_projected_count: goals.reduce((sum, goal) => sum + goal.current_count, 0),
    rollout_event_count: goals.reduce((sum, goal) => sum + goal.rollout_event_count, 0),
    item_limit: limit,
    items,
  };
  if (options.agentLane === true && items.length > 0) {
    index.items = [];
    index.payload_compaction = {
      schema_version: 'agent_lane_status_todo_index_compaction_v0',
      omitted_item_count: items.length,
      reason:
        'status --agent-id uses the attention queue for current work and keeps the whole-goal todo index on a cold path',
      full_detail_cold_path: 'status without --agent-id or todo list',
    };
  }
  return index;
}
