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
  const goal = await pickGoal(model, arg, action === 'pause' ? 'Pause which goal?' : 'Resume which goal?');
  const operation = action === 'pause' ? pauseGoal : resumeGoal;
  const outcome = await previewThenApply(operation, { goalId: goal.goalId }, editorEnvironment(goal.registryPath), {
    question: action === 'pause' ? `Pause ${goal.goalId}?` : `Resume ${goal.goalId}?`,
    describe: (p) =>
      `The goal's registry status changes from "${p.status_before ?? '(none)'}" to "${p.status_after ?? '(none)'}". ${
        action === 'pause'
          ? 'Quota answers "paused" and no turn starts until the goal is resumed.'
          : 'Quota computes the goal\u2019s state again and turns may start.'
      }`,
    action: action === 'pause' ? 'Pause' : 'Resume',
    confirmed: argumentField(arg, 'confirmed', isTrue) === true,
    nothingToApply: (p) => !p.changed,
  });
  await model.reload();
  const result = outcome.outcome === 'applied' ? outcome.result : outcome.preview;
  if (outcome.outcome === 'refused') throw new Error(`LoopX could not ${action} ${goal.goalId}.`);
  if (!result.changed)
    void vscode.window.showInformationMessage(
      `LoopX: ${goal.goalId} is already ${action === 'pause' ? 'paused' : 'running (not paused)'}.`,
    );
  return result;
}
