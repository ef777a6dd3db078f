import { sampleOf, type ReadinessEvent, type SampleRun } from '../../goal/runSample';
import { decisionFreshnessSummary } from './decisionFreshness';
import { eventLedgerSummary } from './eventLedger';
import { promotionGate, promotionReadinessSummary, type ReadinessScan } from './promotionReadiness';
import { usageSummary } from './usageSummary';

/**
 * The status payload's run-history reports, windowed on the time of the answer: computed from what status loaded
 * (each goal's newest runs and newest readiness run, kept with its run index), never frozen in a cache.
 */

export interface RuntimeReportInputs {
  /** Each loaded goal's newest runs (runSample.ts), by goal id. */
  perGoal: ReadonlyMap<string, readonly SampleRun[]>;
  /** Runs sampled: `max(limit, 20)`. */
  limit: number;
  scan: ReadinessScan;
  goalFilter: string | null;
  /** The registry and runtime root as the payload names them. */
  registry: string;
  runtimeRoot: string;
}

export interface RuntimeReports {
  event_ledger_summary: Record<string, unknown>;
  promotion_readiness_summary: Record<string, unknown>;
  decision_freshness_summary: Record<string, unknown>;
  usage_summary: Record<string, unknown>;
  promotion_gate: Record<string, unknown>;
}

const sampled = new WeakMap<RuntimeReportInputs, SampleRun[]>();

/** The reports at `nowMs` (the original reads "now" in whole seconds for the windows, exactly for ages). */
export function runtimeReports(inputs: RuntimeReportInputs, nowMs: number): RuntimeReports {
  let sample = sampled.get(inputs);
  if (sample === undefined) {
    sample = sampleOf(inputs.perGoal, inputs.limit);
    sampled.set(inputs, sample);
  }
  const nowUs = Math.floor(nowMs / 1000) * 1_000_000;
  return {
    event_ledger_summary: { ...eventLedgerSummary(sample, nowUs) },
    promotion_readiness_summary: promotionReadinessSummary(sample, inputs.scan, inputs.goalFilter, nowMs),
    decision_freshness_summary: { ...decisionFreshnessSummary(sample, nowUs) },
    usage_summary: { ...usageSummary(sample, nowUs) },
    promotion_gate: promotionGate(inputs.scan, { registry: inputs.registry, runtimeRoot: inputs.runtimeRoot }, nowMs),
  };
}

export type { ReadinessEvent, ReadinessScan };
