import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { runtimeRootOfGoalDir } from '../runtime/layout';
import { SettlementIdentitySchema } from '../quota/identity';
import { UsageEstimateSchema } from '../quota/reservations';
import { HostResultSchema, TURN_KEY_PATTERN, TURN_PHASES, UsageSchema } from '../protocol/contract';
import { turnFileIo } from './files';
import { TurnPlanSchema } from './plan';

/**
 * The turn journal (docs/turns.md#the-journal): one JSON file per turn key under
 * `<runtime>/goals/<goal>/turns/<sha256 hex>.json`, rewritten atomically after every phase while
 * the turn's lock is held. It records each completed phase with what a later process needs to
 * resume it (the plan and host request, the host's result, the validation receipt, the writeback
 * and the spend), so a crash at any point resumes from the last completed phase.
 */

export const TURN_JOURNAL_SCHEMA = 'loopx_turn_journal_v0';
export const TURNS_DIR = 'turns';
/** Markers of the turns in progress (`turns/active/<hex>`), so finding them never reads every old journal. */
export const ACTIVE_DIR = 'active';
export const SESSIONS_DIR = 'turn-sessions';

export const JOURNAL_STATUSES = ['in_progress', 'committed', 'stopped', 'failed'] as const;
export type JournalStatus = (typeof JOURNAL_STATUSES)[number];

export const VALIDATION_STATUSES = [
  'passed',
  'progress',
  'failed',
  'inconclusive',
  'unavailable',
  'not_required',
] as const;
export const RECOVERY_KINDS = ['repair_required', 'replan_required'] as const;
export type RecoveryKind = (typeof RECOVERY_KINDS)[number];

