import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { isoSeconds, type Clock } from '../clock';
import { LoopxError } from '../errors';
import { resolveWriteTarget, writeFileAtomic } from '../fs/atomicWrite';
import { mkdirInside } from '../fs/contain';
import { withFileLock } from '../fs/fileLock';
import { checkNewGoalId, slugify } from './goalId';
import { defaultStateFile, PROJECT_REGISTRY_RELATIVE_PATH, resolveRuntimeRoot } from './locate';
import { findRawRegistryGoal } from './read';
import { DEFAULT_QUOTA, isRecord, REGISTRY_SCHEMA_VERSION } from './schema';
import { updateRegistry } from './update';

/** `loopx bootstrap`: creates or connects a project goal (registry entry + active state file). */

export const BOOTSTRAP_SCHEMA_VERSION = 'loopx_bootstrap_v1';
export const GENERIC_ADAPTER_KIND = 'generic_project_goal_v0';
/** Relative, so it is anchored to the registry's project and the workspace stays portable. */
export const BOOTSTRAP_RUNTIME_ROOT = path.join('.loopx', 'runtime');
/** What `.loopx/.gitignore` keeps out of git: the private registry, its lock/temp siblings, the runtime. */
export const LOOPX_GITIGNORE = [
  '# LoopX: private, machine-local files (written by loopx bootstrap)',
  'registry.json',
  'registry.json.*',
  '.registry.json.*',
  'runtime/',
  '',
].join('\n');

export { defaultStateFile } from './locate';

export const BootstrapActionKind = z.enum([
  'created_registry',
  'added_goal',
  'replaced_goal',
  'wrote_state_file',
  'kept_existing_state_file',
  'replaced_state_file',
  'wrote_gitignore',
  'synced_global_registry',
  'global_registry_not_synced',
]);
export type BootstrapActionKind = z.infer<typeof BootstrapActionKind>;

export const BootstrapActionSchema = z.object({
  action: BootstrapActionKind,
  path: z.string(),
  /** For `replaced_state_file`: where the previous file was saved. */
  backup_path: z.string().optional(),
  /** For `global_registry_not_synced`: why (the project's goal is written; `loopx sync-global` retries). */
  reason: z.string().optional(),
});
export type BootstrapAction = z.infer<typeof BootstrapActionSchema>;

export const BootstrapResultSchema = z.object({
  ok: z.literal(true),
  schema_version: z.literal(BOOTSTRAP_SCHEMA_VERSION),
  goal_id: z.string(),
  project: z.string(),
  registry: z.string(),
  /** As stored in the registry: relative to `project`. */
  state_file: z.string(),
  state_file_abs: z.string(),
  runtime_root: z.string(),
  actions: z.array(BootstrapActionSchema),
  /** The goal entry as written. */
  goal: z.record(z.string(), z.unknown()),
});
export type BootstrapResult = z.infer<typeof BootstrapResultSchema>;

export interface BootstrapOptions {
  /** Absolute path of an existing project folder. */
  projectDir: string;
  /** Replace an existing goal entry and state file (the old state file is backed up first). */
  force?: boolean;
  /** Absolute registry path; default `<project>/.loopx/registry.json`. */
  registryPath?: string | undefined;
  homeDir: string;
  clock: Clock;
  agentId?: string | null;
  env?: NodeJS.ProcessEnv;
  /**
   * Writes the goal's first todos and gates into the fresh state file text (create-goal passes
   * state/goalPlan's `applyGoalPlan`), so they are written in the same write as the goal: a refused
   * item (it throws) or an existing state file (no `force`) refuses the whole bootstrap before
   * anything is written.
   */
  plan?: ((freshStateText: string, context: { goalId: string; now: Date; firstTodoId: string }) => string) | undefined;
}

/**
 * Creates the registry if needed, adds the goal (status active, generic adapter, default quota,
 * peer coordination with no agents yet) and writes its ACTIVE_GOAL_STATE.md. Refuses, writing
 * nothing, when the goal already exists, unless `force`; an existing state file is kept unless
 * `force`. The registry write and the state file write happen under the registry's lock.
 */
