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
import type { StatusRefKeys } from './goalStatusSchema';
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
  target: Pick<GoalRef, StatusRefKeys>,
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
): (goal: Pick<GoalRef, StatusRefKeys>, sources: StatusQuotaSources) => Promise<StatusItemQuotaSummary> {
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
const projectedOf = new WeakMap<GoalQuotaSummary, { key: string; value: StatusItemQuotaSummary }>();
export function projectedStatusQuota(
  summary: GoalQuotaSummary,
  attention: StatusQuotaSources['attention'],
  registryEntry: Record<string, unknown> | undefined,
): StatusItemQuotaSummary {
  const focusMarker = registryEntry === undefined ? null : focusMarkerOf(registryEntry);
  const key = JSON.stringify([attention.waiting_on, attention.severity, focusMarker]);
  const kept = projectedOf.get(summary);
  if (kept !== undefined && kept.key === key) return kept.value;
  const value = statusQuotaState(summary, attention, focusMarker);
  projectedOf.set(summary, { key, value });
  return value;
}

/**
 * The policy the original LoopX states on a status item at an operator gate (`quota_status` in its `loopx/quota.py`,
 * word for word): what the gate blocks and the one bounded turn a heartbeat may still spend.
 */
export const OPERATOR_GATE_BYPASS_POLICY =
  'Do not execute agent_command, adapter work, write-control, production actions, or the gated path. A heartbeat may ' +
  'spend one bounded turn on read-only steering, analysis, documentation, or another priority-stack item that does ' +
  'not depend on this gate.';

/** The original's focus-wait reason (`FOCUS_WAIT_REASON`, its `control_plane/quota/policy_constants.py`). */
export const FOCUS_WAIT_REASON =
  'focus wait: delivery lane has a continuation boundary or missing novelty; wait for new evidence, owner input, ' +
  'external eval, or a clean baseline before spending delivery compute';

/** A status item's quota: the goal's summary with the state, the words and the gate fields of its item's route. */
export type StatusItemQuotaSummary = GoalQuotaSummary & {
  /** What the state blocks: `gated_delivery` at an operator gate, `delivery_focus` in a focus wait. */
  blocked_action_scope?: string;
  /** At an operator gate: one bounded non-gated turn may run, under `safe_bypass_policy`. */
  safe_bypass_allowed?: boolean;
  safe_bypass_policy?: string;
  focus_wait?: boolean;
};

/** A number as Python's `f"{x:g}"` writes it (6 significant digits, no trailing zeros), as the original's reasons do. */
export function pythonG(x: number): string {
  if (Number.isNaN(x)) return 'nan';
  if (!Number.isFinite(x)) return x > 0 ? 'inf' : '-inf';
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [mantissa = '', exponentText = '0'] = x.toExponential(5).split('e');
  const exponent = Number(exponentText);
  const trim = (digits: string): string => (digits.includes('.') ? digits.replace(/\.?0+$/, '') : digits);
  if (exponent < -4 || exponent >= 6)
    return `${trim(mantissa)}e${exponent < 0 ? '-' : '+'}${String(Math.abs(exponent)).padStart(2, '0')}`;
  return trim(x.toFixed(Math.max(0, 5 - exponent)));
}

/**
 * The quota state the status view shows for a goal, by LoopX's rule for status items (the original's `quota_status`):
 * it follows the item's attention route rather than the registry's `waiting_on` alone, and words each state as the
 * original does. First match wins:
 *   paused (goal stopped, compute 0; kept from the summary) → `blocked_health` when the item is `high` (a missing run
 *   artifact, a contract failure) → `operator_gate` when it waits on the controller or the owner (an open user gate
 *   or user todo), with the gate's bypass policy (`blocked_action_scope: gated_delivery`, `safe_bypass_allowed`,
 *   `safe_bypass_policy`) → `waiting` on external evidence → `focus_wait` (codex, focus marker; `blocked_action_scope:
 *   delivery_focus`) → `throttled` when the slots or a budget are used up (our reservations count as used; the
 *   original's words when the spent slots alone use them up, ours for a reservation or a budget) → `eligible`
 *   (codex) → `waiting`.
 */
export function statusQuotaState(
  summary: GoalQuotaSummary,
  attention: StatusQuotaSources['attention'],
  focusMarker: string | null,
): StatusItemQuotaSummary {
  if (summary.state === 'paused') return summary;
  const at = (
    state: QuotaState,
    reason: string,
    extra: Omit<StatusItemQuotaSummary, keyof GoalQuotaSummary> = {},
  ): StatusItemQuotaSummary => ({ ...summary, ...extra, state, reason });
  if (attention.severity === 'high')
    return at('blocked_health', 'health or contract blocker must clear before compute is spent');
  if (OPERATOR_WAITS.has(attention.waiting_on))
    return at('operator_gate', 'operator gate blocks gated delivery; safe non-gated steering may continue', {
      blocked_action_scope: 'gated_delivery',
      safe_bypass_allowed: true,
      safe_bypass_policy: OPERATOR_GATE_BYPASS_POLICY,
    });
  if (attention.waiting_on === 'external_evidence')
    return at('waiting', 'external evidence is still pending; do not spend delivery compute yet');
  if (attention.waiting_on !== 'codex') return at('waiting', 'no active Codex-ready work is currently selected');
  if (focusMarker !== null)
    return at('focus_wait', FOCUS_WAIT_REASON, { blocked_action_scope: 'delivery_focus', focus_wait: true });
  if (summary.exceeded) {
    if (summary.spent_slots >= summary.allowed_slots)
      return at(
        'throttled',
        `${pythonG(summary.compute)} compute quota spent ${summary.spent_slots}/${summary.allowed_slots} slots in this window`,
      );
    return summary.state === 'throttled' ? summary : at('throttled', 'the quota window is used up');
  }
  return at('eligible', `${pythonG(summary.compute)} compute quota; eligible for the next automatic agent turn`);
}
