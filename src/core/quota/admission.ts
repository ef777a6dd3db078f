import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { formatLocalIsoSeconds } from '../runtime/time';
import { agentProfileForGoal } from '../registry/agentIds';
import { BUDGET_FIELDS } from './config';
import type { GoalRef } from '../registry/goalRef';
import { quotaConfigOf, type QuotaRefKeys } from './goal';
import { SettlementIdentitySchema, type SettlementIdentity } from './identity';
import type { QuotaLedger } from './ledger';
import { computeQuotaStatus, exhaustedBudget, type GoalFacts, type ReservedTotals } from './state';
import {
  appendHold,
  type QuotaCounts,
  pendingSpends,
  quotaCounts,
  releaseHold,
  reservedTotals,
  saveReservations,
  takeSnapshot,
  underQuotaLock,
  originalFootprint,
  DEFAULT_RESERVATION_TTL_MINUTES,
  UsageEstimateSchema,
  type QuotaLockOptions,
  type Reservation,
  type UsageEstimate,
} from './reservations';

/** Admission (docs/quota.md): the one rule whether a turn fits, the usage estimate, and `reserveTurn`. The store is `reservations.ts`. */

/** Writes the reservation's hold, then counts again what every writer holds (see reserveTurn). */
async function holdAndRecheck(
  goal: Pick<GoalRef, QuotaRefKeys>,
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
/** Quota status facts for admission: the goal is the agents' (`codex`) and healthy. */
const ADMISSION_FACTS: GoalFacts = {
  stopped: false,
  health: { ok: true, reason: '' },
  waitingOn: 'codex',
  focusMarker: null,
};

/** Why `slots` more (and `estimate`) would not fit, or null when they fit. */
export function capacityProblem(
  goal: Pick<GoalRef, QuotaRefKeys>,
  ledger: QuotaLedger,
  held: ReservedTotals,
  slots: number,
  estimate: UsageEstimate,
): string | null {
  const config = quotaConfigOf(goal);
  const allowed = config.slots.allowed_slots;
  const committed = ledger.spent_slots + held.slots;
  if (config.slots.compute <= 0) return 'the goal has 0 compute quota (paused)';
  if (committed + slots > allowed) {
    return `${ledger.spent_slots} spent + ${held.slots} reserved + ${slots} requested exceeds the ${allowed} allowed slots in the last ${config.slots.window_hours} h`;
  }
  const status = computeQuotaStatus(config, ledger, held, ADMISSION_FACTS);
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
  goal: Pick<GoalRef, QuotaRefKeys>,
  ledger: QuotaLedger,
  held: ReservedTotals,
  given: UsageEstimate,
): { estimate: UsageEstimate; basis: Partial<Record<keyof typeof BUDGET_USAGE, EstimateBasis>> } {
  const estimate: UsageEstimate = { ...given };
  const basis: Partial<Record<keyof typeof BUDGET_USAGE, EstimateBasis>> = {};
  const budgets = quotaConfigOf(goal).budgets;
  for (const field of BUDGET_FIELDS) {
    const key = BUDGET_USAGE[field];
    const limit = budgets[field];
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
export function profileEstimate(goal: Pick<GoalRef, QuotaRefKeys>, agentId: string | null): UsageEstimate {
  if (agentId === null) return {};
  const executor = agentProfileForGoal(goal.rawEntry, agentId)?.['executor'];
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
  goal: Pick<GoalRef, QuotaRefKeys>,
  ledger: QuotaLedger,
  held: ReservedTotals,
  given: UsageEstimate,
  slots = 1,
): { problem: string | null; estimate: UsageEstimate; basis: ReturnType<typeof estimateTurnUsage>['basis'] } {
  const { estimate, basis } = estimateTurnUsage(goal, ledger, held, given);
  return { problem: capacityProblem(goal, ledger, held, slots, estimate), estimate, basis };
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
export async function reserveTurn(
  goal: Pick<GoalRef, QuotaRefKeys>,
  clock: Clock,
  input: ReserveTurnInput,
): Promise<ReserveTurnResult> {
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
      quota: quotaCounts(goal, ledger, kept),
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
    const allowed = quotaConfigOf(goal).slots.allowed_slots;
    if (recheck !== null && recheck.committed > allowed) {
      await releaseHold(goal, clock, reservation);
      await saveReservations(goal, snapshot, live, clock);
      return done(
        'refused',
        `quota refused: the original LoopX took the slot meanwhile (${recheck.spent} spent + ${held.slots} reserved + ${recheck.pending} pending + ${slots} requested exceeds the ${allowed} allowed slots)`,
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
