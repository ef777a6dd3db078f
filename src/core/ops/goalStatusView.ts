import type { StatusTodoSummary } from '../status/goalStatus';
import { isStatusNeutralRun } from '../status/projection/latestRunRecommendation';
import type { GoalStatusItem } from '../status/goalStatus';
import type { GoalSummary } from './goalRows';
import { GoalStatusSchema, type GoalStatus } from './resultSchemas';

/**
 * The library's and the extension API's goal summary (`getGoalStatus`, `loopx_api_goal_status_v1`)
 * read off the goal's status item: the one status model the CLI's `status`, the editor's live model
 * and the status server build. Pure: it reads nothing.
 */
export function goalStatusOfItem(goal: GoalSummary, item: GoalStatusItem): GoalStatus {
  const counts = (summary: StatusTodoSummary | null) => ({
    total_count: summary?.total_count ?? 0,
    open_count: summary?.open_count ?? 0,
    done_count: summary?.done_count ?? 0,
    blocked_count: summary?.blocked_count ?? 0,
    deferred_count: summary?.deferred_count ?? 0,
  });
  const readable = item.active_state.available && goal.stateFile !== null;
  const diagnostics = item.state_diagnostics;
  const latest = item.latest_runs.find((run) => !isStatusNeutralRun(run)) ?? null;
  return GoalStatusSchema.parse({
    schema_version: 'loopx_api_goal_status_v1',
    goal,
    state: readable
      ? {
          state_file: goal.stateFile,
          updated_at: item.active_state.updated_at,
          next_action: item.active_state_next_action ?? null,
          todos: { user: counts(item.user_todos), agent: counts(item.agent_todos) },
          open_gate_count: item.open_gates.filter((gate) => gate.gate_state === 'open').length,
          diagnostics: {
            parseable: diagnostics?.parseable ?? true,
            warning_count: diagnostics?.warning_count ?? 0,
            error_count: diagnostics?.error_count ?? 0,
          },
        }
      : null,
    state_error: readable
      ? null
      : (item.active_state.error ?? {
          code: 'state_file_unresolved',
          message: `goal '${goal.goalId}' has no state_file and no absolute repo`,
        }),
    runs: {
      count: item.unique_runs,
      latest_status_run:
        latest === null ? null : Object.fromEntries(Object.entries(latest).filter(([, value]) => value !== null)),
    },
    warnings: item.projection_warnings,
  });
}
