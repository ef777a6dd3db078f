import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import type { LockOptions } from '../fs/fileLock';
import { quotaFileIo } from './files';
import { parseIsoInstant } from '../isoTime';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import { appendRun } from '../runtime/runIndexWrite';
import { formatLocalIsoSeconds } from '../runtime/time';
import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from './goal';
import { SettlementIdentitySchema, type SettlementIdentity } from './identity';
import { pendingDeliveries } from './deliveryScan';
import {
  ledgerFacts,
  ledgerFromFacts,
  ledgerOfDigest,
  type IndexDigest,
  type LedgerFacts,
  QUOTA_SLOT_SPENT,
  QUOTA_SLOT_VOIDED,
  RESERVATION_HOLD_FIELD,
  type QuotaLedger,
} from './ledger';
import { readIndexInFull } from './runHistory';
import type { ReservedTotals } from './state';

/**
 * Hard quota limits through reservations (docs/quota.md; fixes the original, where the cap was only an admission
 * check and two racing spends, or `--slots N`, could overshoot it).
 *
 * `<runtime>/goals/<goal>/quota-reservations.json` lists the slots held by turns in flight. Every
 * operation on it (reserve, settle, void, reclaim) runs under the cross-process lock of that file
 * and re-reads both it and the run index inside the lock, so:
 *   - admission counts spent + reserved + requested ≤ allowed (and the same for each budget), and
 *     the limit holds even for concurrent turns in several processes;
 *   - settling an unexpired reservation always succeeds (its slot was already counted), so work
 *     that was admitted is always accounted, even if the window filled meanwhile;
 *   - settling writes exactly one `quota_slot_spent` record per settlement identity: a replay
 *     finds the identity in the run index and writes nothing;
 *   - a reservation past its `expires_at` (its process crashed or forgot) is reclaimed by the next
 *     operation; a reservation whose identity already has a spend (a crash between the append and
 *     the reservation's removal) is dropped, never spent twice.
 *
 * Split by job: this file is the store (the file, its lock, the snapshot taken inside it, the holds the
 * original counts); admission (`reserveTurn`, the one admission rule) is `admission.ts`, settlement
 * (`settleReservation`) `settlement.ts`, voids and reclaims `voids.ts`, the lock-free read `quotaView.ts`.
 */

export const RESERVATIONS_FILE = 'quota-reservations.json';
export const RESERVATIONS_SCHEMA = 'loopx_quota_reservations_v0';
export const DEFAULT_RESERVATION_TTL_MINUTES = 60;

export const UsageEstimateSchema = z.object({
  tokens: z.number().int().min(0).optional(),
  cost_usd: z.number().min(0).optional(),
  minutes: z.number().min(0).optional(),
});
export type UsageEstimate = z.infer<typeof UsageEstimateSchema>;

export const ReservationSchema = z.looseObject({
  effect_id: z.string().min(1),
  settlement_identity: SettlementIdentitySchema,
  slots: z.number().int().min(1),
  estimate: UsageEstimateSchema,
  reserved_at: z.string(),
  expires_at: z.string(),
  holder_pid: z.number().int(),
});
export type Reservation = z.infer<typeof ReservationSchema>;

export const ReclaimedReservationSchema = z.looseObject({
  effect_id: z.string(),
  expires_at: z.string(),
  reclaimed_at: z.string(),
});

export const ReservationsFileSchema = z.looseObject({
  schema_version: z.literal(RESERVATIONS_SCHEMA),
  goal_id: z.string(),
  reservations: z.array(ReservationSchema),
  /** The latest reclaimed (expired) reservations, newest last, so a late settle can say what happened. */
  reclaimed: z.array(ReclaimedReservationSchema).optional(),
});
/** How many reclaimed reservations the file remembers. */
const RECLAIMED_MEMORY = 100;
export type ReservationsFile = z.infer<typeof ReservationsFileSchema>;

export function reservationsPath(goal: Pick<GoalRef, QuotaRefKeys>): string {
  return path.join(goal.runtimeDir, RESERVATIONS_FILE);
}

export interface QuotaLockOptions {
  agentId?: string | null;
  timeoutMs?: number;
  pollMs?: number;
}

