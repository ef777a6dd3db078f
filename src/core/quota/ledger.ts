import * as path from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock';
import { quotaFileIo } from './files';
import { parseIsoInstant } from '../isoTime';
import { isRecord } from '../registry/schema';
import { latestStatusRun, readGoalRuns, type RunIndexEntry, type RunIndexRead } from '../runtime/runIndex';

/**
 * The spend ledger of a goal (docs/quota.md), recomputed from the run index every time: the registry's
 * `spent_slots` is never trusted. A `quota_slot_spent` row counts in the rolling window
 * `[now − window_hours, now]`; a `quota_slot_voided` row cancels (up to the slots of) the spend it
 * names; two spend rows with the same settlement identity count once, whoever wrote them (the
 * Python LoopX or us). Rows without a parsable time are ignored. Nothing is ever deleted.
 */

export const QUOTA_SLOT_SPENT = 'quota_slot_spent';
export const QUOTA_SLOT_VOIDED = 'quota_slot_voided';
/**
 * A failed turn's run record (and index row) carries what the agent spent before it failed under
 * this field: counted against the usage budgets (tokens, cost, minutes), never as a slot.
 */
export const FAILED_TURN_USAGE_FIELD = 'failed_turn_usage';

/**
 * A row of a reservation hold (docs/quota.md#holds-the-original-counts): a `quota_slot_spent` row written when a
 * turn is admitted, so the Python LoopX (which reads no reservations file) counts the held slot, and the
 * `quota_slot_voided` row that releases it when the turn settles, fails or expires. Our ledger counts the
 * reservation instead, so it skips both.
 */
export const RESERVATION_HOLD_FIELD = 'reservation_hold';

export function isReservationHoldRow(row: { readonly [key: string]: unknown }): boolean {
  return row[RESERVATION_HOLD_FIELD] === true;
}

/** What one turn consumed, as the agent or host reported it; `estimated` marks guesses (e.g. chars/4). */
export const TurnUsageSchema = z.object({
  tokens: z.number().int().min(0).optional(),
  cost_usd: z.number().min(0).optional(),
  minutes: z.number().min(0).optional(),
  estimated: z.boolean(),
});
export type TurnUsage = z.infer<typeof TurnUsageSchema>;

export interface UsageTotals {
  tokens: number;
  cost_usd: number;
  minutes: number;
  /** True when any summed value was an estimate. */
  estimated: boolean;
}

export interface LedgerSpend {
  generated_at: string;
  time: number;
  slots: number;
  /** Slots cancelled by voids. */
  voided_slots: number;
  effect_id: string | null;
  agent_id: string | null;
  todo_id: string | null;
  turn_instance_id: string | null;
  usage: TurnUsage | null;
  json_path: string | null;
  /** The identity was already spent by an older row: this one counts for nothing. */
  duplicate: boolean;
  in_window: boolean;
}

export interface QuotaLedger {
  window_hours: number;
  window_start: string;
  window_end: string;
  /** Net slots spent in the window: counted spends minus their voids. */
  spent_slots: number;
  voided_slots: number;
  duplicate_spends: number;
  usage: UsageTotals;
  /** Every spend row ever (deduplicated ones flagged), newest first. */
  spends: LedgerSpend[];
  /** Effect ids with a spend row at any time: settling one of them again is a replay. */
  settled_effect_ids: ReadonlySet<string>;
  /** When the oldest counted spend leaves the window (a slot frees), or null. */
  next_slot_frees_at: string | null;
}

export interface LedgerInput {
  rows: readonly RunIndexEntry[];
  /** Relative artifact paths resolve against it (to read `slots` of rows that do not repeat it). */
  projectRoot: string;
  windowHours: number;
  clock: Clock;
}

/** A spend record is a few hundred bytes; a bigger file is not one of ours. */
const ARTIFACT_BYTES = 16 * 1024 * 1024;

const UsageFromFile = TurnUsageSchema.partial({ estimated: true });

function stringField(source: Record<string, unknown>, key: string): string | null {
  const value = source[key];
  return typeof value === 'string' && value !== '' ? value : null;
}

