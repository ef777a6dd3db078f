import * as path from 'node:path';
import { agentTypeCatalogRows, agentTypeErrorPayload, resolveAgentType } from '../../core/agents/agentTypes';
import { buildOnboardingPacket, type OnboardingPacket } from '../../core/agents/onboarding';
import { LoopxError } from '../../core/errors';
import { locateRegistry } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/** `loopx agent-onboard`: the read-only onboarding packet for one agent type, or the type catalog. */
export const agentOnboardCommand: CliHandler = {
  configure: (command) => {
    command
      .option(
        '--agent-type <type>',
        'the agent host, e.g. vscode-lm, command, claude-code, codex-cli (see --list-agent-types)',
      )
      .option('--list-agent-types', 'list the known agent types and their aliases')
      .option('--project <dir>', 'the project directory (default: the current directory)')
      .option('--goal-id <id>', 'the goal (default: the project directory name plus -goal)')
      .option('--agent-id <id>', 'the agent id to use; without it a fresh identity is proposed');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    if (options['listAgentTypes'] === true) return listAgentTypes();
    const resolution = resolveAgentType(options['agentType']);
    if (!resolution.ok) {
      const supported =
        resolution.reason_kind === 'required' ? `; supported: ${resolution.suggestions.join(', ')}` : '';
      throw new LoopxError('usage', `${resolution.reason}${supported}`, agentTypeErrorPayload(resolution));
    }
    const project = path.resolve(ctx.cwd, typeof options['project'] === 'string' ? options['project'] : '.');
    const homeDir = cliHomeDir(ctx);
    const registry = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: project,
      homeDir,
      globalFallback: false,
    });
    const packet = await buildOnboardingPacket({
      agentType: resolution.entry,
      project,
      registryPath: registry.path,
      goalId: stringOption(options['goalId']),
      agentId: stringOption(options['agentId']),
      homeDir,
    });
    return { ok: true, json: { ...packet }, markdown: onboardingMarkdown(packet) };
  },
};

function stringOption(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function listAgentTypes(): CommandOutput {
  const rows = agentTypeCatalogRows();
  return {
    ok: true,
    json: { ok: true, schema_version: 'loopx_agent_type_catalog_v0', count: rows.length, agent_types: rows },
    markdown: [
      '# LoopX agent types',
      '',
      markdownTable(
        ['Agent type', 'Name', 'Host', 'Aliases'],
        rows.map((row) => [`\`${row.agent_type}\``, row.display_name, row.host_kind, row.aliases.join(', ')]),
      ),
      '',
      'Ambiguous names (`codex`, `openai-codex`, `cli`) are rejected with the candidates listed.',
    ].join('\n'),
  };
}

function onboardingMarkdown(packet: OnboardingPacket): string {
  const connection = packet.project_connection;
  const lines = [
    `# Onboarding ${packet.agent_type} for goal ${packet.goal_id}`,
    '',
    `- Project: \`${packet.project}\``,
    `- Goal: \`${packet.goal_id}\`${packet.goal_id_source === 'project_directory' ? ' (from the project directory name; pass --goal-id to choose)' : ''}`,
    `- Connection: **${connection.status}** (registry \`${connection.registry}\`)`,
    `- Identity: **${packet.identity_status}**${packet.agent_id === null ? '' : ` as \`${packet.agent_id}\``}`,
    `- Host loop: ${packet.host_loop_activation.allowed ? 'may start' : `blocked (${packet.host_loop_activation.blocked_by.join(', ')})`}`,
  ];
  if (connection.error) lines.push('', `> ${connection.error.message}`);
  if (connection.available_goal_ids && connection.available_goal_ids.length > 0) {
    lines.push('', `Goals in this registry: ${connection.available_goal_ids.map((id) => `\`${id}\``).join(', ')}`);
  }
  lines.push('', '## Next', '', `**${packet.recommended_start.step}**: ${packet.recommended_start.reason}`);
  if (packet.recommended_start.command !== null) lines.push('', '```sh', packet.recommended_start.command, '```');
  const commands = Object.entries(packet.commands).filter((entry): entry is [string, string] => entry[1] !== null);
  lines.push('', '## Commands', '', ...commands.map(([name, command]) => `- ${name}: \`${command}\``));
  if (packet.identity_selection_gate && packet.identity_selection_gate.choices.length > 0) {
    lines.push(
      '',
      `Taking over a registered agent (${packet.identity_selection_gate.choices.map((c) => `\`${c.agent_id}\``).join(', ')}) needs an explicit --agent-id.`,
    );
  }
  lines.push('', packet.host_loop_activation.how, '', 'Onboarding wrote nothing.');
  return lines.join('\n');
}
