import * as path from 'node:path';
import type { Command } from 'commander';
import { syncGlobalRegistry, type GlobalSyncResult } from '../../core/globalRegistry/sync';
import { GLOBAL_REGISTRY_FILE_NAME, locateRegistry, resolveRuntimeRoot } from '../../core/registry/locate';
import { readRegistry } from '../../core/registry/read';
import type { CommandOutput } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** `loopx sync-global`: projects this project's goals into `<runtime root>/registry.global.json`. */
export const syncGlobalCommand: CliHandler = {
  configure: (command: Command) => {
    command
      .option('--goal-id <id>', 'sync only this goal (repeatable); default every goal of the registry', collect, [])
      .option(
        '--allow-route-replacement',
        'let a goal id owned by another project be replaced (the global registry is backed up first)',
      )
      .option('--dry-run', 'show what would change without locking or writing');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const homeDir = cliHomeDir(ctx);
    // The project's own registry only: falling back to the global one would sync it into itself.
    const located = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir,
      globalFallback: false,
    });
    const registry = await readRegistry(located.path);
    const runtimeRoot = resolveRuntimeRoot({
      registryPath: located.path,
      registry,
      override: globals.runtimeRoot,
      homeDir,
      cwd: ctx.cwd,
    });
    const goalIds = (options['goalId'] as string[] | undefined) ?? [];
    const result = await syncGlobalRegistry({
      projectRegistryPath: located.path,
      globalRegistryPath: path.join(runtimeRoot, GLOBAL_REGISTRY_FILE_NAME),
      goalIds,
      allowRouteReplacement: options['allowRouteReplacement'] === true,
      dryRun: options['dryRun'] === true,
      clock: ctx.clock,
      runtimeRoot,
      lock: { env: ctx.env },
    });
    return { ok: true, json: result, markdown: syncMarkdown(result) };
  },
};

function syncMarkdown(result: GlobalSyncResult): string {
  const verb = result.dry_run ? 'would sync' : 'synced';
  const lines = [
    `# LoopX global sync${result.dry_run ? ' (dry run)' : ''}`,
    '',
    `- Project registry: \`${result.registry}\``,
    `- Global registry: \`${result.global_registry}\` (${result.global_goal_count} goal${result.global_goal_count === 1 ? '' : 's'})`,
    `- Result: ${result.goals.length} goal${result.goals.length === 1 ? '' : 's'} ${verb}; ${result.written ? 'written' : result.dry_run ? 'nothing written' : 'already up to date'}`,
  ];
  if (result.backup_path !== null) lines.push(`- Backup before route replacement: \`${result.backup_path}\``);
  if (result.goals.length > 0) {
    lines.push(
      '',
      markdownTable(
        ['Goal', 'Action', 'Notes'],
        result.goals.map((goal) => [
          goal.goal_id,
          goal.action,
          [
            goal.route_changes.length > 0 ? `route changed: ${goal.route_changes.join(', ')}` : '',
            goal.attention_carried.length > 0 ? `kept attention: ${goal.attention_carried.join(', ')}` : '',
          ]
            .filter((note) => note !== '')
            .join('; '),
        ]),
      ),
    );
  }
  if (result.dry_run) lines.push('', 'Run again without `--dry-run` to write.');
  return lines.join('\n');
}
