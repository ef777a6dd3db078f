import * as vscode from 'vscode';
import { runOperation } from '../core/ops/run';
import { TODO_PRIORITIES, todoAdd, todoList } from '../core/ops/todo';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { askText, Cancelled, pickGoal } from './pickers';

/** "LoopX: Add Todo…" — `loopx todo add`: role, priority and text; written with an explicit todo_id. */
export async function addTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, 'Add a todo to which goal?');
  const role = await vscode.window.showQuickPick(
    [
      { label: '$(hubot) Agent todo', description: 'work for an agent', role: 'agent' as const },
      { label: '$(person) User todo', description: 'something a person must do or decide', role: 'user' as const },
    ],
    { title: `Add Todo to ${goal.goalId} (1/3)` },
  );
  if (!role) throw new Cancelled();
  const priority = await vscode.window.showQuickPick(
    TODO_PRIORITIES.map((p) => ({
      label: p,
      description: p === 'P0' ? 'most urgent' : p === 'P4' ? 'least urgent' : undefined,
    })),
    { title: `Add Todo to ${goal.goalId} (2/3): priority` },
  );
  if (!priority) throw new Cancelled();
  const text = await askText({
    title: `Add Todo to ${goal.goalId} (3/3)`,
    prompt: 'What needs doing?',
    validateInput: (v) => (v.trim() === '' ? 'The todo text must not be empty.' : undefined),
  });
  const result = await runOperation(
    todoAdd,
    { goalId: goal.goalId, role: role.role, text, priority: priority.label },
    editorEnvironment(goal.registryPath),
  );
  await model.reload();
  void vscode.window.showInformationMessage(`LoopX: added ${result.todo_id} to "${goal.goalId}".`);
}

/** "LoopX: List Todos" — the goal's open todos; picking one opens the state file at its line. */
export async function listTodosCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, 'List the todos of which goal?');
  const { todos, state_file: stateFile } = await runOperation(
    todoList,
    { goalId: goal.goalId },
    editorEnvironment(goal.registryPath),
  );
  if (todos.length === 0) {
    void vscode.window.showInformationMessage(`LoopX: "${goal.goalId}" has no open todos.`);
    return;
  }
  const picked = await vscode.window.showQuickPick(
    todos.map((todo) => ({
      label: `${todo.role === 'user' ? (todo.task_class === 'user_gate' ? '$(shield)' : '$(person)') : '$(hubot)'} ${todo.title}`,
      description: [todo.priority, todo.status, todo.claimed_by ? `claimed by ${todo.claimed_by}` : null]
        .filter(Boolean)
        .join(' · '),
      detail: todo.todo_id,
      todo,
    })),
    { title: `Todos of ${goal.goalId}`, matchOnDetail: true, matchOnDescription: true },
  );
  if (!picked) return;
  const line = picked.todo.line - 1;
  await vscode.window.showTextDocument(vscode.Uri.file(stateFile), { selection: new vscode.Range(line, 0, line, 0) });
}
