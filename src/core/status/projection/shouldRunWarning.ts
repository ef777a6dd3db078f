import { TERMINAL_STATUSES, type StateDocument, type TodoItem } from '../../state/document';
import { projectStateDocument } from '../../state/structured';
import { pickLatestRuns, selectLatestRunRecommendedAction } from './latestRunRecommendation';
import { nextActionProjectionWarning } from './nextActionWarning';
import type { NextActionProjectionWarning } from './schemas';
import { publicSafeCompact } from './text';
import { stateProjectionGap } from './projectionGap';

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
  agentLaneTodo?: { text: string; preservesGoalNextAction: boolean } | null;
}): NextActionProjectionWarning | null {
  const structured = projectStateDocument(input.doc, { goalId: input.goalId, nextActionLimit: 3 });
  const durableNextAction = structured.next_action.entries[0] ?? null;
  const { latestStatusRun, agentLaneRuns } = pickLatestRuns(input.rowsNewestFirst);
  // The goal's status item is projected unscoped (no preferred agent), as the original's status is.
  const latest = selectLatestRunRecommendedAction({
    activeStateNextAction: durableNextAction,
    latestStatusRun,
    latestAgentLaneRun: agentLaneRuns[0] ?? null,
    preferredAgentId: null,
  });
  // Without a durable Next Action the original compares the status item's recommended action (its
  // `project_asset.next_action`), which an open user gate or user todo sets to that todo's text.
  // Otherwise it is the unscoped item's: the latest status run's action (which agrees with itself, but not always
  // with the named agent's own lane run: kit seed 7 quota-015), or, when that run lost its artifacts, the original's
  // repair text (its `run_artifact_missing` attention item: kit seed 4 quota-002).
  const artifactsMissing =
    latestStatusRun !== null && (latestStatusRun.json_exists === false || latestStatusRun.markdown_exists === false);
  const activeNextAction =
    durableNextAction ??
    userTodoRecommendedAction(input.doc) ??
    (artifactsMissing ? RUN_ARTIFACT_MISSING_ACTION : latest.latest_run_recommended_action);
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
    // The agent's first executable todo keeps the durable route (no writeback) unless a user gate holds the route.
    agentLaneNextAction:
      input.agentLaneTodo === undefined || input.agentLaneTodo === null
        ? null
        : {
            text: publicSafeCompact(input.agentLaneTodo.text) ?? '',
            preserves_goal_next_action: input.agentLaneTodo.preservesGoalNextAction,
          },
  });
}

/** The recommended action of the original's `run_artifact_missing` attention item. */
export const RUN_ARTIFACT_MISSING_ACTION = 'repair or regenerate the latest run artifacts before trusting status';

/** The original's priority-then-document order of open todos (`todo_projection_sort_key`). */
function byProjectionOrder(a: TodoItem, b: TodoItem): number {
  const rank = (t: TodoItem): number => (t.priority === null ? 99 : Number(t.priority.slice(1)));
  return rank(a) - rank(b) || a.index - b.index;
}

/**
 * The status item's recommended action taken from the user todos (the original's
 * `active_state_todo_attention_item`): the first open user gate's text, else the first open user todo's when the
 * open user todos are not all `user_action`s; otherwise null (the run's own action, which agrees with itself).
 */
export function userTodoRecommendedAction(doc: StateDocument): string | null {
  const open = doc.todos.filter((t) => t.role === 'user' && !TERMINAL_STATUSES.has(t.status)).sort(byProjectionOrder);
  const gate = open.find((t) => t.meta['task_class'] === 'user_gate');
  if (gate !== undefined) return publicSafeCompact(gate.text);
  if (open.length > 0 && !open.every((t) => t.meta['task_class'] === 'user_action'))
    return publicSafeCompact(open[0]?.text);
  return null;
}

/**
 * Whether the goal's status item carries a `state_projection_gap` (status's rule, `projectionGap.ts`): the Next
 * Action promises work or a wait on the owner that no open todo of the goal backs. `quota should-run` repairs it
 * (`state_projection_gap_repair`) when nothing in the asking agent's scope is open.
 */
export function shouldRunStateProjectionGap(input: { goalId: string; doc: StateDocument }): boolean {
  const structured = projectStateDocument(input.doc, { goalId: input.goalId, nextActionLimit: 3 });
  const open = (role: 'user' | 'agent'): number =>
    input.doc.todos.filter((t) => t.role === role && !TERMINAL_STATUSES.has(t.status)).length;
  return (
    stateProjectionGap({
      goalId: input.goalId,
      nextActionEntries: structured.next_action.entries,
      agentTodos: { markdownOpenCount: open('agent') },
      userTodos: { markdownOpenCount: open('user') },
    }) !== null
  );
}
