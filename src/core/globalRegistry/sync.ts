import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { isoSeconds, type Clock } from '../clock';
import { LoopxError } from '../errors';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { withFileLock, type LockOptions } from '../fs/fileLock';
import { GLOBAL_REGISTRY_FILE_NAME } from '../registry/locate';
import { findRawRegistryGoal, readRegistry, registryGoals } from '../registry/read';
import { mergeGlobalRegistry, type GlobalMergeResult } from './merge';
import { projectGoalForGlobal } from './project';

/**
 * `sync-global`: copies goals of a project registry into the machine-wide global registry
 * (`<runtime root>/registry.global.json`). The global file is shared by every project and agent
 * on the machine, so the read, the merge and the write happen under one hold of its
 * cross-process lock: a goal another process commits meanwhile is re-read, never lost.
 * A dry run reads without locking and writes nothing; its preview is advisory only.
 */

export interface SyncGlobalOptions {
  projectRegistryPath: string;
  globalRegistryPath: string;
  /** Goals to sync, in this order; all goals of the project registry when omitted or empty. */
  goalIds?: readonly string[];
  allowRouteReplacement: boolean;
  dryRun: boolean;
  clock: Clock;
  /** Stamped as the global `common_runtime_root`; default the global registry's folder. */
  runtimeRoot?: string;
  /**
   * Sync only the goals whose global entry already comes from this project registry (its `source_registry`), and
   * nothing when there is no global registry: the follow-up sync of a command that wrote the project registry
   * (`configure-goal`), which must not claim another project's entry nor create a global registry.
   */
  onlyWhereSourced?: boolean;
  /** Lock settings (agent id, env, timeout); the clock and operation are set here. */
  lock?: Omit<LockOptions, 'clock' | 'operation'>;
}

export const GlobalSyncResult = z.object({
  ok: z.literal(true),
  schema_version: z.literal('loopx_global_sync_v0'),
  dry_run: z.boolean(),
  registry: z.string(),
  global_registry: z.string(),
  runtime_root: z.string(),
  synced_at: z.string(),
  /** `<goal id>:<action>`, in sync order (the original's compact form). */
  actions: z.array(z.string()),
  goals: z.array(
    z.object({
      goal_id: z.string(),
      action: z.enum(['added', 'updated', 'replaced-route']),
      route_changes: z.array(z.string()),
      attention_carried: z.array(z.string()),
    }),
  ),
  projects: z.array(z.object({ project_id: z.string(), action: z.enum(['added', 'updated']) })),
  global_goal_count: z.number().int().nonnegative(),
  changed: z.boolean(),
  written: z.boolean(),
  backup_path: z.string().nullable(),
});
export type GlobalSyncResult = z.infer<typeof GlobalSyncResult>;

export const ROUTE_COLLISION_BACKUP_LABEL = 'route-collision-backup';

