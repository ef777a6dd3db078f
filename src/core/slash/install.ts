import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { writeFileAtomic } from '../fs/atomicWrite';
import { assertInside } from '../fs/contain';
import { slashCommandEntries, type SlashCommandEntry } from './catalog';
import { readFileSafe } from '../fs/safeRead';
import { HEARTBEAT_PLACEHOLDERS, heartbeatSectionLines, heartbeatSteps } from '../protocol/heartbeat';
import { LOOPX_CLI_NOTE, viaLoopxCli } from '../protocol/cliInvocation';

/**
 * Installs the `/loopx` prompt files of terminal agents into a project, so an agent there can call
 * our CLI. Every file we write carries MANAGED_MARKER; a file without it belongs to the user and is
 * never overwritten or removed (`skipped_user_file`). Nothing is written or removed through a
 * symlink that leads outside the folder being installed into: every path is checked before the
 * first change, so a refused install or uninstall changes nothing.
 *
 * Where each surface reads project-level prompts (from each tool's documentation):
 *   - claude-code: `.claude/commands/<name>.md`, one slash command per file, `$ARGUMENTS` substituted;
 *   - opencode:    `.opencode/commands/<name>.md`, same shape (front matter `description`);
 *   - codex:       `.agents/skills/loopx/SKILL.md`, one skill (front matter `name`, `description`)
 *                  describing every command; Codex has no project-level slash prompts, and its
 *                  repository skills live there;
 *   - copilot:     `.github/prompts/<name>.prompt.md`, VS Code's prompt files (front matter
 *                  `description`, `agent`, `argument-hint`); the text typed after the command comes with
 *                  the prompt, so the body names it instead of `$ARGUMENTS`. Installed only when asked for
 *                  (`--surface copilot`): `all` stays the original's three surfaces.
 */

export const MANAGED_MARKER = 'loopx-managed-slash-command:v1';
const MARKER_LINE = `<!-- ${MANAGED_MARKER} -->`;

/** The original's surfaces: what `all` (and no `--surface`) installs. */
export const SLASH_SURFACES = ['codex', 'claude-code', 'opencode'] as const;
/** Surfaces installed only when named. */
export const EXTRA_SLASH_SURFACES = ['copilot'] as const;
export const SlashSurfaceSchema = z.enum([...SLASH_SURFACES, ...EXTRA_SLASH_SURFACES]);
export type SlashSurface = z.infer<typeof SlashSurfaceSchema>;

export const InstallFileStatusSchema = z.enum([
  'created',
  'updated',
  'unchanged',
  'skipped_user_file',
  'removed',
  'absent',
]);
export type InstallFileStatus = z.infer<typeof InstallFileStatusSchema>;

export const InstallFileResultSchema = z.object({
  surface: SlashSurfaceSchema,
  /** Relative to the project, with forward slashes. */
  path: z.string(),
  commands: z.array(z.string()),
  status: InstallFileStatusSchema,
  /** False for a dry run, an unchanged file and a skipped user file. */
  written: z.boolean(),
});
export type InstallFileResult = z.infer<typeof InstallFileResultSchema>;

export const SlashInstallResultSchema = z.object({
  ok: z.literal(true),
  schema_version: z.literal('loopx_slash_command_install_v0'),
  action: z.enum(['install', 'uninstall']),
  dry_run: z.boolean(),
  surfaces: z.array(SlashSurfaceSchema),
  marker: z.literal(MANAGED_MARKER),
  files: z.array(InstallFileResultSchema),
});
export type SlashInstallResult = z.infer<typeof SlashInstallResultSchema>;

