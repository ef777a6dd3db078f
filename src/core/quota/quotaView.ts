import * as path from 'node:path';
import type { Clock } from '../clock';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from './goal';
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

/**
 * Where the view's ledger comes from, a required input: the goal's run index read now (`read`), or what the
 * caller loaded of it: its rows (`rows`; null when the index does not exist; used only when it is this goal's
 * index file, else the index is read), its ledger facts (`facts`: `rows` stays empty) or the persistent cache's
 * digest (`digest`: its ledger memo is used and updated, `rows` stays empty).
 */
export type QuotaViewIndex =
  | { kind: 'read' }
  | { kind: 'rows'; runIndex: RunIndexRead | null }
  | { kind: 'facts'; facts: LedgerFacts }
  | { kind: 'digest'; digest: IndexDigest };

/** Reads ledger and reservations without the lock and without writing (status views, previews). */
export async function readQuotaView(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  index: QuotaViewIndex,
): Promise<QuotaView> {
  const indexFile = path.resolve(runIndexPath(goal.runtimeRoot, goal.goalId));
  const given =
    index.kind !== 'rows'
      ? undefined
      : index.runIndex === null
        ? { index_file: indexFile, exists: false, raw_count: 0, skipped: [], rows: [] }
        : index.runIndex;
  const snapshot = await takeSnapshot(
    goal,
    clock,
    given !== undefined && path.resolve(given.index_file) === indexFile ? given : undefined,
    index.kind === 'facts' ? index.facts : undefined,
    index.kind === 'read' || index.kind === 'rows',
    index.kind === 'digest' ? index.digest : undefined,
  );
  return {
    ledger: snapshot.ledger,
    rows: snapshot.rows,
    live: snapshot.live,
    expired: snapshot.expired,
    reserved: reservedTotals(snapshot.live),
  };
}
