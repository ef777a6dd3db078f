import type { RunRow, StaleLatestRunInput } from './inputs';
import { staleLatestRunInputSchema } from './inputs';
import type { ComparedValue, StaleLatestRunWarning, StaleReasonCode } from './schemas';
import { STALE_LATEST_RUN_RECOMMENDED_ACTION } from './schemas';
import { parseIsoInstant } from '../../isoTime';
import { goalIdField, parseProjectionInput, projectionWarningId } from './warningIdentity';

const KIND = 'stale_latest_run_projection';

function isLater(candidate: number | null, reference: number | null): boolean {
  return candidate !== null && reference !== null && candidate > reference;
}

/** An agent-lane run has already seen this state: same digest, or its snapshot (else generation) time is not older. */
function laneRunSawState(run: RunRow, stateDigest: string, stateUpdatedAt: number | null): boolean {
  if (run.state?.sha256_16 && run.state.sha256_16 === stateDigest) return true;
  const seenAt = parseIsoInstant(run.state?.frontmatter?.updated_at) ?? parseIsoInstant(run.generated_at);
  return seenAt !== null && stateUpdatedAt !== null && seenAt >= stateUpdatedAt;
}

/**
 * `stale_latest_run_warning`: the state file changed after the latest status run recorded it, so
 * routing derived from that run may be out of date. Reasons, in order: the state was updated after
 * the run was generated; after the run's snapshot of it; the run's digest differs. Null for goals
 * outside the registry, without a readable state file or a status run, or when some agent-lane run
 * has already seen the current state.
 */
export function staleLatestRunWarning(input: StaleLatestRunInput): StaleLatestRunWarning | null {
  const { goalId, registryMember, activeState, latestStatusRun, agentLaneRuns } = parseProjectionInput(
    staleLatestRunInputSchema,
    input,
    'staleLatestRunWarning',
  );
  if (!registryMember || !activeState || !latestStatusRun) return null;

  const stateUpdatedAtText = activeState.updated_at ?? null;
  const stateUpdatedAt = parseIsoInstant(stateUpdatedAtText);
  const runStateUpdatedAtText = latestStatusRun.state?.frontmatter?.updated_at ?? null;
  const runDigest = latestStatusRun.state?.sha256_16 ?? null;

  const reasons: StaleReasonCode[] = [];
  if (isLater(stateUpdatedAt, parseIsoInstant(latestStatusRun.generated_at)))
    reasons.push('active_state_updated_after_latest_run');
  if (isLater(stateUpdatedAt, parseIsoInstant(runStateUpdatedAtText)))
    reasons.push('active_state_updated_after_latest_run_snapshot');
  if (runDigest && runDigest !== activeState.sha256_16)
    reasons.push('active_state_digest_differs_from_latest_run_snapshot');
  if (reasons.length === 0) return null;
  if (agentLaneRuns.some((run) => laneRunSawState(run, activeState.sha256_16, stateUpdatedAt))) return null;

  const compared: ComparedValue[] = [
    { field: 'active_state_updated_at', value: stateUpdatedAtText },
    { field: 'active_state_sha256_16', value: activeState.sha256_16 },
    { field: 'latest_run_generated_at', value: latestStatusRun.generated_at ?? null },
    { field: 'latest_run_state_updated_at', value: runStateUpdatedAtText },
    { field: 'latest_run_state_sha256_16', value: runDigest },
  ];
  return {
    kind: KIND,
    source: 'active_state_vs_latest_run',
    severity: 'warning',
    requires_refresh_state: true,
    reason: reasons.join(','),
    active_state_updated_at: stateUpdatedAtText,
    latest_run_generated_at: latestStatusRun.generated_at ?? null,
    latest_run_state_updated_at: runStateUpdatedAtText,
    latest_run_classification: latestStatusRun.classification ?? null,
    recommended_action: STALE_LATEST_RUN_RECOMMENDED_ACTION,
    reason_codes: reasons,
    message:
      'The state file changed after the latest run recorded it, so routing from that run may be out of date. Refresh the state to record a new snapshot.',
    id: projectionWarningId(KIND, goalId, compared),
    ...goalIdField(goalId),
    compared,
    actions: [{ kind: 'refresh_state' }, { kind: 'dismiss' }],
  };
}
