import * as path from 'node:path';
import type { Clock } from '../clock';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import type { QuotaGoal } from './goal';
import type { IndexDigest, LedgerFacts, QuotaLedger } from './ledger';
import type { ReservedTotals } from './state';
import { reservedTotals, takeSnapshot, type Reservation } from './reservations';

/** The lock-free read of a goal's quota (status views, previews, the goal loader): ledger and reservations, written nowhere. */

export interface QuotaView {
  ledger: QuotaLedger;
  rows: RunIndexEntry[];
  /** Unexpired, unsettled reservations. */
  live: Reservation[];
  expired: Reservation[];
  reserved: ReservedTotals;
}

export interface ReadQuotaViewOptions {
  /**
   * The goal's run index as the caller just read it (status reads it anyway), instead of reading
   * it again; used only when it is this goal's index file. Null: the index does not exist.
   */
  runIndex?: RunIndexRead | null;
  /** The ledger facts of the goal's index as a cache kept them: the index is not read (and `rows` is empty). */
  facts?: LedgerFacts;
  /** The digest of the goal's index as the persistent cache kept it (wins over `facts`): its ledger memo is used and updated. */
  digest?: IndexDigest;
}

/** Reads ledger and reservations without the lock and without writing (status views, previews). */
export async function readQuotaView(
  goal: QuotaGoal,
  clock: Clock,
  options: ReadQuotaViewOptions = {},
): Promise<QuotaView> {
  const indexFile = path.resolve(runIndexPath(goal.runtimeRoot, goal.goalId));
  const given =
    options.runIndex === null
      ? { index_file: indexFile, exists: false, raw_count: 0, skipped: [], rows: [] }
      : options.runIndex;
  const snapshot = await takeSnapshot(
    goal,
    clock,
    given !== undefined && path.resolve(given.index_file) === indexFile ? given : undefined,
    options.facts,
    options.facts === undefined && options.digest === undefined,
    options.digest,
  );
  return {
    ledger: snapshot.ledger,
    rows: snapshot.rows,
    live: snapshot.live,
    expired: snapshot.expired,
    reserved: reservedTotals(snapshot.live),
  };
}
