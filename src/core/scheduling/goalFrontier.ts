import type { StateDocument, TodoItem } from '../state/document';
import { metaFlag, metaList } from '../state/gates';
import { resumesOnTodo } from '../todo/resume';

/**
 * The goal frontier as LoopX reads it from the todos (its `goal_frontier` terminal and replan rules):
 *   - terminal (`terminal_no_followup`): every user and agent todo is done (a watch-only monitor may stay
 *     open), at least one done todo says `no_followup=true`, and no completion left a succession gap.
 *     A goal without todos is not terminal: it runs to write its first todos.
 *   - succession gap: a done `advancement_task` the original tracks for succession (it carries lifecycle
 *     metadata such as `claimed_by`, `completed_at` or `updated_at`) with neither `no_followup=true` nor
 *     a successor (`successor_todo_ids`, `superseded_by`, or an advancement todo that unblocks or resumes
 *     on it). With no open advancement work left, a gap owes an autonomous replan.
 */
export interface GoalFrontier {
  terminal: boolean;
  /** Done advancement todos without a successor or a no-follow-up rationale (this agent's or unclaimed). */
  successionGaps: string[];
  /** Open agent `advancement_task` todos, whoever holds them. */
  openAdvancementCount: number;
}

const SUCCESSION_TRACKED_KEYS = [
  'action_kind',
  'task_repository',
  'continuation_policy',
  'claimed_by',
  'completed_at',
  'updated_at',
  'required_write_scopes',
  'required_capabilities',
  'target_capabilities',
  'explore_result_node_refs',
  'decision_scope',
  'required_decision_scopes',
  'unblocks_todo_id',
  'resume_when',
  'blocks_agent',
  'excluded_agents',
  'global_gate',
];

function taskClass(item: TodoItem): string {
  return item.meta['task_class'] ?? 'advancement_task';
}

function watchOnlyMonitor(item: TodoItem): boolean {
  return taskClass(item) === 'continuous_monitor' && metaFlag(item.meta['watch_only']);
}

function hasSuccessor(item: TodoItem, todos: readonly TodoItem[]): boolean {
  if (metaList(item.meta['successor_todo_ids']).length > 0) return true;
  if ((item.meta['superseded_by'] ?? '') !== '') return true;
  return todos.some(
    (other) =>
      other !== item &&
      taskClass(other) === 'advancement_task' &&
      (metaList(other.meta['unblocks_todo_id']).includes(item.todoId) ||
        resumesOnTodo(other.meta['resume_when'], item.todoId)),
  );
}

export function goalFrontier(doc: StateDocument, agentId: string | null): GoalFrontier {
  const todos = doc.todos.filter((t) => t.role === 'user' || t.role === 'agent');
  const agentTodos = todos.filter((t) => t.role === 'agent');
  const gaps = agentTodos.filter(
    (t) =>
      t.status === 'done' &&
      taskClass(t) === 'advancement_task' &&
      SUCCESSION_TRACKED_KEYS.some((key) => t.meta[key] !== undefined) &&
      !metaFlag(t.meta['no_followup']) &&
      !hasSuccessor(t, agentTodos),
  );
  const allDone = todos.every((t) => t.status === 'done' || watchOnlyMonitor(t));
  const noFollowUp = todos.some((t) => t.status === 'done' && metaFlag(t.meta['no_followup']));
  const claimable = (t: TodoItem) => {
    const holder = t.meta['claimed_by'] ?? '';
    return agentId === null || holder === '' || holder === agentId;
  };
  return {
    terminal: allDone && noFollowUp && gaps.length === 0,
    successionGaps: gaps.filter(claimable).map((t) => t.todoId),
    openAdvancementCount: agentTodos.filter(
      (t) => (t.status === 'open' || t.status === 'blocked') && taskClass(t) === 'advancement_task',
    ).length,
  };
}
