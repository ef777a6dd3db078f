import * as path from 'node:path';
import type { Clock } from '../clock';
import { statusQuotaSummaries } from './statusQuota';
import type { StateRead } from '../goal/files';
import { GoalStatusCache } from './goalStatus';
import {
  goalItems,
  loadStatus,
  readStatusRegistry,
  statusTargets,
  type StatusPayload,
  type StatusPayloadItem,
} from './statusPayload';
import { registryProjectRoot, resolveRepo } from '../registry/locate';
import { registryGoals } from '../registry/read';
import type { RegistryGoal } from '../registry/schema';
import { goalRunsDir, goalRuntimeDir } from '../runtime/layout';
import type { RunIndexEntry } from '../runtime/runIndex';
import type { ScrubContext } from '../privacy/scrub';
import { findDeadLocks, type DeadLockFinding } from './globalLocks';

/**
 * Everything the global read models look at, read once: the status payload of every goal of the
 * registry (with quota), each goal's parsed state file and full run list, and the dead locks
 * around them. The views themselves (views.ts) are pure functions of this snapshot.
 */

/** What the global views look at of one goal: its status item, its typed registry entry, its state file and runs. */
export interface GlobalGoalView {
  item: StatusPayloadItem;
  registryGoal: RegistryGoal | undefined;
  state: StateRead;
  /** Every run of the goal, newest first. */
  runs: RunIndexEntry[];
}

export interface GlobalSnapshot {
  registryPath: string;
  runtimeRoot: string;
  now: Date;
  payload: StatusPayload;
  goals: GlobalGoalView[];
  deadLocks: DeadLockFinding[];
  /** What outward-facing output of this snapshot is scrubbed with. */
  scrubContext: ScrubContext;
}

export interface GlobalSnapshotOptions {
  registryPath: string;
  homeDir: string;
  runtimeRootOverride?: string | null;
  clock: Clock;
  cache?: GoalStatusCache;
  /** Whether a pid runs on this host (tests inject one); default a signal-0 probe. */
  isProcessAlive?: (pid: number) => boolean;
}

/** Reads the snapshot; throws what `readStatusRegistry` throws when the registry cannot be read. */
export async function loadGlobalSnapshot(options: GlobalSnapshotOptions): Promise<GlobalSnapshot> {
  const cache = options.cache ?? new GoalStatusCache();
  const registryPath = path.resolve(options.registryPath);
  const runtimeRootOverride = options.runtimeRootOverride ?? null;
  const statusRegistry = await readStatusRegistry(
    { registryPath, homeDir: options.homeDir, runtimeRootOverride },
    cache,
  );
  const payload = await loadStatus({
    registry: statusRegistry,
    cache,
    clock: options.clock,
    // Reuses the registry and run index status already read, instead of re-reading them per goal.
    quotaSummary: statusQuotaSummaries({
      registryPath,
      clock: options.clock,
      homeDir: options.homeDir,
    }),
  });
  const registry = statusRegistry.document;
  const targets = statusTargets(registry, registryPath, { homeDir: options.homeDir, runtimeRootOverride });
  const entries = new Map<string, RegistryGoal>();
  for (const goal of registryGoals(registry)) if (!entries.has(goal.id)) entries.set(goal.id, goal);
  const items = new Map(goalItems(payload).map((item) => [item.goal_id, item]));

  const goals: GlobalGoalView[] = [];
  for (const target of targets) {
    const item = items.get(target.goalId);
    if (item === undefined) continue;
    const sources = await cache.goalSources(target);
    goals.push({
      item,
      registryGoal: entries.get(target.goalId),
      state: sources.state,
      runs: sources.runs?.rows ?? [],
    });
  }

  const lockDirs = [path.dirname(registryPath)];
  for (const target of targets) {
    lockDirs.push(goalRuntimeDir(target.runtimeRoot, target.goalId), goalRunsDir(target.runtimeRoot, target.goalId));
    if (target.stateFile !== null) lockDirs.push(path.dirname(target.stateFile));
  }
  const now = options.clock.now();
  const deadLocks = await findDeadLocks(lockDirs, {
    nowMs: now.getTime(),
    ...(options.isProcessAlive ? { isProcessAlive: options.isProcessAlive } : {}),
  });

  const projectRoots = [
    registryProjectRoot(registryPath),
    ...[...entries.values()]
      .map((goal) => resolveRepo(goal, options.homeDir))
      .filter((repo): repo is string => repo !== null),
  ];
  return {
    registryPath,
    runtimeRoot: payload.runtime_root,
    now,
    payload,
    goals,
    deadLocks,
    scrubContext: {
      projectRoots: [...new Set(projectRoots)],
      homeDir: options.homeDir,
      runtimeRoot: payload.runtime_root,
    },
  };
}
