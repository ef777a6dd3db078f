import { z } from 'zod';
import {
  COMMANDS,
  paletteCommandId,
  type CommandScope,
  type HelpGroup,
  type MutationPolicy,
} from '../commands/catalog';
import { defineOperation } from './operation';

/** `commands`: the whole command catalog with each command's CLI, palette and slash forms. */

export interface CatalogEntry {
  key: string;
  cli: string | null;
  palette: { command: string; title: string } | null;
  slash: string | null;
  scope: CommandScope;
  intent: string;
  mutation_policy: MutationPolicy;
  group: HelpGroup;
}

export interface CatalogOutput {
  ok: true;
  schema_version: 'loopx_command_catalog_v1';
  count: number;
  commands: CatalogEntry[];
}

export const showCommands = defineOperation({
  key: 'showCommands',
  args: z.strictObject({}),
  run: (): Promise<CatalogOutput> => {
    const commands = COMMANDS.map((c): CatalogEntry => ({
      key: c.key,
      cli: c.cli === null ? null : `loopx ${c.cli}`,
      palette: c.title === null ? null : { command: paletteCommandId(c), title: `LoopX: ${c.title}` },
      slash: c.slash,
      scope: c.scope,
      intent: c.intent,
      mutation_policy: c.mutation,
      group: c.group,
    }));
    return Promise.resolve({ ok: true, schema_version: 'loopx_command_catalog_v1', count: commands.length, commands });
  },
});
