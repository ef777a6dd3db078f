import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { findLaneMarker } from '../registry/laneMarker';
import { git } from './git';
import { lanesRootOf, type LaneRef } from './lane';
import { laneStatus, type LaneStatus } from './merge';

/**
 * Clean-up of lanes when their goal is archived or their agent removed (docs/lanes.md "Clean-up"):
 * the worktree is removed and pruned, the branch kept unless asked. Like the archive's own checks it
 * fails closed: a lane whose branch has commits main lacks is refused before anything changes,
 * unless forced.
 */

/** The lanes of a goal found on disk (`<runtime root>/lanes/<goal>/*`, each a worktree with its marker). */
export function lanesOnDisk(runtimeRoot: string, goalId: string): LaneRef[] {
  const root = lanesRootOf(runtimeRoot, goalId);
  let names: string[];
  try {
    names = fs.readdirSync(root).sort();
  } catch {
    return [];
  }
  const refs: LaneRef[] = [];
  for (const name of names) {
    const worktree = path.join(root, name);
    const marker = findLaneMarker(worktree);
    // Only a folder that is itself a lane worktree of this goal (its own `.git` file, its marker).
    if (marker === null || marker.goal_id !== goalId || !fs.existsSync(path.join(worktree, '.git'))) continue;
    refs.push({
      goalId,
      agentId: marker.agent_id,
      branch: marker.branch,
      worktree,
      runtimeRoot,
      projectRoot: marker.project_root,
      registryPath: marker.registry_path,
    });
  }
  return refs;
}

export interface LaneCleanup {
  agent_id: string;
  branch: string;
  worktree: string;
  /** Commits on the branch that main lacks. */
  unmerged_commits: number;
  worktree_removed: boolean;
  branch_deleted: boolean;
}

export interface LaneCleanupOptions {
  /** Delete the lanes' branches too (default: keep them). */
  deleteBranches: boolean;
  /** Go on although a lane has commits main lacks. */
  force: boolean;
  execute: boolean;
}

/**
 * Checks every lane first (the statuses), refusing with `lane_unmerged_commits` when one has commits
 * main lacks and `force` is not set; then, when executing, removes each worktree (and branch if asked).
 */
export async function checkLanesForCleanup(
  refs: readonly LaneRef[],
  options: Pick<LaneCleanupOptions, 'force'>,
  what: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LaneStatus[]> {
  const statuses: LaneStatus[] = [];
  for (const ref of refs) statuses.push(await laneStatus(ref, env));
  const unmerged = statuses.filter((status) => status.ahead > 0);
  if (unmerged.length > 0 && !options.force)
    throw new LoopxError(
      'lane_unmerged_commits',
      `${what} would remove lane(s) with validated commits main lacks: ${unmerged
        .map((status) => `${status.branch} (${status.ahead})`)
        .join(
          ', ',
        )}; merge them first (loopx lane merge), or pass --force to remove the lanes anyway (their branches are kept unless --delete-lane-branches).`,
      { lanes: unmerged.map((status) => ({ branch: status.branch, unmerged_commits: status.ahead })) },
    );
  return statuses;
}

/** Removes the checked lanes (see checkLanesForCleanup); a dry run reports what would go. */
export async function cleanUpLanes(
  refs: readonly LaneRef[],
  statuses: readonly LaneStatus[],
  options: LaneCleanupOptions,
  env: NodeJS.ProcessEnv = process.env,
): Promise<LaneCleanup[]> {
  const results: LaneCleanup[] = [];
  for (const [index, ref] of refs.entries()) {
    const status = statuses[index];
    if (status === undefined) continue;
    let worktreeRemoved = false;
    let branchDeleted = false;
    if (options.execute) {
      if (status.exists) {
        await git(['worktree', 'remove', '--force', ref.worktree], ref.projectRoot, env);
        worktreeRemoved = true;
      }
      await git(['worktree', 'prune'], ref.projectRoot, env);
      if (options.deleteBranches && status.branch_exists) {
        await git(['branch', '-D', ref.branch], ref.projectRoot, env);
        branchDeleted = true;
      }
    }
    results.push({
      agent_id: ref.agentId,
      branch: ref.branch,
      worktree: ref.worktree,
      unmerged_commits: status.ahead,
      worktree_removed: worktreeRemoved,
      branch_deleted: branchDeleted,
    });
  }
  return results;
}
