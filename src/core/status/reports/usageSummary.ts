import { isoOfMicros, pyRound } from '../../pyCompat';
import type { SampleRun, UsageSample } from '../../goal/runSample';

/**
 * `usage_summary` (the original's `build_usage_summary`): the sampled runs of the last 24 hours and 7 days (from the
 * time of the answer), in total and per goal: runs, quota slots spent (a void subtracts), automation runs (heartbeat,
 * automation or cron sources, and spend rows not from a visible goal), progress-signal runs (classified, not
 * bookkeeping), each goal's share of the 24 h runs, and token, cost and duration sums of the runs that report usage; a
 * window with no usage reported drops its usage fields. Goals: most 24 h runs first, then slots, cost, input tokens,
 * 7 d runs, id descending.
 */

export const USAGE_PROXY_NOTE = 'run-history proxy; carries aggregate token/cost/duration, excludes raw thread logs';
const DAY_US = 86_400_000_000;
const METRICS = ['input_tokens', 'output_tokens', 'cache_tokens', 'cost_usd', 'duration_ms'] as const;
const WINDOWS = ['24h', '7d'] as const;
type Window = (typeof WINDOWS)[number];

export type UsageCounts = Record<string, number>;
export type UsageRow = { goal_id: string } & UsageCounts;

export interface UsageSummary {
  available: true;
  source: 'run_history';
  generated_at: string;
  sample_run_count: number;
  proxy_note: string;
  totals: UsageCounts;
  goals: UsageRow[];
}

function counts(): UsageCounts {
  return {
    runs_24h: 0,
    runs_7d: 0,
    quota_spend_slots_24h: 0,
    quota_spend_slots_7d: 0,
    automation_run_count_24h: 0,
    automation_run_count_7d: 0,
    progress_signal_run_count_24h: 0,
    progress_signal_run_count_7d: 0,
  };
}

function withUsage(bucket: UsageCounts): UsageCounts {
  for (const metric of METRICS) for (const window of WINDOWS) bucket[`${metric}_${window}`] = 0;
  return bucket;
}

function goalCounts(): UsageCounts {
  const bucket = counts();
  // The per-goal key order of the original: the share after the counts, then the usage sums.
  bucket['project_share_24h'] = 0;
  return withUsage(bucket);
}

function add(bucket: UsageCounts, run: SampleRun, usage: UsageSample | null, window: Window): void {
  bucket[`runs_${window}`]! += 1;
  bucket[`quota_spend_slots_${window}`]! += run.slots;
  if (run.automation) bucket[`automation_run_count_${window}`]! += 1;
  if (run.progress) bucket[`progress_signal_run_count_${window}`]! += 1;
  if (usage !== null) for (const metric of METRICS) bucket[`${metric}_${window}`]! += usage[metric];
}

function roundCost(bucket: UsageCounts): void {
  for (const window of WINDOWS) {
    const key = `cost_usd_${window}`;
    if (key in bucket) bucket[key] = pyRound(bucket[key] as number, 6);
  }
}

function strip(bucket: UsageCounts, observed: ReadonlySet<Window>): void {
  for (const window of WINDOWS) {
    if (observed.has(window)) continue;
    for (const metric of METRICS) delete bucket[`${metric}_${window}`];
  }
}

/** `now`: microseconds since the epoch, whole seconds. */
export function usageSummary(sample: readonly SampleRun[], now: number): UsageSummary {
  const cutoff24h = now - DAY_US;
  const cutoff7d = now - 7 * DAY_US;
  const totals = withUsage(counts());
  const goals = new Map<string, UsageCounts & { goal_id?: unknown }>();
  const observed = new Set<Window>();
  const goalObserved = new Map<string, Set<Window>>();
  for (const run of sample) {
    if (run.us === null) continue;
    let goal = goals.get(run.goal);
    if (goal === undefined) {
      goal = goalCounts();
      goals.set(run.goal, goal);
    }
    for (const window of ['7d', '24h'] as const) {
      if (run.us < (window === '7d' ? cutoff7d : cutoff24h)) continue;
      add(totals, run, run.usage, window);
      add(goal, run, run.usage, window);
      if (run.usage !== null) {
        observed.add(window);
        let seen = goalObserved.get(run.goal);
        if (seen === undefined) goalObserved.set(run.goal, (seen = new Set()));
        seen.add(window);
      }
    }
  }
  const runs24h = totals['runs_24h'] as number;
  if (runs24h > 0)
    for (const goal of goals.values()) goal['project_share_24h'] = pyRound(goal['runs_24h']! / runs24h, 3);
  roundCost(totals);
  const rows: UsageRow[] = [...goals.entries()].map(([id, goal]) => {
    roundCost(goal);
    return { goal_id: id, ...goal } as UsageRow;
  });
  const num = (row: UsageRow, key: string): number => row[key] as number;
  rows.sort(
    (a, b) =>
      num(b, 'runs_24h') - num(a, 'runs_24h') ||
      num(b, 'quota_spend_slots_24h') - num(a, 'quota_spend_slots_24h') ||
      num(b, 'cost_usd_24h') - num(a, 'cost_usd_24h') ||
      num(b, 'input_tokens_24h') - num(a, 'input_tokens_24h') ||
      num(b, 'runs_7d') - num(a, 'runs_7d') ||
      (a.goal_id === b.goal_id ? 0 : a.goal_id < b.goal_id ? 1 : -1),
  );
  strip(totals, observed);
  for (const row of rows) strip(row, goalObserved.get(row.goal_id) ?? new Set());
  return {
    available: true,
    source: 'run_history',
    generated_at: isoOfMicros(now),
    sample_run_count: sample.length,
    proxy_note: USAGE_PROXY_NOTE,
    totals,
    goals: rows,
  };
}
