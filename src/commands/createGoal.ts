import { basename } from 'node:path';
import * as vscode from 'vscode';
import { createGoal as createGoalOperation, newGoalIdProblem, suggestedGoalId } from '../core/ops/createGoal';
import { runOperation } from '../core/ops/run';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { folderEnvironment } from './operationRunner';
import { askText, pickProjectFolder } from './pickers';

export interface CreateGoalArgs {
  goalId: string;
  objective: string;
}

function isCreateGoalArgs(value: unknown): value is CreateGoalArgs {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as CreateGoalArgs).goalId === 'string' &&
    typeof (value as CreateGoalArgs).objective === 'string'
  );
}

/**
 * "LoopX: Create Goal…" — `loopx bootstrap` with prompts; opens the new state file. Keybindings and
 * other extensions may pass `{ goalId, objective }` to skip the prompts.
 */
export async function createGoal(model: WorkspaceModel, log: vscode.LogOutputChannel, arg?: unknown): Promise<void> {
  const folder = await pickProjectFolder(vscode.l10n.t('Folder for the new goal'));
  const given = isCreateGoalArgs(arg) ? arg : undefined;
  const suggested = suggestedGoalId(basename(folder.uri.fsPath));
  const goalId =
    given?.goalId ??
    (await askText({
      title: vscode.l10n.t('Create Goal (1/2)'),
      prompt: vscode.l10n.t('Goal id: lowercase letters, digits and dashes'),
      value: suggested,
      validateInput: (value) => newGoalIdProblem(value) ?? undefined,
    }));
  const objective =
    given?.objective ??
    (await askText({
      title: vscode.l10n.t('Create Goal (2/2)'),
      prompt: vscode.l10n.t('Objective: what should this goal achieve? One sentence.'),
      placeHolder: vscode.l10n.t('e.g. Make the test suite pass on Node 24'),
      validateInput: (v) => (v.trim() === '' ? vscode.l10n.t('The objective must not be empty.') : undefined),
    }));
  const result = await runOperation(
    createGoalOperation,
    { project: folder.uri.fsPath, goalId, objective },
    folderEnvironment(folder),
  );
  log.info(`created goal ${result.goal_id}: ${result.actions.map((a) => a.action).join(', ')}`);
  await model.reload();
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(result.state_file_abs));
  await vscode.window.showTextDocument(document, { preview: false });
  void vscode.window.showInformationMessage(
    vscode.l10n.t('LoopX: created goal "{0}". Its state file is open: add todos under "Agent Todo".', result.goal_id),
  );
}
