import { isoOfMicros } from '../../pyCompat';
import { EVENT_CLASSES, type EventClass, type SampleRun } from '../../goal/runSample';

/**
 * `event_ledger_summary` (the original's `build_event_ledger_summary`): the sampled runs counted by event class in the
 * last 24 hours and 7 days (from the time of the answer, whole seconds), in total and per goal (goals with most events
 * in 24 h first, then 7 d, then id descending), with each goal's newest event's class and time.
 */

export const EVENT_LEDGER_PROXY_NOTE = 'append-only run-history projection; compact event-class counts only';
const DAY_US = 86_400_000_000;

type ClassCounts = Record<EventClass, number>;

export interface EventLedgerRow {
  goal_id: string;
  events_24h: number;
  events_7d: number;
  by_class_24h: ClassCounts;
  by_class_7d: ClassCounts;
  latest_event_class: EventClass | null;
  latest_event_at: string | null;
}

export interface EventLedgerSummary {
  available: true;
  source: 'run_history';
  generated_at: string;
  sample_run_count: number;
  proxy_note: string;
  event_classes: EventClass[];
  totals: { events_24h: number; events_7d: number; by_class_24h: ClassCounts; by_class_7d: ClassCounts };
  goals: EventLedgerRow[];
}

export function blankClassCounts(): ClassCounts {
  return { accounting: 0, decision: 0, evidence: 0, state: 0, work: 0 };
}

/** `now`: microseconds since the epoch, whole seconds (the original's `now_utc()`). */
export function eventLedgerSummary(sample: readonly SampleRun[], now: number): EventLedgerSummary {
  const cutoff24h = now - DAY_US;
  const cutoff7d = now - 7 * DAY_US;
  const totals = { events_24h: 0, events_7d: 0, by_class_24h: blankClassCounts(), by_class_7d: blankClassCounts() };
  const goals = new Map<string, EventLedgerRow & { latestUs: number | null }>();
  for (const run of sample) {
    if (run.us === null) continue;
    let goal = goals.get(run.goal);
    if (goal === undefined) {
      goal = {
        goal_id: run.goal,
        events_24h: 0,
        events_7d: 0,
        by_class_24h: blankClassCounts(),
        by_class_7d: blankClassCounts(),
        latest_event_class: null,
        latest_event_at: null,
        latestUs: null,
      };
      goals.set(run.goal, goal);
    }
    if (goal.latestUs === null || run.us > goal.latestUs) {
      goal.latest_event_class = run.event;
      goal.latest_event_at = run.iso ?? isoOfMicros(run.us);
      goal.latestUs = run.us;
    }
    if (run.us >= cutoff7d) {
      totals.events_7d++;
      totals.by_class_7d[run.event]++;
      goal.events_7d++;
      goal.by_class_7d[run.event]++;
    }
    if (run.us >= cutoff24h) {
      totals.events_24h++;
      totals.by_class_24h[run.event]++;
      goal.events_24h++;
      goal.by_class_24h[run.event]++;
    }
  }
  const rows = [...goals.values()]
    .sort(
      (a, b) =>
        b.events_24h - a.events_24h ||
        b.events_7d - a.events_7d ||
        (a.goal_id === b.goal_id ? 0 : a.goal_id < b.goal_id ? 1 : -1),
    )
    .map(({ latestUs: _latest, ...row }) => row);
  return {
    available: true,
    source: 'run_history',
    generated_at: isoOfMicros(now),
    sample_run_count: sample.length,
    proxy_note: EVENT_LEDGER_PROXY_NOTE,
    event_classes: [...EVENT_CLASSES],
    totals,
    goals: rows,
  };
}
