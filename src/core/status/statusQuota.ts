import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { quotaRefOfEntry, type QuotaRefKeys } from '../quota/goal';
import type { GoalRef } from '../registry/goalRef';
import type { IndexDigest } from '../quota/ledger';
import { readQuotaView } from '../quota/quotaView';
import { focusMarkerOf, type QuotaState } from '../quota/state';
import { quotaSummary, type GoalQuotaSummary } from '../quota/summary';
import { latestStatusRun, type RunIndexRead } from '../runtime/runIndex';
import { OPERATOR_WAITS } from '../todo/attention';
import type { FileStamp } from '../goal/files';
import type { RecentRunRow } from '../goal/recentRuns';
import type { GoalStatusTarget } from './goalStatusSchema';
import type { StatusQuotaSources } from './statusPayload';

export interface StatusQuotaOptions {
  /** The registry `loadStatus` reads (absolute). */
  registryPath: string;
  clock: Clock;
  homeDir: string;
}

/**
 * The goal's run index as status holds it, read at `stamp` (null: no index; a summary derived from it is
 * keyed by it, as a stat taken later may be of rows appended since): its rows (`runIndex`, null when the
 * index does not exist) or the persistent cache's digest of it with the goal's newest runs (the editor's
 * Recent runs; null when the cache entry holds none); `unread` when status holds neither (the summary
 * then reads the index itself).
 */
export type StatusIndexRead =
  | { kind: 'rows'; runIndex: RunIndexRead | null; stamp: FileStamp | null }
  | { kind: 'digest'; digest: IndexDigest; recentRuns: readonly RecentRunRow[] | null; stamp: FileStamp | null }
  | { kind: 'unread' };

/** What a goal's quota summary in status is computed from: the goal and its run index as status read them. */
export interface StatusQuotaReads {
  goal: Pick<GoalRef, QuotaRefKeys>;
  index: StatusIndexRead;
}

/** The reads of one goal `loadStatus` hands its quota summary (`StatusQuotaSources`), as `StatusQuotaReads`. */
export function statusQuotaReads(
  target: GoalStatusTarget,
  sources: Pick<StatusQuotaSources, 'registryEntry' | 'index'>,
  place: { registryPath: string; homeDir: string },
): StatusQuotaReads {
  if (sources.registryEntry === undefined)
    throw new LoopxError('goal_not_found', `goal '${target.goalId}' is not in the registry ${place.registryPath}`, {
      goal_id: target.goalId,
    });
  const goal = quotaRefOfEntry(sources.registryEntry, {
    goalId: target.goalId,
    registryPath: place.registryPath,
    projectRoot: target.projectRoot,
    runtimeRoot: target.runtimeRoot,
    homeDir: place.homeDir,
  });
  return { goal, index: sources.index };
}

/**
 * The goal's quota summary from what status read: its reservations are read now, its run index only when
 * status holds neither its rows nor their digest; then the pure `quotaSummary`.
 */
export async function statusGoalQuotaSummary(reads: StatusQuotaReads, clock: Clock): Promise<GoalQuotaSummary> {
  const { goal, index } = reads;
  const view = await readQuotaView(
    goal,
    clock,
    index.kind === 'digest'
      ? { kind: 'digest', digest: index.digest }
      : index.kind === 'rows'
        ? { kind: 'rows', runIndex: index.runIndex }
        : { kind: 'read' },
  );
  const latest =
    index.kind === 'digest'
      ? index.digest.has_latest
        ? { waiting_on: index.digest.latest_waiting_on }
        : null
      : latestStatusRun(view.rows);
  return quotaSummary({ goal, quota: view, latestStatusRun: latest });
}

/**
 * The `quotaSummary` of a `loadStatus` request: each goal's quota summary from what status already
 * read (the goal's registry entry, with its project and runtime root resolved once for all goals,
 * and its run index), so no goal re-reads the registry or its index.
 */
export function statusQuotaSummaries(
  options: StatusQuotaOptions,
): (goal: GoalStatusTarget, sources: StatusQuotaSources) => Promise<GoalQuotaSummary> {
  return async (target, sources) =>
    statusQuotaState(
      await statusGoalQuotaSummary(statusQuotaReads(target, sources, options), options.clock),
      sources.attention,
      sources.registryEntry === undefined ? null : focusMarkerOf(sources.registryEntry),
    );
}

/**
 * `statusQuotaState` for a long-lived reader (the live status model behind `/status.json` and the editor), so
 * it shows the same quota state as `loopx status`: the same projected object while the summary and the
 * item's route are unchanged, so items built from it are reused as they are.
 */
const projectedOf = new WeakMap<GoalQuotaSummary, { key: string; value: GoalQuotaSummary }>();
export function projectedStatusQuota(
  summary: GoalQuotaSummary,
  attention: StatusQuotaSources['attention'],
  registryEntry: Record<string, unknown> | undefined,
): GoalQuotaSummary {
  const focusMarker = registryEntry === undefined ? null : focusMarkerOf(registryEntry);
  const key = JSON.stringify([attention.waiting_on, attention.severity, focusMarker]);
  const kept = projectedOf.get(summary);
  if (kept !== undefined && kept.key === key) return kept.value;
  const value = statusQuotaState(summary, attention, focusMarker);
  projectedOf.set(summary, { key, value });
  return value;
}

/**
 * The quota state the status view shows for a goal, by LoopX's rule for status items: it follows the
 * item's attention route rather than the registry's `waiting_on` alone. First match wins:
 *   paused (goal stopped, compute 0; kept from the summary) → `blocked_health` when the item is
 *   `high` (a missing run artifact, a contract failure) → `operator_gate` when it waits on the
 *   controller or the owner (an open user gate or user todo) → `waiting` on external evidence →
 *   `focus_wait` (codex, focus marker) → `throttled` when the slots or a budget are used up (our
 *   reservations count as used) → `eligible` (codex) → `waiting`.
 */
export function statusQuotaState(
  summary: GoalQuotaSummary,
  attention: StatusQuotaSources['attention'],
  focusMarker: string | null,
): GoalQuotaSummary {
  if (summary.state === 'paused') return summary;
  const at = (state: QuotaState, reason: string): GoalQuotaSummary => ({ ...summary, state, reason });
  if (attention.severity === 'high')
    return at('blocked_health', 'a health or contract problem of the goal must clear before compute is spent');
  if (OPERATOR_WAITS.has(attention.waiting_on))
    return at(
      'operator_gate',
      `waiting on the ${attention.waiting_on.replace(/_/g, ' ')}; one bounded non-gated step may run`,
    );
  if (attention.waiting_on === 'external_evidence')
    return at('waiting', 'external evidence is still pending; no delivery compute is spent yet');
  if (attention.waiting_on !== 'codex') return at('waiting', `waiting on ${attention.waiting_on}`);
  if (focusMarker !== null)
    return at('focus_wait', `focus marker ${focusMarker}: the goal waits at a continuation boundary`);
  if (summary.exceeded) return summary.state === 'throttled' ? summary : at('throttled', 'the quota window is used up');
  return summary.state === 'eligible'
    ? summary
    : at('eligible', `${summary.compute} compute quota; eligible for the next automatic agent turn`);
}
