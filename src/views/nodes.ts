import type { StatusGate, StatusTodoItem } from '../core/status/goalStatus';
import type { GoalSummary } from '../core/ops/goalRows';

/**
 * The one node of a goal, a todo and a gate, whichever tree shows it (Goals, Agents, Gate Inbox):
 * the tree actions (src/commands) take these, so a gate approved from the inbox and one approved
 * from the Goals tree reach the same handler with the same fields, and a goal under an agent carries
 * its registry like a goal of the Goals tree (a multi-root window may list the same id twice).
 */
export interface GoalNode {
  kind: 'goal';
  goal: GoalSummary;
}

export interface TodoNode {
  kind: 'todo';
  goal: GoalSummary;
  todo: StatusTodoItem;
  role: 'agent' | 'user';
}

export interface GateNode {
  kind: 'gate';
  goal: GoalSummary;
  gate: StatusGate;
}
