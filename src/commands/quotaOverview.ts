import * as vscode from 'vscode';
import type { GoalSummary } from '../core/ops/goalRows';
import { presentIndicator, type IndicatorInput } from '../statusBar/presentation';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { Cancelled } from './pickers';

interface GoalPick extends vscode.QuickPickItem {
  goal: GoalSummary;
}

interface ActionPick extends vscode.QuickPickItem {
  command: string;
}

/**
 * "LoopX: Show Quota of All Goals" (the status bar's click): each goal's quota state and spend, then
 * what to do with the picked one. Every action is a palette command over an operation, with its preview.
 */
export async function quotaOverviewCommand(
  model: WorkspaceModel,
  inputOf: (goal: GoalSummary) => IndicatorInput,
  onShow: (title: string, labels: readonly string[]) => void = () => {},
): Promise<void> {
  const goals = model.goals;
  if (goals.length === 0)
    throw new Error(vscode.l10n.t('No LoopX goals in this workspace. Run "LoopX: Create Goal…" first.'));
  const picks: GoalPick[] = goals.map((goal) => {
    const p = presentIndicator(inputOf(goal));
    return {
      label: `$(${p.icon}) ${goal.displayName}`,
      description: p.text.replace(/^\$\([^)]*\)\s*/, ''),
      detail: p.details[0],
      goal,
    };
  });
  const title = vscode.l10n.t('LoopX: quota of all goals');
  onShow(
    title,
    picks.map((p) => p.label),
  );
  const picked = await vscode.window.showQuickPick(picks, {
    title,
    placeHolder: vscode.l10n.t('Pick a goal to pause, resume or configure'),
    matchOnDescription: true,
  });
  if (!picked) throw new Cancelled();
  const paused = model.detailsOf(picked.goal)?.quota?.state === 'paused';
  const running = model.isLoopRunning(picked.goal);
  const actions: ActionPick[] = [
    // While a loop runs on the goal, stopping it is what the click is most likely for: first.
    ...(running
      ? [
          {
            label: `$(debug-stop) ${vscode.l10n.t('Stop Loop')}`,
            detail: vscode.l10n.t('Stop the loop running on this goal after its current turn'),
            command: 'loopx.stopLoop',
          },
        ]
      : []),
    paused
      ? {
          label: `$(debug-start) ${vscode.l10n.t('Resume')}`,
          detail: vscode.l10n.t('Clear the stop flag so turns may start again'),
          command: 'loopx.resumeGoal',
        }
      : {
          label: `$(debug-pause) ${vscode.l10n.t('Pause')}`,
          detail: vscode.l10n.t('Set the stop flag: no turn starts until resumed'),
          command: 'loopx.pauseGoal',
        },
    {
      label: `$(settings-gear) ${vscode.l10n.t('Configure…')}`,
      detail: vscode.l10n.t('Quota share, window, agents (with a preview)'),
      command: 'loopx.configureGoal',
    },
    {
      label: `$(graph-line) ${vscode.l10n.t('Show Goal Detail')}`,
      detail: vscode.l10n.t('Spend chart, todo frontier, latest runs'),
      command: 'loopx.showGoalDetail',
    },
    {
      label: `$(dashboard) ${vscode.l10n.t('Show Quota')}`,
      detail: vscode.l10n.t('The full quota report'),
      command: 'loopx.quotaStatus',
    },
  ];
  onShow(
    `LoopX: ${picked.goal.goalId}`,
    actions.map((a) => a.label),
  );
  const action = await vscode.window.showQuickPick(actions, { title: `LoopX: ${picked.goal.goalId}` });
  if (!action) throw new Cancelled();
  await vscode.commands.executeCommand(action.command, { goal: picked.goal });
}
