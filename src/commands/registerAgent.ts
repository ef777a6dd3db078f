import * as vscode from 'vscode';
import { agentIdProblem, registerAgent } from '../core/ops/registerAgent';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { askText, pickGoal } from './pickers';

/** "LoopX: Register Agent…" — previewed, confirmed, then written and read back (the registerAgent operation). */
export async function registerAgentCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, vscode.l10n.t('Register an agent on which goal?'));
  const raw = await askText({
    title: vscode.l10n.t('Register Agent on {0}', goal.goalId),
    prompt: vscode.l10n.t('Agent id (a letter a-z first; a-z, 0-9, "_", ".", ":", "@", "-")'),
    placeHolder: vscode.l10n.t('e.g. claude-main'),
    validateInput: (v) => agentIdProblem(v) ?? undefined,
  });
  const outcome = await previewThenApply(
    registerAgent,
    { goalId: goal.goalId, agentId: [raw], requireNew: true, projectRegistry: true },
    editorEnvironment(goal.registryPath),
    {
      question: (preview) =>
        vscode.l10n.t('Register agent "{0}" on goal "{1}"?', preview.agent_ids.join(', '), goal.goalId),
      describe: (preview) =>
        vscode.l10n.t('Registered agents after this change: {0}', preview.registered_agents.join(', ')),
      action: vscode.l10n.t('Register'),
    },
  );
  if (outcome.outcome !== 'applied') {
    throw new Error(outcome.preview.error ?? vscode.l10n.t('agent {0} is already registered on {1}', raw, goal.goalId));
  }
  const { result } = outcome;
  if (!result.ok) throw new Error(result.error ?? vscode.l10n.t('the registration could not be verified'));
  await model.reload();
  void vscode.window.showInformationMessage(
    vscode.l10n.t('LoopX: agent "{0}" registered on "{1}".', result.agent_ids.join(', '), goal.goalId),
  );
}
