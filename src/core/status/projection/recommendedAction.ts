import type { AgentTodoCandidate, RecommendedActionInput } from './inputs';
import { recommendedActionInputSchema } from './inputs';
import type { RecommendedActionDerivation } from './schemas';
import { collapseWhitespace, containsCredential } from './text';
import { parseProjectionInput } from './warningIdentity';

export const DEFAULT_REFRESH_ACTION =
  'inspect refreshed active goal state and continue the next bounded progress segment';

/** Classes that never become the recommended action: watching, waiting on the owner, or blocked. */
const NON_ADVANCING_CLASSES: ReadonlySet<string> = new Set(['continuous_monitor', 'user_gate', 'blocker']);
const NO_PRIORITY = 99;
const LEADING_MARKERS = /^(?:(?:[-*+]|\d+[.)])\s+)?(?:\[[ xX-]\]\s+)?/u;

/** A Next Action item without its bullet or checkbox, or null when empty or credential-bearing. */
function usableNextActionItem(entry: string): string | null {
  const text = collapseWhitespace(entry).replace(LEADING_MARKERS, '').trim();
  return text === '' || containsCredential(text) ? null : text;
}

function priorityOf(text: string): number {
  const match = /\[P(\d+)\]/iu.exec(text);
  return match ? Number(match[1]) : NO_PRIORITY;
}

/** The best open Agent Todo: advancement tasks before unclassified ones, then lowest `[P<n>]`, then earliest. */
function bestAgentTodo(todos: readonly AgentTodoCandidate[]): string | null {
  const ranked = todos
    .map((todo, position) => ({ todo, position, text: collapseWhitespace(todo.text) }))
    .filter(
      ({ todo, text }) =>
        todo.status !== 'done' &&
        todo.status !== 'deferred' &&
        text !== '' &&
        !NON_ADVANCING_CLASSES.has(todo.task_class ?? ''),
    )
    .map((entry) => ({
      ...entry,
      classRank: entry.todo.task_class === 'advancement_task' ? 0 : 1,
      priority: priorityOf(entry.text),
    }))
    .sort((a, b) => a.classRank - b.classRank || a.priority - b.priority || a.position - b.position);
  return ranked[0]?.text ?? null;
}

/**
 * refresh-state's recommended action and its source tag; the first source that yields an action
 * wins: the explicit argument, the first usable Next Action item, the best open Agent Todo, then a
 * fixed default. Next Action entries must be the ones after this refresh's write-back, if any.
 */
export function deriveRecommendedAction(input: RecommendedActionInput): RecommendedActionDerivation {
  const { explicitAction, nextActionEntries, agentTodos } = parseProjectionInput(
    recommendedActionInputSchema,
    input,
    'deriveRecommendedAction',
  );
  const explicit = collapseWhitespace(explicitAction);
  if (explicit !== '') return { recommended_action: explicit, recommended_action_source: 'explicit_arg' };

  for (const entry of nextActionEntries) {
    const item = usableNextActionItem(entry);
    if (item !== null) return { recommended_action: item, recommended_action_source: 'active_state_next_action' };
  }

  const todo = bestAgentTodo(agentTodos);
  if (todo !== null) return { recommended_action: todo, recommended_action_source: 'agent_todo_fallback' };
  return { recommended_action: DEFAULT_REFRESH_ACTION, recommended_action_source: 'default_refresh_action' };
}