export const ValidationReceiptSchema = z.object({
  status: z.enum(VALIDATION_STATUSES),
  command: z.array(z.string()).nullable(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().nonnegative(),
  /** First bytes of the validator's output, scrubbed. */
  output_excerpt: z.string(),
  /** What a failed validation asks for next (failed, inconclusive, unavailable). */
  recovery_kind: z.enum(RECOVERY_KINDS).nullable(),
  reason: z.string(),
});
export type ValidationReceipt = z.infer<typeof ValidationReceiptSchema>;

const OutcomeUsageSchema = UsageSchema.extend({ source: z.string() });

export const HostExecuteRecordSchema = z.looseObject({
  completed_at: z.string(),
  executor: z.string(),
  exit_code: z.number().int().nullable(),
  duration_ms: z.number().nonnegative(),
  usage: OutcomeUsageSchema.nullable(),
  session_id: z.string().nullable(),
  output_excerpt: z.string(),
  stderr_excerpt: z.string(),
  /** The checked result, so typed_result can complete after a crash between the two phases. */
  result: HostResultSchema,
});
export type HostExecuteRecord = z.infer<typeof HostExecuteRecordSchema>;

export const TypedResultRecordSchema = z.looseObject({ completed_at: z.string(), result: HostResultSchema });

export const WritebackRecordSchema = z.looseObject({
  completed_at: z.string(),
  run_generated_at: z.string(),
  run_classification: z.string(),
  run_json_path: z.string().nullable(),
  todo_transition: z.string(),
  successor_todo_ids: z.array(z.string()),
  gate_todo_id: z.string().nullable(),
  next_action: z.string().nullable(),
});
export type WritebackRecord = z.infer<typeof WritebackRecordSchema>;

export const SpendRecordSchema = z.looseObject({
  completed_at: z.string(),
  status: z.string(),
  appended: z.boolean(),
  effect_id: z.string(),
  spend_generated_at: z.string().nullable(),
  usage: z.looseObject({ estimated: z.boolean() }).nullable(),
});

export const SchedulerRecordSchema = z.looseObject({ completed_at: z.string(), owner: z.string(), status: z.string() });

export const PhaseRecordsSchema = z.looseObject({
  host_execute: HostExecuteRecordSchema.optional(),
  typed_result: TypedResultRecordSchema.optional(),
  validation: ValidationReceiptSchema.extend({ completed_at: z.string() }).optional(),
  durable_writeback: WritebackRecordSchema.optional(),
  quota_spend: SpendRecordSchema.optional(),
  scheduler_apply: SchedulerRecordSchema.optional(),
  scheduler_ack: SchedulerRecordSchema.optional(),
});
export type PhaseRecords = z.infer<typeof PhaseRecordsSchema>;

export const TurnFailureSchema = z.object({
  kind: z.string(),
  reason: z.string(),
  message: z.string(),
  output_excerpt: z.string(),
  problems: z.array(z.string()),
  /** What the agent reported spending before it failed (counted against the budgets), when it ran. */
  usage: OutcomeUsageSchema.nullable().optional(),
  /** The agent's session, so the next turn on the todo can resume it. */
  session_id: z.string().nullable().optional(),
  exit_code: z.number().int().nullable().optional(),
  duration_ms: z.number().nonnegative().optional(),
});
export type TurnFailure = z.infer<typeof TurnFailureSchema>;

export const TurnReceiptSchema = z.object({
  turn_key: z.string(),
  result_kind: z.string(),
  completed_phases: z.array(z.string()),
  failed_phase: z.string().nullable(),
  status: z.string(),
  ok: z.boolean(),
  problems: z.array(z.string()),
});
export type TurnReceipt = z.infer<typeof TurnReceiptSchema>;

export const TurnJournalSchema = z.looseObject({
  schema_version: z.literal(TURN_JOURNAL_SCHEMA),
  turn_key: z.string().regex(TURN_KEY_PATTERN),
  goal_id: z.string(),
  agent_id: z.string(),
  todo_id: z.string().nullable(),
  turn_instance_id: z.string(),
  settlement_identity: SettlementIdentitySchema,
  created_at: z.string(),
  updated_at: z.string(),
  /** How many times the turn was started or resumed. */
  attempts: z.number().int().min(1),
  status: z.enum(JOURNAL_STATUSES),
  plan: TurnPlanSchema,
  reservation: z.object({
    status: z.enum(['none', 'reserved', 'voided', 'settled', 'refused']),
    expires_at: z.string().nullable(),
    /**
     * The budget estimate the turn's latest admission held (kept when it settles or is voided), so
     * a spend above it reads as the agent's overrun of its estimate (docs/quota.md).
     */
    estimate: UsageEstimateSchema.optional(),
  }),
  completed_phases: z.array(z.enum(TURN_PHASES)),
  phases: PhaseRecordsSchema,
  /** State edits of a stop result (a gate for the user's question); stop turns have no writeback phase. */
  stop_writeback: z
    .looseObject({
      gate_todo_id: z.string().nullable(),
      todo_transition: z.string(),
      run_generated_at: z.string().nullable(),
    })
    .nullable(),
  result_kind: z.string().nullable(),
  failed_phase: z.string().nullable(),
  failure: TurnFailureSchema.nullable(),
  receipt: TurnReceiptSchema.nullable(),
  summary: z.string().nullable(),
});
export type TurnJournal = z.infer<typeof TurnJournalSchema>;

export function turnsDir(goalRuntimeDir: string): string {
  return path.join(goalRuntimeDir, TURNS_DIR);
}

/** The hex part of a turn key (`sha256:<hex>`, or the hex alone). */
export function turnKeyHex(turnKey: string): string {
  const key = turnKey.startsWith('sha256:') ? turnKey : `sha256:${turnKey}`;
  if (!TURN_KEY_PATTERN.test(key)) {
    throw new LoopxError(
      'usage',
      `turn key ${JSON.stringify(turnKey)} is not sha256:<64 hex digits>; copy it from \`loopx turn inspect-journal\``,
      { turn_key: turnKey },
    );
  }
  return key.slice('sha256:'.length);
}

export function journalPath(goalRuntimeDir: string, turnKey: string): string {
  return path.join(turnsDir(goalRuntimeDir), `${turnKeyHex(turnKey)}.json`);
}

/** Reads one journal, or null when the turn has none. A journal that does not parse is an error naming the file. */
export async function readJournal(file: string): Promise<TurnJournal | null> {
  let raw: unknown;
  try {
    // turns/<hex>.json: the goal's runtime folder is two up.
    raw = await turnFileIo(path.dirname(path.dirname(file)), { kind: 'readJson', file });
  } catch (error) {
    if (error instanceof LoopxError && error.code === 'file_not_found') return null;
    throw error;
  }
  const parsed = TurnJournalSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LoopxError(
      'turn_journal_invalid',
      `${file}: field ${issue?.path.join('.') || '(root)'} ${issue?.message ?? 'is invalid'}. LoopX leaves the journal untouched; move it aside to start the turn afresh.`,
      { path: file, field: issue?.path.join('.') ?? null },
    );
  }
  return parsed.data;
}

