import type { AgentLaneNextAction, NextActionWarningInput } from './inputs';
import { nextActionWarningInputSchema } from './inputs';
import type { ComparedValue, NextActionProjectionWarning, ResolutionAction } from './schemas';
import { NEXT_ACTION_WARNING_TEXT } from './schemas';
import { actionsAligned, collapseWhitespace, displayText } from './text';
import { goalIdField, parseProjectionInput, projectionWarningId } from './warningIdentity';

const KIND = 'next_action_projection_mismatch';

/** A lane preserves the durable route only when it is an object whose flag is exactly `true`. */
function lanePreservesRoute(lane: AgentLaneNextAction | null | undefined): boolean {
  return typeof lane === 'object' && lane !== null && lane.preserves_goal_next_action === true;
}

function laneText(lane: AgentLaneNextAction | null | undefined): string | null {
  const text = typeof lane === 'string' ? lane : typeof lane === 'object' && lane !== null ? lane.text : undefined;
  return typeof text === 'string' && text.trim() !== '' ? text : null;
}

/**
 * `next_action_projection_warning`: the durable Next Action and the latest run's recommended action
 * disagree. Null when either is empty or they are aligned. A lane that preserves the durable route
 * downgrades the mismatch to `info` (nothing needs writing back); otherwise it is a `warning`.
 */
export function nextActionProjectionWarning(input: NextActionWarningInput): NextActionProjectionWarning | null {
  const { goalId, activeStateNextAction, latestRunRecommendedAction, agentLaneNextAction } = parseProjectionInput(
    nextActionWarningInputSchema,
    input,
    'nextActionProjectionWarning',
  );
  const active = displayText(activeStateNextAction);
  const latest = displayText(latestRunRecommendedAction);
  if (active === '' || latest === '' || actionsAligned(active, latest)) return null;

  const preserving = lanePreservesRoute(agentLaneNextAction);
  const lane = laneText(agentLaneNextAction);
  const text = preserving ? NEXT_ACTION_WARNING_TEXT.info : NEXT_ACTION_WARNING_TEXT.warning;
  const compared: ComparedValue[] = [
    { field: 'active_state_next_action', value: active },
    { field: 'latest_run_recommended_action', value: latest },
    ...(lane === null ? [] : [{ field: 'agent_lane_next_action', value: lane }]),
  ];
  // A text cut for display must not become the durable route, so adopting it is offered only when whole.
  const adoptLatest: ResolutionAction[] =
    !preserving && collapseWhitespace(latestRunRecommendedAction) === latest
      ? [{ kind: 'set_next_action', text: latest }]
      : [];
  const actions: ResolutionAction[] = [...adoptLatest, { kind: 'refresh_state' }, { kind: 'dismiss' }];
  return {
    schema_version: 'next_action_projection_warning_v0',
    kind: KIND,
    severity: preserving ? 'info' : 'warning',
    requires_state_writeback: !preserving,
    active_state_next_action: active,
    latest_run_recommended_action: latest,
    reason: text.reason,
    recommended_action: text.recommended_action,
    ...(lane === null ? {} : { agent_lane_next_action: lane }),
    message: preserving
      ? 'The latest run recommends a different action than the durable Next Action; the agent lane keeps the durable route, so nothing needs writing back.'
      : 'The latest run recommends a different action than the durable Next Action. Adopt it as the new route, or refresh the state to record the current route.',
    id: projectionWarningId(KIND, goalId, compared),
    ...goalIdField(goalId),
    compared,
    actions,
  };
}
