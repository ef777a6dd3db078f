import type { ConfigureGoalResult } from '../../core/agents/goalConfig';
import { configureGoal } from '../../core/ops/configureGoal';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/** `loopx configure-goal`: previews, or with --execute writes, a goal's quota, agents, write scope and spawn policy. */

function configureMarkdown(result: ConfigureGoalResult): string {
  const lines = [`# Configure goal ${result.goal_id}`, ''];
  lines.push(
    markdownTable(
      ['Field', 'Before', 'After', 'Changed'],
      Object.keys(result.after).map((field) => [
        `\`${field}\``,
        JSON.stringify(result.before[field]),
        JSON.stringify(result.after[field]),
        result.changed_paths.includes(field) ? 'yes' : '',
      ]),
    ),
  );
  if (result.orchestration.before !== result.orchestration.after) {
    lines.push('', `Orchestration: \`${result.orchestration.before}\` → \`${result.orchestration.after}\``);
  }
  lines.push('');
  if (result.dry_run)
    lines.push(result.changed ? 'Preview only; re-run with --execute to write the registry.' : 'Nothing would change.');
  else if (!result.written) lines.push('Nothing changed; the registry was not written.');
  else lines.push(`Written and read back: ${result.verified ? 'verified' : 'NOT verified'}.`);
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

export const configureGoalCommand = operationCommand(configureGoal, configureMarkdown);
