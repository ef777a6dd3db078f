import { join } from 'node:path';
import * as vscode from 'vscode';
import { agentTypeCatalogRows, resolveAgentType } from '../core/agents/agentTypes';
import { buildOnboardingPacket } from '../core/agents/onboarding';
import { PROJECT_REGISTRY_RELATIVE_PATH } from '../core/registry/locate';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { Cancelled, HOME_DIR, pickProjectFolder } from './pickers';

/** "LoopX: Onboard an Agent…" — the read-only onboarding packet, shown as a Markdown preview. */
export async function agentOnboardCommand(model: WorkspaceModel): Promise<void> {
  const folder = await pickProjectFolder('Onboard an agent to which folder?');
  const picked = await vscode.window.showQuickPick(
    agentTypeCatalogRows().map((row) => ({
      label: row.display_name,
      description: row.agent_type,
      detail: row.aliases.length > 0 ? `also: ${row.aliases.join(', ')}` : undefined,
      row,
    })),
    { title: 'Which kind of agent?', matchOnDescription: true, matchOnDetail: true },
  );
  if (!picked) throw new Cancelled();
  const resolution = resolveAgentType(picked.row.agent_type);
  if (!resolution.ok) throw new Error(`unknown agent type ${picked.row.agent_type}`);
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
  const packet = await buildOnboardingPacket({
    agentType: resolution.entry,
    project: folder.uri.fsPath,
    registryPath: join(folder.uri.fsPath, PROJECT_REGISTRY_RELATIVE_PATH),
    goalId,
    homeDir: HOME_DIR,
  });
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