/** Writes the journal atomically; an unfinished turn is marked active first, a finished one unmarked after. */
export async function writeJournal(goalRuntimeDir: string, journal: TurnJournal): Promise<void> {
  const parsed = TurnJournalSchema.parse(journal);
  if (parsed.status === 'in_progress') await syncActiveMarker(goalRuntimeDir, parsed);
  await turnFileIo(goalRuntimeDir, {
    kind: 'writeJson',
    file: journalPath(goalRuntimeDir, journal.turn_key),
    value: parsed,
    within: runtimeRootOfGoalDir(goalRuntimeDir),
  });
  if (parsed.status !== 'in_progress') await syncActiveMarker(goalRuntimeDir, parsed);
}

const JOURNAL_FILE = /^[0-9a-f]{64}\.json$/;

/** Every journal of the goal, oldest first (by creation time, then key). */
export async function listJournals(goalRuntimeDir: string): Promise<TurnJournal[]> {
  const dir = turnsDir(goalRuntimeDir);
  let names: string[];
  try {
    names = await turnFileIo(goalRuntimeDir, { kind: 'list', dir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const journals: TurnJournal[] = [];
  for (const name of names.filter((n) => JOURNAL_FILE.test(n))) {
    const journal = await readJournal(path.join(dir, name));
    if (journal !== null) journals.push(journal);
  }
  return journals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.turn_key.localeCompare(b.turn_key));
}

function activeMarker(goalRuntimeDir: string, turnKey: string): string {
  return path.join(turnsDir(goalRuntimeDir), ACTIVE_DIR, turnKeyHex(turnKey));
}

/** Keeps the active marker in step with the journal's status (called after every journal write). */
export async function syncActiveMarker(goalRuntimeDir: string, journal: TurnJournal): Promise<void> {
  const marker = activeMarker(goalRuntimeDir, journal.turn_key);
  if (journal.status !== 'in_progress') {
    await turnFileIo(goalRuntimeDir, { kind: 'remove', file: marker });
    return;
  }
  if (await turnFileIo(goalRuntimeDir, { kind: 'exists', file: marker })) return;
  await turnFileIo(goalRuntimeDir, { kind: 'mkdir', dir: path.dirname(marker) });
  // A hint, not a record (the journal is): a plain write (checked inside the runtime root) is enough.
  await turnFileIo(goalRuntimeDir, {
    kind: 'writeText',
    file: marker,
    data: `${JSON.stringify({ turn_key: journal.turn_key, agent_id: journal.agent_id, todo_id: journal.todo_id })}\n`,
  });
}

/**
 * How long a marker whose journal is missing or finished is left alone. A new turn writes its
 * marker before its journal, so a reader between the two writes sees a marker with no journal yet;
 * removing it then would hide that turn from the next admission (two agents on one todo).
 */
const STALE_MARKER_MS = 10 * 60_000;

/**
 * The goal's unfinished journals, oldest first, found through the active markers. A marker whose
 * journal is finished or missing is skipped, and removed once it is older than `STALE_MARKER_MS`
 * (a crash between the two writes).
 */
export async function listActiveJournals(goalRuntimeDir: string, now = Date.now()): Promise<TurnJournal[]> {
  const dir = path.join(turnsDir(goalRuntimeDir), ACTIVE_DIR);
  let names: string[];
  try {
    names = await turnFileIo(goalRuntimeDir, { kind: 'list', dir });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  const journals: TurnJournal[] = [];
  for (const name of names.filter((n) => /^[0-9a-f]{64}$/.test(n))) {
    const journal = await readJournal(path.join(turnsDir(goalRuntimeDir), `${name}.json`));
    if (journal !== null && journal.status === 'in_progress') journals.push(journal);
    else await removeIfStale(goalRuntimeDir, path.join(dir, name), now);
  }
  return journals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.turn_key.localeCompare(b.turn_key));
}

async function removeIfStale(goalRuntimeDir: string, marker: string, now: number): Promise<void> {
  try {
    const mtimeMs = await turnFileIo(goalRuntimeDir, { kind: 'mtimeMs', file: marker });
    if (now - mtimeMs > STALE_MARKER_MS) await turnFileIo(goalRuntimeDir, { kind: 'remove', file: marker });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
