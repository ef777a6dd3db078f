import type { OnboardingPacket } from '../../core/agents/onboarding';
import {
  agentOnboard,
  type AgentOnboardOutput,
  type AgentTypeCatalogOutput,
  type AgentTypeErrorOutput,
} from '../../core/ops/agentOnboard';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/** `loopx agent-onboard`: the read-only onboarding packet for one agent type, or the type catalog. */

function agentOnboardMarkdown(result: AgentOnboardOutput): string {
  if (result.schema_version === 'loopx_agent_type_catalog_v0') return catalogMarkdown(result);
  if (result.schema_version === 'loopx_agent_type_error_v0') return agentTypeErrorMarkdown(result);
  return onboardingMarkdown(result);
}

function agentTypeErrorMarkdown(result: AgentTypeErrorOutput): string {
  return [
    '# LoopX agent type not recognized',
    '',
    result.reason,
    '',
    `Choose one of: ${result.suggestions.map((type) => `\`${type}\``).join(', ')} (see \`loopx agent-onboard --list-agent-types\`).`,
  ].join('\n');
}

function catalogMarkdown(catalog: AgentTypeCatalogOutput): string {
  return [
    '# LoopX agent types',
    '',
    markdownTable(
      ['Agent type', 'Name', 'Host', 'Aliases'],
      catalog.agent_types.map((row) => [
        `\`${row.agent_type}\``,
        row.display_name,
        row.host_kind,
        row.aliases.join(', '),
      ]),
    ),
    '',
    'Ambiguous names (`codex`, `openai-codex`, `cli`) are rejected with the candidates listed.',
  ].join('\n');
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

// An agent type that does not resolve is the original's argument error: its payload, exit 2.
export const agentOnboardCommand = operationCommand(agentOnboard, agentOnboardMarkdown, undefined, (result) =>
  result.schema_version === 'loopx_agent_type_error_v0' ? 2 : undefined,
);
