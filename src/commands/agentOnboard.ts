import * as vscode from 'vscode';
import { agentOnboard } from '../core/ops/agentOnboard';
import { runOperation } from '../core/ops/run';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { folderEnvironment } from './operationRunner';
import { Cancelled, pickProjectFolder } from './pickers';

/** "LoopX: Onboard an Agent…" — the read-only onboarding packet, shown as a Markdown preview. */
export async function agentOnboardCommand(model: WorkspaceModel): Promise<void> {
  const folder = await pickProjectFolder(vscode.l10n.t('Onboard an agent to which folder?'));
  const env = folderEnvironment(folder);
  const catalog = await runOperation(agentOnboard, { listAgentTypes: true }, env);
  if (!('agent_types' in catalog)) throw new Error(vscode.l10n.t('the agent-type catalog could not be read'));
  const picked = await vscode.window.showQuickPick(
    catalog.agent_types.map((row) => ({
      label: row.display_name,
      description: row.agent_type,
      detail: row.aliases.length > 0 ? vscode.l10n.t('also: {0}', row.aliases.join(', ')) : undefined,
      row,
    })),
    { title: vscode.l10n.t('Which kind of agent?'), matchOnDescription: true, matchOnDetail: true },
  );
  if (!picked) throw new Cancelled();
  const goals = model.goals.filter((g) => g.projectRoot === folder.uri.fsPath);
  const goalId =
    goals.length === 1
      ? goals[0]?.goalId
      : goals.length > 1
        ? (
            await vscode.window.showQuickPick(
              goals.map((g) => ({ label: g.displayName, description: g.goalId, id: g.goalId })),
              { title: vscode.l10n.t('For which goal?') },
            )
          )?.id
        : undefined;
  if (goals.length > 1 && goalId === undefined) throw new Cancelled();
  const packet = await runOperation(
    agentOnboard,
    { agentType: picked.row.agent_type, project: folder.uri.fsPath, goalId },
    env,
  );
  if (!('identity_status' in packet))
    throw new Error(vscode.l10n.t('no onboarding packet for {0}', picked.row.agent_type));
  const commands = Object.entries(packet.commands)
    .filter(([, command]) => command !== null)
    .map(([name, command]) => `- **${name.replace(/_/g, ' ')}**: \`${String(command).replace(/`/g, "'")}\``);
  const body = [
    `# ${vscode.l10n.t('Onboarding {0} to {1}', picked.row.display_name, packet.goal_id ?? '')}`,
    '',
    `- ${vscode.l10n.t('Connection: {0}', `**${packet.project_connection.status}**`)}`,
    `- ${vscode.l10n.t('Identity: {0}', `**${packet.identity_status}**`)}`,
    `- ${vscode.l10n.t('Host loop: {0}', packet.host_loop_activation.allowed ? vscode.l10n.t('may start') : vscode.l10n.t('blocked by {0}', packet.host_loop_activation.blocked_by.join(', ')))}`,
    '',
    `**${vscode.l10n.t('Next step:')}** ${packet.recommended_start.step} — ${packet.recommended_start.reason}`,
    '',
    `## ${vscode.l10n.t('Commands')}`,
    ...commands,
    '',
    `_${packet.host_loop_activation.how}_`,
    '',
    vscode.l10n.t(
      'Onboarding wrote nothing. Registering the agent is a separate, confirmed step ("LoopX: Register Agent…").',
    ),
  ].join('\n');
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: body });
  await vscode.commands.executeCommand('markdown.showPreview', document.uri);
}
