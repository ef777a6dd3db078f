import type { BootstrapAction, BootstrapResult } from '../../core/registry/bootstrap';
import { createGoal } from '../../core/ops/createGoal';
import { operationCommand } from '../operationHandler';

/** `loopx bootstrap`: creates or connects a project goal (the createGoal operation), rendered for people. */

function bootstrapMarkdown(result: BootstrapResult): string {
  return [
    `# LoopX bootstrap: ${result.goal_id}`,
    '',
    `- Project: \`${result.project}\``,
    `- Registry: \`${result.registry}\``,
    `- State file: \`${result.state_file}\``,
    `- Runtime root: \`${result.runtime_root}\``,
    '',
    '## What changed',
    '',
    ...result.actions.map(describeAction),
    '',
    '## Next',
    '',
    '- `loopx registry` checks the registry and shows the goal.',
    `- Edit \`${result.state_file}\` to refine the objective and the todos.`,
  ].join('\n');
}

function describeAction(action: BootstrapAction): string {
  switch (action.action) {
    case 'created_registry':
      return `- Created the registry \`${action.path}\`.`;
    case 'added_goal':
      return '- Added the goal to the registry (status active, adapter generic_project_goal_v0, full compute quota).';
    case 'replaced_goal':
      return '- Reset the existing goal entry (its quota, agents and other fields were kept).';
    case 'wrote_state_file':
      return `- Wrote the state file \`${action.path}\`.`;
    case 'kept_existing_state_file':
      return `- Kept the existing state file \`${action.path}\` unchanged.`;
    case 'replaced_state_file':
      return `- Replaced the state file \`${action.path}\`; the previous one is saved as \`${action.backup_path ?? ''}\`.`;
    case 'wrote_gitignore':
      return `- Wrote \`${action.path}\` so the private registry and runtime files stay out of git.`;
    case 'synced_global_registry':
      return `- Entered the goal in the global registry \`${action.path}\` (as the original LoopX does).`;
    case 'global_registry_not_synced':
      return `- Did not enter the goal in the global registry \`${action.path}\`: ${action.reason ?? 'unknown reason'}. Run \`loopx sync-global\` once that is fixed.`;
  }
}

export const bootstrapCommand = operationCommand(createGoal, bootstrapMarkdown);
