import { COMMANDS, paletteCommandId } from '../../core/commands/catalog';
import type { CommandOutput } from '../context';
import { markdownTable } from '../output';

export function showCommands(): CommandOutput {
  const commands = COMMANDS.map((c) => ({
    key: c.key,
    cli: c.cli === null ? null : `loopx ${c.cli}`,
    palette: c.title === null ? null : { command: paletteCommandId(c), title: `LoopX: ${c.title}` },
    slash: c.slash,
    scope: c.scope,
    intent: c.intent,
    mutation_policy: c.mutation,
    group: c.group,
  }));
  const markdown = [
    '# LoopX commands',
    '',
    markdownTable(
      ['CLI', 'Palette', 'Slash', 'Scope', 'Mutation', 'Intent'],
      commands.map((c) => [
        c.cli ? `\`${c.cli}\`` : '',
        c.palette?.title ?? '',
        c.slash ?? '',
        c.scope,
        c.mutation_policy,
        c.intent,
      ]),
    ),
  ].join('\n');
  return {
    ok: true,
    json: { ok: true, schema_version: 'loopx_command_catalog_v1', count: commands.length, commands },
    markdown,
  };
}
