import { parseIsoInstant } from '../../isoTime';
import { collapseWhitespace } from './text';

/**
 * The original's monitor schedule (loopx/control_plane/scheduler/monitor_todo.py, read by `compact_todo_group`'s
 * `monitor_due_*` and `monitor_schedule_gap_*` lanes). Over the summary's monitor lane (`monitor_open_items`: every
 * open, actionable `continuous_monitor` todo, in projection order):
 * - expired: its `expires_at` parses and is at or before now;
 * - due: not expired, its `next_due_at` parses and is at or before now;
 * - schedule gap: not expired, and neither `cadence` nor `next_due_at` is written (a value that does not parse is a
 *   schedule, never due);
 * - "now" is the original's `now_utc()`: the current second (milliseconds dropped); timestamps without an offset are
 *   UTC.
 * The summary carries `monitor_due_count`, `monitor_due_items` (the first 1), `monitor_schedule_gap_count`,
 * `monitor_schedule_gap_items` (the first 1), and, when it has watch-only monitors, `watch_only_monitor_due_count`.
 *
 * These depend on the time of the read, so they are **not** part of the cached item: the projection (cached in
 * memory and in the persistent cache) keeps each listed monitor's schedule fields, and `withMonitorDue` derives the
 * due fields from them when status answers (`GoalStatusCache.goalStatus`). `monitorDueChangesAt` says when they next
 * change, for a reader that keeps whole answers (the live status model).
 */

/** contract.py `TODO_MONITOR_METADATA_FIELDS`: read as whitespace-collapsed text, dropped when empty. */
export const MONITOR_KEYS = [
  'target_key',
  'cadence',
  'next_due_at',
  'expires_at',
  'watch_only',
  'last_checked_at',
  'result_hash',
  'consecutive_no_change',
  'material_change',
  'max_no_change_before_replan',
] as const;
export type MonitorKey = (typeof MONITOR_KEYS)[number];
export type MonitorFields = Partial<Record<MonitorKey, string>>;

/** The monitor metadata of a todo as the original's parser keeps it (and `compact_todo_item` lists it). */
export function monitorFields(meta: Readonly<Record<string, string>>): MonitorFields {
  const out: MonitorFields = {};
  for (const key of MONITOR_KEYS) {
    const value = collapseWhitespace(meta[key]);
    if (value !== '') out[key] = value;
  }
  return out;
}

/** contract.py `normalize_todo_watch_only`. */
export function isWatchOnly(fields: MonitorFields): boolean {
  return (fields.watch_only ?? '').trim().toLowerCase() === 'true';
}

/** The original's `now_utc()`: whole seconds. */
function nowSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000) * 1000;
}

function expired(fields: MonitorFields, now: number): boolean {
  const expires = parseIsoInstant(fields.expires_at);
  return expires !== null && expires <= now;
}

/** `monitor_todo_is_due` for a todo of the monitor lane (open, actionable, of class `continuous_monitor`). */
export function monitorIsDue(fields: MonitorFields, nowMs: number): boolean {
  const now = nowSeconds(nowMs);
  if (expired(fields, now)) return false;
  const due = parseIsoInstant(fields.next_due_at);
  return due !== null && due <= now;
}

/** `monitor_todo_missing_schedule` for a todo of the monitor lane. */
export function monitorMissesSchedule(fields: MonitorFields, nowMs: number): boolean {
  if (expired(fields, nowSeconds(nowMs))) return false;
  return (fields.cadence ?? '').trim() === '' && (fields.next_due_at ?? '').trim() === '';
}

/** The fields of a summary that depend on the time of the read. */
export interface MonitorDueFields {
  monitor_due_count: number;
  monitor_due_items: unknown[];
  monitor_schedule_gap_count: number;
  monitor_schedule_gap_items: unknown[];
  watch_only_monitor_due_count?: number;
}

/** `MAX_MONITOR_DUE_ITEMS`. */
const DUE_LISTED = 1;

interface MonitorLaneSummary {
  monitor_open_items: readonly MonitorFields[];
  watch_only_monitor_count?: number;
}

export function monitorDue(summary: MonitorLaneSummary, nowMs: number): MonitorDueFields {
  const due = summary.monitor_open_items.filter((item) => monitorIsDue(item, nowMs));
  const gap = summary.monitor_open_items.filter((item) => monitorMissesSchedule(item, nowMs));
  return {
    monitor_due_count: due.length,
    monitor_due_items: due.slice(0, DUE_LISTED),
    monitor_schedule_gap_count: gap.length,
    monitor_schedule_gap_items: gap.slice(0, DUE_LISTED),
    ...(summary.watch_only_monitor_count !== undefined
      ? { watch_only_monitor_due_count: due.filter(isWatchOnly).length }
      : {}),
  };
}

/**
 * The first instant after `nowMs` at which `monitorDue` of the summary can answer differently: a listed monitor's
 * `next_due_at` or `expires_at` passing (at the whole second the original's clock reaches it). Infinity when none.
 */
export function monitorDueChangesAt(summary: MonitorLaneSummary | null | undefined, nowMs: number): number {
  let next = Infinity;
  for (const item of summary?.monitor_open_items ?? []) {
    for (const text of [item.next_due_at, item.expires_at]) {
      const at = parseIsoInstant(text);
      if (at === null) continue;
      const reached = Math.ceil(at / 1000) * 1000;
      if (reached > nowMs && reached < next) next = reached;
    }
  }
  return next;
}

/**
 * What `withMonitorDue` of the item answers at `nowMs`, as a short key: each listed monitor due, a gap or neither. Equal
 * keys, equal answers (a reader keeps its last answer while the key holds, so an unchanged goal is the same object).
 */
export function monitorDueKey(item: { user_todos?: unknown; agent_todos?: unknown }, nowMs: number): string {
  let key = '';
  for (const summary of [item.user_todos, item.agent_todos]) {
    key += '|';
    if (summary === null || typeof summary !== 'object') continue;
    for (const monitor of (summary as MonitorLaneSummary).monitor_open_items)
      key += monitorIsDue(monitor, nowMs) ? 'd' : monitorMissesSchedule(monitor, nowMs) ? 'g' : '-';
  }
  return key;
}

/**
 * The item with its summaries' time-dependent fields for `nowMs` (a new item; the one given, cached, is left as it
 * is). `copy`: how to make a new object from the old one's fields (the caller's credential-clean marking).
 */
export function withMonitorDue<T extends { user_todos?: unknown; agent_todos?: unknown }>(
  item: T,
  nowMs: number,
  copy: <O extends object>(next: O, source: object) => O = (next) => next,
): T {
  const at = (summary: unknown): unknown =>
    summary === null || typeof summary !== 'object'
      ? summary
      : copy({ ...summary, ...monitorDue(summary as MonitorLaneSummary, nowMs) }, summary);
  const next: T = { ...item };
  if (item.user_todos !== undefined) next.user_todos = at(item.user_todos);
  if (item.agent_todos !== undefined) next.agent_todos = at(item.agent_todos);
  return copy(next, item);
}
