import { LoopxError } from '../errors';
import { parseStateDocument } from './document';
import { writeNextAction } from './nextAction';
import { addTodo, completeTodo, type OperationContext } from './todos';

/**
 * A goal's first plan, written with the goal: its agent todos in priority order and its human gates,
 * applied to a fresh ACTIVE_GOAL_STATE.md text before anything is written. The planning todo every
 * new state file starts with is completed (the plan is that planning), and the Next Action, which named
 * it, names the plan's first open agent todo instead. Pure: a refused todo (empty,
 * a credential, a duplicate) throws here, so the goal and its plan are written together or not at all.
 */

export interface GoalPlan {
  /** Agent todos, highest priority first. */
  todos: readonly string[];
  /** Decisions a person makes (user gates). */
  gates: readonly string[];
}

/** The priority of the n-th todo of a plan (0-based): P1, P2, P3, then P4. */
export function planPriority(index: number): 'P1' | 'P2' | 'P3' | 'P4' {
  return (['P1', 'P2', 'P3'] as const)[index] ?? 'P4';
}

export function applyGoalPlan(
  stateText: string,
  plan: GoalPlan,
  firstTodoId: string,
  context: OperationContext,
): string {
  if (plan.todos.length === 0)
    throw new LoopxError('usage', 'a goal plan needs at least one agent todo (--todo); nothing was written', {
      field: 'todo',
    });
  let text = stateText;
  const seen = new Map<string, string>();
  const add = (item: string, field: string, input: Parameters<typeof addTodo>[1]): void => {
    const key = `${input.role} ${item.replace(/\s+/g, ' ').trim()}`;
    const first = seen.get(key);
    if (first !== undefined)
      throw new LoopxError('usage', `${field} repeats ${first}; give each todo once (nothing was written)`, {
        plan_item: field,
      });
    seen.set(key, field);
    try {
      text = addTodo(text, input, context).text;
    } catch (error) {
      if (error instanceof LoopxError)
        throw new LoopxError(error.code, `${field}: ${error.message}; nothing was written`, {
          ...error.details,
          plan_item: field,
        });
      throw error;
    }
  };
  for (const [index, item] of plan.todos.entries())
    add(item, `todo ${index + 1}`, { text: item, role: 'agent', priority: planPriority(index) });
  for (const [index, item] of plan.gates.entries())
    add(item, `gate ${index + 1}`, { text: item, role: 'user', taskClass: 'user_gate' });
  const planned = completeTodo(
    text,
    {
      todoId: firstTodoId,
      evidence: `planned when the goal was created: ${plan.todos.length} todo(s) and ${plan.gates.length} gate(s)`,
      noFollowUp: true,
    },
    context,
  ).text;
  // A plan has at least one agent todo, so there is always an open one to route to.
  const next = firstOpenAgentTodo(planned);
  return next === null ? planned : writeNextAction(planned, next).text;
}

const PRIORITY_RANK: Record<string, number> = { P0: 0, P1: 1, P2: 2, P3: 3, P4: 4 };

/** The title of the open agent todo with the highest priority (the first written on a tie), or null. */
function firstOpenAgentTodo(stateText: string): string | null {
  const open = parseStateDocument(stateText).todos.filter((todo) => todo.role === 'agent' && todo.status === 'open');
  const rank = (priority: string | null): number => (priority === null ? 5 : (PRIORITY_RANK[priority] ?? 5));
  const best = open.reduce<(typeof open)[number] | null>(
    (chosen, todo) => (chosen === null || rank(todo.priority) < rank(chosen.priority) ? todo : chosen),
    null,
  );
  return best === null ? null : best.title;
}
