import { collapseWhitespace, truncateText } from './text';

/**
 * The recommended action of a route that does not come from the active state or a run's recommendation (the original's
 * `goal_attention`, loopx/control_plane/work_items/attention_routing.py): a goal without a status run, or whose latest
 * run lost its artifacts, is routed with the original's own words and keeps its route's `source` (`run_history`,
 * `registry`). A connected goal without a run takes its first open agent todo's text instead, when it has one
 * (`sync_connected_attention_action_from_todos`). Null for the other routes (their action comes from the run).
 */

export const CONNECTED_WITHOUT_RUN_ACTION = 'run the first read-only adapter tick and save a compact run record';
export const RUN_ARTIFACT_MISSING_ACTION = 'repair or regenerate the latest run artifacts before trusting status';
export const PLANNED_OPT_IN_ACTION = '先在 LoopX 完成 operator 判断；同意后项目 Agent 只执行 read-only map dry-run';
export const NO_RUN_ACTION = 'connect an adapter or run a read-only map before expecting runtime status';

export function routeOwnAction(
  route: { status: string; waiting_on: string; attention_source: string },
  facts: { hasStatusRun: boolean; firstOpenAgentTodoText: string | null },
): string | null {
  if (route.attention_source === 'run_history') {
    if (route.status === 'connected_without_run') {
      const text = truncateText(collapseWhitespace(facts.firstOpenAgentTodoText), 220);
      return text !== '' ? text : CONNECTED_WITHOUT_RUN_ACTION;
    }
    if (route.status === 'run_artifact_missing') return RUN_ARTIFACT_MISSING_ACTION;
    return null;
  }
  if (route.attention_source === 'registry' && !facts.hasStatusRun)
    return route.waiting_on === 'user_or_controller' ? PLANNED_OPT_IN_ACTION : NO_RUN_ACTION;
  return null;
}
