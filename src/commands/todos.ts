import * as vscode from 'vscode';
import { todoStatusWord } from '../common/words';
import { runOperation } from '../core/ops/run';
import { todoAdd, todoList } from '../core/ops/todo';
import { TODO_PRIORITIES } from '../core/ops/todoFields';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { askText, Cancelled, pickGoal } from './pickers';

/** "LoopX: Add Todo…" — `loopx todo add`: role, priority and text; written with an explicit todo_id. */
export async function addTodoCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('Add a todo to which goal?'));
  const role = await vscode.window.showQuickPick(
    [
      {
        label: `$(hubot) ${vscode.l10n.t('Agent todo')}`,
        description: vscode.l10n.t('work for an agent'),
        role: 'agent' as const,
      },
      {
        label: `$(person) ${vscode.l10n.t('User todo')}`,
        description: vscode.l10n.t('something a person must do or decide'),
        role: 'user' as const,
      },
    ],
    { title: vscode.l10n.t('Add Todo to {0} (1/3)', goal.goalId) },
  );
  if (!role) throw new Cancelled();
  const priority = await vscode.window.showQuickPick(
    TODO_PRIORITIES.map((p) => ({
      label: p,
      description: p === 'P0' ? vscode.l10n.t('most urgent') : p === 'P4' ? vscode.l10n.t('least urgent') : undefined,
    })),
    { title: vscode.l10n.t('Add Todo to {0} (2/3): priority', goal.goalId) },
  );
  if (!priority) throw new Cancelled();
  const text = await askText({
    title: vscode.l10n.t('Add Todo to {0} (3/3)', goal.goalId),
    prompt: vscode.l10n.t('What needs doing?'),
    validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('The todo text must not be empty.') : undefined),
  });
  const result = await runOperation(
    todoAdd,
    { goalId: goal.goalId, role: role.role, text, priority: priority.label },
    editorEnvironment(goal.registryPath),
  );
  await model.reload();
  void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: added {0} to "{1}".', result.todo_id, goal.goalId));
}

/** "LoopX: List Todos" — the goal's open todos; picking one opens the state file at its line. */
export async function listTodosCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('List the todos of which goal?'));
  const { todos, state_file: stateFile } = await runOperation(
    todoList,
    { goalId: goal.goalId },
    editorEnvironment(goal.registryPath),
  );
  if (todos.length === 0) {
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: "{0}" has no open todos.', goal.goalId));
    return;
  }
  const picked = await vscode.window.showQuickPick(
    todos.map((todo) => ({
      label: `${todo.role === 'user' ? (todo.task_class === 'user_gate' ? '$(shield)' : '$(person)') : '$(hubot)'} ${todo.title}`,
      description: [
        todo.priority,
        todoStatusWord(todo.status),
        todo.claimed_by ? vscode.l10n.t('claimed by {0}', todo.claimed_by) : null,
      ]
        .filter(Boolean)
        .join(' · '),
      detail: todo.todo_id,
      todo,
    })),
    { title: vscode.l10n.t('Todos of {0}', goal.goalId), matchOnDetail: true, matchOnDescription: true },
  );
  if (!picked) return;
  const line = picked.todo.line - 1;
  await vscode.window.showTextDocument(vscode.Uri.file(stateFile), { selection: new vscode.Range(line, 0, line, 0) });
}
