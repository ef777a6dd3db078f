import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { isoSeconds, type Clock } from '../clock';
import { LoopxError } from '../errors';
import type { LockOptions } from '../fs/fileLock';
import {
  previewGlobalRegistryUpdate,
  updateGlobalRegistry,
  type GlobalRegistryDecision,
} from '../registry/globalWrite';
import { GLOBAL_REGISTRY_FILE_NAME } from '../registry/locate';
import { findRawRegistryGoal, registryGoals } from '../registry/read';
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

function realPathOrResolved(target: string): string {
  const absolute = path.resolve(target);
  try {
    return fs.realpathSync(absolute);
  } catch {
    return absolute;
  }
}

/** The goals to sync, projected, and the project records they reference, from the project registry as read (null: none). */
function incomingOf(
  registry: Record<string, unknown> | null,
  options: SyncGlobalOptions,
  sourceRegistry: string,
  syncedAt: string,
): { goals: Record<string, unknown>[]; projects: Record<string, unknown>[] } {
  if (registry === null) {
    throw new LoopxError(
      'registry_not_found',
      `project registry does not exist: ${options.projectRegistryPath}. Pass --registry PATH or run from the project folder.`,
      { file: options.projectRegistryPath },
    );
  }
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

  const files = { projectRegistryPath: options.projectRegistryPath, globalRegistryPath: options.globalRegistryPath };
  const incoming = (project: Record<string, unknown> | null) => incomingOf(project, options, sourceRegistry, syncedAt);
  if (options.dryRun) {
    return previewGlobalRegistryUpdate(files, {
      incoming,
      decide: (brought, current) => {
        const merge = mergeGlobalRegistry(current, brought.goals, brought.projects, mergeOptions);
        return {
          write: null,
          value: result(merge, JSON.stringify(merge.registry) !== JSON.stringify(current), false, null),
        };
      },
    });
  }

  const untouched = (current: Record<string, unknown>): GlobalSyncResult =>
    result({ registry: current, goals: [], projects: [], routeReplaced: false }, false, false, null);
  if (options.onlyWhereSourced === true && !fs.existsSync(options.globalRegistryPath)) return untouched({});

  // Both registries are read inside the hold (registry/globalWrite.ts): whatever another process committed to the
  // global registry before we got the lock stays, and the project's goals are the newest (two writers of one project
  // goal that sync one after the other leave the later project state in the global registry, never the earlier).
  return updateGlobalRegistry(
    files,
    { ...options.lock, clock: options.clock, operation: 'sync-global' },
    {
      incoming,
      decide: (brought, current): GlobalRegistryDecision<GlobalSyncResult> => {
        if (options.onlyWhereSourced === true) {
          const globalDir = path.dirname(path.resolve(options.globalRegistryPath));
          brought.goals = brought.goals.filter((goal) => {
            const source = findRawRegistryGoal(current, String(goal['id']))?.['source_registry'];
            return (
              typeof source === 'string' &&
              source.trim() !== '' &&
              realPathOrResolved(path.resolve(globalDir, source.trim())) === sourceRegistry
            );
          });
          if (brought.goals.length === 0) return { write: null, value: untouched(current) };
        }
        const merge = mergeGlobalRegistry(current, brought.goals, brought.projects, mergeOptions);
        const changed = JSON.stringify(merge.registry) !== JSON.stringify(current);
        if (!changed) return { write: null, value: result(merge, false, false, null) };
        return {
          write: merge.registry,
          backup: merge.routeReplaced ? { label: ROUTE_COLLISION_BACKUP_LABEL, now } : null,
          value: (backupPath) => result(merge, true, true, backupPath),
        };
      },
    },
  );
}
