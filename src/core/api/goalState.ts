import { z } from 'zod';
import { TODO_STATUSES } from '../state/document';
import { analyzeGates, type GateBlock as InternalGateBlock } from '../state/gates';
import { readStateFile } from '../state/stateFile';
import { diagnoseStateDocument, projectStateDocument } from '../state/structured';
import { listTodos as listStateTodos, type TodoListFilter } from '../state/todos';
import { parseArguments } from './arguments';
import {
  flagArgument,
  goalIdArgument,
  homeDirArgument,
  locateGoal,
  registryPathArgument,
  requireStatePath,
} from './common';
import {
  GateListResultSchema,
  GoalStateSchema,
  TodoListResultSchema,
  type GateListResult,
  type GoalState,
  type TodoListResult,
} from './schemas';

/** The goal of a registry whose ACTIVE_GOAL_STATE.md to read. */
const goalFields = {
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  homeDir: homeDirArgument,
};

const GoalArguments = z.strictObject(goalFields);
export type GoalOptions = z.input<typeof GoalArguments>;

async function readGoalStateFile(options: z.output<typeof GoalArguments>) {
  const location = await locateGoal(options);
  const statePath = requireStatePath(location);
  return { goalId: location.goalId, statePath, snapshot: await readStateFile(statePath) };
}

/**
 * Reads a goal's ACTIVE_GOAL_STATE.md (found through the registry) as its structured projection:
 * front matter, Next Action entries, user and agent todos with counts, and format diagnostics.
 * Throws LoopxError `registry_missing`, `goal_not_found`, `state_file_unresolved`,
 * `state_file_missing` or `state_file_not_utf8`.
 */
export async function loadGoalState(options: GoalOptions): Promise<GoalState> {
  const args = parseArguments(GoalArguments, options, { functionName: 'loadGoalState', root: 'options' });
  const { goalId, statePath, snapshot } = await readGoalStateFile(args);
  return GoalStateSchema.parse({
    goal_id: goalId,
    state_file: statePath,
    projection: projectStateDocument(snapshot.document, { goalId }),
  });
}

const ListTodosArguments = z.strictObject({
  ...goalFields,
  role: z
    .enum(['user', 'agent'])
    .nullish()
    .transform((value) => value ?? undefined)
    .describe('"user" or "agent", or null/undefined for both'),
  status: z
    .enum(TODO_STATUSES)
    .nullish()
    .transform((value) => value ?? undefined)
    .describe(`one of ${TODO_STATUSES.map((s) => `"${s}"`).join(', ')}, or null/undefined for open and blocked todos`),
  claimedBy: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((value) => value ?? undefined)
    .describe('an agent id, or null/undefined for any'),
  includeTerminal: flagArgument.describe(
    'true to include done and deferred todos, false or undefined to leave them out',
  ),
});
export type ListTodosOptions = z.input<typeof ListTodosArguments>;

/**
 * A goal's todos in document order (archive sections left out), as `loopx todo list --format json`
 * prints them: each agent todo with the gates that hold it back, plus the open and holding gates
 * and the state file's diagnostics. By default only open and blocked todos are listed.
 */
export async function listTodos(options: ListTodosOptions): Promise<TodoListResult> {
  const args = parseArguments(ListTodosArguments, options, { functionName: 'listTodos', root: 'options' });
  const { goalId, statePath, snapshot } = await readGoalStateFile(args);
  const filter: TodoListFilter = { includeTerminal: args.includeTerminal === true };
  if (args.role !== undefined) filter.role = args.role;
  if (args.status !== undefined) filter.status = args.status;
  if (args.claimedBy !== undefined) filter.claimedBy = args.claimedBy;
  const gates = analyzeGates(snapshot.document);
  const blockedBy = new Map<string, InternalGateBlock[]>(
    gates.agent_todos.map((todo) => [todo.todo_id, todo.blocked_by]),
  );
  const todos = listStateTodos(snapshot.document, filter).map((todo) => ({
    ...todo,
    blocked_by: todo.role === 'agent' ? (blockedBy.get(todo.todo_id) ?? []) : [],
  }));
  return TodoListResultSchema.parse({
    ok: true,
    goal_id: goalId,
    state_file: statePath,
    count: todos.length,
    todos,
    open_gates: gates.open_gates,
    holding_gates: gates.holding_gates,
    lane_gates_by_agent: gates.lane_gates_by_agent,
    diagnostics: diagnoseStateDocument(snapshot.document),
  });
}

/**
 * A goal's user gates: the open ones, the resolved ones still holding work back (rejected or
 * cancelled), and for every agent todo not done or deferred whether a gate blocks it and how.
 */
export async function listGates(options: GoalOptions): Promise<GateListResult> {
  const args = parseArguments(GoalArguments, options, { functionName: 'listGates', root: 'options' });
  const { goalId, statePath, snapshot } = await readGoalStateFile(args);
  return GateListResultSchema.parse({ goal_id: goalId, state_file: statePath, ...analyzeGates(snapshot.document) });
}
