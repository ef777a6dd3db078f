import { blankClassCounts } from './eventLedger';
import { isoOfMicros, pyRound } from '../../pyCompat';
import type { EventClass, SampleRun } from '../../goal/runSample';

/**
 * `decision_freshness_summary` (the original's `build_decision_freshness_summary`): every decision among the sampled
 * runs (a `human_reward`, `operator_gate` or `operator_gate_resume_contract` record, else a decision classification:
 * an owner's or controller's, `operator_gate_approved`, `human_reward*`, `reward_overlay*`), with its age, whether it
 * is older than 7 days (stale), and how many of its goal's runs came after it within the 7 days (by event class); a
 * stale one or one with newer runs needs a rebase at the decision point. Items: those needing a rebase first, then
 * oldest, most newer runs, latest decision time; the first 12.
 */

export const DECISION_FRESHNESS_WINDOW_DAYS = 7;
export const DECISION_FRESHNESS_ITEM_LIMIT = 12;
export const DECISION_FRESHNESS_PROXY_NOTE =
  'checkpointed decision freshness projection; rebase old decisions at the decision point before reuse';
const DAY_US = 86_400_000_000;

export interface DecisionFreshnessItem {
  goal_id: string;
  decision_kind: string;
  decision_at: string;
  classification: unknown;
  age_days: number;
  stale_by_age: boolean;
  newer_event_count_7d: number;
  newer_event_classes_7d: Record<EventClass, number>;
  freshness_state: 'stale_rebase_required' | 'rebase_required' | 'fresh';
  requires_decision_point_rebase: boolean;
  reason: string;
}

export interface DecisionFreshnessSummary {
  available: true;
  source: 'run_history';
  generated_at: string;
  sample_run_count: number;
  window_days: number;
  proxy_note: string;
  summary: { decision_count: number; stale_count: number; rebase_required_count: number; fresh_count: number };
  items: DecisionFreshnessItem[];
}

function reasonOf(staleByAge: boolean, newer: number): string {
  if (staleByAge && newer > 0)
    return 'decision older than freshness window and newer sampled events exist; rebase at decision point';
  if (staleByAge) return 'decision older than freshness window; rebase at decision point';
  if (newer > 0) return 'newer sampled events exist after decision; rebase at decision point';
  return 'no newer sampled events inside freshness window';
}

/** `now`: microseconds since the epoch, whole seconds. */
export function decisionFreshnessSummary(sample: readonly SampleRun[], now: number): DecisionFreshnessSummary {
  const cutoff = now - DECISION_FRESHNESS_WINDOW_DAYS * DAY_US;
  const timed = sample.filter((run): run is SampleRun & { us: number } => run.us !== null);
  const items: DecisionFreshnessItem[] = [];
  let stale = 0;
  let rebase = 0;
  let fresh = 0;
  for (const run of timed) {
    for (const kind of run.decisionKinds) {
      const classes = blankClassCounts();
      let newer = 0;
      for (const other of timed) {
        if (other.goal !== run.goal || other.us <= run.us || other.us < cutoff) continue;
        newer++;
        classes[other.event]++;
      }
      const staleByAge = run.us < cutoff;
      if (staleByAge) stale++;
      const requiresRebase = staleByAge || newer > 0;
      if (requiresRebase) rebase++;
      else fresh++;
      items.push({
        goal_id: run.goal,
        decision_kind: kind,
        decision_at: run.iso ?? isoOfMicros(run.us),
        classification: run.classification,
        age_days: pyRound(Math.max(0, (now - run.us) / 1_000_000 / 86_400), 2),
        stale_by_age: staleByAge,
        newer_event_count_7d: newer,
        newer_event_classes_7d: classes,
        freshness_state: staleByAge ? 'stale_rebase_required' : newer > 0 ? 'rebase_required' : 'fresh',
        requires_decision_point_rebase: requiresRebase,
        reason: reasonOf(staleByAge, newer),
      });
    }
  }
  items.sort(
    (a, b) =>
      Number(b.requires_decision_point_rebase) - Number(a.requires_decision_point_rebase) ||
      b.age_days - a.age_days ||
      b.newer_event_count_7d - a.newer_event_count_7d ||
      (a.decision_at === b.decision_at ? 0 : a.decision_at < b.decision_at ? 1 : -1),
  );
  return {
    available: true,
    source: 'run_history',
    generated_at: isoOfMicros(now),
    sample_run_count: sample.length,
    window_days: DECISION_FRESHNESS_WINDOW_DAYS,
    proxy_note: DECISION_FRESHNESS_PROXY_NOTE,
    summary: { decision_count: items.length, stale_count: stale, rebase_required_count: rebase, fresh_count: fresh },
    items: items.slice(0, DECISION_FRESHNESS_ITEM_LIMIT),
  };
}
