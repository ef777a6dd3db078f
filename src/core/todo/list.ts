import { analyzeGates, type GateAnalysis, type GateBlock } from '../state/gates';
import { diagnoseStateDocument, type StateDiagnostics } from '../state/structured';
import type { StateDocument } from '../state/document';
import { listTodos, type TodoListFilter, type TodoView } from '../state/todos';

/** A listed todo with the open gates that hold it back (an agent todo's; a user todo's is empty). */
export type ListedTodo = TodoView & { blocked_by: GateBlock[] };

export interface TodoListing {
  todos: ListedTodo[];
  open_gates: GateAnalysis['open_gates'];
  holding_gates: GateAnalysis['holding_gates'];
  lane_gates_by_agent: GateAnalysis['lane_gates_by_agent'];
  diagnostics: StateDiagnostics;
}

/**
 * `todo list`: the active todos `listTodos` keeps for the filter, each agent todo with the gates holding
 * it back (`analyzeGates`), the goal's gates and the state file's format diagnostics. Pure.
 */
export function listTodosWithGates(doc: StateDocument, filter: TodoListFilter): TodoListing {
  const gates = analyzeGates(doc);
  const blockedBy = new Map<string, GateBlock[]>(gates.agent_todos.map((t) => [t.todo_id, t.blocked_by]));
  const todos = listTodos(doc, filter).map((todo) => ({
    ...todo,
    blocked_by: todo.role === 'agent' ? (blockedBy.get(todo.todo_id) ?? []) : [],
  }));
  return {
    todos,
    open_gates: gates.open_gates,
    holding_gates: gates.holding_gates,
    lane_gates_by_agent: gates.lane_gates_by_agent,
    diagnostics: diagnoseStateDocument(doc),
  };
}
