import type { Clock } from '../clock';
import { activeLeaseHolders } from '../leases/store';
import { quotaConfigOf } from '../quota/goal';
import { readQuotaView } from '../quota/quotaView';
import { runHistoryRows } from '../quota/runHistory';
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
}

/**
 * The one reader of a goal's files for deciding (writers keep their locked re-reads in their
 * stores): registry entry (already in the `GoalRef`), state file, run index, reservations and
 * leases, through the process's `GoalCache`.
 */
export class GoalLoader {
  constructor(private readonly cache: GoalCache = processGoalCache()) {}

  async load(goal: GoalRef, options: LoadOptions): Promise<GoalSnapshot> {
    // A quota window no date can hold is refused before anything is read (`quota_window_out_of_range`).
    quotaConfigOf(goal);
    const loadedAt = options.clock.now();
    const runs = await this.runs(goal, options);
    const quota = await readQuotaView(
      goal,
      options.clock,
      runs.kind === 'history' ? { kind: 'facts', facts: runs.history.facts } : { kind: 'read' },
    );
    const loaded: LoadedRuns = runs.kind === 'rows' ? { kind: 'rows', rows: quota.rows } : runs;
    const state = await this.state(goal);
    return { goal, state, runs: loaded, quota, leases: activeLeaseHolders(goal, loadedAt), loadedAt };
  }

  private async runs(goal: GoalRef, options: LoadOptions): Promise<LoadedRuns | { kind: 'rows' }> {
    if (options.indexCache === 'off') return { kind: 'rows' };
    const read = await this.cache.runHistory.read(goal.runtimeRoot, goal.goalId, goal.projectRoot, {
      // The decision admits, with or without a turn id: verified like admission (the whole prefix checked;
      // the reader holds only what this process read itself, never a file anyone could rewrite).
      verify: 'own',
    });
    const rows = runHistoryRows(read.history, null, goal.projectRoot);
    return {
      kind: 'history',
      history: read.history,
      latestStatusRun: rows.latestStatusRun,
      latestRuns: rows.latestRuns,
    };
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
