import * as os from 'node:os';
import { locateRegistry } from '../../core/registry/locate';
import { validateRegistryFile, type RegistryValidation } from '../../core/registry/validate';
import type { CliContext, CommandOutput } from '../context';
import type { CliHandler } from './index';
import { markdownTable } from '../output';

/** The user's home directory as this invocation sees it: `HOME` of the CLI's env, else the OS's. */
export function cliHomeDir(ctx: CliContext): string {
  const home = ctx.env['HOME'];
  return home !== undefined && home !== '' ? home : os.homedir();
}

/** `loopx registry`: validates the registry file and echoes its goals. */
export const validateRegistryCommand: CliHandler = {
  run: async ({ globals, ctx }): Promise<CommandOutput> => {
    const homeDir = cliHomeDir(ctx);
    const located = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir,
      runtimeRootOverride: globals.runtimeRoot,
    });
    const result = await validateRegistryFile(located.path, { homeDir });
    if (!('goals' in result)) {
      return {
        ok: false,
        json: result,
        markdown: [
          '# LoopX registry',
          '',
          `The registry file does not exist: \`${result.registry}\`.`,
          '',
          'Create it by connecting a project: `loopx bootstrap --project . --goal-id <id> --objective "<text>"`, or point at one with `--registry PATH` or `LOOPX_REGISTRY`.',
        ].join('\n'),
      };
    }
    return { ok: result.ok, json: result, markdown: validationMarkdown(result) };
  },
};

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
    lines.push('', '## Problems', '', ...result.diagnostics.map((d) => `- ${d.message} (\`${d.code}\`, ${d.scope})`));
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
