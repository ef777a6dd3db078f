import * as fs from 'node:fs';
import { z } from 'zod';
import { readRolloutEvents, rolloutEventLogPath } from '../evidence/rolloutLog';
import { parseIsoInstant } from '../isoTime';

/**
 * The gate inbox: every open gate of every goal in one list, longest blocked first.
 *
 * How long a gate has blocked is measured from when it opened. The data gives that instant in two
 * places, best first: the `todo_add` row of the goal's rollout event log for the gate's todo id
 * (written by our CLI, the editor and the original when the gate was added: exact), else the gate's
 * `updated_at` metadata (when it was last written: the open time unless the gate was edited since,
 * so a lower bound of the wait). "Since the first turn that was refused because of it" is not used:
 * a turn skipped for a gate leaves no durable row (only a loop's in-process stop event), so that
 * instant is not in the files.
 *
 * The agent time a gate holds back is its wait times the agent todos it holds (`blocked_todo_ids`);
 * a lane gate (`blocks_agent`) or a global gate with no held todo yet counts as one.
 */

export const GateInboxRowSchema = z.object({
  goal_id: z.string(),
  registry_path: z.string(),
  todo_id: z.string(),
  title: z.string(),
  text: z.string(),
  /** 1-based line of the gate in its state file. */
  line: z.number().int().positive(),
  /** When the gate opened (ISO-8601), or null when neither source has it. */
  blocked_since: z.string().nullable(),
  blocked_since_source: z.enum(['todo_add_event', 'updated_at']).nullable(),
  /** Wall time since `blocked_since`, in ms (null: unknown). */
  blocked_ms: z.number().nullable(),
  /** Agent todos the gate holds back (1 for a lane or global gate that holds none yet; 0 for an unscoped gate). */
  held_agent_todos: z.number().int().nonnegative(),
  /** `blocked_ms` × `held_agent_todos`: the agent time the wait has cost so far. */
  agent_blocked_ms: z.number().nullable(),
  due_at: z.string().nullable(),
  /** The due time has passed. */
  overdue: z.boolean(),
  blocked_todo_ids: z.array(z.string()),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
});
export type GateInboxRow = z.infer<typeof GateInboxRowSchema>;

/** One open gate as a goal's status lists it, with the goal it belongs to. */
export interface InboxGateInput {
  goalId: string;
  registryPath: string;
  gate: {
    todo_id: string;
    title: string;
    text: string;
    line: number;
    blocked_todo_ids: readonly string[];
    blocks_agent: string | null;
    global_gate: boolean;
    /** Absent in status items cached by an older LoopX. */
    due_at?: string | null | undefined;
    updated_at?: string | null | undefined;
  };
  /** The gate's `todo_add` event time from the rollout event log, when found. */
  addedAt?: string | null | undefined;
}

/** The inbox rows, longest blocked first; gates whose open time is unknown last; then overdue, earliest due, goal, id. */
export function gateInboxRows(inputs: readonly InboxGateInput[], nowMs: number): GateInboxRow[] {
  const rows = inputs.map(({ goalId, registryPath, gate, addedAt }): GateInboxRow => {
    const added = parseIsoInstant(addedAt ?? null);
    const updated = parseIsoInstant(gate.updated_at ?? null);
    const since = added !== null ? addedAt! : updated !== null ? gate.updated_at! : null;
    const sinceMs = added ?? updated;
    const blockedMs = sinceMs === null ? null : Math.max(0, nowMs - sinceMs);
    const held =
      gate.blocked_todo_ids.length > 0
        ? gate.blocked_todo_ids.length
        : gate.blocks_agent !== null || gate.global_gate
          ? 1
          : 0;
    const due = parseIsoInstant(gate.due_at ?? null);
    return {
      goal_id: goalId,
      registry_path: registryPath,
      todo_id: gate.todo_id,
      title: gate.title,
      text: gate.text,
      line: gate.line,
      blocked_since: since,
      blocked_since_source: added !== null ? 'todo_add_event' : updated !== null ? 'updated_at' : null,
      blocked_ms: blockedMs,
      held_agent_todos: held,
      agent_blocked_ms: blockedMs === null ? null : blockedMs * held,
      due_at: gate.due_at ?? null,
      overdue: due !== null && due <= nowMs,
      blocked_todo_ids: [...gate.blocked_todo_ids],
      blocks_agent: gate.blocks_agent,
      global_gate: gate.global_gate,
    };
  });
  const dueOf = (row: GateInboxRow): number => parseIsoInstant(row.due_at) ?? Number.POSITIVE_INFINITY;
  return rows.sort(
    (a, b) =>
      (b.blocked_ms ?? -1) - (a.blocked_ms ?? -1) ||
      Number(b.overdue) - Number(a.overdue) ||
      dueOf(a) - dueOf(b) ||
      a.goal_id.localeCompare(b.goal_id) ||
      a.todo_id.localeCompare(b.todo_id),
  );
}

/** Gates whose due time passed, among the rows. */
export function overdueRows(rows: readonly GateInboxRow[]): GateInboxRow[] {
  return rows.filter((row) => row.overdue);
}

/**
 * When each of these todos was added, from the goal's rollout event log (`todo_add` rows; the first
 * row per todo wins). A missing or unreadable log gives an empty map: the inbox falls back to `updated_at`.
 */
/**
 * The goal's rollout event log as it stands (size and modification time; `missing` when there is none): a gate whose
 * `todo_add` event was not found is looked for again only once the log has changed.
 */
export async function rolloutLogStamp(runtimeRoot: string, goalId: string): Promise<string> {
  try {
    const stat = await fs.promises.stat(rolloutEventLogPath(runtimeRoot, goalId));
    return `${stat.size}:${stat.mtimeMs}`;
  } catch {
    return 'missing';
  }
}

export async function todoAddedTimes(
  runtimeRoot: string,
  goalId: string,
  todoIds: readonly string[],
): Promise<Map<string, string>> {
  const wanted = new Set(todoIds);
  const found = new Map<string, string>();
  if (wanted.size === 0) return found;
  const keep = Object.assign(
    (raw: Record<string, unknown>) =>
      raw['event_kind'] === 'todo_add' && typeof raw['todo_id'] === 'string' && wanted.has(raw['todo_id']),
    { needle: 'todo_add' },
  );
  try {
    const read = await readRolloutEvents(rolloutEventLogPath(runtimeRoot, goalId), keep);
    for (const event of read.events)
      if (event.todo_id !== undefined && event.recorded_at !== undefined && !found.has(event.todo_id))
        found.set(event.todo_id, event.recorded_at);
  } catch {
    // unreadable log: no event times
  }
  return found;
}

/** A duration for people: `45s`, `12m`, `3h 20m`, `2d 4h`. */
export function shortDuration(ms: number): string {
  const minutes = Math.floor(ms / 60_000);
  if (minutes < 1) return `${Math.max(0, Math.floor(ms / 1000))}s`;
  if (minutes < 60) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return minutes % 60 === 0 ? `${hours}h` : `${hours}h ${minutes % 60}m`;
  const days = Math.floor(hours / 24);
  return hours % 24 === 0 ? `${days}d` : `${days}d ${hours % 24}h`;
}
