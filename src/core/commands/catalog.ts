import { z } from 'zod';

/**
 * The one table of LoopX commands. The CLI, the command palette (`contributes.commands`),
 * the extension's command registrations and the slash-command catalog are all derived from it
 * or checked against it (test/unit/catalog.test.ts), so they cannot drift apart.
 */
export const MutationPolicy = z.enum(['read_only', 'writes_after_preview', 'writes']);
export type MutationPolicy = z.infer<typeof MutationPolicy>;

export const CommandScope = z.enum(['project', 'goal', 'agent', 'global', 'editor']);
export type CommandScope = z.infer<typeof CommandScope>;

export const HelpGroup = z.enum(['Inspect', 'Set up', 'Goals and todos', 'Agents', 'Quota and turns', 'Runtime', 'Editor']);
export type HelpGroup = z.infer<typeof HelpGroup>;

export const CommandSpec = z.object({
  /** Stable key, also the suffix of the palette command id (`loopx.<key>`). */
  key: z.string().regex(/^[a-z][A-Za-z0-9]*$/),
  /** CLI words (`status`, `todo add`), or null when the command is editor-only. */
  cli: z.string().regex(/^[a-z][a-z0-9-]*( [a-z][a-z0-9-]*)?$/).nullable(),
  /** Palette title (shown as `LoopX: <title>`), or null when the command is CLI-only. */
  title: z.string().min(1).nullable(),
  /** Slash form for chat and terminal agents, or null when there is none. */
  slash: z.string().regex(/^\/loopx/).nullable(),
  scope: CommandScope,
  intent: z.string().min(1),
  mutation: MutationPolicy,
  group: HelpGroup,
  /** Codicon for menus and tree inline actions. */
  icon: z.string().optional(),
});
export type CommandSpec = z.infer<typeof CommandSpec>;

const catalog = [
  {
    key: 'showCommands', cli: 'commands', title: 'Show All Commands', slash: '/loopx-commands',
    scope: 'global', intent: 'list every LoopX command with its CLI, palette and slash forms', mutation: 'read_only', group: 'Inspect',
  },
  {
    key: 'refresh', cli: null, title: 'Refresh', slash: null,
    scope: 'editor', intent: 'reload goals and agents from disk', mutation: 'read_only', group: 'Editor', icon: 'refresh',
  },
  {
    key: 'showLog', cli: null, title: 'Show Log', slash: null,
    scope: 'editor', intent: 'open the LoopX output channel', mutation: 'read_only', group: 'Editor', icon: 'output',
  },
] as const satisfies readonly CommandSpec[];

export type CommandKey = (typeof catalog)[number]['key'];
/** Keys of the commands that have a CLI form. */
export type CliCommandKey = Extract<(typeof catalog)[number], { cli: string }>['key'];
/** Keys of the commands that appear in the command palette. */
export type PaletteCommandKey = Extract<(typeof catalog)[number], { title: string }>['key'];

export const COMMANDS: readonly CommandSpec[] = z.array(CommandSpec).parse(catalog);

export const PALETTE_PREFIX = 'loopx.';

export function paletteCommandId(spec: Pick<CommandSpec, 'key'>): string {
  return `${PALETTE_PREFIX}${spec.key}`;
}

export function commandByKey(key: CommandKey): CommandSpec {
  const spec = COMMANDS.find((c) => c.key === key);
  if (!spec) throw new Error(`unknown command key ${key}`);
  return spec;
}

export function cliCommands(): CommandSpec[] {
  return COMMANDS.filter((c) => c.cli !== null);
}

export function paletteCommands(): CommandSpec[] {
  return COMMANDS.filter((c) => c.title !== null);
}
