import type { StateActionWarningInput } from './inputs';
import { stateActionWarningInputSchema } from './inputs';
import type { ComparedValue, StateActionProjectionWarning } from './schemas';
import { STATE_ACTION_WARNING_TEXT } from './schemas';
import { actionsAligned, collapseWhitespace, displayText } from './text';
import { goalIdField, parseProjectionInput, projectionWarningId } from './warningIdentity';

const KIND = 'state_action_projection_mismatch';

/**
 * `state_action_projection_warning`: quota picked an executable backlog item (lane
 * `advancement_task` because of `open_agent_todo`) whose action differs from the durable Next
 * Action. Null outside that lane, when either text is empty, when the picked item is the claiming
 * agent's own todo, or when the two texts are aligned.
 */
export function stateActionProjectionWarning(input: StateActionWarningInput): StateActionProjectionWarning | null {
  const {
    goalId,
    activeStateNextAction,
    projectAssetNextAction,
    selectedRecommendedAction,
    workLaneContract,
    quotaSummary,
  } = parseProjectionInput(stateActionWarningInputSchema, input, 'stateActionProjectionWarning');
  if (
    workLaneContract?.lane !== 'advancement_task' ||
    !(workLaneContract.reason_codes ?? []).includes('open_agent_todo')
  )
    return null;

  const active = displayText(activeStateNextAction) || displayText(projectAssetNextAction);
  const selected = displayText(selectedRecommendedAction);
  if (active === '' || selected === '') return null;

  const claimingAgent = quotaSummary?.claim_scope?.agent_id;
  const firstClaimedBy = quotaSummary?.first_executable_items?.[0]?.claimed_by;
  if (claimingAgent && firstClaimedBy === claimingAgent) return null;
  if (actionsAligned(active, selected)) return null;

  const compared: ComparedValue[] = [
    { field: 'active_state_next_action', value: active },
    { field: 'selected_recommended_action', value: selected },
  ];
  return {
    schema_version: 'state_action_projection_warning_v0',
    kind: KIND,
    severity: 'warning',
    requires_state_writeback: true,
    active_state_next_action: active,
    selected_recommended_action: selected,
    reason: STATE_ACTION_WARNING_TEXT.reason,
    recommended_action: STATE_ACTION_WARNING_TEXT.recommended_action,
    message:
      'Quota selected a backlog todo that differs from the durable Next Action. Run the selected todo; write it back as the Next Action only if the route itself changed.',
    id: projectionWarningId(KIND, goalId, compared),
    ...goalIdField(goalId),
    compared,
    // A text cut for display must not become the durable route, so adopting it is offered only when whole.
    actions:
      collapseWhitespace(selectedRecommendedAction) === selected
        ? [{ kind: 'set_next_action', text: selected }, { kind: 'dismiss' }]
        : [{ kind: 'dismiss' }],
  };
}