export async function bootstrapGoal(
  /**
   * The goal to create (or, with `force`, reset): its definition, not a reference to a goal that exists (whether
   * the id is taken is decided under the registry lock). `id` is checked as a new goal's id (`checkNewGoalId`);
   * `domain` defaults to the project folder's name as a slug.
   */
  goal: { id: string; objective: string; domain?: string | undefined },
  options: BootstrapOptions,
): Promise<BootstrapResult> {
  const goalId = checkNewGoalId(goal.id);
  const objective = collapseWhitespace(goal.objective);
  if (objective === '')
    throw new LoopxError('usage', 'the objective must not be empty: say in one sentence what the goal should achieve');
  const projectDir = path.resolve(options.projectDir);
  if (!isDirectory(projectDir)) {
    throw new LoopxError(
      'project_not_found',
      `project folder does not exist: ${projectDir}. Create it first or pass an existing folder with --project.`,
      { project: projectDir },
    );
  }
  const requestedDomain = collapseWhitespace(goal.domain ?? '');
  const registryPath = options.registryPath ?? path.join(projectDir, PROJECT_REGISTRY_RELATIVE_PATH);
  const stateFile = defaultStateFile(goalId);
  const stateFileAbs = path.join(projectDir, stateFile);
  const now = options.clock.now();
  const actions: BootstrapAction[] = [];
  // The state file text, plan included, is settled before the lock: a refused todo writes nothing.
  let stateText = renderActiveGoalState({ goalId, objective, now });
  if (options.plan !== undefined) stateText = options.plan(stateText, { goalId, now, firstTodoId: FIRST_TODO_ID });

  const update = await updateRegistry(
    registryPath,
    async (registry, { existed }) => {
      if (!existed) {
        Object.assign(registry, {
          schema_version: REGISTRY_SCHEMA_VERSION,
          updated_at: isoSeconds(now),
          common_runtime_root: BOOTSTRAP_RUNTIME_ROOT,
          goals: [],
        });
        actions.push({ action: 'created_registry', path: registryPath });
      }
      const goals = writableGoals(registry, registryPath);
      const existing = findRawRegistryGoal(registry, goalId);
      if (existing !== undefined && options.force !== true) {
        throw new LoopxError(
          'goal_exists',
          `goal ${goalId} already exists in ${registryPath}; nothing was changed. Pick another --goal-id, or pass --force to reset its entry and state file (the old state file is backed up).`,
          { goal_id: goalId, registry: registryPath },
        );
      }
      const entry = existing ?? {};
      const keptDomain = typeof entry['domain'] === 'string' && entry['domain'] !== '' ? entry['domain'] : undefined;
      Object.assign(entry, {
        id: goalId,
        domain: requestedDomain || keptDomain || slugify(path.basename(projectDir)) || 'project',
        status: 'active',
        repo: projectDir,
        state_file: stateFile,
        adapter: {
          ...(isRecord(entry['adapter']) ? entry['adapter'] : {}),
          kind: GENERIC_ADAPTER_KIND,
          status: 'connected',
        },
      });
      // A reset keeps what other commands configured: quota and the registered agents.
      if (!isRecord(entry['quota'])) entry['quota'] = { ...DEFAULT_QUOTA };
      if (!isRecord(entry['coordination'])) entry['coordination'] = { agent_model: 'peer_v1', registered_agents: [] };
      if (existing === undefined) goals.push(entry);
      actions.push({ action: existing === undefined ? 'added_goal' : 'replaced_goal', path: registryPath });

      actions.push(await writeStateFile(stateFileAbs, stateText, options.force === true, now, options));
      if (!existed) {
        const gitignore = await writeLoopxGitignore(registryPath);
        if (gitignore !== null) actions.push({ action: 'wrote_gitignore', path: gitignore });
      }
      return { ...entry };
    },
    { operation: 'bootstrap', clock: options.clock, agentId: options.agentId, env: options.env },
  );

  return BootstrapResultSchema.parse({
    ok: true,
    schema_version: BOOTSTRAP_SCHEMA_VERSION,
    goal_id: goalId,
    project: projectDir,
    registry: registryPath,
    state_file: stateFile,
    state_file_abs: stateFileAbs,
    runtime_root: resolveRuntimeRoot({ registryPath, registry: update.registry, homeDir: options.homeDir }),
    actions,
    goal: update.value,
  });
}

/** The registry's goal list, created when absent or empty; refused when it is something else. */
function writableGoals(registry: Record<string, unknown>, registryPath: string): unknown[] {
  const goals = registry['goals'];
  if (Array.isArray(goals)) return goals;
  const isEmpty = goals === undefined || goals === null || (isRecord(goals) && Object.keys(goals).length === 0);
  if (!isEmpty) {
    throw new LoopxError(
      'registry_goals_not_list',
      `goals must be a list: ${registryPath} has a \`goals\` that is not a JSON array; fix it by hand (LoopX left the file untouched).`,
      { file: registryPath, field: 'goals' },
    );
  }
  const fresh: unknown[] = [];
  registry['goals'] = fresh;
  return fresh;
}

