import {
  configureAgent,
  removeAgent,
  type ConfigureAgentResult,
  type RemoveAgentResult,
} from '../../core/ops/configureAgent';
import { operationCommand } from '../operationHandler';

/** `loopx agent configure` and `loopx agent remove`: one agent's executor, previewed, then written with --execute. */

function closing(result: { dry_run: boolean; changed: boolean; written: boolean; verified: boolean }): string {
  if (result.dry_run)
    return result.changed ? 'Preview only; re-run with --execute to write the registry.' : 'Nothing would change.';
  if (!result.written) return 'Nothing changed; the registry was not written.';
  return `Written and read back: ${result.verified ? 'verified' : 'NOT verified'}.`;
}

function configureMarkdown(result: ConfigureAgentResult): string {
  const lines = [`# Configure agent ${result.agent_id} on goal ${result.goal_id}`, ''];
  lines.push(`- Executor before: \`${JSON.stringify(result.before)}\``, `- After: \`${JSON.stringify(result.after)}\``);
  if (result.isolation_before !== result.isolation_after)
    lines.push(`- Isolation: ${result.isolation_before} → ${result.isolation_after} (docs/lanes.md)`);
  else lines.push(`- Isolation: ${result.isolation_after}`);
  if (result.registers_agent) lines.push(`- Registers \`${result.agent_id}\` on the goal.`);
  if (result.not_written.length > 0)
    lines.push(`- Not written (this build's executor does not take them yet): ${result.not_written.join(', ')}`);
  lines.push('', closing(result), '', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

function removeMarkdown(result: RemoveAgentResult): string {
  const lines = [`# Remove agent ${result.agent_id} from goal ${result.goal_id}`, ''];
  lines.push(
    result.removed.length === 0
      ? `- \`${result.agent_id}\` is not on the goal.`
      : `- Removes: ${result.removed.map((field) => `\`coordination.${field}\``).join(', ')}`,
    `- Registered agents after: ${result.registered_agents.length === 0 ? '(none)' : result.registered_agents.join(', ')}`,
    '',
    closing(result),
    '',
    `Registry: \`${result.registry}\``,
  );
  return lines.join('\n');
}

export const configureAgentCommand = operationCommand(configureAgent, configureMarkdown);
export const removeAgentCommand = operationCommand(removeAgent, removeMarkdown);
