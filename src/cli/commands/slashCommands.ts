import * as path from 'node:path';
import { errorMessage, LoopxError } from '../../core/errors';
import { expandHome } from '../../core/registry/locate';
import { slashCatalog } from '../../core/slash/catalog';
import {
  installSlashCommands,
  MANAGED_MARKER,
  parseSurfaces,
  uninstallSlashCommands,
  type SlashInstallResult,
} from '../../core/slash/install';
import type { CommandOutput } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/**
 * `loopx slash-commands`: prints the slash-command catalog; `--install` / `--uninstall` write or
 * remove the `/loopx` prompt files of terminal agents in the project (`--dry-run` to preview).
 */
export const slashCommandsCommand: CliHandler = {
  configure: (command) => {
    command
      .option('--no-legacy-aliases', 'leave out the /loop-global-* aliases')
      .option('--install', 'write the /loopx prompt files of terminal agents into the project')
      .option('--uninstall', 'remove the /loopx prompt files LoopX wrote (files without its marker are kept)')
      .option(
        '--surface <surface>',
        'claude-code, codex, opencode or all (repeatable; default all)',
        collect,
        undefined,
      )
      .option('--project <dir>', 'the project folder to install into (default: the current folder)')
      .option('--dry-run', 'show what --install or --uninstall would do, write nothing');
  },
  run: async ({ options, ctx }): Promise<CommandOutput> => {
    const install = options['install'] === true;
    const uninstall = options['uninstall'] === true;
    if (install && uninstall) throw new LoopxError('usage', '--install and --uninstall exclude each other');
    const surfaceValues = (options['surface'] as string[] | undefined) ?? [];
    if (!install && !uninstall) {
      if (surfaceValues.length > 0 || options['dryRun'] === true || options['project'] !== undefined) {
        throw new LoopxError('usage', '--surface, --project and --dry-run go with --install or --uninstall');
      }
      const catalog = slashCatalog({ legacyAliases: options['legacyAliases'] !== false });
      const markdown = [
        '# LoopX slash commands',
        '',
        markdownTable(
          ['Command', 'Scope', 'Intent', 'Mutation policy', 'CLI reference'],
          catalog.commands.map((entry) => [
            `\`${entry.command}\``,
            entry.scope,
            entry.intent,
            entry.mutation_note === null ? entry.mutation_policy : `${entry.mutation_policy}: ${entry.mutation_note}`,
            `\`${entry.cli_reference}\``,
          ]),
        ),
        ...(catalog.legacy_aliases.length > 0
          ? [
              '',
              `Legacy aliases: ${catalog.legacy_aliases.map((a) => `\`${a.alias}\` → \`${a.command}\``).join(', ')}.`,
            ]
          : []),
        '',
        'Install them for terminal agents with `loopx slash-commands --install [--surface claude-code|codex|opencode] [--dry-run]`.',
      ].join('\n');
      return { ok: true, json: catalog, markdown };
    }
    let surfaces;
    try {
      surfaces = parseSurfaces(surfaceValues);
    } catch (error) {
      throw new LoopxError('usage', errorMessage(error));
    }
    const project = path.resolve(
      ctx.cwd,
      expandHome(typeof options['project'] === 'string' ? options['project'] : '.', cliHomeDir(ctx)),
    );
    const request = { projectRoot: project, surfaces, dryRun: options['dryRun'] === true };
    const result = install ? await installSlashCommands(request) : await uninstallSlashCommands(request);
    return { ok: true, json: result, markdown: installMarkdown(result) };
  },
};

const STATUS_WORDS: Record<string, [string, string]> = {
  created: ['created', 'would create'],
  updated: ['updated', 'would update'],
  unchanged: ['unchanged', 'unchanged'],
  skipped_user_file: ['kept (yours: no LoopX marker)', 'would keep (yours: no LoopX marker)'],
  removed: ['removed', 'would remove'],
  absent: ['not there', 'not there'],
};

function installMarkdown(result: SlashInstallResult): string {
  const title = `# LoopX slash commands: ${result.action}${result.dry_run ? ' (dry run, nothing written)' : ''}`;
  const rows = result.files.map((file) => [
    file.surface,
    `\`${file.path}\``,
    STATUS_WORDS[file.status]?.[result.dry_run ? 1 : 0] ?? file.status,
    file.commands.join(', '),
  ]);
  return [
    title,
    '',
    rows.length === 0 ? '_No files._' : markdownTable(['Surface', 'File', 'Result', 'Commands'], rows),
    '',
    `Files LoopX manages carry the marker \`${MANAGED_MARKER}\`; files without it are never overwritten or removed.`,
  ].join('\n');
}
