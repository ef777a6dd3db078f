import * as path from 'node:path';
import type { Clock } from '../clock';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from './goal';
import type { IndexDigest, LedgerFacts, QuotaLedger } from './ledger';
import type { ReservedTotals } from './state';
import { reservedTotals, takeSnapshot, type Reservation } from './reservations';
import type { HistoryRead, RunHistoryReader, RunHistoryRows } from './runHistory';

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

/** What the goal loader reads of quota/: the run history (unless read in full) and the quota view over it. */
export interface GoalQuotaRead {
  /** The incremental reader's history with the decision's rows; null when the index was read in full. */
  history: (HistoryRead & { rows: RunHistoryRows }) | null;
  view: QuotaView;
}

/**
 * The goal loader's one read of quota/: the run index through the process's incremental reader (`reader`; null
 * reads it in full, `LOOPX_STATUS_CACHE=off`), then ledger and reservations over that history's facts (or over
 * the rows read in full). The reader verifies like admission (`'own'`: the whole prefix checked; it holds only
 * what this process read itself, never a file anyone could rewrite): the decision admits, with or without a turn.
 */
export async function readGoalQuota(
  goal: Pick<GoalRef, QuotaRefKeys | 'projectRoot'>,
  clock: Clock,
  reader: RunHistoryReader | null,
): Promise<GoalQuotaRead> {
  const history =
    reader === null
      ? null
      : await reader.readWithRows(goal.runtimeRoot, goal.goalId, goal.projectRoot, { verify: 'own' });
  const view = await readQuotaView(
    goal,
    clock,
    history === null ? { kind: 'read' } : { kind: 'facts', facts: history.history.facts },
  );
  return { history, view };
}
