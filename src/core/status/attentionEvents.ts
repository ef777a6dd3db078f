import { parseIsoInstant } from '../isoTime';

/**
 * What needs the person, derived from two snapshots of the live status model (before and after a
 * reload, or a clock tick): a gate opened, a gate passed its due time, a quota or budget reached, a
 * replan came due, a goal stopped or a turn failed, a task lease about to expire. Pure: the editor
 * builds the snapshots from its model, drops what this window just did (`withoutOwnActions`),
 * and shows one notification per kind of a burst (`coalesceEvents`).
 *
 * There is no "previous" at startup: the first snapshot is the baseline and yields nothing, so state
 * that existed when the window opened is never replayed as news (the views and the status bar show it).
 */

export const ATTENTION_KINDS = [
  'gate_opened',
  'gate_overdue',
  'quota_reached',
  'replan_due',
  'loop_stopped',
  'lease_expiring',
] as const;
export type AttentionKind = (typeof ATTENTION_KINDS)[number];

export interface AttentionGate {
  todoId: string;
  title: string;
  dueAt: string | null;
}

export interface AttentionLease {
  todoId: string;
  owner: string;
  expiresAt: string;
}

/** One goal as the events read it. */
export interface AttentionGoalFacts {
  goalKey: string;
  goalId: string;
  registryPath: string;
  openGates: readonly AttentionGate[];
  /** The quota summary's `exceeded` (slots or a budget at its limit) and its reason; null: unknown. */
  quota: { exceeded: boolean; reason: string } | null;
  /** Agent lanes that owe a replan now (`''` for a goal without registered agents). */
  replanLanes: readonly string[];
  /** The goal is stopped or paused (registry status, or the quota's `goal_stopped` pause). */
  stopped: boolean;
  /** The newest run that records a failed turn, by any process. */
  latestFailure: { at: string; classification: string; agentId: string | null } | null;
  /** Active task leases of the goal's todos. */
  leases: readonly AttentionLease[];
}

export interface AttentionSnapshot {
  atMs: number;
  goals: ReadonlyMap<string, AttentionGoalFacts>;
}

export interface AttentionEvent {
  kind: AttentionKind;
  goalKey: string;
  goalId: string;
  registryPath: string;
  /** What the event is about within the goal: a gate or todo id, an agent lane, `stopped`/`failed`. */
  subject: string;
  /** A short name of the subject for people (a gate's title, an agent id, a classification). */
  title: string;
  /** More: a quota's reason, a due or expiry instant, a lease owner. */
  detail: string;
}

export interface AttentionOptions {
  /** A lease expiring within this many ms is announced (once per expiry instant). */
  leaseWarningMs: number;
}

export const DEFAULT_LEASE_WARNING_MS = 5 * 60_000;

/** The events between two snapshots; none when there is no previous one (startup). */
export function attentionEvents(
  previous: AttentionSnapshot | null,
  next: AttentionSnapshot,
  options: AttentionOptions = { leaseWarningMs: DEFAULT_LEASE_WARNING_MS },
): AttentionEvent[] {
  if (previous === null) return [];
  const events: AttentionEvent[] = [];
  for (const [key, goal] of next.goals) {
    const before = previous.goals.get(key);
    // A goal seen for the first time (added, or read for the first time) is a baseline too.
    if (before === undefined) continue;
    const event = (kind: AttentionKind, subject: string, title: string, detail: string): AttentionEvent => ({
      kind,
      goalKey: key,
      goalId: goal.goalId,
      registryPath: goal.registryPath,
      subject,
      title,
      detail,
    });
    const gatesBefore = new Map(before.openGates.map((gate) => [gate.todoId, gate]));
    for (const gate of goal.openGates) {
      const old = gatesBefore.get(gate.todoId);
      if (old === undefined) {
        events.push(event('gate_opened', gate.todoId, gate.title, gate.dueAt ?? ''));
        continue;
      }
      const due = parseIsoInstant(gate.dueAt);
      const dueBefore = parseIsoInstant(old.dueAt);
      const wasOverdue = dueBefore !== null && dueBefore <= previous.atMs;
      if (due !== null && due <= next.atMs && !(wasOverdue && dueBefore === due))
        events.push(event('gate_overdue', gate.todoId, gate.title, gate.dueAt ?? ''));
    }
    if (goal.quota?.exceeded === true && before.quota?.exceeded !== true)
      events.push(event('quota_reached', 'quota', goal.goalId, goal.quota.reason));
    const lanesBefore = new Set(before.replanLanes);
    for (const lane of goal.replanLanes) if (!lanesBefore.has(lane)) events.push(event('replan_due', lane, lane, ''));
    if (goal.stopped && !before.stopped) events.push(event('loop_stopped', 'stopped', goal.goalId, ''));
    const failure = goal.latestFailure;
    if (failure !== null && failure.at !== before.latestFailure?.at)
      events.push(event('loop_stopped', 'failed', failure.classification, failure.agentId ?? ''));
    const warned = (lease: AttentionLease, at: number): boolean => {
      const expires = parseIsoInstant(lease.expiresAt);
      return expires !== null && expires > at && expires - at <= options.leaseWarningMs;
    };
    const leasesBefore = new Map(before.leases.map((lease) => [lease.todoId, lease]));
    for (const lease of goal.leases) {
      if (!warned(lease, next.atMs)) continue;
      const old = leasesBefore.get(lease.todoId);
      if (old !== undefined && old.expiresAt === lease.expiresAt && warned(old, previous.atMs)) continue;
      events.push(event('lease_expiring', lease.todoId, lease.owner, lease.expiresAt));
    }
  }
  return events;
}

/**
 * Something this window just did: its own writes must not come back as news. A mark names a goal,
 * optionally one subject (a gate or todo id) and the kinds it covers, and holds until `untilMs`.
 */
export interface OwnActionMark {
  goalKey: string;
  subject?: string | undefined;
  kinds?: readonly AttentionKind[] | undefined;
  untilMs: number;
}

/** The events no live mark covers. */
export function withoutOwnActions(
  events: readonly AttentionEvent[],
  marks: readonly OwnActionMark[],
  nowMs: number,
): AttentionEvent[] {
  const live = marks.filter((mark) => mark.untilMs >= nowMs);
  return events.filter(
    (event) =>
      !live.some(
        (mark) =>
          mark.goalKey === event.goalKey &&
          (mark.subject === undefined || mark.subject === event.subject) &&
          (mark.kinds === undefined || mark.kinds.includes(event.kind)),
      ),
  );
}

/** One notification: the events of one kind in a burst (one event, or "3 gates opened"). */
export interface AttentionNotice {
  kind: AttentionKind;
  events: AttentionEvent[];
}

/** Groups a burst by kind, in `ATTENTION_KINDS` order, dropping repeats of the same event. */
export function coalesceEvents(events: readonly AttentionEvent[]): AttentionNotice[] {
  const notices: AttentionNotice[] = [];
  for (const kind of ATTENTION_KINDS) {
    const seen = new Set<string>();
    const ofKind = events.filter((event) => {
      if (event.kind !== kind) return false;
      const id = `${event.goalKey}\u0000${event.subject}\u0000${event.title}\u0000${event.detail}`;
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
    if (ofKind.length > 0) notices.push({ kind, events: ofKind });
  }
  return notices;
}