function readDetail(row: RunIndexEntry, projectRoot: string): Record<string, unknown> {
  if (row.json_path === undefined || row.json_path === '') return {};
  try {
    // A row is written by whoever can write the project: its path may name a FIFO or a device.
    const file = path.resolve(projectRoot, row.json_path);
    const parsed: unknown = JSON.parse(
      quotaFileIo(projectRoot, { kind: 'readTextSync', file, read: { maxBytes: ARTIFACT_BYTES } }),
    );
    return isRecord(parsed) ? parsed : {};
  } catch {
    // A missing, torn or refused detail file: the row still counts, with the defaults.
    return {};
  }
}

function positiveInt(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : null;
}

/** The spend's settlement identity: from the row, and only when the row has none from its record. */
function effectIdOf(row: Record<string, unknown>, detail: () => Record<string, unknown>): string | null {
  return identityEffectId(row) ?? identityEffectId(detail());
}

function identityEffectId(source: Record<string, unknown>): string | null {
  const identity = source['settlement_identity'];
  return isRecord(identity) && typeof identity['effect_id'] === 'string' && identity['effect_id'] !== ''
    ? identity['effect_id']
    : null;
}

function usageOf(row: Record<string, unknown>, detail: Record<string, unknown>): TurnUsage | null {
  const raw = row['usage'] ?? detail['usage'];
  if (raw === undefined) return null;
  const parsed = UsageFromFile.safeParse(raw);
  return parsed.success ? { ...parsed.data, estimated: parsed.data.estimated ?? false } : null;
}

/**
 * What the ledger needs from one spend row, independent of the clock: the slots and usage it would
 * count inside the window, already completed from its record. Serializable, so a persistent cache
 * can keep it and the ledger can be recomputed at any time without reading a record again.
 */
export interface SpendFact {
  generated_at: string;
  time: number;
  /** Slots counted while the spend is inside the window. */
  slots: number;
  effect_id: string | null;
  agent_id: string | null;
  todo_id: string | null;
  turn_instance_id: string | null;
  /** Usage counted while the spend is inside the window. */
  usage: TurnUsage | null;
  json_path: string | null;
}

/** A void row: which spend it cancels and by how many slots. */
export interface VoidFact {
  targetTime: number | null;
  targetEffectId: string | null;
  slots: number | null;
}

/** The clock-independent part of a ledger: every spend (newest first) and every void, in row order. */
export interface LedgerFacts {
  spends: SpendFact[];
  voids: VoidFact[];
}

/** Reads what the ledger needs from index rows (newest first, as `readRunIndex` returns them). */
export function ledgerFacts(rows: readonly RunIndexEntry[], projectRoot: string): LedgerFacts {
  const spends: SpendFact[] = [];
  const voids: VoidFact[] = [];
  for (const row of rows) {
    const record = row as Record<string, unknown>;
    if (record[FAILED_TURN_USAGE_FIELD] !== undefined) {
      const time = parseIsoInstant(row.generated_at);
      const usage = usageOf({ usage: record[FAILED_TURN_USAGE_FIELD] }, {});
      const effect = identityEffectId(record);
      if (time === null || usage === null) continue;
      // No slot; its own identity per attempt, so a record written twice counts once.
      spends.push({
        generated_at: row.generated_at ?? '',
        time,
        slots: 0,
        effect_id: effect === null ? null : `${effect}#failed-attempt-${String(record['turn_attempt'] ?? 1)}`,
        agent_id: row.agent_id ?? null,
        todo_id: row.todo_id ?? null,
        turn_instance_id: stringField(record, 'turn_instance_id'),
        usage,
        json_path: row.json_path ?? null,
      });
      continue;
    }
    // Only spends and voids count; their time is read, no other row's.
    if (row.classification !== QUOTA_SLOT_SPENT && row.classification !== QUOTA_SLOT_VOIDED) continue;
    if (isReservationHoldRow(row as Record<string, unknown>)) continue;
    const time = parseIsoInstant(row.generated_at);
    if (time === null) continue;
    let detailCache: Record<string, unknown> | undefined;
    const detail = (): Record<string, unknown> => (detailCache ??= readDetail(row, projectRoot));
    if (row.classification === QUOTA_SLOT_SPENT) {
      // Our spend rows repeat `slots`, and `usage` whenever the record has one, so such a row needs
      // no record read; the original's rows carry neither and are completed from the record.
      const rowSlots = positiveInt(record['slots']);
      spends.push({
        generated_at: row.generated_at ?? '',
        time,
        slots: rowSlots ?? slotsOfDetail(detail()),
        effect_id: effectIdOf(record, detail),
        agent_id: row.agent_id ?? null,
        todo_id: row.todo_id ?? null,
        turn_instance_id: stringField(record, 'turn_instance_id'),
        usage: usageOf(record, record['usage'] === undefined && rowSlots === null ? detail() : {}),
        json_path: row.json_path ?? null,
      });
    } else {
      voids.push(voidEntryOf(record, detail));
    }
  }
  return { spends, voids };
}

