import * as vscode from 'vscode';
import { agentOnboard } from '../core/ops/agentOnboard';
import { runOperation } from '../core/ops/run';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { folderEnvironment } from './operationRunner';
import { Cancelled, pickProjectFolder } from './pickers';

/** "LoopX: Onboard an Agent…" — the read-only onboarding packet, shown as a Markdown preview. */
export async function agentOnboardCommand(model: WorkspaceModel): Promise<void> {
  const folder = await pickProjectFolder('Onboard an agent to which folder?');
  const env = folderEnvironment(folder);
  const catalog = await runOperation(agentOnboard, { listAgentTypes: true }, env);
  if (!('agent_types' in catalog)) throw new Error('the agent-type catalog could not be read');
  const picked = await vscode.window.showQuickPick(
    catalog.agent_types.map((row) => ({
      label: row.display_name,
      description: row.agent_type,
      detail: row.aliases.length > 0 ? `also: ${row.aliases.join(', ')}` : undefined,
      row,
    })),
    { title: 'Which kind of agent?', matchOnDescription: true, matchOnDetail: true },
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
              { title: 'For which goal?' },
            )
          )?.id
        : undefined;
  if (goals.length > 1 && goalId === undefined) throw new Cancelled();
  const packet = await runOperation(
    agentOnboard,
    { agentType: picked.row.agent_type, project: folder.uri.fsPath, goalId },
    env,
  );
  if (!('identity_status' in packet)) throw new Error(`no onboarding packet for ${picked.row.agent_type}`);
  const commands = Object.entries(packet.commands)
    .filter(([, command]) => command !== null)
    .map(([name, command]) => `- **${name.replace(/_/g, ' ')}**: \`${String(command).replace(/`/g, "'")}\``);
  const body = [
    `# Onboarding ${picked.row.display_name} to ${packet.goal_id}`,
    '',
    `- Connection: **${packet.project_connection.status}**`,
    `- Identity: **${packet.identity_status}**`,
    `- Host loop: ${packet.host_loop_activation.allowed ? 'may start' : `blocked by ${packet.host_loop_activation.blocked_by.join(', ')}`}`,
    '',
    `**Next step:** ${packet.recommended_start.step} — ${packet.recommended_start.reason}`,
    '',
    '## Commands',
    ...commands,
    '',
    `_${packet.host_loop_activation.how}_`,
    '',
    'Onboarding wrote nothing. Registering the agent is a separate, confirmed step ("LoopX: Register Agent…").',
  ].join('\n');
  const document = await vscode.workspace.openTextDocument({ language: 'markdown', content: body });
  await vscode.commands.executeCommand('markdown.showPreview', document.uri);
}
