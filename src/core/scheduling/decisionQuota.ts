import type { GoalSnapshot } from '../goal/snapshot';
import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from '../quota/goal';
import { admissionProblem, profileEstimate } from '../quota/admission';
import type { QuotaView } from '../quota/quotaView';
import type { QuotaStatus } from '../quota/state';
import { latestStatusRun, type RunIndexEntry } from '../runtime/runIndex';
import type { DecisionOptions } from './decisionContract';

/** The decision's read model of the goal's quota: what its snapshot's ledger, reservations and run index say. */

/**
 * A goal the slots and budgets leave runnable is still throttled when the next turn would not be
 * admitted: the same arithmetic as the turn's reservation (`admissionProblem`: spent + reserved +
 * this turn's estimate within every limit), so the guard never says "run" for a turn that admission
 * or the spend would then refuse. A turn that already holds its reservation (or has spent) was
 * admitted; `refusedBy` is a reservation's refusal the caller met (a race lost after the decision).
 */
export function admissionChecked(
  goal: Pick<GoalRef, QuotaRefKeys>,
  agentId: string | null,
  quota: QuotaStatus,
  view: QuotaView,
  options: DecisionOptions,
): QuotaStatus {
  // Slots the quota state already counts (spent + reserved against allowed, as the original); what it
  // cannot know is whether the next turn's budget estimate fits.
  const budgeted = Object.values(quotaConfigOf(goal).budgets).some((limit) => limit !== null);
  if (quota.state !== 'eligible') return quota;
  const throttled = (reason: string): QuotaStatus => ({
    ...quota,
    state: 'throttled',
    reason: `quota refused: ${reason}`,
  });
  if (options.refusedBy !== undefined) return throttled(options.refusedBy);
  if (!budgeted) return quota;
  const admitted = options.admittedEffectId;
  if (
    admitted !== undefined &&
    (view.ledger.settled_effect_ids.has(admitted) || view.live.some((r) => r.effect_id === admitted))
  )
    return quota;
  const { problem } = admissionProblem(goal, view.ledger, view.reserved, profileEstimate(goal, agentId));
  return problem === null ? quota : throttled(problem);
}

/** What turns in flight hold, without the asking turn's own reservation (a retry is not held back by itself). */
export function reservedBesides(view: QuotaView, effectId: string | undefined): QuotaView['reserved'] {
  const own = effectId === undefined ? undefined : view.live.find((r) => r.effect_id === effectId);
  if (own === undefined) return view.reserved;
  return {
    slots: view.reserved.slots - own.slots,
    tokens: view.reserved.tokens - (own.estimate.tokens ?? 0),
    cost_usd: view.reserved.cost_usd - (own.estimate.cost_usd ?? 0),
    minutes: view.reserved.minutes - (own.estimate.minutes ?? 0),
  };
}

/** What a decision reads from the run index. */
export interface DecisionRuns {
  latestStatusRun: RunIndexEntry | null;
  /** Rows for the next-action warning (it picks the newest status run and the newest agent-lane run). */
  warningRows: readonly RunIndexEntry[];
  /** Rows for the replan scan (at least every row of the lane it can visit, newest first). */
  replanRows: readonly RunIndexEntry[];
}

export function decisionRuns(snapshot: GoalSnapshot, agentId: string | null): DecisionRuns {
  const runs = snapshot.runs;
  if (runs.kind === 'rows') {
    return {
      latestStatusRun: latestStatusRun(runs.rows),
      warningRows: runs.rows,
      replanRows: runs.rows,
    };
  }
  return {
    latestStatusRun: runs.latestStatusRun,
    warningRows: runs.latestRuns,
    replanRows: agentId === null ? runs.replanRows.all : (runs.replanRows.byAgent.get(agentId) ?? []),
  };
}
