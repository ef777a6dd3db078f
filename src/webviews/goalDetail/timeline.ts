import type { RolloutEvent } from '../../core/evidence/rolloutLog';
import type { TimelineTurn } from './protocol';

/**
 * The goal detail's event timeline: the latest rollout events (`evidence-log`), grouped by turn
 * instance (the original's `run_id`), the newest turn first and each turn's events in order.
 * Events that belong to no turn (a todo added by hand, a should-run without `--turn-instance-id`)
 * form groups of their own between the turns, in time order. Pure, so it is tested as data.
 */

/** How many turn groups the timeline shows. */
export const TIMELINE_TURNS = 12;
/** How many events a group lists (the newest ones; the count says how many there were). */
export const TIMELINE_EVENTS_PER_TURN = 12;

const text = (value: unknown): string | null => (typeof value === 'string' && value.trim() !== '' ? value : null);

/** A one-line account of an event: its summary, else its kind's words with what it touched. */
function describe(event: RolloutEvent): string {
  const summary = text(event.summary);
  if (summary !== null) return summary.length > 240 ? `${summary.slice(0, 239)}…` : summary;
  const details = event.details ?? {};
  const parts = [
    text(event.classification),
    text(event.status),
    text(event.delivery_outcome),
    text(details['effective_action']),
    text(details['phase']),
  ].filter((p): p is string => p !== null);
  return parts.length > 0 ? parts.join(' · ') : event.event_kind.replace(/_/g, ' ');
}

export function eventTimeline(events: readonly RolloutEvent[]): TimelineTurn[] {
  const groups: TimelineTurn[] = [];
  const byTurn = new Map<string, TimelineTurn>();
  let loose: TimelineTurn | null = null;
  for (const event of events) {
    const turn = text(event.run_id);
    const at = text(event.recorded_at);
    const row = {
      kind: event.event_kind,
      at,
      agent_id: text(event.agent_id),
      todo_id: text(event.todo_id) ?? text(event.details?.['todo_id']),
      text: describe(event),
    };
    let group: TimelineTurn | undefined;
    if (turn === null) {
      if (loose === null) {
        loose = {
          turn_instance_id: null,
          agent_id: row.agent_id,
          first_at: at,
          last_at: at,
          event_count: 0,
          events: [],
        };
        groups.push(loose);
      }
      group = loose;
    } else {
      loose = null;
      group = byTurn.get(turn);
      if (group === undefined) {
        group = {
          turn_instance_id: turn,
          agent_id: row.agent_id,
          first_at: at,
          last_at: at,
          event_count: 0,
          events: [],
        };
        byTurn.set(turn, group);
        groups.push(group);
      }
    }
    group.event_count += 1;
    group.first_at ??= at;
    if (at !== null) group.last_at = at;
    group.agent_id ??= row.agent_id;
    group.events.push(row);
    if (group.events.length > TIMELINE_EVENTS_PER_TURN) group.events.shift();
  }
  // Newest activity first: a turn retried later moves up.
  const order = (g: TimelineTurn) => Date.parse(g.last_at ?? '') || 0;
  return groups
    .map((g, index) => ({ g, index }))
    .sort((a, b) => order(b.g) - order(a.g) || b.index - a.index)
    .slice(0, TIMELINE_TURNS)
    .map(({ g }) => g);
}