async function readReservationsFile(file: string, goalId: string): Promise<ReservationsFile> {
  // Most goals have no reservations file; say so without building (and throwing) a not-found error.
  if (!fs.existsSync(file)) return { schema_version: RESERVATIONS_SCHEMA, goal_id: goalId, reservations: [] };
  let raw: unknown;
  try {
    raw = await quotaFileIo(path.dirname(file), { kind: 'readJson', file });
  } catch (error) {
    if (error instanceof LoopxError && error.code === 'file_not_found')
      return { schema_version: RESERVATIONS_SCHEMA, goal_id: goalId, reservations: [] };
    throw error;
  }
  const parsed = ReservationsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LoopxError(
      'quota_reservations_invalid',
      `${file}: field ${issue?.path.join('.') || '(root)'} ${issue?.message ?? 'is invalid'}. LoopX left the file untouched; fix it by hand, or delete it when no turn is running (held slots are then released).`,
      { path: file, field: issue?.path.join('.') ?? null },
    );
  }
  return parsed.data;
}

export function reservedTotals(reservations: readonly Reservation[]): ReservedTotals {
  const totals: ReservedTotals = { slots: 0, tokens: 0, cost_usd: 0, minutes: 0 };
  for (const r of reservations) {
    totals.slots += r.slots;
    totals.tokens += r.estimate.tokens ?? 0;
    totals.cost_usd += r.estimate.cost_usd ?? 0;
    totals.minutes += r.estimate.minutes ?? 0;
  }
  return totals;
}

function isExpired(reservation: Reservation, now: number): boolean {
  const expires = parseIsoInstant(reservation.expires_at);
  return expires === null || expires <= now;
}

/** A snapshot of the goal's quota taken inside (or, for previews, outside) the lock. */
export interface QuotaSnapshot {
  file: ReservationsFile;
  /** Unexpired reservations whose identity has no spend yet. */
  live: Reservation[];
  expired: Reservation[];
  /** Reservations whose identity already has a spend row (a crash between append and removal). */
  consumed: Reservation[];
  ledger: QuotaLedger;
  rows: RunIndexEntry[];
}

export async function takeSnapshot(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  readIndex?: RunIndexRead,
  facts?: LedgerFacts,
  needRows = false,
  digest?: IndexDigest,
): Promise<QuotaSnapshot> {
  const file = await readReservationsFile(reservationsPath(goal), goal.goalId);
  let rows: RunIndexEntry[] = [];
  let ledgerInput = facts;
  if (digest !== undefined) {
    // A kept digest: its memo gives the ledger without unpacking the facts while the window holds the same spends.
    return snapshotOf(file, ledgerOfDigest(digest, quotaConfigOf(goal).slots.window_hours, clock), rows, clock);
  }
  if (ledgerInput === undefined) {
    // Reserving, settling and voiding (a writer's read inside its lock) read the whole index: the
    // plain reader, never a cache (a cache file never decides admission). The ledger reads no
    // artifact flag: none is stat'ed unless a caller reads it on a row.
    const read = readIndex ?? (await readIndexInFull(runIndexPath(goal.runtimeRoot, goal.goalId), goal.projectRoot));
    if (needRows || readIndex !== undefined) rows = read.rows;
    ledgerInput = ledgerFacts(read.rows, goal.projectRoot);
  }
  return snapshotOf(file, ledgerFromFacts(ledgerInput, quotaConfigOf(goal).slots.window_hours, clock), rows, clock);
}

function snapshotOf(
  file: QuotaSnapshot['file'],
  ledger: QuotaLedger,
  rows: RunIndexEntry[],
  clock: Clock,
): QuotaSnapshot {
  const now = clock.now().getTime();
  const live: Reservation[] = [];
  const expired: Reservation[] = [];
  const consumed: Reservation[] = [];
  for (const r of file.reservations) {
    if (ledger.settled_effect_ids.has(r.effect_id)) consumed.push(r);
    else if (isExpired(r, now)) expired.push(r);
    else live.push(r);
  }
  return { file, live, expired, consumed, ledger, rows };
}