/** `registry.global.json.<label>-<YYYYMMDDTHHMMSSZ>[-N].bak`, created exclusively so no backup is overwritten. */
function writeBackup(globalRegistryPath: string, label: string, now: Date): string {
  const stamp = isoSeconds(now).replace(/[-:]/g, '');
  for (let attempt = 1; ; attempt += 1) {
    const backup = `${globalRegistryPath}.${label}-${stamp}${attempt === 1 ? '' : `-${attempt}`}.bak`;
    try {
      fs.copyFileSync(globalRegistryPath, backup, fs.constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

function realPathOrResolved(target: string): string {
  const absolute = path.resolve(target);
  try {
    return fs.realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** The goals to sync, projected, and the project records they reference. */
async function readIncoming(
  options: SyncGlobalOptions,
  sourceRegistry: string,
  syncedAt: string,
): Promise<{ goals: Record<string, unknown>[]; projects: Record<string, unknown>[] }> {
  if (!fs.existsSync(options.projectRegistryPath)) {
    throw new LoopxError(
      'registry_not_found',
      `project registry does not exist: ${options.projectRegistryPath}. Pass --registry PATH or run from the project folder.`,
      { file: options.projectRegistryPath },
    );
  }
  const registry = await readRegistry(options.projectRegistryPath);
  if (
    registry['registry_role'] === 'global-local' ||
    path.basename(options.projectRegistryPath) === GLOBAL_REGISTRY_FILE_NAME
  ) {
    throw new LoopxError(
      'sync_source_is_global',
      `${options.projectRegistryPath} is a global registry; sync-global reads a project registry (.loopx/registry.json). Pass --registry with the project's registry.`,
      { file: options.projectRegistryPath },
    );
  }
  const requested =
    options.goalIds !== undefined && options.goalIds.length > 0
      ? [...new Set(options.goalIds.map((id) => id.trim()))]
      : [...new Set(registryGoals(registry).map((goal) => goal.id))];
  const goals = requested.map((goalId) => {
    const goal = findRawRegistryGoal(registry, goalId);
    if (goal === undefined) {
      throw new LoopxError(
        'goal_not_found',
        `goal ${JSON.stringify(goalId)} is not in the project registry ${options.projectRegistryPath}; check the id with \`loopx registry\`.`,
        { goal_id: goalId, file: options.projectRegistryPath },
      );
    }
    return projectGoalForGlobal(goal, { sourceRegistry, syncedAt });
  });
  const referenced = new Set(
    goals.map((goal) => goal['project_id']).filter((id): id is string => typeof id === 'string'),
  );
  const allProjects = Array.isArray(registry['projects']) ? registry['projects'] : [];
  const projects = allProjects.filter(
    (project): project is Record<string, unknown> =>
      project !== null &&
      typeof project === 'object' &&
      !Array.isArray(project) &&
      typeof (project as Record<string, unknown>)['project_id'] === 'string' &&
      (options.goalIds === undefined ||
        options.goalIds.length === 0 ||
        referenced.has((project as Record<string, unknown>)['project_id'] as string)),
  );
  return { goals, projects };
}

export async function syncGlobalRegistry(options: SyncGlobalOptions): Promise<GlobalSyncResult> {
  const now = options.clock.now();
  const syncedAt = isoSeconds(now);
  const sourceRegistry = realPathOrResolved(options.projectRegistryPath);
  const runtimeRoot = options.runtimeRoot ?? path.dirname(path.resolve(options.globalRegistryPath));
  const mergeOptions = { allowRouteReplacement: options.allowRouteReplacement, runtimeRoot, updatedAt: syncedAt };

  const result = (
    merge: GlobalMergeResult,
    changed: boolean,
    written: boolean,
    backupPath: string | null,
  ): GlobalSyncResult =>
    GlobalSyncResult.parse({
      ok: true,
      schema_version: 'loopx_global_sync_v0',
      dry_run: options.dryRun,
      registry: sourceRegistry,
      global_registry: path.resolve(options.globalRegistryPath),
      runtime_root: runtimeRoot,
      synced_at: syncedAt,
      actions: merge.goals.map((goal) => `${goal.goal_id}:${goal.action}`),
      goals: merge.goals,
      projects: merge.projects,
      global_goal_count: Array.isArray(merge.registry['goals']) ? merge.registry['goals'].length : 0,
      changed,
      written,
      backup_path: backupPath,
    });

  if (options.dryRun) {
    const incoming = await readIncoming(options, sourceRegistry, syncedAt);
    const current = await readRegistry(options.globalRegistryPath);
    const merge = mergeGlobalRegistry(current, incoming.goals, incoming.projects, mergeOptions);
    return result(merge, JSON.stringify(merge.registry) !== JSON.stringify(current), false, null);
  }

  const untouched = (current: Record<string, unknown>): GlobalSyncResult =>
    result({ registry: current, goals: [], projects: [], routeReplaced: false }, false, false, null);
  if (options.onlyWhereSourced === true && !fs.existsSync(options.globalRegistryPath)) return untouched({});

  return withFileLock(
    options.globalRegistryPath,
    { ...options.lock, clock: options.clock, operation: 'sync-global' },
    async () => {
      // Both read inside the hold: whatever another process committed to the global registry before we
      // got the lock stays, and the project's goals are the newest (two writers of one project goal that
      // sync one after the other leave the later project state in the global registry, never the earlier).
      const incoming = await readIncoming(options, sourceRegistry, syncedAt);
      const current = await readRegistry(options.globalRegistryPath);
      if (options.onlyWhereSourced === true) {
        const globalDir = path.dirname(path.resolve(options.globalRegistryPath));
        incoming.goals = incoming.goals.filter((goal) => {
          const source = findRawRegistryGoal(current, String(goal['id']))?.['source_registry'];
          return (
            typeof source === 'string' &&
            source.trim() !== '' &&
            realPathOrResolved(path.resolve(globalDir, source.trim())) === sourceRegistry
          );
        });
        if (incoming.goals.length === 0) return untouched(current);
      }
      const merge = mergeGlobalRegistry(current, incoming.goals, incoming.projects, mergeOptions);
      const changed = JSON.stringify(merge.registry) !== JSON.stringify(current);
      if (!changed) return result(merge, false, false, null);
      const backupPath =
        merge.routeReplaced && fs.existsSync(options.globalRegistryPath)
          ? writeBackup(options.globalRegistryPath, ROUTE_COLLISION_BACKUP_LABEL, now)
          : null;
      await writeJsonAtomic(options.globalRegistryPath, merge.registry, { mode: 0o600 });
      return result(merge, true, true, backupPath);
    },
  );
}
