import type { LatestRunRecommendationInput, RunRow } from './inputs';
import { latestRunRecommendationInputSchema, runRowSchema } from './inputs';
import type { LatestRunRecommendation } from './schemas';
import { actionsAligned, publicSafeCompact } from './text';
import { parseIsoInstant } from '../../isoTime';
import { parseProjectionInput } from './warningIdentity';

/** Classifications of bookkeeping runs that say nothing about the goal's route. */
export const STATUS_NEUTRAL_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'quota_slot_spent',
  'quota_slot_voided',
  'quota_monitor_poll',
  'canary_promotion_readiness_smoke_group',
]);

export function isAgentLaneRun(row: RunRow): boolean {
  return row.progress_scope === 'agent_lane';
}

/** A run that must not count as the goal's latest status: bookkeeping, or an agent-lane run. */
export function isStatusNeutralRun(row: RunRow): boolean {
  return (
    (typeof row.classification === 'string' && STATUS_NEUTRAL_CLASSIFICATIONS.has(row.classification)) ||
    isAgentLaneRun(row)
  );
}

export interface LatestRuns {
  /** The newest run that is not status-neutral. */
  latestStatusRun: RunRow | null;
  /** Every agent-lane run, newest first. */
  agentLaneRuns: RunRow[];
}

/** Splits index rows (already sorted newest first) into the latest status run and the agent-lane runs. */
export function pickLatestRuns(rowsNewestFirst: readonly unknown[]): LatestRuns {
  // Neutrality reads only `classification` and `progress_scope`, which the schema keeps as they are
  // when they are strings, so rows are classified raw and only the picked ones are parsed.
  let latestStatusRun: RunRow | null = null;
  const agentLaneRuns: RunRow[] = [];
  for (const row of rowsNewestFirst) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) continue;
    const raw = row as RunRow;
    if (isAgentLaneRun(raw)) agentLaneRuns.push(parseRun(raw));
    else if (latestStatusRun === null && !isStatusNeutralRun(raw)) latestStatusRun = parseRun(raw);
  }
  return { latestStatusRun, agentLaneRuns };
}

/**
 * A picked row, parsed. The run index gives rows past its first few lazy artifact flags that are
 * not enumerable (runIndex.ts `artifactChecks`), so a parse (a copy) would drop them: they are
 * carried over, or an old status run would look as if its artifacts were missing.
 */
function parseRun(raw: RunRow): RunRow {
  const parsed: Record<string, unknown> = runRowSchema.parse(raw);
  const source = raw as Record<string, unknown>;
  for (const flag of ['json_exists', 'markdown_exists'])
    if (!Object.hasOwn(parsed, flag) && flag in source) parsed[flag] = source[flag];
  return parsed as RunRow;
}

/** At least as new as the status run; with no (datable) status run, any lane run qualifies. */
function laneAtLeastAsNew(laneRun: RunRow, statusRun: RunRow | null | undefined): boolean {
  const statusAt = parseIsoInstant(statusRun?.generated_at);
  if (statusAt === null) return true;
  const laneAt = parseIsoInstant(laneRun.generated_at);
  return laneAt !== null && laneAt >= statusAt;
}

/**
 * Chooses the text status shows as `latest_run_recommended_action` and its source (docs/projection.md): the
 * status run's action, unless the preferred agent's lane run is at least as new, or the lane
 * agrees with the durable route while the status run does not. Texts are public-safe compacted:
 * an action naming a local path or a secret counts as missing.
 */
export function selectLatestRunRecommendedAction(input: LatestRunRecommendationInput): LatestRunRecommendation {
  const { activeStateNextAction, latestStatusRun, latestAgentLaneRun, preferredAgentId } = parseProjectionInput(
    latestRunRecommendationInputSchema,
    input,
    'selectLatestRunRecommendedAction',
  );
  const statusText = publicSafeCompact(latestStatusRun?.recommended_action);
  const laneText = publicSafeCompact(latestAgentLaneRun?.recommended_action);
  const fromStatus: LatestRunRecommendation = {
    latest_run_recommended_action: statusText,
    latest_run_recommended_action_source: statusText === null ? null : 'latest_status_run',
  };
  if (laneText === null || !latestAgentLaneRun) return fromStatus;
  const fromLane: LatestRunRecommendation = {
    latest_run_recommended_action: laneText,
    latest_run_recommended_action_source: 'agent_lane_recommendation',
  };

  const preferredLane = Boolean(preferredAgentId) && latestAgentLaneRun.agent_id === preferredAgentId;
  if (preferredLane && laneAtLeastAsNew(latestAgentLaneRun, latestStatusRun)) return fromLane;
  if (!activeStateNextAction || !actionsAligned(laneText, activeStateNextAction)) return fromStatus;
  if (statusText === null || !actionsAligned(statusText, activeStateNextAction)) return fromLane;
  return fromStatus;
}