/** Builds the ledger from index rows (newest first, as `readRunIndex` returns them). */
export function computeLedger(input: LedgerInput): QuotaLedger {
  return ledgerFromFacts(ledgerFacts(input.rows, input.projectRoot), input.windowHours, input.clock);
}

/** The ledger at the clock's now from facts read earlier (see {@link ledgerFacts}). Pure and cheap. */
export function ledgerFromFacts(facts: LedgerFacts, windowHours: number, clock: Clock): QuotaLedger {
  const now = clock.now().getTime();
  const windowMs = windowHours * 3_600_000;
  const start = now - windowMs;
  // Slots and usage matter only inside the window; older spends count one slot, for their identity alone.
  const spends: LedgerSpend[] = facts.spends.map((fact) => {
    const inWindow = fact.time >= start && fact.time <= now;
    return {
      generated_at: fact.generated_at,
      time: fact.time,
      slots: inWindow ? fact.slots : 1,
      voided_slots: 0,
      effect_id: fact.effect_id,
      agent_id: fact.agent_id,
      todo_id: fact.todo_id,
      turn_instance_id: fact.turn_instance_id,
      usage: inWindow ? fact.usage : null,
      json_path: fact.json_path,
      duplicate: false,
      in_window: inWindow,
    };
  });

  // Oldest first: the first row of an identity is the one that counts.
  const seen = new Set<string>();
  for (let i = spends.length - 1; i >= 0; i--) {
    const spend = spends[i] as LedgerSpend;
    if (spend.effect_id === null) continue;
    if (seen.has(spend.effect_id)) spend.duplicate = true;
    else seen.add(spend.effect_id);
  }
  for (const entry of facts.voids) applyVoid(entry, spends);

  let spent = 0;
  let voided = 0;
  let oldestCounted: number | null = null;
  const usage: UsageTotals = { tokens: 0, cost_usd: 0, minutes: 0, estimated: false };
  for (const spend of spends) {
    if (!spend.in_window || spend.duplicate) continue;
    voided += spend.voided_slots;
    const net = spend.slots - spend.voided_slots;
    // A failed turn's usage (no slot: FAILED_TURN_USAGE_FIELD) counts; a spend voided to nothing does not.
    if (net <= 0 && spend.slots !== 0) continue;
    if (net > 0) {
      spent += net;
      oldestCounted = oldestCounted === null ? spend.time : Math.min(oldestCounted, spend.time);
    }
    if (spend.usage !== null) {
      usage.tokens += spend.usage.tokens ?? 0;
      usage.cost_usd += spend.usage.cost_usd ?? 0;
      usage.minutes += spend.usage.minutes ?? 0;
      usage.estimated ||= spend.usage.estimated;
    }
  }
  usage.cost_usd = Math.round(usage.cost_usd * 1e6) / 1e6;
  return {
    window_hours: windowHours,
    window_start: new Date(start).toISOString(),
    window_end: new Date(now).toISOString(),
    spent_slots: spent,
    voided_slots: voided,
    duplicate_spends: spends.filter((s) => s.duplicate).length,
    usage,
    spends,
    settled_effect_ids: seen,
    next_slot_frees_at: oldestCounted === null ? null : new Date(oldestCounted + windowMs).toISOString(),
  };
}

