import type { Clock } from '../clock';
import { activeLeaseHolders } from '../leases/store';
import { LoopxError } from '../errors';
import { quotaConfigOf } from '../quota/goal';
import { resolveGoalStatePath } from '../registry/locate';
import { RegistryGoalSchema } from '../registry/schema';
import { goalRuntimeDir } from '../runtime/layout';
import { readGoalQuota } from '../quota/quotaView';
import { findRawRegistryGoal, readRegistry } from '../registry/read';
import { readGoalRuns, type RunIndexEntry } from '../runtime/runIndex';
import type { GoalCache } from './cache';
import { processGoalCache } from './cache';
import type { GoalRef } from './ref';
import type { GoalSnapshot, LoadedRuns, LoadedState } from './snapshot';

export interface LoadOptions {
  clock: Clock;
  /**
   * How the run index is read: through the process's incremental reader, which keeps what it read in
   * memory (`'memory'`, default), or in full from scratch (`'off'`: `LOOPX_STATUS_CACHE=off`).
   */
  indexCache?: 'off' | 'memory' | undefined;
  /**
   * Read the goal's registry entry again first (`reload`): what admission decides on, so a pause, a lowered
   * limit or a changed executor holds for the next turn of a running loop. The snapshot's `goal` is then the
   * entry as re-read, and its `registryDocument` the document it came from.
   */
  reread?: boolean | undefined;
}

/**
 * The one reader of a goal's files for deciding (writers keep their locked re-reads in their
 * stores): registry entry (already in the `GoalRef`), state file, run index, reservations and
 * leases, through the process's `GoalCache`.
 */
export class GoalLoader {
  constructor(private readonly cache: GoalCache = processGoalCache()) {}

  async load(given: GoalRef, options: LoadOptions): Promise<GoalSnapshot> {
    const current = options.reread === true ? await this.reload(given) : null;
    const goal = current?.goal ?? given;
    // A quota window no date can hold is refused before anything is read (`quota_window_out_of_range`).
    quotaConfigOf(goal);
    const loadedAt = options.clock.now();
    const { history, view: quota } = await readGoalQuota(
      goal,
      options.clock,
      options.indexCache === 'off' ? null : this.cache.runHistory,
    );
    const runs: LoadedRuns =
      history === null
        ? { kind: 'rows', rows: quota.rows }
        : {
            kind: 'history',
            history: history.history,
            latestStatusRun: history.rows.latestStatusRun,
            latestRuns: history.rows.latestRuns,
            replanRows: history.rows.replanRows,
          };
    const state = await this.state(goal);
    const leases = activeLeaseHolders(goal, loadedAt);
    return {
      goal,
      state,
      runs,
      quota,
      leases,
      loadedAt,
      ...(current === null ? {} : { registryDocument: current.document }),
    };
  }

  /**
   * A registry document, read now (a missing file reads as `{}`; bad JSON, or a document that is not an
   * object, is a LoopxError with the line and column): for the readers that list a registry's goals.
   */
  async registry(registryPath: string): Promise<Record<string, unknown>> {
    return readRegistry(registryPath);
  }

  /**
   * The goal as the registry says it now (its entry read again, at the place `goal` was resolved): what
   * admission decides on, so a pause, a lowered limit or a changed executor holds for the next turn of a
   * running loop. A goal removed meanwhile is `goal_not_found`. With the registry document it came from.
   */
  async reload(goal: GoalRef): Promise<{ goal: GoalRef; document: Record<string, unknown> }> {
    const document = await readRegistry(goal.registryPath);
    const entry = findRawRegistryGoal(document, goal.goalId);
    if (entry === undefined) {
      throw new LoopxError(
        'goal_not_found',
        `goal '${goal.goalId}' is no longer in the registry ${goal.registryPath}; no new turn starts`,
        { goal_id: goal.goalId, registry: goal.registryPath },
      );
    }
    const parsed = RegistryGoalSchema.safeParse(entry);
    return {
      goal: {
        ...goal,
        runtimeDir: goalRuntimeDir(goal.runtimeRoot, goal.goalId),
        statePath: resolveGoalStatePath(entry, goal.goalId, goal.homeDir),
        // The typed view as the operation parsed it when the entry no longer parses (readers of a
        // reloaded goal take the raw entry; the operation refused an unparsable one before any turn).
        entry: parsed.success ? parsed.data : goal.entry,
        rawEntry: entry,
      },
      document,
    };
  }

  /**
   * Every row of the goal's run index (newest first), read now in full and not kept: what a writer
   * searches for a record of its own (a resumed turn's run record) before appending one.
   */
  async runRows(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId' | 'projectRoot'>): Promise<RunIndexEntry[]> {
    return (await readGoalRuns(goal.runtimeRoot, goal.goalId, { projectRoot: goal.projectRoot })).rows;
  }

  private async state(goal: GoalRef): Promise<LoadedState> {
    if (goal.statePath === null) return { kind: 'unresolved' };
    try {
      return { kind: 'read', file: await this.cache.stateFile(goal.statePath) };
    } catch (error) {
      return { kind: 'unreadable', error };
    }
  }
}
