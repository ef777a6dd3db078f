import * as path from 'node:path';
import type { Command } from 'commander';
import { isLoopxError, LoopxError } from '../../core/errors';
import { expandHome, locateRegistry } from '../../core/registry/locate';
import { archiveRuntimeGoal, type ArchiveRuntimeResult } from '../../core/runtime/archive';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/** `loopx archive-runtime`: moves a goal's runtime folder aside; a dry run unless --execute. */
export const archiveRuntimeCommand: CliHandler = {
  configure: (command: Command) => {
    command
      .option('--goal-id <id>', 'the runtime goal folder to archive (required)')
      .option('--archive-root <path>', 'where archived folders go (default: <runtime root>/archived-goals)')
      .option(
        '--allow-registered',
        'archive even a goal the registry lists (or when the registry cannot be read); only after confirming it is obsolete',
      )
      .option('--execute', 'move the folder; without it, only show what would happen');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const goalId = options['goalId'];
    if (typeof goalId !== 'string') throw new LoopxError('usage', 'archive-runtime needs --goal-id <id>.');
    const homeDir = cliHomeDir(ctx);
    const located = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir,
      runtimeRootOverride: globals.runtimeRoot,
    });
    const archiveRootOption = options['archiveRoot'];
    try {
      const result = await archiveRuntimeGoal({
        registryPath: located.path,
        runtimeRootOverride: globals.runtimeRoot,
        goalId,
        archiveRoot:
          typeof archiveRootOption === 'string'
            ? path.resolve(ctx.cwd, expandHome(archiveRootOption, homeDir))
            : undefined,
        allowRegistered: options['allowRegistered'] === true,
        execute: options['execute'] === true,
        clock: ctx.clock,
        homeDir,
      });
      return { ok: true, json: result, markdown: archiveMarkdown(result) };
    } catch (error) {
      // As in LoopX: a refused archive is a failed operation with a JSON answer, not a crash.
      if (!isLoopxError(error) || error.code === 'usage') throw error;
      return {
        ok: false,
        json: { ok: false, archived: false, goal_id: goalId.trim(), error: error.message, error_code: error.code },
        markdown: `# LoopX archive-runtime\n\nNot archived: ${error.message}\n`,
      };
    }
  },
};

function archiveMarkdown(result: ArchiveRuntimeResult): string {
  const lines = [
    `# LoopX archive-runtime${result.dry_run ? ' (dry run)' : ''}`,
    '',
    `- Goal: \`${result.goal_id}\` (${result.registry_member === null ? 'registry not readable' : result.registry_member ? 'registered' : 'not in the registry'})`,
    `- From: \`${result.source}\``,
    `- ${result.archived ? 'Moved to' : 'Would move to'}: \`${result.archive_path}\``,
    `- Checks: ${result.checks.join(', ')}`,
  ];
  if (result.dry_run) lines.push('', 'Nothing was moved. Run again with `--execute` to move it.');
  return lines.join('\n');
}
