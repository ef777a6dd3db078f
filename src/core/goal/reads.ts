import { readGoalRuns, type ReadRunIndexOptions, type RunIndexRead } from '../runtime/runIndex';
import type { StateFileSnapshot } from '../state/stateFile';
import { processStateFiles } from './cache';

/**
 * The goal loader's one-file reads, for operations that need one of a goal's files rather than a
 * whole `GoalSnapshot` (writers keep their locked re-reads in their stores).
 */

/**
 * A goal's state file, through the process's one state-file cache (`StateFileCache`: stat'ed on every
 * call, read again when its stamp changed or is too recent to trust). Frozen; throws what the read throws
 * (`state_file_missing`, not UTF-8, …).
 */
export function readGoalStateFile(statePath: string): Promise<StateFileSnapshot> {
  return processStateFiles().read(statePath);
}

/**
 * Every row of a goal's run index, read in full once (not kept: the review list and the heartbeat prompt
 * read it once per call; the decisions read through `GoalLoader`'s incremental reader).
 */
export function readGoalRunIndex(
  runtimeRoot: string,
  goalId: string,
  options: ReadRunIndexOptions,
): Promise<RunIndexRead> {
  return readGoalRuns(runtimeRoot, goalId, options);
}
