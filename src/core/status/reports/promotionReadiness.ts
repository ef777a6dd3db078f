import * as path from 'node:path';
import { isoOfMicros, pyFloatStr, pyInstant, pyRound, pyText, truthy } from '../../pyCompat';
import { PROMOTION_READINESS_CLASSIFICATION, type ReadinessEvent, type SampleRun } from '../../goal/runSample';

/**
 * `promotion_readiness_summary` and `promotion_gate` (the original's `build_promotion_readiness_summary`,
 * `latest_promotion_readiness_event`, `add_promotion_readiness_freshness` and `build_promotion_gate`): the newest canary
 * promotion-readiness run (classification `canary_promotion_readiness_smoke_group`), from the runtime's release ledger
 * (`release/promotion-readiness/runs/index.jsonl`, which wins whenever it has one) or any goal's run index, and
 * whether it is fresh (at most 24 hours old at the time of the answer). The summary takes the newest such run of the
 * sampled runs unless the full scan has a newer one; the gate warns (non-blocking) when no fresh run exists.
 */

export const PROMOTION_READINESS_FRESHNESS_HOURS = 24;
export const PROMOTION_READINESS_PROXY_NOTE =
  'canary readiness from runtime ledger or legacy goal history; exact evidence stays in append-only artifacts';
export const PROMOTION_GATE_ACTION = 'python3 examples/canary/canary-promotion-readiness-smoke.py';
export const PROMOTION_READINESS_RELEASE_INDEX = path.join('release', 'promotion-readiness', 'runs', 'index.jsonl');

/** What the full scan found: the release ledger's newest run, and each goal folder's (in goal id order). */
export interface ReadinessScan {
  runtimeRoot: string;
  goalsDirExists: boolean;
  releaseLedgerExists: boolean;
  release: ReadinessEvent | null;
  /** Goal folders with a run index, by id; null: no readiness run in it. */
  goals: ReadonlyMap<string, ReadinessEvent | null>;
}

/** `latest_promotion_readiness_event(runtime_root, goal_id)`. */
export function latestReadinessEvent(scan: ReadinessScan, goalId: string | null): Record<string, unknown> {
  if (!scan.goalsDirExists && !scan.releaseLedgerExists)
    return { available: false, runtime_root: scan.runtimeRoot, reason: 'promotion readiness ledger does not exist' };
  let latest: ReadinessEvent | null = scan.release;
  if (latest === null) {
    const ids = [...scan.goals.keys()].filter((id) => goalId === null || id === goalId).sort();
    for (const id of ids) {
      const event = scan.goals.get(id) ?? null;
      if (event !== null && (latest === null || pyText(event.generated_at) > pyText(latest.generated_at)))
        latest = event;
    }
  }
  if (latest === null)
    return {
      available: false,
      runtime_root: scan.runtimeRoot,
      goal_id: goalId,
      reason:
        goalId !== null
          ? `no canary promotion readiness run found for \`${goalId}\``
          : 'no canary promotion readiness run found',
    };
  return { ...latest, runtime_root: scan.runtimeRoot };
}

/** `add_promotion_readiness_freshness`: `nowMs` is the time of the answer (milliseconds). */
export function withFreshness(event: Record<string, unknown>, nowMs: number): Record<string, unknown> {
  const result: Record<string, unknown> = { ...event, freshness_window_hours: PROMOTION_READINESS_FRESHNESS_HOURS };
  const missing = (status: string): Record<string, unknown> =>
    Object.assign(result, {
      freshness_status: status,
      is_fresh: false,
      requires_readiness_run: true,
      age_seconds: null,
      age_hours: null,
    });
  if (!truthy(result['available'])) return missing('missing');
  const generated = pyInstant(result['generated_at']);
  if (generated === null) return missing('unknown');
  const referenceUs = nowMs * 1000;
  const ageSeconds = Math.max(0, Math.trunc((referenceUs - generated.us) / 1_000_000));
  const fresh = ageSeconds <= PROMOTION_READINESS_FRESHNESS_HOURS * 3600;
  return Object.assign(result, {
    freshness_status: fresh ? 'fresh' : 'stale',
    is_fresh: fresh,
    requires_readiness_run: !fresh,
    age_seconds: ageSeconds,
    age_hours: pyRound(ageSeconds / 3600, 2),
    freshness_reference_time: isoOfMicros(referenceUs),
  });
}

