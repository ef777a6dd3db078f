import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { mkdirInside } from '../fs/contain';
import { withFileLock } from '../fs/fileLock';
import { readJsonFile } from '../fs/jsonFile';
import { parseIsoInstant } from '../isoTime';
import { runIndexPath } from '../runtime/layout';
import { readGoalRuns, type RunIndexEntry, type RunIndexRead } from '../runtime/runIndex';
import { appendRun, type AppendRunResult } from '../runtime/runIndexWrite';
import { formatLocalIsoSeconds } from '../runtime/time';
import { agentProfileForGoal } from '../registry/agentIds';
import { BUDGET_FIELDS } from './config';
import type { QuotaGoal } from './goal';
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
  type TurnUsage,
} from './ledger';
import { computeQuotaStatus, exhaustedBudget, type GoalFacts, type ReservedTotals } from './state';

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

export function reservationsPath(goal: QuotaGoal): string {
  return path.join(goal.goalRuntimeDir, RESERVATIONS_FILE);
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
    raw = await readJsonFile(file);
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

function reservedTotals(reservations: readonly Reservation[]): ReservedTotals {
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
interface QuotaSnapshot {
  file: ReservationsFile;
  /** Unexpired reservations whose identity has no spend yet. */
  live: Reservation[];
  expired: Reservation[];
  /** Reservations whose identity already has a spend row (a crash between append and removal). */
  consumed: Reservation[];
  ledger: QuotaLedger;
  rows: RunIndexEntry[];
}

async function takeSnapshot(
  goal: QuotaGoal,
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
    return snapshotOf(file, ledgerOfDigest(digest, goal.config.slots.window_hours, clock), rows, clock);
  }
  if (ledgerInput === undefined) {
    // Reserving, settling and voiding (a writer's read inside its lock) read the whole index: the
    // plain reader, never a cache (a cache file never decides admission). The ledger reads no
    // artifact flag: none is stat'ed unless a caller reads it on a row.
    const read =
      readIndex ??
      (await readGoalRuns(goal.runtimeRoot, goal.goalId, { projectRoot: goal.projectRoot, artifactChecks: 0 }));
    if (needRows || readIndex !== undefined) rows = read.rows;
    ledgerInput = ledgerFacts(read.rows, goal.projectRoot);
  }
  return snapshotOf(file, ledgerFromFacts(ledgerInput, goal.config.slots.window_hours, clock), rows, clock);
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

async function saveReservations(
  goal: QuotaGoal,
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
  await writeJsonAtomic(reservationsPath(goal), next, { within: goal.runtimeRoot });
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
async function appendHold(
  goal: QuotaGoal,
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
async function releaseHold(goal: QuotaGoal, clock: Clock, reservation: Reservation): Promise<void> {
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
export function originalFootprint(goal: QuotaGoal): string | null {
  return originalFootprintIn(goal.goalRuntimeDir);
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

/** Writes the reservation's hold, then counts again what every writer holds (see reserveTurn). */
async function holdAndRecheck(
  goal: QuotaGoal,
  clock: Clock,
  identity: SettlementIdentity,
  slots: number,
  lock: QuotaLockOptions | undefined,
  reservation: Reservation,
  live: readonly Reservation[],
): Promise<{ committed: number; spent: number; pending: number }> {
  reservation['hold_generated_at'] = await appendHold(goal, clock, identity, slots, lock);
  const recheck = await takeSnapshot(goal, clock);
  const pending = await pendingSpends(goal, clock, live, identity.agent_id);
  const spent = recheck.ledger.spent_slots;
  return { committed: spent + reservedTotals(live).slots + pending + slots, spent, pending };
}

/** Accountable deliveries of agents without a live reservation whose spend is still to come. */
async function pendingSpends(goal: QuotaGoal, clock: Clock, live: readonly Reservation[], agentId: string) {
  const rows = (await readGoalRuns(goal.runtimeRoot, goal.goalId, { projectRoot: goal.projectRoot, artifactChecks: 0 }))
    .rows;
  const skip = new Set([agentId, ...live.map((r) => r.settlement_identity.agent_id)]);
  return pendingDeliveries(rows, skip, clock.now().getTime(), PENDING_DELIVERY_MINUTES).length;
}

async function underQuotaLock<T>(
  goal: QuotaGoal,
  clock: Clock,
  operation: string,
  lock: QuotaLockOptions | undefined,
  fn: () => Promise<T>,
): Promise<T> {
  await mkdirInside(goal.runtimeRoot, goal.goalRuntimeDir);
  const options: Parameters<typeof withFileLock>[1] = { operation, clock };
  if (lock?.agentId !== undefined) options.agentId = lock.agentId;
  if (lock?.timeoutMs !== undefined) options.timeoutMs = lock.timeoutMs;
  if (lock?.pollMs !== undefined) options.pollMs = lock.pollMs;
  return withFileLock(reservationsPath(goal), options, fn);
}

/** Quota status facts for admission: the goal is the agents' (`codex`) and healthy. */
const ADMISSION_FACTS: GoalFacts = {
  stopped: false,
  health: { ok: true, reason: '' },
  waitingOn: 'codex',
  focusMarker: null,
};

/** Why `slots` more (and `estimate`) would not fit, or null when they fit. */
function capacityProblem(
  goal: QuotaGoal,
  ledger: QuotaLedger,
  held: ReservedTotals,
  slots: number,
  estimate: UsageEstimate,
): string | null {
  const allowed = goal.config.slots.allowed_slots;
  const committed = ledger.spent_slots + held.slots;
  if (goal.config.slots.compute <= 0) return 'the goal has 0 compute quota (paused)';
  if (committed + slots > allowed) {
    return `${ledger.spent_slots} spent + ${held.slots} reserved + ${slots} requested exceeds the ${allowed} allowed slots in the last ${goal.config.slots.window_hours} h`;
  }
  const status = computeQuotaStatus(goal.config, ledger, held, ADMISSION_FACTS);
  const full = exhaustedBudget(status.budgets);
  if (full !== null)
    return `the ${full} budget is used up (${status.budgets[full].used} spent + ${status.budgets[full].reserved} reserved of ${status.budgets[full].limit ?? 0})`;
  const want: Record<(typeof BUDGET_FIELDS)[number], number> = {
    max_cost_usd: estimate.cost_usd ?? 0,
    max_tokens: estimate.tokens ?? 0,
    max_turn_minutes: estimate.minutes ?? 0,
  };
  for (const field of BUDGET_FIELDS) {
    const b = status.budgets[field];
    // The tolerance absorbs float sums (0.001 × 3 is 0.0030000000000000005), never a real overrun.
    if (b.limit !== null && b.used + b.reserved + want[field] > b.limit + 1e-9) {
      return `the ${field} budget has ${Math.max(0, b.limit - b.used - b.reserved)} left, the turn's estimate is ${want[field]}`;
    }
  }
  return null;
}

/** The usage field each budget limits. */
const BUDGET_USAGE = { max_cost_usd: 'cost_usd', max_tokens: 'tokens', max_turn_minutes: 'minutes' } as const;
/** How many of the newest settled turns (in the window) the running average looks at. */
export const ESTIMATE_HISTORY = 20;

export type EstimateBasis = 'profile' | 'average' | 'remaining';

/**
 * The usage a turn reserves for each budget that has a limit: what the caller gives (the agent's
 * profile), else the running average of the newest settled turns in the window that reported it,
 * else everything that is left of the budget. The last is deliberately conservative: with nothing
 * to go on, one turn runs alone until its spend gives the average, so the limit still holds.
 */
export function estimateTurnUsage(
  goal: QuotaGoal,
  ledger: QuotaLedger,
  held: ReservedTotals,
  given: UsageEstimate,
): { estimate: UsageEstimate; basis: Partial<Record<keyof typeof BUDGET_USAGE, EstimateBasis>> } {
  const estimate: UsageEstimate = { ...given };
  const basis: Partial<Record<keyof typeof BUDGET_USAGE, EstimateBasis>> = {};
  for (const field of BUDGET_FIELDS) {
    const key = BUDGET_USAGE[field];
    const limit = goal.config.budgets[field];
    if (given[key] !== undefined) {
      basis[field] = 'profile';
      continue;
    }
    if (limit === null) continue;
    const reported = ledger.spends
      .filter((s) => s.in_window && !s.duplicate && s.voided_slots < s.slots && s.usage?.[key] !== undefined)
      .slice(0, ESTIMATE_HISTORY)
      .map((s) => s.usage?.[key] ?? 0);
    let value: number;
    if (reported.length > 0) {
      value = reported.reduce((a, b) => a + b, 0) / reported.length;
      basis[field] = 'average';
    } else {
      value = Math.max(0, limit - ledger.usage[key] - held[key]);
      basis[field] = 'remaining';
    }
    // Tokens are whole; an average rounds up, the rest of a budget rounds down (it must fit).
    estimate[key] =
      key === 'tokens'
        ? basis[field] === 'average'
          ? Math.ceil(value)
          : Math.floor(value)
        : Math.round(value * 1e9) / 1e9;
  }
  return { estimate, basis };
}

/**
 * The estimate the agent's profile gives (`coordination.agent_profiles.<agent>.executor`:
 * `estimated_cost_usd`, `estimated_tokens`), read from the registry entry; {} when none is set.
 */
export function profileEstimate(goal: QuotaGoal, agentId: string | null): UsageEstimate {
  if (agentId === null) return {};
  const executor = agentProfileForGoal(goal.goal, agentId)?.['executor'];
  if (typeof executor !== 'object' || executor === null) return {};
  const fields = executor as Record<string, unknown>;
  const cost = fields['estimated_cost_usd'];
  const tokens = fields['estimated_tokens'];
  const estimate: UsageEstimate = {};
  if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) estimate.cost_usd = cost;
  if (typeof tokens === 'number' && Number.isInteger(tokens) && tokens >= 0) estimate.tokens = tokens;
  return estimate;
}

/**
 * The one admission rule (`quota should-run`, the turn's reservation and `spend-slot` all apply it):
 * whether one more turn with `given` (the agent's profile estimate; missing budgets filled by
 * {@link estimateTurnUsage}) fits beside what is spent and reserved. Null when it fits.
 */
export function admissionProblem(
  goal: QuotaGoal,
  ledger: QuotaLedger,
  held: ReservedTotals,
  given: UsageEstimate,
  slots = 1,
): { problem: string | null; estimate: UsageEstimate; basis: ReturnType<typeof estimateTurnUsage>['basis'] } {
  const { estimate, basis } = estimateTurnUsage(goal, ledger, held, given);
  return { problem: capacityProblem(goal, ledger, held, slots, estimate), estimate, basis };
}

export interface QuotaCounts {
  allowed_slots: number;
  spent_slots: number;
  reserved_slots: number;
  remaining_slots: number;
}

function counts(goal: QuotaGoal, ledger: QuotaLedger, live: readonly Reservation[]): QuotaCounts {
  const reserved = reservedTotals(live).slots;
  return {
    allowed_slots: goal.config.slots.allowed_slots,
    spent_slots: ledger.spent_slots,
    reserved_slots: reserved,
    remaining_slots: Math.max(0, goal.config.slots.allowed_slots - ledger.spent_slots - reserved),
  };
}

// ---------------------------------------------------------------------------------------------
// Reserve

export interface ReserveTurnInput {
  identity: SettlementIdentity;
  /** Default 1: every turn spends one slot. */
  slots?: number;
  estimate?: UsageEstimate;
  /**
   * Fill in the estimate of each limited budget `estimate` leaves out (running average, else the
   * rest of the budget: {@link estimateTurnUsage}). The turn driver does; a bare reserve does not.
   */
  estimateMissing?: boolean;
  /** Default {@link DEFAULT_RESERVATION_TTL_MINUTES}. */
  ttlMinutes?: number;
  lock?: QuotaLockOptions;
}

export interface ReserveTurnResult {
  status: 'reserved' | 'already_reserved' | 'already_settled' | 'refused';
  admitted: boolean;
  reason: string;
  reservation: Reservation | null;
  quota: QuotaCounts;
  /** Expired reservations this call released. */
  reclaimed: Reservation[];
}

/** Admits one turn: holds its slot(s) and budget estimate until settled, voided or expired. */
export async function reserveTurn(goal: QuotaGoal, clock: Clock, input: ReserveTurnInput): Promise<ReserveTurnResult> {
  const identity = SettlementIdentitySchema.parse(input.identity);
  const slots = input.slots ?? 1;
  if (!Number.isInteger(slots) || slots < 1)
    throw new LoopxError('quota_slots_invalid', `slots must be a whole number of at least 1, got ${slots}`, { slots });
  const estimate = UsageEstimateSchema.parse(input.estimate ?? {});
  const ttl = input.ttlMinutes ?? DEFAULT_RESERVATION_TTL_MINUTES;
  if (!(ttl > 0))
    throw new LoopxError('quota_ttl_invalid', `a reservation TTL must be a positive number of minutes, got ${ttl}`, {
      ttl_minutes: ttl,
    });
  return underQuotaLock(goal, clock, 'quota_reserve', input.lock, async () => {
    const snapshot = await takeSnapshot(goal, clock);
    const { ledger, live } = snapshot;
    const done = (
      status: ReserveTurnResult['status'],
      reason: string,
      reservation: Reservation | null,
      kept: Reservation[],
    ): ReserveTurnResult => ({
      status,
      admitted: status === 'reserved' || status === 'already_reserved',
      reason,
      reservation,
      quota: counts(goal, ledger, kept),
      reclaimed: snapshot.expired,
    });
    if (ledger.settled_effect_ids.has(identity.effect_id)) {
      await saveReservations(goal, snapshot, live, clock);
      return done('already_settled', `turn ${identity.effect_id} is already settled; nothing to reserve`, null, live);
    }
    const existing = live.find((r) => r.effect_id === identity.effect_id);
    if (existing !== undefined) {
      await saveReservations(goal, snapshot, live, clock);
      return done(
        'already_reserved',
        `turn ${identity.effect_id} already holds a reservation until ${existing.expires_at}`,
        existing,
        live,
      );
    }
    // On a goal the Python LoopX also works on, a delivery it will spend for (it holds no reservation) counts as held.
    const mixed = originalFootprint(goal) !== null;
    const pending = mixed ? await pendingSpends(goal, clock, live, identity.agent_id) : 0;
    const held = reservedTotals(live);
    const heldWithPending = { ...held, slots: held.slots + pending };
    const {
      estimate: wanted,
      basis,
      problem,
    } = input.estimateMissing === true
      ? admissionProblem(goal, ledger, heldWithPending, estimate, slots)
      : { estimate, basis: undefined, problem: capacityProblem(goal, ledger, heldWithPending, slots, estimate) };
    if (problem !== null) {
      await saveReservations(goal, snapshot, live, clock);
      const note = pending > 0 ? ` (${pending} of the reserved are deliveries whose spend is pending)` : '';
      return done('refused', `quota refused: ${problem}${note}`, null, live);
    }
    const now = clock.now();
    const reservation: Reservation = {
      effect_id: identity.effect_id,
      settlement_identity: identity,
      slots,
      estimate: wanted,
      ...(basis !== undefined && Object.keys(basis).length > 0 ? { estimate_basis: basis } : {}),
      reserved_at: formatLocalIsoSeconds(now),
      expires_at: formatLocalIsoSeconds(new Date(now.getTime() + ttl * 60_000)),
      holder_pid: process.pid,
    };
    // The hold makes the slot visible to the Python LoopX, which takes no lock of ours: it is written first,
    // then the count is read again. A spend of the original that read the count before the hold was written
    // pays for a delivery already in the index (its spend needs one), so the second read sees that delivery
    // (or its spend) and this turn backs off; a spend that reads after the hold sees the hold.
    const recheck = mixed ? await holdAndRecheck(goal, clock, identity, slots, input.lock, reservation, live) : null;
    if (recheck !== null && recheck.committed > goal.config.slots.allowed_slots) {
      await releaseHold(goal, clock, reservation);
      await saveReservations(goal, snapshot, live, clock);
      return done(
        'refused',
        `quota refused: the original LoopX took the slot meanwhile (${recheck.spent} spent + ${held.slots} reserved + ${recheck.pending} pending + ${slots} requested exceeds the ${goal.config.slots.allowed_slots} allowed slots)`,
        null,
        live,
      );
    }
    const kept = [...live, reservation];
    await saveReservations(goal, snapshot, kept, clock);
    return done(
      'reserved',
      `reserved ${slots} slot(s) for turn ${identity.effect_id} until ${reservation.expires_at}`,
      reservation,
      kept,
    );
  });
}

// ---------------------------------------------------------------------------------------------
// Settle

export const SPEND_SOURCES = ['heartbeat', 'controller', 'adapter', 'visible-goal'] as const;
export type SpendSource = (typeof SPEND_SOURCES)[number];

/** The decision the spend settles, as recorded in `quota_event.before`/`after`. */
export interface DecisionSnapshot {
  should_run: boolean;
  state: string;
  effective_action: string;
}

export interface SettleInput {
  identity: SettlementIdentity;
  /** Default 1; a reservation's own slots win. */
  slots?: number;
  usage?: TurnUsage;
  /**
   * The agent reported no usage (`--usage-unknown`): the budgets count the turn's reserved estimate,
   * else the estimate admission would reserve now, marked estimated (never 0).
   */
  usageUnknown?: boolean;
  source?: SpendSource;
  /** The next action of the accounted delivery (the record's `recommended_action`). */
  recommendedAction?: string;
  /** The accountable delivery run this spend pays for. */
  deliveryRun?: { generated_at: string; classification: string } | null;
  decision?: DecisionSnapshot;
  /** Compute everything, write nothing. */
  dryRun?: boolean;
  lock?: QuotaLockOptions;
}

export interface SettleResult {
  status: 'settled' | 'replayed' | 'refused' | 'preview';
  ok: boolean;
  appended: boolean;
  idempotent_replay: boolean;
  /**
   * How the slot was admitted: through a live reservation, directly at settle time, or not at all
   * (`over_limit`: the limit was reached, but the delivery it pays for is recorded, so its usage is
   * recorded too, marked `over_limit`; the goal is then throttled).
   */
  admission: 'reservation' | 'direct' | 'over_limit' | null;
  reason: string;
  effect_id: string;
  record: Record<string, unknown> | null;
  row: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
  reclaimed: Reservation[];
}

const DEFAULT_DECISION: DecisionSnapshot = { should_run: true, state: 'eligible', effective_action: 'normal_run' };

function buildSpendRecord(
  goal: QuotaGoal,
  identity: SettlementIdentity,
  slots: number,
  ledger: QuotaLedger,
  input: SettleInput,
  reservation: Reservation | null,
): { record: Record<string, unknown>; indexFields: Record<string, unknown> } {
  const decision = input.decision ?? DEFAULT_DECISION;
  const before = { ...decision, spent_slots: ledger.spent_slots, allowed_slots: goal.config.slots.allowed_slots };
  const after = { ...before, spent_slots: before.spent_slots + slots };
  const reasonSummary =
    decision.state === 'eligible'
      ? `${slots} automatic agent slot(s) completed under an eligible quota guard`
      : `${slots} automatic agent slot(s) settled for admitted work (quota state ${decision.state})`;
  const quotaEvent: Record<string, unknown> = {
    event_type: QUOTA_SLOT_SPENT,
    source: input.source ?? 'heartbeat',
    slots,
    todo_id: identity.todo_id ?? null,
    turn_instance_id: identity.turn_instance_id,
    settlement_identity: identity,
    reason_summary: reasonSummary,
  };
  if (input.deliveryRun) {
    quotaEvent['delivery_run_generated_at'] = input.deliveryRun.generated_at;
    quotaEvent['delivery_run_classification'] = input.deliveryRun.classification;
  }
  quotaEvent['before'] = before;
  quotaEvent['after'] = after;
  const record: Record<string, unknown> = {
    classification: QUOTA_SLOT_SPENT,
    recommended_action: input.recommendedAction ?? '',
    health_check: `quota should-run ${decision.state}; quota slot spend event public-safe`,
    agent_id: identity.agent_id,
    turn_instance_id: identity.turn_instance_id,
  };
  if (identity.todo_id !== undefined) record['todo_id'] = identity.todo_id;
  if (identity.replan_obligation_id !== undefined) record['replan_obligation_id'] = identity.replan_obligation_id;
  record['settlement_identity'] = identity;
  record['quota_event'] = quotaEvent;
  // Our additions; the original's fields above are unchanged.
  record['slots'] = slots;
  if (input.usage !== undefined) record['usage'] = input.usage;
  if (reservation !== null)
    record['reservation'] = { reserved_at: reservation.reserved_at, expires_at: reservation.expires_at };
  const indexFields: Record<string, unknown> = {
    turn_instance_id: identity.turn_instance_id,
    settlement_identity: identity,
    slots,
  };
  if (identity.replan_obligation_id !== undefined) indexFields['replan_obligation_id'] = identity.replan_obligation_id;
  if (input.usage !== undefined) indexFields['usage'] = input.usage;
  return { record, indexFields };
}

function spendMarkdown(
  goal: QuotaGoal,
  identity: SettlementIdentity,
  slots: number,
  ledger: QuotaLedger,
  usage: TurnUsage | undefined,
): string {
  const binding =
    identity.todo_id ??
    (identity.replan_obligation_id !== undefined ? `replan ${identity.replan_obligation_id}` : '(unbound)');
  const lines = [
    `# ${goal.goalId} — ${QUOTA_SLOT_SPENT}`,
    '',
    `- agent: ${identity.agent_id}, todo: ${binding}, turn: ${identity.turn_instance_id}`,
    `- slots: ${slots} (${ledger.spent_slots} → ${ledger.spent_slots + slots} of ${goal.config.slots.allowed_slots})`,
  ];
  if (usage !== undefined) {
    const parts = [
      usage.tokens !== undefined ? `${usage.tokens} tokens` : null,
      usage.cost_usd !== undefined ? `${usage.cost_usd} USD` : null,
      usage.minutes !== undefined ? `${usage.minutes} min` : null,
    ].filter((p) => p !== null);
    lines.push(
      `- usage: ${parts.length > 0 ? parts.join(', ') : 'none reported'}${usage.estimated ? ' (estimated)' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

async function settleWith(
  goal: QuotaGoal,
  clock: Clock,
  input: SettleInput,
  snapshot: QuotaSnapshot,
  write: boolean,
): Promise<SettleResult> {
  const identity = SettlementIdentitySchema.parse(input.identity);
  const { ledger } = snapshot;
  const reservation = snapshot.live.find((r) => r.effect_id === identity.effect_id) ?? null;
  const others = snapshot.live.filter((r) => r.effect_id !== identity.effect_id);
  const base = { effect_id: identity.effect_id, reclaimed: snapshot.expired };
  const result = (
    fields: Omit<SettleResult, 'effect_id' | 'reclaimed' | 'quota'>,
    kept: Reservation[],
    spentAfter = ledger.spent_slots,
  ): SettleResult => ({
    ...fields,
    ...base,
    quota: counts(goal, { ...ledger, spent_slots: spentAfter }, kept),
  });

  if (ledger.settled_effect_ids.has(identity.effect_id)) {
    if (write) await saveReservations(goal, snapshot, others, clock);
    return result(
      {
        status: 'replayed',
        ok: true,
        appended: false,
        idempotent_replay: true,
        admission: null,
        reason: `turn ${identity.effect_id} is already settled; replay wrote nothing`,
        record: null,
        row: null,
        json_file: null,
      },
      others,
    );
  }
  const slots = reservation?.slots ?? input.slots ?? 1;
  if (!Number.isInteger(slots) || slots < 1)
    throw new LoopxError('quota_slots_invalid', `slots must be a whole number of at least 1, got ${slots}`, { slots });
  if (input.usageUnknown === true && input.usage === undefined) {
    // Conservative: what the turn held, else what admitting it now would hold.
    const held = reservation?.estimate ?? estimateTurnUsage(goal, ledger, reservedTotals(others), {}).estimate;
    input = { ...input, usage: { ...held, estimated: true } };
  }
  let admission: SettleResult['admission'] = 'reservation';
  let overLimit: string | null = null;
  if (reservation === null) {
    // No live reservation (never reserved, or it expired): admit now, within the limit.
    admission = 'direct';
    const expired =
      snapshot.expired.some((r) => r.effect_id === identity.effect_id) ||
      (snapshot.file.reclaimed ?? []).some((r) => r.effect_id === identity.effect_id);
    const problem = capacityProblem(goal, ledger, reservedTotals(others), slots, input.usage ?? {});
    if (problem !== null && input.deliveryRun) {
      // The work happened and its delivery is recorded: refusing the spend would hide its cost.
      admission = 'over_limit';
      overLimit = problem;
    } else if (problem !== null) {
      if (write) await saveReservations(goal, snapshot, others, clock);
      const why = expired ? `the reservation of turn ${identity.effect_id} expired and ${problem}` : problem;
      return result(
        {
          status: 'refused',
          ok: false,
          appended: false,
          idempotent_replay: false,
          admission: null,
          reason: `quota refused: ${why}`,
          record: null,
          row: null,
          json_file: null,
        },
        others,
      );
    }
  }
  const { record, indexFields } = buildSpendRecord(goal, identity, slots, ledger, input, reservation);
  if (overLimit !== null) {
    record['over_limit'] = { reason: overLimit };
    indexFields['over_limit'] = true;
  }
  const appendOptions = {
    runtimeRoot: goal.runtimeRoot,
    goalId: goal.goalId,
    record,
    markdown: spendMarkdown(goal, identity, slots, ledger, input.usage),
    suffix: 'quota-slot-spent',
    indexFields,
    projectRoot: goal.projectRoot,
    clock,
    lock: { agentId: identity.agent_id, operation: 'quota_spend', ...lockTimeouts(input.lock) },
    dryRun: !write,
  };
  const appended: AppendRunResult = await appendRun(appendOptions);
  // Only after the spend is durable: a crash before this line leaves a reservation whose identity is spent, which
  // the next operation drops (releasing its hold). The hold is released after the spend, so the original's count
  // never dips below the truth in between.
  if (write) await saveReservations(goal, snapshot, others, clock, reservation === null ? [] : [reservation]);
  return result(
    {
      status: write ? 'settled' : 'preview',
      ok: true,
      appended: appended.appended,
      idempotent_replay: false,
      admission,
      reason:
        overLimit !== null
          ? `${write ? 'recorded' : 'would record'} ${slots} slot(s) for turn ${identity.effect_id} over the limit (${overLimit}): its delivery is recorded, so its usage is too; the goal is throttled`
          : write
            ? `settled ${slots} slot(s) for turn ${identity.effect_id}`
            : `would settle ${slots} slot(s) for turn ${identity.effect_id}`,
      record: { generated_at: appended.row.generated_at, goal_id: goal.goalId, ...record },
      row: appended.row,
      json_file: appended.json_file,
    },
    others,
    ledger.spent_slots + slots,
  );
}

function lockTimeouts(lock: QuotaLockOptions | undefined): { timeoutMs?: number; pollMs?: number } {
  const out: { timeoutMs?: number; pollMs?: number } = {};
  if (lock?.timeoutMs !== undefined) out.timeoutMs = lock.timeoutMs;
  if (lock?.pollMs !== undefined) out.pollMs = lock.pollMs;
  return out;
}

/**
 * Turns the turn's reservation into exactly one `quota_slot_spent` record. Idempotent per
 * settlement identity: a replay writes nothing. Without a live reservation the slot is admitted
 * now, and refused when it would exceed the limit.
 */
export async function settleReservation(goal: QuotaGoal, clock: Clock, input: SettleInput): Promise<SettleResult> {
  if (input.dryRun === true) return settleWith(goal, clock, input, await takeSnapshot(goal, clock), false);
  return underQuotaLock(goal, clock, 'quota_settle', input.lock, async () =>
    settleWith(goal, clock, input, await takeSnapshot(goal, clock), true),
  );
}

// ---------------------------------------------------------------------------------------------
// Void and reclaim

export interface VoidReservationResult {
  status: 'voided' | 'not_found' | 'already_settled';
  reservation: Reservation | null;
  quota: QuotaCounts;
  reclaimed: Reservation[];
}

/** Releases a turn's reservation without spending (the turn failed or stopped). */
export async function voidReservation(
  goal: QuotaGoal,
  clock: Clock,
  input: { effectId: string; lock?: QuotaLockOptions },
): Promise<VoidReservationResult> {
  return underQuotaLock(goal, clock, 'quota_void_reservation', input.lock, async () => {
    const snapshot = await takeSnapshot(goal, clock);
    const reservation = snapshot.live.find((r) => r.effect_id === input.effectId) ?? null;
    const kept = snapshot.live.filter((r) => r.effect_id !== input.effectId);
    await saveReservations(goal, snapshot, kept, clock, reservation === null ? [] : [reservation]);
    const status =
      reservation !== null
        ? 'voided'
        : snapshot.ledger.settled_effect_ids.has(input.effectId)
          ? 'already_settled'
          : 'not_found';
    return { status, reservation, quota: counts(goal, snapshot.ledger, kept), reclaimed: snapshot.expired };
  });
}

/** Releases expired reservations (and ones already spent); returns the expired ones. */
export async function reclaimExpiredReservations(
  goal: QuotaGoal,
  clock: Clock,
  lock?: QuotaLockOptions,
): Promise<Reservation[]> {
  return underQuotaLock(goal, clock, 'quota_reclaim', lock, async () => {
    const snapshot = await takeSnapshot(goal, clock);
    await saveReservations(goal, snapshot, snapshot.live, clock);
    return snapshot.expired;
  });
}

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

// ---------------------------------------------------------------------------------------------
// Void a spend (compensating record)

export interface VoidSpendInput {
  /** The spend to cancel: by settlement identity, or by its `generated_at`. */
  effectId?: string;
  generatedAt?: string;
  agentId?: string;
  reason: string;
  dryRun?: boolean;
  lock?: QuotaLockOptions;
}

export interface VoidSpendResult {
  ok: boolean;
  appended: boolean;
  reason: string;
  voided: { generated_at: string; effect_id: string | null; slots: number } | null;
  record: Record<string, unknown> | null;
  json_file: string | null;
  quota: QuotaCounts;
}

/**
 * Appends a `quota_slot_voided` record that cancels one spend (the spend itself stays: voids never
 * delete). Refuses when the spend cannot be found or is already fully voided.
 */
export async function voidSpend(goal: QuotaGoal, clock: Clock, input: VoidSpendInput): Promise<VoidSpendResult> {
  const run = async (write: boolean): Promise<VoidSpendResult> => {
    const snapshot = await takeSnapshot(goal, clock);
    const { ledger } = snapshot;
    const targetTime = input.generatedAt === undefined ? null : parseIsoInstant(input.generatedAt);
    if (input.generatedAt !== undefined && targetTime === null) {
      throw new LoopxError(
        'usage',
        `--void-generated-at must be an ISO-8601 time such as 2026-01-01T10:00:00+08:00, got ${JSON.stringify(input.generatedAt)}`,
      );
    }
    const target = ledger.spends.find(
      (s) =>
        !s.duplicate &&
        s.voided_slots < s.slots &&
        (input.effectId !== undefined ? s.effect_id === input.effectId : s.time === targetTime),
    );
    const quota = counts(goal, ledger, snapshot.live);
    if (target === undefined) {
      return {
        ok: false,
        appended: false,
        reason: `no unvoided ${QUOTA_SLOT_SPENT} record matches ${input.effectId ?? input.generatedAt ?? '(nothing given)'}`,
        voided: null,
        record: null,
        json_file: null,
        quota,
      };
    }
    const slots = target.slots - target.voided_slots;
    const record: Record<string, unknown> = {
      classification: QUOTA_SLOT_VOIDED,
      recommended_action: '',
      health_check: 'quota slot void event public-safe',
      agent_id: input.agentId ?? target.agent_id,
      quota_event: {
        event_type: QUOTA_SLOT_VOIDED,
        slots,
        voided_run_generated_at: target.generated_at,
        voided_effect_id: target.effect_id,
        reason_summary: input.reason,
        before: { spent_slots: ledger.spent_slots },
        after: { spent_slots: target.in_window ? ledger.spent_slots - slots : ledger.spent_slots },
      },
    };
    if (target.todo_id !== null) record['todo_id'] = target.todo_id;
    const indexFields: Record<string, unknown> = { voided_run_generated_at: target.generated_at, slots };
    if (target.effect_id !== null) indexFields['voided_effect_id'] = target.effect_id;
    const appended = await appendRun({
      runtimeRoot: goal.runtimeRoot,
      goalId: goal.goalId,
      record,
      indexFields,
      projectRoot: goal.projectRoot,
      clock,
      suffix: 'quota-slot-voided',
      markdown: `# ${goal.goalId} — ${QUOTA_SLOT_VOIDED}\n\n- voids the spend of ${target.generated_at}${target.effect_id === null ? '' : ` (${target.effect_id})`}: ${slots} slot(s)\n- reason: ${input.reason}\n`,
      lock: { operation: 'quota_void', ...lockTimeouts(input.lock) },
      dryRun: !write,
    });
    return {
      ok: true,
      appended: appended.appended,
      reason: write
        ? `voided ${slots} slot(s) of the spend at ${target.generated_at}`
        : `would void ${slots} slot(s) of the spend at ${target.generated_at}`,
      voided: { generated_at: target.generated_at, effect_id: target.effect_id, slots },
      record: { generated_at: appended.row.generated_at, goal_id: goal.goalId, ...record },
      json_file: appended.json_file,
      quota:
        write && target.in_window
          ? counts(goal, { ...ledger, spent_slots: ledger.spent_slots - slots }, snapshot.live)
          : quota,
    };
  };
  if (input.dryRun === true) return run(false);
  return underQuotaLock(goal, clock, 'quota_void', input.lock, async () => run(true));
}
