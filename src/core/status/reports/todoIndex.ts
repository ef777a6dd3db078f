import { z } from 'zod';
import { budgetedItems, compactTodoItem, type TodoRecord } from '../projection/compactTodoItem';
import { todoId } from '../projection/standingDecisionAuthority';
import { publicSafeCompact } from '../projection/text';
import { attachHandoffNote, type TodoRow } from '../projection/handoffNote';
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
 * A goal's part of the index from its structured todos (`user`, `agent`: every todo of the role as the original's
 * summary structures it, resume condition included: projection/compactTodoItem.ts `structuredTodo` and
 * `applyResumeConditions`) and its rollout event log's text (null: no log).
 */
export function goalTodoIndex(
  goalId: string,
  todos: { user: readonly TodoRecord[]; agent: readonly TodoRecord[] },
  rolloutLog: string | null,
): GoalTodoIndex {
  const indexed = new Map<string, TodoRow>();
  const budget: TodoRow[] = [];
  let currentCount = 0;
  for (const role of ['user', 'agent'] as const) {
    for (const todo of budgetedItems(todos[role])) {
      if (role === 'agent' && typeof todo['claimed_by'] === 'string') budget.push(todo);
      const text = publicSafeCompact(String(todo['title'] || todo['text'] || ''), 320);
      if (text === null) continue;
      // compact_todo_item attaches a note first; the index's second note reads it as the raw handoff.
      const row = compactTodoItem(todo);
      Object.assign(row, {
        schema_version: TODO_INDEX_ITEM_SCHEMA_VERSION,
        goal_id: goalId,
        role,
        source: 'attention_queue',
        text,
        title: publicSafeCompact(typeof todo['title'] === 'string' ? todo['title'] : null, 320) ?? text,
      });
      attachHandoffNote(row, { goalId, source: 'attention_queue' });
      indexed.set(indexKey(goalId, row), row);
      currentCount += 1;
    }
  }
  let rolloutEventCount = 0;
  for (const event of rolloutLog === null ? [] : rolloutEventsOfLog(rolloutLog)) {
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
