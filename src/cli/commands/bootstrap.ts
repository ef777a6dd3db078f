import * as path from 'node:path';
import { Option } from 'commander';
import { isLoopxError, LoopxError } from '../../core/errors';
import { bootstrapGoal, type BootstrapAction, type BootstrapResult } from '../../core/registry/bootstrap';
import { checkNewGoalId } from '../../core/registry/goalId';
import { expandHome } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/** `loopx bootstrap`: creates or connects a project goal. */
export const bootstrapCommand: CliHandler = {
  configure: (command) => {
    command
      .addOption(new Option('--project <dir>', 'the project folder (default: the current folder)'))
      .addOption(
        new Option('--goal-id <id>', 'the new goal id, a lowercase slug such as my-project-goal').makeOptionMandatory(),
      )
      .addOption(
        new Option('--objective <text>', 'what the goal should achieve, in one sentence').makeOptionMandatory(),
      )
      .addOption(new Option('--domain <domain>', 'the goal domain (default: the project folder name)'))
      .addOption(
        new Option('--force', 'replace an existing goal entry and state file (the old state file is backed up)'),
      );
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const homeDir = cliHomeDir(ctx);
    const goalId = String(options['goalId']);
    try {
      checkNewGoalId(goalId);
    } catch (error) {
      if (isLoopxError(error, 'invalid_goal_id'))
        throw new LoopxError('usage', `--goal-id: ${error.message}`, error.details);
      throw error;
    }
    const project = path.resolve(ctx.cwd, expandHome(stringOption(options['project']) ?? '.', homeDir));
    const registryFlag = globals.registry;
    const result = await bootstrapGoal({
      projectDir: project,
      goalId,
      objective: String(options['objective']),
      domain: stringOption(options['domain']),
      force: options['force'] === true,
      registryPath: registryFlag === undefined ? undefined : path.resolve(ctx.cwd, expandHome(registryFlag, homeDir)),
      homeDir,
      clock: ctx.clock,
      env: ctx.env,
    });
    return { ok: true, json: result, markdown: bootstrapMarkdown(result) };
  },
};

function stringOption(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

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
  }
}