/** `all`, or a list of surface names; none means every surface. */
export function parseSurfaces(values: readonly string[]): SlashSurface[] {
  const names = values
    .flatMap((value) => value.split(','))
    .map((value) => value.trim())
    .filter((value) => value !== '');
  const known: readonly SlashSurface[] = [...SLASH_SURFACES, ...EXTRA_SLASH_SURFACES];
  const unknown = names.filter((name) => name !== 'all' && !(known as readonly string[]).includes(name));
  if (unknown.length > 0)
    throw new LoopxError(
      'unknown_slash_surface',
      `unknown surface(s) ${unknown.join(', ')}: use ${known.join(', ')} or all`,
      { surfaces: unknown },
    );
  if (names.length === 0 || names.includes('all'))
    return [...SLASH_SURFACES, ...EXTRA_SLASH_SURFACES.filter((surface) => names.includes(surface))];
  return known.filter((surface) => names.includes(surface));
}

interface PlannedFile {
  surface: SlashSurface;
  relativePath: string;
  commands: string[];
  content: string;
}

function yamlString(text: string): string {
  return JSON.stringify(text);
}

/** The file name of a slash command (`/loopx-global-todos` → `loopx-global-todos`). */
function commandName(entry: SlashCommandEntry): string {
  return entry.command.split(' ')[0]?.slice(1) ?? 'loopx';
}

/** What the agent should do for one command, with `$ARGUMENTS` where the tool substitutes the arguments. */
function instructions(entry: SlashCommandEntry): string[] {
  // A command with required arguments is spelled out with its placeholders: run bare, it is a usage error.
  const run =
    entry.argument_hint === null
      ? `Run \`${viaLoopxCli(entry.cli_reference)} $ARGUMENTS\` in the project folder and report the result to the user.`
      : `Run \`${viaLoopxCli(entry.cli_reference)} ${entry.argument_hint}\` in the project folder, filling the placeholders from \`$ARGUMENTS\` (what the user typed after the command; ask the user for anything missing, and pass any further options they gave), and report the result to the user.`;
  const base = [
    run,
    `Intent: ${entry.intent}.`,
    `Mutation policy: ${entry.mutation_policy}.${entry.mutation_note === null ? '' : ` ${entry.mutation_note}.`}`,
    LOOPX_CLI_NOTE,
  ];
  if (entry.mutation_policy === 'read_only')
    base.push(
      'This command only reads: never edit LoopX files to "fix" what it reports; use the commands it suggests.',
    );
  return base;
}

/**
 * `/loopx-heartbeat`: one turn of the heartbeat loop for an agent woken by its own scheduler. The
 * `## Heartbeat` section is the one `loopx heartbeat-prompt` prints (src/core/protocol/heartbeat.ts),
 * with placeholders for the goal, the agent and the todo; the agent runs `heartbeat-prompt` first for
 * the turn's brief, where the same steps come filled in.
 */
function heartbeatBody(entry: SlashCommandEntry, args: string): string[] {
  const { goalId, agentId } = HEARTBEAT_PLACEHOLDERS;
  return [
    `Run one heartbeat turn of a LoopX goal, as an agent woken by a scheduler (Codex automation, Claude Code \`/loop\`, cron). Fill \`${goalId}\` (the goal) and \`${agentId}\` (your registered agent id) from ${args}; ask the user for anything missing.`,
    '',
    `1. Run \`${viaLoopxCli(entry.cli_reference)} ${entry.argument_hint ?? ''}\`: it prints this turn's task body (objective, the selected todo, open gates, budget and rules) with the steps below filled in. Follow it.`,
    '2. Then run the commands of the turn, in order. Use the `loopx` CLI only; never edit `.loopx/` files by hand.',
    '',
    LOOPX_CLI_NOTE,
    '',
    MCP_TOOLS_NOTE,
    '',
    ...heartbeatSectionLines(heartbeatSteps(HEARTBEAT_PLACEHOLDERS)),
  ];
}

/**
 * When the agent has LoopX's tools (the `loopx` MCP server, or the LoopX tools VS Code offers), each step
 * is one tool call instead of a CLI process: same arguments, same JSON, same quota and receipts.
 */
