import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkGoalIdSegment } from '../registry/goalId';

/**
 * Where per-goal machine state lives under a runtime root:
 *   <runtime_root>/goals/<goal_id>/runs/index.jsonl (+ paired .json/.md artifacts)
 *   <runtime_root>/archived-goals/<goal_id>-<YYYYMMDDTHHMMSSZ>[-N]/
 * Every goal id is checked to be a single path segment before it names a folder.
 */

export const GOALS_DIR = 'goals';
export const RUNS_DIR = 'runs';
export const RUN_INDEX_FILE = 'index.jsonl';
export const ARCHIVED_GOALS_DIR = 'archived-goals';

/** The trimmed goal id, or LoopxError `invalid_goal_id` (empty, `.`/`..`, separators, drive forms). */
export function validateGoalId(raw: string): string {
  return checkGoalIdSegment(raw);
}

/**
 * The runtime root a goal runtime folder (`<rt>/goals/<id>`) belongs to: the root its writes must
 * stay inside, so a goal folder symlinked out of the runtime root is refused.
 */
export function runtimeRootOfGoalDir(goalDir: string): string {
  return path.dirname(path.dirname(path.resolve(goalDir)));
}

export function runtimeGoalsRoot(runtimeRoot: string): string {
  return path.join(runtimeRoot, GOALS_DIR);
}

export function goalRuntimeDir(runtimeRoot: string, goalId: string): string {
  return path.join(runtimeGoalsRoot(runtimeRoot), validateGoalId(goalId));
}

export function goalRunsDir(runtimeRoot: string, goalId: string): string {
  return path.join(goalRuntimeDir(runtimeRoot, goalId), RUNS_DIR);
}

/** Run-index paths already made (status asks for every goal's several times per call): runtime root, NUL, goal id → path. */
const runIndexPaths = new Map<string, string>();
const RUN_INDEX_PATHS_MAX = 20_000;

export function runIndexPath(runtimeRoot: string, goalId: string): string {
  const key = `${runtimeRoot}\0${goalId}`;
  let file = runIndexPaths.get(key);
  if (file === undefined) {
    // An invalid id throws here every time: only paths that were made are kept.
    file = path.join(goalRunsDir(runtimeRoot, goalId), RUN_INDEX_FILE);
    if (runIndexPaths.size >= RUN_INDEX_PATHS_MAX) runIndexPaths.clear();
    runIndexPaths.set(key, file);
  }
  return file;
}

export function defaultArchiveRoot(runtimeRoot: string): string {
  return path.join(runtimeRoot, ARCHIVED_GOALS_DIR);
}

/** Goal ids that have a folder under `<runtime_root>/goals/`, sorted; names that are not valid ids are ignored. */
export async function listRuntimeGoalIds(runtimeRoot: string): Promise<string[]> {
  let entries: fs.Dirent[];
  try {
    entries = await fs.promises.readdir(runtimeGoalsRoot(runtimeRoot), { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const ids: string[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    try {
      if (validateGoalId(entry.name) === entry.name) ids.push(entry.name);
    } catch {
      // Not a goal id (e.g. " spaced" or a drive form); never treat it as one.
    }
  }
  return ids.sort();
}

export interface GoalListing {
  goal_id: string;
  registered: boolean;
  has_runtime_dir: boolean;
  /** `legacy-runtime` for a runtime folder without a registry entry, else null (the registry's status applies). */
  runtime_status: 'legacy-runtime' | null;
}

/**
 * The goal list of status views: the sorted union of registry ids and runtime goal folders. A
 * folder with no registry entry is a legacy runtime goal (candidate for `loopx archive-runtime`).
 */
export function unionGoalListing(registryIds: readonly string[], runtimeIds: readonly string[]): GoalListing[] {
  const registered = new Set(registryIds);
  const onDisk = new Set(runtimeIds);
  return [...new Set([...registryIds, ...runtimeIds])].sort().map((goalId) => ({
    goal_id: goalId,
    registered: registered.has(goalId),
    has_runtime_dir: onDisk.has(goalId),
    runtime_status: registered.has(goalId) ? null : 'legacy-runtime',
  }));
}
