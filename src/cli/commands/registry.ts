import { validateRegistry, type RegistryValidationOutput } from '../../core/ops/registry';
import type { MissingRegistry, RegistryValidation } from '../../core/registry/validate';
import { operationCommand } from '../operationHandler';
import { markdownTable } from '../output';

/** `loopx registry`: the registry validation operation (a missing registry is `ok:false`, exit 1). */
export const validateRegistryCommand = operationCommand(validateRegistry, (result: RegistryValidationOutput) =>
  'goals' in result ? validationMarkdown(result) : missingMarkdown(result),
);

function missingMarkdown(result: MissingRegistry): string {
  return [
    '# LoopX registry',
    '',
    `The registry file does not exist: \`${result.registry}\`.`,
    '',
    'Create it by connecting a project: `loopx bootstrap --project . --goal-id <id> --objective "<text>"`, or point at one with `--registry PATH` or `LOOPX_REGISTRY`.',
  ].join('\n');
}

function validationMarkdown(result: RegistryValidation): string {
  const counts = Object.entries(result.status_counts)
    .map(([status, count]) => `${count} ${status}`)
    .join(', ');
  const lines = [
    '# LoopX registry',
    '',
    `- Registry: \`${result.registry}\``,
    `- Goals: ${result.goal_count}${counts === '' ? '' : ` (${counts})`}`,
    `- Result: ${result.ok ? 'valid' : `${result.problems.length} problem${result.problems.length === 1 ? '' : 's'}`}`,
  ];
  if (!result.ok) {
    lines.push(
      '',
      '## Problems',
      '',
      ...result.problem_diagnostics.map((d) => `- ${d.message} (\`${d.code}\`, ${d.scope})`),
    );
  }
  if (result.goals.length > 0) {
    lines.push(
      '',
      '## Goals',
      '',
      markdownTable(
        ['Goal', 'Status', 'Role', 'Repo', 'State file', 'Quota'],
        result.goals.map((goal) => [
          goal.id === '' ? '(no id)' : goal.id,
          goal.status,
          goal.role,
          `${goal.repo ?? '(none)'}${goal.repo !== null && !goal.repo_exists ? ' (missing)' : ''}`,
          `${goal.state_file ?? '(none)'}${goal.state_file !== null && !goal.state_file_exists ? ' (missing)' : ''}`,
          `compute ${goal.quota.compute}, ${goal.quota.allowed_slots} slots / ${goal.quota.window_hours} h`,
        ]),
      ),
    );
  }
  return lines.join('\n');
}
