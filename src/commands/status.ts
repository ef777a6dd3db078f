import * as vscode from 'vscode';
import { asksForAgent, editorErrorText } from '../common/errorWording';
import { quotaStateWord } from '../common/words';
import { quotaStatus } from '../core/ops/quota';
import { runOperation } from '../core/ops/run';
import { status, statusMarkdown } from '../core/ops/status';
import { refreshState } from '../core/ops/refresh';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { askText, Cancelled, confirm, pickGoal } from './pickers';
import { confirmRefreshDetail, confirmRefreshQuestion, refreshRecordedMessage } from './turnMessages';

export async function showMarkdown(content: string): Promise<void> {
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content });
  await vscode.commands.executeCommand('markdown.showPreview', document.uri);
}

/** "LoopX: Show Status" — `loopx status` for every registry of the workspace, as a Markdown preview. */
export async function showStatusCommand(model: WorkspaceModel): Promise<void> {
  const snapshots = model.snapshots.filter((s) => s.ok);
  if (snapshots.length === 0)
    throw new Error(vscode.l10n.t('No LoopX registry in this workspace. Run "LoopX: Create Goal…" first.'));
  const parts: string[] = [];
  for (const snapshot of snapshots) {
    parts.push(statusMarkdown(await runOperation(status, {}, editorEnvironment(snapshot.registryPath))));
  }
  await showMarkdown(parts.join('\n\n---\n\n'));
}

/** "LoopX: Show Quota" — the goal's quota window, spend and budgets. */
export async function showQuotaCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('Show the quota of which goal?'));
  const quota = await runOperation(quotaStatus, { goalId: goal.goalId }, editorEnvironment(goal.registryPath));
  const lines = [
    `# ${vscode.l10n.t('Quota of {0}', goal.goalId)}`,
    '',
    `- ${vscode.l10n.t('State: {0}', `**${quotaStateWord(quota.state)}**`)}${quota.reason ? ` — ${quota.reason}` : ''}`,
    `- ${vscode.l10n.t(
      'Slots: {0} spent, {1} reserved, {2} left of {3} ({4} min each, {5} h window, compute {6})',
      quota.spent_slots,
      quota.reserved_slots,
      quota.remaining_slots,
      quota.allowed_slots,
      quota.slot_minutes,
      quota.window_hours,
      quota.compute,
    )}`,
    quota.next_slot_frees_at ? `- ${vscode.l10n.t('Next slot frees at {0}', quota.next_slot_frees_at)}` : '',
    quota.warn ? `- ⚠ ${vscode.l10n.t('Near the limit.')}` : '',
    quota.exceeded
      ? `- ⛔ ${vscode.l10n.t('Limit reached: no turn will start until the window frees a slot or the limit is raised ("LoopX: Configure Goal…").')}`
      : '',
    ...quota.config_warnings.map((w) => `- ${vscode.l10n.t('Config: {0}', JSON.stringify(w))}`),
  ].filter((line) => line !== '');
  await showMarkdown(lines.join('\n'));
}

const CLASSIFICATIONS = ['state_refreshed', 'validated_progress', 'partial_progress', 'blocked', 'replanned'];

/** "LoopX: Refresh Goal State…" — `loopx refresh-state`: optionally a new Next Action, then a recorded run. */
export async function refreshStateCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('Refresh the state of which goal?'));
  const classification = await vscode.window.showQuickPick(CLASSIFICATIONS, {
    title: vscode.l10n.t('Refresh {0} (1/2): what happened?', goal.goalId),
  });
  if (!classification) throw new Cancelled();
  const nextAction = await askText({
    title: vscode.l10n.t('Refresh {0} (2/2)', goal.goalId),
    prompt: vscode.l10n.t('New Next Action (leave empty to keep the current one)'),
  });
  let request: { goalId: string; classification: string; nextAction?: string; agentId?: string } = {
    goalId: goal.goalId,
    classification,
    ...(nextAction === '' ? {} : { nextAction }),
  };
  const env = editorEnvironment(goal.registryPath);
  try {
    await runOperation(refreshState, { ...request, dryRun: true }, env); // validates the request and the scope rules, writes nothing
  } catch (error) {
    // A goal with several agents refreshes one agent's lane: ask which, then check again.
    if (!asksForAgent(error)) throw error;
    const agentId = await vscode.window.showQuickPick([...goal.agents], {
      title: vscode.l10n.t('Refresh {0}: for which agent?', goal.goalId),
      placeHolder: editorErrorText(error),
    });
    if (!agentId) throw new Cancelled();
    request = { ...request, agentId };
    await runOperation(refreshState, { ...request, dryRun: true }, env);
  }
  await confirm(
    confirmRefreshQuestion(goal.goalId, classification),
    confirmRefreshDetail(nextAction),
    vscode.l10n.t('Record'),
  );
  const payload = await runOperation(refreshState, request, env);
  await model.reload();
  void vscode.window.showInformationMessage(refreshRecordedMessage(payload));
}
