import { parseIsoInstant } from '../isoTime';
import type { RunIndexEntry } from '../runtime/runIndex';
import { isReservationHoldRow, QUOTA_SLOT_SPENT, QUOTA_SLOT_VOIDED } from './ledger';

/** Delivery outcomes a spend pays for (the original's `ACCOUNTABLE_DELIVERY_OUTCOMES`). */
export const ACCOUNTABLE_OUTCOMES: ReadonlySet<string> = new Set(['outcome_progress', 'primary_goal_outcome']);

function rowField(row: RunIndexEntry, key: string): unknown {
  return (row as Record<string, unknown>)[key];
}

export function isAccountable(row: RunIndexEntry): boolean {
  const outcome = rowField(row, 'delivery_outcome');
  return typeof outcome === 'string' && ACCOUNTABLE_OUTCOMES.has(outcome);
}

/**
 * Rows the delivery scan steps over: voids, scheduler acks, monitor polls without an accountable outcome, plain
 * refreshes, and reservation holds (a hold is not a spend of the delivery).
 */
export function isTransparent(row: RunIndexEntry): boolean {
  if (isReservationHoldRow(row as Record<string, unknown>)) return true;
  const classification = row.classification ?? '';
  if (classification === QUOTA_SLOT_VOIDED || classification.includes('scheduler_ack')) return true;
  if (classification === 'quota_monitor_poll') return !isAccountable(row);
  if (classification === 'state_refreshed') return rowField(row, 'delivery_outcome') === undefined;
  return false;
}

/**
 * Accountable deliveries whose spend is still to come, one per agent lane at most: the lane's newest row
 * that is not transparent is such a delivery, written at most `withinMinutes` ago. A writer that holds no
 * reservation (the Python LoopX, or our `spend-slot` after a `refresh-state`) spends after its delivery, so
 * admission counts these as held: the spend that follows then finds its slot still free. Lanes in
 * `skipAgents` (agents whose turn holds a reservation, which already covers their delivery) are left out.
 */
export function pendingDeliveries(
  rowsNewestFirst: readonly RunIndexEntry[],
  skipAgents: ReadonlySet<string>,
  now: number,
  withinMinutes: number,
): RunIndexEntry[] {
  const decided = new Set<string>();
  const pending: RunIndexEntry[] = [];
  const oldest = now - withinMinutes * 60_000;
  for (const row of rowsNewestFirst) {
    const lane = row.agent_id ?? '';
    if (decided.has(lane) || (lane !== '' && skipAgents.has(lane))) continue;
    if (isTransparent(row)) continue;
    decided.add(lane);
    if (row.classification === QUOTA_SLOT_SPENT || !isAccountable(row)) continue;
    const time = parseIsoInstant(row.generated_at);
    if (time !== null && time >= oldest && time <= now) pending.push(row);
  }
  return pending;
}
