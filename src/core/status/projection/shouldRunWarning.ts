import type { StateDocument } from '../../state/document';
import { projectStateDocument } from '../../state/structured';
import { pickLatestRuns, selectLatestRunRecommendedAction } from './latestRunRecommendation';
import { nextActionProjectionWarning } from './nextActionWarning';
import type { NextActionProjectionWarning } from './schemas';
import { publicSafeCompact } from './text';

/**
 * The `next_action_projection_warning` of `quota should-run`: the very rule `status` applies to the goal
 * (the durable Next Action against the latest run's recommended action, the asking agent's lane
 * preferred), computed from the state document and run rows the decision already read. The scheduler
 * cannot import status (status imports scheduling), so the callers of `shouldRun` hand this in.
 */
export function shouldRunNextActionWarning(input: {
  goalId: string;
  doc: StateDocument;
  rowsNewestFirst: readonly unknown[];
  agentId: string | null;
}): NextActionProjectionWarning | null {
  const structured = projectStateDocument(input.doc, { goalId: input.goalId, nextActionLimit: 3 });
  const activeNextAction = structured.next_action.entries[0] ?? null;
  const { latestStatusRun, agentLaneRuns } = pickLatestRuns(input.rowsNewestFirst);
  const latest = selectLatestRunRecommendedAction({
    activeStateNextAction: activeNextAction,
    latestStatusRun,
    latestAgentLaneRun: agentLaneRuns[0] ?? null,
    preferredAgentId: input.agentId,
  });
  // An agent's decision is scoped to its own lane (the original's `scope_status_item_to_agent_lane`):
  // the goal's latest recommendation is replaced by that agent's newest agent-lane run, or by none.
  const latestAction =
    input.agentId === null || latest.latest_run_recommended_action === null
      ? latest.latest_run_recommended_action
      : publicSafeCompact(agentLaneRuns.find((run) => run.agent_id === input.agentId)?.recommended_action);
  return nextActionProjectionWarning({
    goalId: input.goalId,
    activeStateNextAction: activeNextAction,
    latestRunRecommendedAction: latestAction,
    agentLaneNextAction: null,
  });
}
