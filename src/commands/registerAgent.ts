import * as vscode from 'vscode';
import { AGENT_ID_RULE, normalizeAgentId } from '../core/registry/agentIds';
import { registerAgent } from '../core/agents/registration';
import { clockFromEnv } from '../core/clock';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { askText, confirm, pickGoal } from './pickers';

/** "LoopX: Register Agent…" — preview, confirm, then `register-agent --execute`. */
export async function registerAgentCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, 'Register an agent on which goal?');
  const raw = await askText({
    title: `Register Agent on ${goal.goalId}`,
    prompt: `Agent id (${AGENT_ID_RULE})`,
    placeHolder: 'e.g. claude-main',
    validateInput: (v) => (normalizeAgentId(v) === null ? `Not a valid agent id. ${AGENT_ID_RULE}` : undefined),
  });
  const request = {
    registryPath: goal.registryPath,
    goalId: goal.goalId,
    agentIds: [raw],
    requireNew: true,
    clock: clockFromEnv(),
    env: process.env,
  };
  const preview = await registerAgent({ ...request, execute: false });
  if (!preview.ok) throw new Error(preview.error ?? `agent ${raw} is already registered on ${goal.goalId}`);
  await confirm(
    `Register agent "${preview.agent_ids.join(', ')}" on goal "${goal.goalId}"?`,
    `Registered agents after this change: ${preview.registered_agents.join(', ')}`,
    'Register',
  );
  const result = await registerAgent({ ...request, execute: true });
  if (!result.ok) throw new Error(result.error ?? 'the registration could not be verified');
  await model.reload();
  void vscode.window.showInformationMessage(
    `LoopX: agent "${result.agent_ids.join(', ')}" registered on "${goal.goalId}".`,
  );
}