export const MCP_TOOLS_NOTE =
  "If LoopX's tools are available to you (the `loopx` MCP server, e.g. `mcp__loopx__should_run` in Claude Code, or the LoopX tools in VS Code), prefer them to the CLI for these steps: each takes the same arguments as the command (goal id, agent id, turn instance id, todo id) and answers the same JSON, under the same quota, receipts and retries. Use the CLI where a step has no tool.";

/** `/loopx` with and without goal text; `when` phrases the two cases for the surface (slash arguments, or a skill request). */
function inspectAndStartBody(
  inspect: SlashCommandEntry,
  start: SlashCommandEntry,
  when: { empty: string; goal: string },
  agentType: string,
): string[] {
  return [
    "LoopX keeps this project's long-running goals: todos, user gates, evidence and a spend quota. Use the `loopx` CLI; never edit `.loopx/` files by hand.",
    LOOPX_CLI_NOTE,
    '',
    `${when.empty}:`,
    `- ${inspect.intent}: run \`${viaLoopxCli(`loopx agent-onboard --agent-type ${agentType}`)}\` and \`${viaLoopxCli('loopx status')}\`, then summarize what is connected, what waits on the user (open gates) and the next safe action.`,
    `- ${inspect.mutation_note ?? ''}.`,
    '',
    `${when.goal}:`,
    `- ${start.intent}.`,
    '- First plan: a goal id (a lowercase slug), a one-sentence objective and a short list of todos, each with a priority P0 (highest) to P4; show it to the user.',
    `- ${start.mutation_note ?? ''}.`,
    `- Then: \`${viaLoopxCli(start.cli_reference)}\`.`,
    `- Finish with \`${viaLoopxCli('loopx status')}\` and say what the next turn will do.`,
  ];
}

function claudeLikeFile(
  surface: 'claude-code' | 'opencode' | 'copilot',
  dir: string,
  entry: SlashCommandEntry,
  body: string[],
  argumentHint: string | null,
): PlannedFile {
  const frontMatter = ['---', `description: ${yamlString(`LoopX: ${entry.intent}`)}`];
  if (surface === 'copilot') frontMatter.push('agent: agent');
  if ((surface === 'claude-code' || surface === 'copilot') && argumentHint !== null)
    frontMatter.push(`argument-hint: ${yamlString(argumentHint)}`);
  frontMatter.push('---');
  const text = [...frontMatter, MARKER_LINE, '', ...body, ''].join('\n');
  return {
    surface,
    relativePath: `${dir}/${commandName(entry)}${surface === 'copilot' ? '.prompt' : ''}.md`,
    commands: [entry.command],
    content: surface === 'copilot' ? withoutArgumentsVariable(text) : text,
  };
}

/**
 * Copilot has no `$ARGUMENTS`: what the user typed after `/loopx-…` comes with the prompt. A command
 * that took `$ARGUMENTS` takes the options the user typed; elsewhere the variable is that text.
 */
function withoutArgumentsVariable(text: string): string {
  return text
    .split(' $ARGUMENTS`')
    .join('` (adding any options the user typed after the command)')
    .split('`$ARGUMENTS`')
    .join('the text the user typed after the command')
    .split('$ARGUMENTS')
    .join('the text the user typed after the command');
}

