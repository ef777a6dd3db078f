import { z } from 'zod';
import { COMMANDS, MutationPolicy, CommandScope, type CommandSpec } from '../commands/catalog';

/**
 * The slash-command catalog (`loopx slash-commands`, the original's `loopx_slash_command_catalog_v0`):
 * the `/loopx` entry points for chat and terminal agents. It is generated from the one command
 * table (every catalog entry with a slash form) plus the two `/loopx` entries that are not
 * commands of their own: `/loopx` (inspect) and `/loopx <goal text>` (plan and start a goal).
 */

export const SLASH_CATALOG_SCHEMA = 'loopx_slash_command_catalog_v0' as const;
export const CANONICAL_SLASH_PREFIX = '/loopx';
/** The original's older spelling of the global views, listed unless asked not to. */
export const LEGACY_ALIAS_PREFIX = '/loop-global-';

export const SlashCommandEntrySchema = z.object({
  command: z.string().startsWith(CANONICAL_SLASH_PREFIX),
  /** The catalog key the entry comes from, or null for the entries that are not commands of their own. */
  key: z.string().nullable(),
  /** `repo` for the original's repository-level `/loopx-pr-review`. */
  scope: z.union([CommandScope, z.literal('repo')]),
  intent: z.string(),
  mutation_policy: MutationPolicy,
  /** What an agent must respect beyond the policy word. */
  mutation_note: z.string().nullable(),
  cli_reference: z.string(),
  /** Arguments the slash command takes, as a hint (`<goal text>`), or null. */
  argument_hint: z.string().nullable(),
  /**
   * False for an entry of the original's catalog this implementation does not provide (listed so
   * the catalog keeps the original's commands, in order; never installed as a prompt file).
   */
  available: z.boolean(),
});
export type SlashCommandEntry = z.infer<typeof SlashCommandEntrySchema>;

export const SlashCatalogSchema = z.object({
  ok: z.literal(true),
  schema_version: z.literal(SLASH_CATALOG_SCHEMA),
  canonical_prefix: z.literal(CANONICAL_SLASH_PREFIX),
  count: z.number().int(),
  commands: z.array(SlashCommandEntrySchema),
  include_legacy_aliases: z.boolean(),
  legacy_aliases: z.array(z.object({ alias: z.string(), command: z.string() })),
});
export type SlashCatalog = z.infer<typeof SlashCatalogSchema>;

const INSPECT_ENTRY: SlashCommandEntry = {
  command: '/loopx',
  key: null,
  scope: 'project',
  intent: 'inspect the project: whether it is connected, its goals, status, open gates and the next safe action',
  mutation_policy: 'read_only',
  mutation_note: 'read first; ask the user before any write (creating or connecting a goal)',
  cli_reference: 'loopx agent-onboard && loopx status',
  argument_hint: null,
  available: true,
};

const GOAL_START_ENTRY: SlashCommandEntry = {
  command: '/loopx <goal text>',
  key: null,
  scope: 'project',
  intent:
    'plan ordered todos for a new goal, write them in priority order, then work through them in quota-gated turns',
  mutation_policy: 'writes_after_preview',
  mutation_note:
    'plan first and show the plan; write the goal and its todos only after the user agrees; setup is incomplete with a registry entry alone',
  cli_reference:
    "loopx bootstrap --goal-id <id> --objective '<goal text>' && loopx todo add --goal-id <id> --priority <P> --text '<todo>' (one per planned todo, highest priority first)",
  argument_hint: '<goal text>',
  available: true,
};

/**
 * The original's `/loopx-pr-review` (its `loopx pr-review` packet of review plans per pull
 * request). LoopX for VS Code has no `pr-review` command: the entry is listed, marked unavailable,
 * and no prompt file is installed for it, so no agent is told to run a command that does not exist.
 */
const PR_REVIEW_ENTRY: SlashCommandEntry = {
  command: '/loopx-pr-review',
  key: null,
  scope: 'repo',
  intent: 'review pull requests from a review plan per pull request (the original LoopX only; not available here)',
  mutation_policy: 'read_only',
  mutation_note: 'does not comment, approve, merge or spend quota',
  cli_reference: '(not available: LoopX for VS Code has no pr-review command)',
  argument_hint: null,
  available: false,
};

function entryOf(spec: CommandSpec & { slash: string }): SlashCommandEntry {
  return {
    command: spec.slash,
    key: spec.key,
    scope: spec.scope,
    intent: spec.intent,
    mutation_policy: spec.mutation,
    mutation_note: null,
    cli_reference: spec.cli === null ? '(editor only)' : `loopx ${spec.cli}`,
    argument_hint: spec.slashArguments ?? null,
    available: true,
  };
}

/**
 * Every slash entry: `/loopx`, `/loopx <goal text>`, the catalog's slash forms in catalog order,
 * then `/loopx-pr-review` (unavailable). The original's seven commands keep their order.
 */
export function slashCommandEntries(): SlashCommandEntry[] {
  const fromCatalog = COMMANDS.filter((spec): spec is CommandSpec & { slash: string } => spec.slash !== null).map(
    entryOf,
  );
  return [INSPECT_ENTRY, GOAL_START_ENTRY, ...fromCatalog, PR_REVIEW_ENTRY];
}

/** `/loop-global-summary` for `/loopx-global-summary`, and so on for every global view. */
export function legacyAliases(entries: readonly SlashCommandEntry[]): { alias: string; command: string }[] {
  return entries
    .filter((entry) => entry.command.startsWith(`${CANONICAL_SLASH_PREFIX}-global-`))
    .map((entry) => ({
      alias: `${LEGACY_ALIAS_PREFIX}${entry.command.slice(`${CANONICAL_SLASH_PREFIX}-global-`.length)}`,
      command: entry.command,
    }));
}

export function slashCatalog(options: { legacyAliases?: boolean } = {}): SlashCatalog {
  const commands = slashCommandEntries();
  const include = options.legacyAliases ?? true;
  return {
    ok: true,
    schema_version: SLASH_CATALOG_SCHEMA,
    canonical_prefix: CANONICAL_SLASH_PREFIX,
    count: commands.length,
    commands,
    include_legacy_aliases: include,
    legacy_aliases: include ? legacyAliases(commands) : [],
  };
}
