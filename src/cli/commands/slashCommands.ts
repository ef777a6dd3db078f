import type { SlashCatalog } from '../../core/slash/catalog';
import type { SlashInstallResult } from '../../core/slash/install';
import { MANAGED_MARKER, slashCommands, type SlashCommandsOutput } from '../../core/ops/slashCommands';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/**
 * `loopx slash-commands`: prints the slash-command catalog; `--install` / `--uninstall` write or
 * remove the `/loopx` prompt files of terminal agents in the project (`--dry-run` to preview).
 */

function slashMarkdown(result: SlashCommandsOutput): string {
  return result.schema_version === 'loopx_slash_command_install_v0' ? installMarkdown(result) : catalogMarkdown(result);
}

function catalogMarkdown(catalog: SlashCatalog): string {
  return [
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
      ? ['', `Legacy aliases: ${catalog.legacy_aliases.map((a) => `\`${a.alias}\` → \`${a.command}\``).join(', ')}.`]
      : []),
    '',
    'Install them for terminal agents with `loopx slash-commands --install [--surface claude-code|codex|opencode|copilot] [--dry-run]`.',
  ].join('\n');
}

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

export const slashCommandsCommand = operationCommand(slashCommands, slashMarkdown);