function codexSkill(
  entries: readonly SlashCommandEntry[],
  inspect: SlashCommandEntry,
  start: SlashCommandEntry,
): PlannedFile {
  const rest = entries.filter((entry) => entry.key !== null);
  const body = [
    '---',
    'name: loopx',
    `description: ${yamlString("Use LoopX for this project's long-running goals: inspect status, gates and todos, start a goal from a sentence, or show global summaries, gates, todos and risks across goals. Runs the loopx CLI.")}`,
    '---',
    MARKER_LINE,
    '',
    '# LoopX',
    '',
    ...inspectAndStartBody(
      inspect,
      start,
      {
        empty: "When the user asks about LoopX or the project's goals without naming a new goal",
        goal: 'When the user states a new goal in a sentence',
      },
      SURFACE_AGENT_TYPES.codex,
    ),
    '',
    '## Commands',
    '',
    ...rest.map(
      (entry) =>
        `- \`${entry.command}\`: ${entry.intent}. Run \`${viaLoopxCli(entry.cli_reference)}${entry.argument_hint === null ? '' : ` ${entry.argument_hint}`}\` (${entry.mutation_policy}).`,
    ),
  ];
  const heartbeat = rest.find((entry) => entry.key === HEARTBEAT_KEY);
  if (heartbeat !== undefined) {
    // One heading level deeper inside the skill; the text is the same.
    const section = heartbeatBody(heartbeat, 'the request').map((line) =>
      line === '## Heartbeat' ? '### Heartbeat' : line,
    );
    body.push('', '## Heartbeat loop', '', ...section);
  }
  body.push('');
  return {
    surface: 'codex',
    relativePath: '.agents/skills/loopx/SKILL.md',
    commands: entries.map((entry) => entry.command),
    content: body.join('\n'),
  };
}

/** The catalog key whose prompt is the heartbeat loop rather than one command. */
const HEARTBEAT_KEY = 'heartbeatPrompt';

const SLASH_CASES = {
  empty: 'If no text follows the command (`$ARGUMENTS` is empty)',
  goal: 'If text follows (`$ARGUMENTS` is the goal)',
};

/** The `agent-onboard --agent-type` each surface's agent is (it needs one: without it the CLI answers a usage error). */
const SURFACE_AGENT_TYPES: Record<SlashSurface, string> = {
  codex: 'codex-cli',
  'claude-code': 'claude-code',
  opencode: 'opencode',
  copilot: 'other-agent',
};

const SURFACE_DIRS: Record<Exclude<SlashSurface, 'codex'>, string> = {
  'claude-code': '.claude/commands',
  opencode: '.opencode/commands',
  copilot: '.github/prompts',
};

/** The files an install writes for `surfaces`, in a stable order. */
export function plannedSlashFiles(surfaces: readonly SlashSurface[]): PlannedFile[] {
  // An unavailable entry (`/loopx-pr-review`) gets no prompt: it would send agents to a missing command.
  const entries = slashCommandEntries().filter((entry) => entry.available);
  const inspect = entries[0] as SlashCommandEntry;
  const start = entries[1] as SlashCommandEntry;
  const files: PlannedFile[] = [];
  for (const surface of surfaces) {
    if (surface === 'codex') {
      files.push(codexSkill(entries, inspect, start));
      continue;
    }
    const dir = SURFACE_DIRS[surface];
    // `/loopx` and `/loopx <goal text>` are one command file: the arguments decide.
    files.push({
      ...claudeLikeFile(
        surface,
        dir,
        inspect,
        inspectAndStartBody(inspect, start, SLASH_CASES, SURFACE_AGENT_TYPES[surface]),
        start.argument_hint,
      ),
      commands: [inspect.command, start.command],
    });
    for (const entry of entries.slice(2)) {
      const body = entry.key === HEARTBEAT_KEY ? heartbeatBody(entry, '`$ARGUMENTS`') : instructions(entry);
      files.push(claudeLikeFile(surface, dir, entry, body, entry.argument_hint));
    }
  }
  return files;
}

