import { showCommands, type CatalogOutput } from '../../core/ops/commands';
import { operationCommand } from '../operationHandler';
import { markdownTable } from '../output';

/** `loopx commands`: the command catalog with each command's CLI, palette and slash forms. */
function catalogMarkdown(result: CatalogOutput): string {
  return [
    '# LoopX commands',
    '',
    markdownTable(
      ['CLI', 'Palette', 'Slash', 'Scope', 'Mutation', 'Intent'],
      result.commands.map((c) => [
        c.cli ? `\`${c.cli}\`` : '',
        c.palette?.title ?? '',
        c.slash ?? '',
        c.scope,
        c.mutation_policy,
        c.intent,
      ]),
    ),
  ].join('\n');
}

export const showCommandsCommand = operationCommand(showCommands, catalogMarkdown);