/** Writes the state file under its own lock: kept if it exists, unless `force` (then backed up and replaced). */
async function writeStateFile(
  stateFileAbs: string,
  content: string,
  force: boolean,
  now: Date,
  options: Pick<BootstrapOptions, 'clock' | 'agentId' | 'env' | 'projectDir' | 'plan'>,
): Promise<BootstrapAction> {
  const lockOptions = {
    operation: 'bootstrap',
    clock: options.clock,
    ...(options.agentId !== undefined ? { agentId: options.agentId } : {}),
    ...(options.env ? { env: options.env } : {}),
  };
  // The project is the only place bootstrap writes a state file, through symlinks or not.
  const within = options.projectDir;
  resolveWriteTarget(stateFileAbs, { within });
  await mkdirInside(within, path.dirname(stateFileAbs));
  return withFileLock(stateFileAbs, lockOptions, async (): Promise<BootstrapAction> => {
    if (!fs.existsSync(stateFileAbs)) {
      await writeFileAtomic(stateFileAbs, content, { within });
      return { action: 'wrote_state_file', path: stateFileAbs };
    }
    if (!force && options.plan !== undefined)
      throw new LoopxError(
        'goal_plan_state_file_exists',
        `${stateFileAbs} already exists, so the goal's todos and gates would not be written; nothing was changed. Pick another goal id, or pass --force to replace that state file (it is backed up).`,
        { file: stateFileAbs, goal_id: path.basename(path.dirname(stateFileAbs)) },
      );
    if (!force) return { action: 'kept_existing_state_file', path: stateFileAbs };
    const backupPath = `${stateFileAbs}.${compactStamp(now)}.bak`;
    await fs.promises.copyFile(stateFileAbs, backupPath, fs.constants.COPYFILE_EXCL);
    await writeFileAtomic(stateFileAbs, content, { within });
    return { action: 'replaced_state_file', path: stateFileAbs, backup_path: backupPath };
  });
}

/** Writes `.loopx/.gitignore` next to a registry that lives in a `.loopx` folder, unless one exists. */
async function writeLoopxGitignore(registryPath: string): Promise<string | null> {
  const folder = path.dirname(registryPath);
  if (path.basename(folder) !== '.loopx') return null;
  const gitignore = path.join(folder, '.gitignore');
  try {
    await fs.promises.writeFile(gitignore, LOOPX_GITIGNORE, { flag: 'wx' });
    return gitignore;
  } catch (error) {
    if (isRecord(error) && error['code'] === 'EEXIST') return null;
    throw error;
  }
}

export const FIRST_TODO_ID = 'todo_plan_first_steps';
const FIRST_STEP = 'Break the objective into ranked, bounded todos.';

/**
 * A fresh ACTIVE_GOAL_STATE.md (docs/state-file.md): front matter, then the sections the parsers look
 * for. It starts with one open agent todo matching the Next Action, so the route and the todo
 * list agree from the first status read.
 */
export function renderActiveGoalState(input: { goalId: string; objective: string; now: Date }): string {
  const stamp = isoSeconds(input.now);
  return [
    '---',
    'status: active',
    // Front-matter readers strip the quotes but do not unescape, so inner double quotes become single ones.
    `objective: "${input.objective.replace(/"/g, "'")}"`,
    `updated_at: ${stamp}`,
    '---',
    '## Objective',
    '',
    input.objective,
    '',
    '## User Todo',
    '',
    '## Agent Todo',
    '',
    `- [ ] [P0] ${FIRST_STEP}`,
    `  <!-- loopx:todo todo_id=${FIRST_TODO_ID} status=open task_class=advancement_task -->`,
    '',
    '## Next Action',
    '',
    `- ${FIRST_STEP}`,
    '',
    '## Recent User Feedback',
    '',
    '## Progress Ledger',
    '',
    `- ${stamp} Goal ${input.goalId} created with loopx bootstrap.`,
    '',
  ].join('\n');
}

function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** `YYYYMMDDTHHMMSSZ`, the stamp LoopX uses in backup and archive names. */
function compactStamp(date: Date): string {
  return isoSeconds(date).replace(/[-:]/g, '');
}

function isDirectory(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}