async function readIfExists(file: string): Promise<string | null> {
  try {
    return await readFileSafe(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export interface SlashInstallOptions {
  projectRoot: string;
  surfaces: readonly SlashSurface[];
  dryRun?: boolean;
}

export async function installSlashCommands(options: SlashInstallOptions): Promise<SlashInstallResult> {
  const dryRun = options.dryRun ?? false;
  const files: InstallFileResult[] = [];
  const steps: { planned: PlannedFile; target: string; status: InstallFileStatus }[] = [];
  for (const planned of plannedSlashFiles(options.surfaces)) {
    const target = path.join(options.projectRoot, ...planned.relativePath.split('/'));
    // Before reading it too: a link out of the folder is refused, never read or followed.
    assertInside(options.projectRoot, target);
    const existing = await readIfExists(target);
    let status: InstallFileStatus;
    if (existing === null) status = 'created';
    else if (!existing.includes(MANAGED_MARKER)) status = 'skipped_user_file';
    else if (existing === planned.content) status = 'unchanged';
    else status = 'updated';
    steps.push({ planned, target, status });
  }
  for (const { planned, target, status } of steps) {
    const write = !dryRun && (status === 'created' || status === 'updated');
    if (write) await writeFileAtomic(target, planned.content, { within: options.projectRoot });
    files.push({
      surface: planned.surface,
      path: planned.relativePath,
      commands: planned.commands,
      status,
      written: write,
    });
  }
  return {
    ok: true,
    schema_version: 'loopx_slash_command_install_v0',
    action: 'install',
    dry_run: dryRun,
    surfaces: [...options.surfaces],
    marker: MANAGED_MARKER,
    files,
  };
}

/** Managed files of a surface folder: the planned ones, plus older `loopx*.md` files of ours no longer in the catalog. */
async function managedCandidates(
  projectRoot: string,
  surface: SlashSurface,
): Promise<{ relativePath: string; commands: string[] }[]> {
  const planned = plannedSlashFiles([surface]).map((file) => ({
    relativePath: file.relativePath,
    commands: file.commands,
  }));
  if (surface === 'codex') return planned;
  const dir = SURFACE_DIRS[surface];
  let names: string[] = [];
  try {
    names = await fs.promises.readdir(path.join(projectRoot, ...dir.split('/')));
  } catch {
    names = [];
  }
  const known = new Set(planned.map((file) => file.relativePath));
  const extra = names
    .filter((name) => (surface === 'copilot' ? /^loopx.*\.prompt\.md$/ : /^loopx.*\.md$/).test(name))
    .map((name) => `${dir}/${name}`)
    .filter((relativePath) => !known.has(relativePath));
  return [...planned, ...extra.sort().map((relativePath) => ({ relativePath, commands: [] }))];
}

export async function uninstallSlashCommands(options: SlashInstallOptions): Promise<SlashInstallResult> {
  const dryRun = options.dryRun ?? false;
  const files: InstallFileResult[] = [];
  const steps: { surface: SlashSurface; candidate: { relativePath: string; commands: string[] }; target: string }[] =
    [];
  for (const surface of options.surfaces) {
    for (const candidate of await managedCandidates(options.projectRoot, surface)) {
      const target = path.join(options.projectRoot, ...candidate.relativePath.split('/'));
      assertInside(options.projectRoot, target, 'remove');
      steps.push({ surface, candidate, target });
    }
  }
  for (const { surface, candidate, target } of steps) {
    const existing = await readIfExists(target);
    const status: InstallFileStatus =
      existing === null ? 'absent' : existing.includes(MANAGED_MARKER) ? 'removed' : 'skipped_user_file';
    // Older files of ours that are gone or belong to the user are not worth a line.
    if (candidate.commands.length === 0 && status !== 'removed') continue;
    const remove = !dryRun && status === 'removed';
    if (remove) {
      await fs.promises.rm(target, { force: true });
      if (surface === 'codex') await fs.promises.rmdir(path.dirname(target)).catch(() => undefined);
    }
    files.push({ surface, path: candidate.relativePath, commands: candidate.commands, status, written: remove });
  }
  return {
    ok: true,
    schema_version: 'loopx_slash_command_install_v0',
    action: 'uninstall',
    dry_run: dryRun,
    surfaces: [...options.surfaces],
    marker: MANAGED_MARKER,
    files,
  };
}