/**
 * What a ledger computed at one instant holds for a span of later instants: every field but the
 * window's bounds and the per-spend lists depends on the clock only through which spends are inside
 * the window, and that set stays the same from `from` while no spend newer than `from` comes due
 * (`next_in`) and the oldest spend inside has not left (`min_in`). Serializable: the persistent status
 * cache keeps it beside a run index's facts, so a warm `status` gets a goal's ledger without
 * unpacking the facts at all.
 */
export interface LedgerMemo {
  window_hours: number;
  /** The instant (ms) it was computed at: it holds from there on, not before. */
  from: number;
  /** The oldest spend time inside the window then (null: none was). */
  min_in: number | null;
  /** The first spend time after `from` (null: none): it enters the window then. */
  next_in: number | null;
  spent_slots: number;
  voided_slots: number;
  duplicate_spends: number;
  usage: UsageTotals;
  next_slot_frees_at: string | null;
}

/** Whether `memo` holds at `now` for a window of `windowHours`: the same spends are inside the window. */
export function ledgerMemoHolds(memo: LedgerMemo, windowHours: number, now: number): boolean {
  if (memo.window_hours !== windowHours || !(now >= memo.from)) return false;
  // The same comparisons as ledgerFromFacts: a spend is inside when start <= time <= now.
  const start = now - windowHours * 3_600_000;
  if (memo.next_in !== null && memo.next_in <= now) return false;
  return memo.min_in === null || memo.min_in >= start;
}

/** The memo of `ledger`, computed from `facts` at `now` (see {@link LedgerMemo}). */
export function ledgerMemoOf(facts: LedgerFacts, ledger: QuotaLedger, now: number): LedgerMemo {
  const start = now - ledger.window_hours * 3_600_000;
  let minIn: number | null = null;
  let nextIn: number | null = null;
  for (const fact of facts.spends) {
    if (fact.time > now) nextIn = nextIn === null ? fact.time : Math.min(nextIn, fact.time);
    else if (fact.time >= start) minIn = minIn === null ? fact.time : Math.min(minIn, fact.time);
  }
  return {
    window_hours: ledger.window_hours,
    from: now,
    min_in: minIn,
    next_in: nextIn,
    spent_slots: ledger.spent_slots,
    voided_slots: ledger.voided_slots,
    duplicate_spends: ledger.duplicate_spends,
    usage: { ...ledger.usage },
    next_slot_frees_at: ledger.next_slot_frees_at,
  };
}

/**
 * The ledger of `facts` at the clock's now, equal to `ledgerFromFacts`: from `memo` when it holds
 * (the facts are then asked for only if a caller reads `spends` or `settled_effect_ids`), else
 * computed. Returns the memo that holds now (`memo` itself when it held).
 */
export function memoizedLedger(
  facts: () => LedgerFacts,
  windowHours: number,
  clock: Clock,
  memo: LedgerMemo | undefined,
): { ledger: QuotaLedger; memo: LedgerMemo } {
  const now = clock.now().getTime();
  if (memo === undefined || !ledgerMemoHolds(memo, windowHours, now)) {
    const all = facts();
    const ledger = ledgerFromFacts(all, windowHours, clock);
    return { ledger, memo: ledgerMemoOf(all, ledger, now) };
  }
  const windowMs = windowHours * 3_600_000;
  let full: QuotaLedger | undefined;
  const computed = (): QuotaLedger => (full ??= ledgerFromFacts(facts(), windowHours, { now: () => new Date(now) }));
  const ledger: QuotaLedger = {
    window_hours: windowHours,
    window_start: new Date(now - windowMs).toISOString(),
    window_end: new Date(now).toISOString(),
    spent_slots: memo.spent_slots,
    voided_slots: memo.voided_slots,
    duplicate_spends: memo.duplicate_spends,
    usage: { ...memo.usage },
    get spends() {
      return computed().spends;
    },
    get settled_effect_ids() {
      return computed().settled_effect_ids;
    },
    next_slot_frees_at: memo.next_slot_frees_at,
  };
  return { ledger, memo };
}