/** `promotion_readiness_summary`. */
export function promotionReadinessSummary(
  sample: readonly SampleRun[],
  scan: ReadinessScan,
  goalId: string | null,
  nowMs: number,
): Record<string, unknown> {
  let latest: Record<string, unknown> | null = null;
  let latestUs: number | null = null;
  let count = 0;
  let source = 'run_history';
  for (const run of sample) {
    if (pyText(run.classification) !== PROMOTION_READINESS_CLASSIFICATION) continue;
    count++;
    if (run.us === null || run.readiness === undefined) continue;
    if (latestUs === null || run.us > latestUs) {
      latestUs = run.us;
      latest = { ...run.readiness };
    }
  }
  const full = latestReadinessEvent(scan, goalId);
  const fullAt = pyInstant(full['generated_at']);
  if (
    truthy(full['available']) &&
    (full['source'] === 'runtime_release_ledger' || latestUs === null || (fullAt !== null && fullAt.us > latestUs))
  ) {
    latest = full;
    source = pyText(full['source']) || 'run_history_full_scan';
  }
  const readiness = withFreshness(
    latest === null
      ? { available: false, source, reason: 'no canary promotion readiness run found in full run history' }
      : {
          available: true,
          source,
          goal_id: latest['goal_id'] ?? null,
          evidence_scope: latest['evidence_scope'] ?? null,
          dashboard_readiness: latest['dashboard_readiness'] ?? null,
          generated_at: latest['generated_at'] ?? null,
          classification: latest['classification'] ?? null,
          delivery_batch_scale: latest['delivery_batch_scale'] ?? null,
          delivery_outcome: latest['delivery_outcome'] ?? null,
          recommended_action: latest['recommended_action'] ?? null,
          json_exists: truthy(latest['json_exists']),
          markdown_exists: truthy(latest['markdown_exists']),
        },
    nowMs,
  );
  return Object.assign(readiness, {
    sample_run_count: count,
    proxy_note: PROMOTION_READINESS_PROXY_NOTE,
    freshness_window_hours: PROMOTION_READINESS_FRESHNESS_HOURS,
  });
}

/** `promotion_gate`: the readiness of the whole runtime (no goal filter), non-blocking. */
export function promotionGate(
  scan: ReadinessScan,
  place: { registry: string; runtimeRoot: string },
  nowMs: number,
): Record<string, unknown> {
  const readiness = withFreshness(latestReadinessEvent(scan, null), nowMs);
  const warn = readiness['requires_readiness_run'] === true;
  const gate: Record<string, unknown> = {
    ok: true,
    registry: place.registry,
    runtime_root: place.runtimeRoot,
    gate: 'promotion_readiness',
    gate_state: warn ? 'warning' : 'ready',
    can_promote: !warn,
    should_warn: warn,
    non_blocking: true,
    recommended_action: warn ? PROMOTION_GATE_ACTION : 'promotion readiness is fresh',
    readiness,
  };
  if (warn) gate['warning_message'] = promotionGateMessage(readiness);
  return gate;
}

function promotionGateMessage(readiness: Record<string, unknown>): string {
  const status = pyText(readiness['freshness_status']) || 'unknown';
  const generatedAt = truthy(readiness['generated_at']) ? pyText(readiness['generated_at']) : 'none';
  const age = readiness['age_hours'];
  const reason = pyText(readiness['reason']);
  let detail = `generated_at=${generatedAt}`;
  if (typeof age === 'number') detail += `, age_hours=${pyFloatStr(age)}`;
  if (reason !== '') detail += `, reason=${reason}`;
  return (
    `promotion-readiness evidence is ${status}; ${detail}. This is non-blocking, but before promoting a live ` +
    `checkout prefer \`loopx doctor\` and \`${PROMOTION_GATE_ACTION}\`.`
  );
}