export async function saveReservations(
  goal: Pick<GoalRef, QuotaRefKeys>,
  snapshot: QuotaSnapshot,
  live: Reservation[],
  clock: Clock,
  released: readonly Reservation[] = [],
): Promise<void> {
  // Holds are released before the file forgets their reservations: a crash in between leaves a reservation
  // whose hold is voided (voided again later, harmless), never a hold nobody releases.
  const releasedIds = new Set<string>();
  for (const r of [...snapshot.expired, ...snapshot.consumed, ...released]) {
    if (releasedIds.has(r.effect_id)) continue;
    releasedIds.add(r.effect_id);
    await releaseHold(goal, clock, r);
  }
  const unchanged =
    live.length === snapshot.file.reservations.length && live.every((r, i) => snapshot.file.reservations[i] === r);
  if (unchanged) return;
  const reclaimedAt = formatLocalIsoSeconds(clock.now());
  const reclaimed = [
    ...(snapshot.file.reclaimed ?? []),
    ...snapshot.expired.map((r) => ({ effect_id: r.effect_id, expires_at: r.expires_at, reclaimed_at: reclaimedAt })),
  ].slice(-RECLAIMED_MEMORY);
  const next: ReservationsFile = { ...snapshot.file, reservations: live };
  if (reclaimed.length > 0) next.reclaimed = reclaimed;
  await quotaFileIo(goal.runtimeRoot, {
    kind: 'writeJson',
    file: reservationsPath(goal),
    value: next,
    within: goal.runtimeRoot,
  });
}

// ---------------------------------------------------------------------------------------------
// Holds: reservations the original LoopX counts

/**
 * How long an accountable delivery without a reservation holds a slot for the spend that follows it
 * ({@link pendingDeliveries}); older ones are taken as abandoned.
 */
export const PENDING_DELIVERY_MINUTES = DEFAULT_RESERVATION_TTL_MINUTES;

/**
 * Appends the hold of a reservation: a `quota_slot_spent` row flagged `reservation_hold`, which the Python LoopX
 * counts as spent (it reads no reservations file) and our ledger skips (it counts the reservation). Returns its
 * `generated_at`, the key its void names.
 */
export async function appendHold(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  identity: SettlementIdentity,
  slots: number,
  lock: QuotaLockOptions | undefined,
): Promise<string> {
  const quotaEvent = { event_type: QUOTA_SLOT_SPENT, source: 'reservation', slots, [RESERVATION_HOLD_FIELD]: true };
  const appended = await appendRun({
    runtimeRoot: goal.runtimeRoot,
    goalId: goal.goalId,
    record: {
      classification: QUOTA_SLOT_SPENT,
      recommended_action: '',
      health_check: 'quota reservation hold: counts as spent until its turn settles or is voided',
      agent_id: identity.agent_id,
      [RESERVATION_HOLD_FIELD]: true,
      slots,
      effect_id: identity.effect_id,
      quota_event: quotaEvent,
    },
    markdown: `# ${goal.goalId} — reservation hold\n\n- agent: ${identity.agent_id}, turn: ${identity.turn_instance_id}\n- slots: ${slots} (released by a quota_slot_voided row when the turn settles, fails or expires)\n`,
    suffix: 'quota-reservation-hold',
    indexFields: { [RESERVATION_HOLD_FIELD]: true, slots, quota_event: quotaEvent },
    projectRoot: goal.projectRoot,
    clock,
    lock: { agentId: identity.agent_id, operation: 'quota_reserve', ...lockTimeouts(lock) },
  });
  return appended.row.generated_at ?? formatLocalIsoSeconds(clock.now());
}