/** The ledger of a run index's digest at the clock's now; keeps the memo that holds now on the digest. */
export function ledgerOfDigest(digest: IndexDigest, windowHours: number, clock: Clock): QuotaLedger {
  const { ledger, memo } = memoizedLedger(() => digest.facts, windowHours, clock, digest.ledger_memo);
  digest.ledger_memo = memo;
  return ledger;
}

function slotsOfDetail(detail: Record<string, unknown>): number {
  const event = detail['quota_event'];
  return (isRecord(event) ? positiveInt(event['slots']) : null) ?? positiveInt(detail['slots']) ?? 1;
}

function voidEntryOf(row: Record<string, unknown>, detail: () => Record<string, unknown>): VoidFact {
  const pick = (key: string): unknown => {
    if (row[key] !== undefined) return row[key];
    const d = detail();
    const event = d['quota_event'];
    return (isRecord(event) ? event[key] : undefined) ?? d[key];
  };
  const targetTime = pick('voided_run_generated_at');
  const targetEffect = pick('voided_effect_id');
  return {
    targetTime: typeof targetTime === 'string' ? parseIsoInstant(targetTime) : null,
    targetEffectId: typeof targetEffect === 'string' && targetEffect !== '' ? targetEffect : null,
    slots: positiveInt(pick('slots')),
  };
}

/** A void cancels up to the slots of the one spend it names (by identity, else by time). */
function applyVoid(entry: VoidFact, spends: LedgerSpend[]): void {
  const candidates = spends.filter(
    (spend) =>
      !spend.duplicate &&
      spend.voided_slots < spend.slots &&
      (entry.targetEffectId !== null
        ? spend.effect_id === entry.targetEffectId
        : entry.targetTime !== null && spend.time === entry.targetTime),
  );
  const target = candidates[candidates.length - 1];
  if (target === undefined) return;
  const remaining = target.slots - target.voided_slots;
  target.voided_slots += Math.min(entry.slots ?? remaining, remaining);
}

export interface ReadLedgerOptions {
  runtimeRoot: string;
  goalId: string;
  projectRoot: string;
  windowHours: number;
  clock: Clock;
}

/** Reads the goal's run index and computes its ledger. */
export async function readQuotaLedger(
  options: ReadLedgerOptions,
): Promise<{ ledger: QuotaLedger; rows: RunIndexEntry[] }> {
  const index = await readGoalRuns(options.runtimeRoot, options.goalId, {
    projectRoot: options.projectRoot,
    artifactChecks: 0,
  });
  return {
    ledger: computeLedger({
      rows: index.rows,
      projectRoot: options.projectRoot,
      windowHours: options.windowHours,
      clock: options.clock,
    }),
    rows: index.rows,
  };
}

/** What the quota summary needs from a run index, without its rows (kept by the persistent status cache). */
export interface IndexDigest {
  /** May be unpacked on first read (the persistent cache keeps it packed). */
  readonly facts: LedgerFacts;
  /** The ledger last computed from these facts, for the span of instants it holds (see {@link LedgerMemo}). */
  ledger_memo?: LedgerMemo;
  /** The `waiting_on` of the newest status run (null when it has none). */
  latest_waiting_on: unknown;
  /** Whether there is a status run at all. */
  has_latest: boolean;
}

/** The digest of a run index as read (null: the index does not exist). */
export function digestRunIndex(runs: RunIndexRead | null, projectRoot: string): IndexDigest {
  const rows = runs?.rows ?? [];
  const latest = latestStatusRun(rows);
  return {
    facts: ledgerFacts(rows, projectRoot),
    latest_waiting_on: latest === null ? null : ((latest as Record<string, unknown>)['waiting_on'] ?? null),
    has_latest: latest !== null,
  };
}
