import type { LeaseHolder } from '../leases/store';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaView } from '../quota/quotaView';
import type { RunHistory } from '../quota/runHistory';
import type { RunIndexEntry } from '../runtime/runIndex';
import type { StateFileSnapshot } from '../state/stateFile';

/** The goal's state file as loaded: parsed, unreadable (with why), or not locatable at all. */
export type LoadedState =
  { kind: 'read'; file: StateFileSnapshot } | { kind: 'unreadable'; error: unknown } | { kind: 'unresolved' };

/**
 * What the run index says, as the loader read it: through the incremental reader (a `history`
 * summary the decision picks its agent's rows from) or in full (`rows`, newest first: `LOOPX_STATUS_CACHE=off`).
 */
export type LoadedRuns =
  | {
      kind: 'history';
      history: RunHistory;
      latestStatusRun: RunIndexEntry | null;
      /** The newest status run and the newest agent-lane run (what the next-action warning picks from). */
      latestRuns: RunIndexEntry[];
      /**
       * The replan scan's rows, of every lane and of each agent's (newest first): the decision picks its agent's
       * without reading (their artifact flags are lazy: stat'ed when the scan first looks at them).
       */
      replanRows: { all: RunIndexEntry[]; byAgent: ReadonlyMap<string, RunIndexEntry[]> };
    }
  | { kind: 'rows'; rows: RunIndexEntry[] };

/**
 * One goal, loaded once (`GoalLoader.load`): the registry entry with its quota config, the parsed
 * state file or its error, the run history, the reservations and ledger, the task leases. The
 * decisions (`shouldRun`, the quota summary) are functions of this and the clock: they read nothing.
 */
export interface GoalSnapshot {
  /** The goal: paths, typed and raw registry entry (its quota config: `quotaConfigOf(goal)`). */
  goal: GoalRef;
  state: LoadedState;
  runs: LoadedRuns;
  /** Ledger (spends in the window) and reservations, as of `loadedAt`. */
  quota: QuotaView;
  /** Todo id → its live task lease's holder, as of `loadedAt`. */
  leases: ReadonlyMap<string, LeaseHolder>;
  /** The clock reading the window and expiries were taken at. */
  loadedAt: Date;
  /** The registry document the entry was re-read from (`LoadOptions.reread`), else absent. */
  registryDocument?: Record<string, unknown>;
}
