import * as vscode from 'vscode';
import { agentIdProblem, registerAgent } from '../core/ops/registerAgent';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { askText, pickGoal } from './pickers';

/** "LoopX: Register Agent…" — previewed, confirmed, then written and read back (the registerAgent operation). */
export async function registerAgentCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, 'Register an agent on which goal?');
  const raw = await askText({
    title: `Register Agent on ${goal.goalId}`,
    prompt: 'Agent id (a letter a-z first; a-z, 0-9, "_", ".", ":", "@", "-")',
    placeHolder: 'e.g. claude-main',
    validateInput: (v) => agentIdProblem(v) ?? undefined,
  });
  const outcome = await previewThenApply(
    registerAgent,
    { goalId: goal.goalId, agentId: [raw], requireNew: true, projectRegistry: true },
    editorEnvironment(goal.registryPath),
    {
      question: (preview) => `Register agent "${preview.agent_ids.join(', ')}" on goal "${goal.goalId}"?`,
      describe: (preview) => `Registered agents after this change: ${preview.registered_agents.join(', ')}`,
      action: 'Register',
    },
  );
  if (outcome.outcome !== 'applied') {
    throw new Error(outcome.preview.error ?? `agent ${raw} is already registered on ${goal.goalId}`);
  }
  const { result } = outcome;
  if (!result.ok) throw new Error(result.error ?? 'the registration could not be verified');
  await model.reload();
  void vscode.window.showInformationMessage(
    `LoopX: agent "${result.agent_ids.join(', ')}" registered on "${goal.goalId}".`,
  );
}
