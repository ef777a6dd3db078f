import type { RegisterAgentResult } from '../../core/agents/registration';
import { registerAgent } from '../../core/ops/registerAgent';
import { operationCommand } from '../operationHandler';

/** `loopx register-agent`: previews, or with --execute adds, agent ids to a goal's registered agents. */

function registrationMarkdown(result: RegisterAgentResult): string {
  const ids = result.agent_ids.map((id) => `\`${id}\``).join(', ');
  const lines = [`# Register agent ${ids} for goal ${result.goal_id}`, ''];
  if (result.error_kind === 'agent_identity_already_registered') {
    lines.push(`Refused (${result.error_kind}): ${result.error ?? ''}`, '', 'Nothing was written.');
  } else if (result.dry_run) {
    lines.push(
      result.changed
        ? `Would add ${result.added.map((id) => `\`${id}\``).join(', ')}.`
        : 'Nothing to add: every id is already registered.',
      '',
      `- Registered now: ${listOrNone(result.registered_agents_before)}`,
      `- After: ${listOrNone(result.registered_agents)}`,
      '',
      'Preview only; re-run with --execute to write the registry.',
    );
  } else {
    lines.push(
      result.written
        ? `Added ${result.added.map((id) => `\`${id}\``).join(', ')}.`
        : 'Nothing to add: every id is already registered.',
      '',
      `- Registered agents: ${listOrNone(result.registered_agents)}`,
      `- Read back and verified: ${result.verified ? 'yes' : 'NO'}`,
    );
    // Written but not read back: say what is missing where (error_code agent_registration_unverified).
    if (result.error !== undefined) lines.push('', `Not verified (${result.error_code ?? ''}): ${result.error}`);
  }
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

function listOrNone(ids: readonly string[]): string {
  return ids.length === 0 ? '(none)' : ids.map((id) => `\`${id}\``).join(', ');
}

export const registerAgentCommand = operationCommand(registerAgent, registrationMarkdown);
