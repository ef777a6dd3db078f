import * as vscode from 'vscode';
import { pauseGoal, type GoalStopFlagResult } from '../core/ops/pauseGoal';
import { resumeGoal } from '../core/ops/resumeGoal';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { argumentField, isTrue, pickGoal } from './pickers';

/** "LoopX: Pause Goal" / "LoopX: Resume Goal": the owner's stop flag, previewed and confirmed. */
export async function setStopFlagCommand(
  model: WorkspaceModel,
  arg: unknown,
  action: 'pause' | 'resume',
): Promise<GoalStopFlagResult> {
  const goal = await pickGoal(
    model,
    arg,
    action === 'pause' ? vscode.l10n.t('Pause which goal?') : vscode.l10n.t('Resume which goal?'),
  );
  const operation = action === 'pause' ? pauseGoal : resumeGoal;
  const outcome = await previewThenApply(operation, { goalId: goal.goalId }, editorEnvironment(goal.registryPath), {
    question: action === 'pause' ? vscode.l10n.t('Pause {0}?', goal.goalId) : vscode.l10n.t('Resume {0}?', goal.goalId),
    describe: (p) =>
      `${vscode.l10n.t(
        'The goal\'s registry status changes from "{0}" to "{1}".',
        p.status_before ?? vscode.l10n.t('(none)'),
        p.status_after ?? vscode.l10n.t('(none)'),
      )} ${
        action === 'pause'
          ? vscode.l10n.t('Quota answers "paused" and no turn starts until the goal is resumed.')
          : vscode.l10n.t('Quota computes the goal’s state again and turns may start.')
      }`,
    action: action === 'pause' ? vscode.l10n.t('Pause') : vscode.l10n.t('Resume'),
    confirmed: argumentField(arg, 'confirmed', isTrue) === true,
    nothingToApply: (p) => !p.changed,
  });
  await model.reload();
  const result = outcome.outcome === 'applied' ? outcome.result : outcome.preview;
  if (outcome.outcome === 'refused')
    throw new Error(
      action === 'pause'
        ? vscode.l10n.t('LoopX could not pause {0}.', goal.goalId)
        : vscode.l10n.t('LoopX could not resume {0}.', goal.goalId),
    );
  if (!result.changed)
    void vscode.window.showInformationMessage(
      action === 'pause'
        ? vscode.l10n.t('LoopX: {0} is already paused.', goal.goalId)
        : vscode.l10n.t('LoopX: {0} is already running (not paused).', goal.goalId),
    );
  return result;
}
