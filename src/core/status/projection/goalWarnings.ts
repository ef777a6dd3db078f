import type { GoalWarningsInput } from './inputs';
import { goalWarningsInputSchema } from './inputs';
import { selectLatestRunRecommendedAction } from './latestRunRecommendation';
import { nextActionProjectionWarning } from './nextActionWarning';
import { stateProjectionGap } from './projectionGap';
import type { ProjectionSeverity, ProjectionWarning, ProjectionWarningKind } from './schemas';
import { staleLatestRunWarning } from './staleLatestRun';
import { stateActionProjectionWarning } from './stateActionWarning';
import { parseProjectionInput } from './warningIdentity';

const SEVERITY_RANK: Record<ProjectionSeverity, number> = { warning: 0, info: 1 };

// Within a severity, a stale run comes first: it undermines every run-derived comparison after it.
const KIND_RANK: Record<ProjectionWarningKind, number> = {
  stale_latest_run_projection: 0,
  next_action_projection_mismatch: 1,
  state_action_projection_mismatch: 2,
  state_projection_gap: 3,
};

export function compareProjectionWarnings(a: ProjectionWarning, b: ProjectionWarning): number {
  return SEVERITY_RANK[a.severity] - SEVERITY_RANK[b.severity] || KIND_RANK[a.kind] - KIND_RANK[b.kind];
}

/**
 * Every drift warning for one goal, most severe first: the same read model for the status command,
 * the status server and the webview. Sections of the input that are absent (todo counts, quota
 * selection, agent-lane runs) simply produce no warning of their kind.
 */
export function projectGoalWarnings(input: GoalWarningsInput): ProjectionWarning[] {
  const goal = parseProjectionInput(goalWarningsInputSchema, input, 'projectGoalWarnings');
  const activeNextAction = goal.activeState?.next_action ?? null;
  const nextActionEntries = goal.activeState?.next_action_entries ?? (activeNextAction ? [activeNextAction] : []);
  const latest = selectLatestRunRecommendedAction({
    activeStateNextAction: activeNextAction,
    latestStatusRun: goal.latestStatusRun,
    latestAgentLaneRun: goal.agentLaneRuns[0] ?? null,
    preferredAgentId: goal.preferredAgentId ?? null,
  });

  const warnings: Array<ProjectionWarning | null> = [
    goal.activeState?.sha256_16
      ? staleLatestRunWarning({
          goalId: goal.goalId,
          registryMember: goal.registryMember,
          activeState: { updated_at: goal.activeState.updated_at ?? null, sha256_16: goal.activeState.sha256_16 },
          latestStatusRun: goal.latestStatusRun,
          agentLaneRuns: goal.agentLaneRuns,
        })
      : null,
    nextActionProjectionWarning({
      goalId: goal.goalId,
      activeStateNextAction: activeNextAction,
      latestRunRecommendedAction: latest.latest_run_recommended_action,
      agentLaneNextAction: goal.agentLaneNextAction ?? null,
    }),
    goal.quotaSelection
      ? stateActionProjectionWarning({
          goalId: goal.goalId,
          activeStateNextAction: activeNextAction,
          ...goal.quotaSelection,
        })
      : null,
    goal.todoCounts && goal.activeState
      ? stateProjectionGap({
          goalId: goal.goalId,
          nextActionEntries,
          agentTodos: goal.todoCounts.agent,
          userTodos: goal.todoCounts.user,
        })
      : null,
  ];
  return warnings.filter((warning): warning is ProjectionWarning => warning !== null).sort(compareProjectionWarnings);
}