/** Appends the void that releases a reservation's hold (nothing when it has none). */
export async function releaseHold(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  reservation: Reservation,
): Promise<void> {
  const heldAt = reservation['hold_generated_at'];
  if (typeof heldAt !== 'string' || heldAt === '') return;
  const quotaEvent = {
    event_type: QUOTA_SLOT_VOIDED,
    source: 'reservation',
    slots: reservation.slots,
    voided_run_generated_at: heldAt,
    [RESERVATION_HOLD_FIELD]: true,
  };
  await appendRun({
    runtimeRoot: goal.runtimeRoot,
    goalId: goal.goalId,
    record: {
      classification: QUOTA_SLOT_VOIDED,
      recommended_action: '',
      health_check: 'quota reservation hold released',
      agent_id: reservation.settlement_identity.agent_id,
      [RESERVATION_HOLD_FIELD]: true,
      slots: reservation.slots,
      effect_id: reservation.effect_id,
      voided_run_generated_at: heldAt,
      quota_event: quotaEvent,
    },
    markdown: `# ${goal.goalId} — reservation hold released\n\n- hold: ${heldAt}, turn: ${reservation.settlement_identity.turn_instance_id}\n`,
    suffix: 'quota-reservation-release',
    indexFields: {
      [RESERVATION_HOLD_FIELD]: true,
      slots: reservation.slots,
      voided_run_generated_at: heldAt,
      quota_event: quotaEvent,
    },
    projectRoot: goal.projectRoot,
    clock,
    lock: { agentId: reservation.settlement_identity.agent_id, operation: 'quota_release' },
  });
}

/**
 * Where the Python LoopX left its mark on a goal, or null: its kernel-lock files (`<file>.lock`, kept after use; ours
 * are `.loopx-lock` and removed), which every quota command of it (should-run included, as its heartbeat starts)
 * leaves in the goal's runtime folder beside `rollout-event-log.jsonl`. Only then are reservations written as holds:
 * a goal only we work on keeps its index free of them.
 */
export function originalFootprint(goal: Pick<GoalRef, QuotaRefKeys>): string | null {
  return originalFootprintIn(goal.runtimeDir);
}

/** The same, given the goal's runtime folder (`<runtime>/goals/<goal>`): what `doctor` reads. */
export function originalFootprintIn(goalRuntimeDir: string): string | null {
  let names: string[];
  try {
    names = fs.readdirSync(goalRuntimeDir);
  } catch {
    return null;
  }
  const mark = names.find((name) => name.endsWith('.lock'));
  return mark === undefined ? null : path.join(goalRuntimeDir, mark);
}

/** Accountable deliveries of agents without a live reservation whose spend is still to come. */
export async function pendingSpends(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  live: readonly Reservation[],
  agentId: string,
) {
  const rows = (await readIndexInFull(runIndexPath(goal.runtimeRoot, goal.goalId), goal.projectRoot)).rows;
  const skip = new Set([agentId, ...live.map((r) => r.settlement_identity.agent_id)]);
  return pendingDeliveries(rows, skip, clock.now().getTime(), PENDING_DELIVERY_MINUTES).length;
}

export async function underQuotaLock<T>(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  operation: string,
  lock: QuotaLockOptions | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  await quotaFileIo(goal.runtimeRoot, { kind: 'mkdir', dir: goal.runtimeDir });
  const options: LockOptions = { operation, clock };
  if (lock?.agentId !== undefined) options.agentId = lock.agentId;
  if (lock?.timeoutMs !== undefined) options.timeoutMs = lock.timeoutMs;
  if (lock?.pollMs !== undefined) options.pollMs = lock.pollMs;
  return quotaFileIo(goal.runtimeRoot, { kind: 'lock', file: reservationsPath(goal), lock: options, work: fn });
}

export interface QuotaCounts {
  allowed_slots: number;
  spent_slots: number;
  reserved_slots: number;
  remaining_slots: number;
}

export function quotaCounts(
  goal: Pick<GoalRef, QuotaRefKeys>,
  ledger: QuotaLedger,
  live: readonly Reservation[],
): QuotaCounts {
  const reserved = reservedTotals(live).slots;
  const allowed = quotaConfigOf(goal).slots.allowed_slots;
  return {
    allowed_slots: allowed,
    spent_slots: ledger.spent_slots,
    reserved_slots: reserved,
    remaining_slots: Math.max(0, allowed - ledger.spent_slots - reserved),
  };
}

export function lockTimeouts(lock: QuotaLockOptions | undefined): { timeoutMs?: number; pollMs?: number } {
  const out: { timeoutMs?: number; pollMs?: number } = {};
  if (lock?.timeoutMs !== undefined) out.timeoutMs = lock.timeoutMs;
  if (lock?.pollMs !== undefined) out.pollMs = lock.pollMs;
  return out;
}
