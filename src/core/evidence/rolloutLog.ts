import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { LoopxError } from '../errors';
import { assertInside, mkdirInside } from '../fs/contain';
import { withFileLock, type LockOptions } from '../fs/fileLock';
import { readFileBytesSafe } from '../fs/safeRead';
import { redactCredentials } from '../privacy/scrub';
import { goalRuntimeDir, runtimeRootOfGoalDir } from '../runtime/layout';

/**
 * The rollout event log (docs/turns.md#the-rollout-event-log): `<runtime>/goals/<goal>/rollout-event-log.jsonl`,
 * one `loopx_rollout_event_v0` object per line, in the original's schema, so logs written by the
 * original LoopX and by us read the same way. Appends go under our file lock (one writer at a time,
 * a torn final line is closed before the next row); the reader is tolerant: unknown fields are
 * kept, a malformed line is reported and skipped, and the file is never rewritten.
 */

export const ROLLOUT_EVENT_SCHEMA = 'loopx_rollout_event_v0';
export const ROLLOUT_EVENT_LOG_FILE = 'rollout-event-log.jsonl';

/** The kinds the original accepts; a row of another kind written by it is still read. */
export const ROLLOUT_EVENT_KINDS = [
  'benchmark_launch',
  'benchmark_status',
  'codex_session_observed',
  'compact_blocker',
  'compact_case_result',
  'failure_attribution',
  'pr_merge',
  'quota_monitor_poll',
  'quota_should_run',
  'quota_spend',
  'quota_void',
  'refresh_state',
  'todo_add',
  'todo_archive_completed',
  'todo_claim',
  'todo_complete',
  'todo_supersede',
  'todo_update',
  'validation',
] as const;
export type RolloutEventKind = (typeof ROLLOUT_EVENT_KINDS)[number];

/** One row as read: the fields we use are typed, everything else is kept as written. */
export const RolloutEventSchema = z.looseObject({
  schema_version: z.literal(ROLLOUT_EVENT_SCHEMA),
  goal_id: z.string(),
  event_kind: z.string(),
  event_id: z.string().optional(),
  recorded_at: z.string().optional(),
  agent_id: z.string().optional(),
  todo_id: z.string().optional(),
  run_id: z.string().optional(),
  status: z.string().optional(),
  classification: z.string().optional(),
  delivery_outcome: z.string().optional(),
  summary: z.string().optional(),
  details: z.record(z.string(), z.unknown()).optional(),
});
export type RolloutEvent = z.infer<typeof RolloutEventSchema>;

/** What the original records in `boundary`: nothing raw ever goes into the log. */
const BOUNDARY = {
  raw_task_text_recorded: false,
  raw_logs_recorded: false,
  raw_trajectory_recorded: false,
  raw_session_transcript_recorded: false,
  credential_values_recorded: false,
  absolute_paths_recorded: false,
};

/** Text markers the public-safety filter refuses (absolute home/root paths, credential-like words). */
const FORBIDDEN_TEXT_MARKERS = [
  '/users/',
  '/root/',
  '/home/',
  '/private/',
  '.local/private',
  'authorization:',
  'api_key',
  'apikey',
  'password',
  'secret=',
  'token=',
];
/** Detail keys that name raw material and may not be recorded. */
const RAW_KEY_HINTS = [
  'credential',
  'local_path',
  'log',
  'path',
  'raw',
  'secret',
  'stderr',
  'stdout',
  'task_text',
  'token',
  'trace',
  'trajectory',
  'transcript',
];

export interface RolloutEventInput {
  goalId: string;
  eventKind: RolloutEventKind;
  recordedAt: string;
  agentId?: string | null | undefined;
  todoId?: string | null | undefined;
  /** The turn instance id of a heartbeat (the original's `run_id`). */
  runId?: string | null | undefined;
  status?: string | null | undefined;
  classification?: string | null | undefined;
  deliveryOutcome?: string | null | undefined;
  summary?: string | null | undefined;
  /** Flat public-safe scalars: the settlement binding lives here. */
  details?: Record<string, string | number | boolean | null | undefined>;
}

function compactText(value: string | null | undefined, limit: number, field: string): string | null {
  if (value === null || value === undefined) return null;
  const text = value.split(/\s+/).filter(Boolean).join(' ');
  if (text === '') return null;
  const lowered = text.toLowerCase();
  for (const marker of FORBIDDEN_TEXT_MARKERS) {
    if (lowered.includes(marker)) {
      throw new LoopxError(
        'rollout_event_not_public_safe',
        `rollout event field ${field} contains private or credential-like material (${JSON.stringify(marker)}); record an opaque id instead`,
        { field },
      );
    }
  }
  return text.length <= limit ? text : `${text.slice(0, Math.max(0, limit - 1)).trimEnd()}...`;
}

/**
 * Python's `json.dumps(value, sort_keys=True, ensure_ascii=True)` (separators `, ` and `: `): the
 * bytes the original hashes into `event_id`, so an event id is the same whoever wrote the row.
 */
export function pythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : pythonFloat(value);
  if (typeof value === 'string') return asciiString(value);
  if (Array.isArray(value)) return `[${value.map(pythonJson).join(', ')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${asciiString(k)}: ${pythonJson(record[k])}`).join(', ')}}`;
}

function pythonFloat(value: number): string {
  if (!Number.isFinite(value)) return Number.isNaN(value) ? 'NaN' : value > 0 ? 'Infinity' : '-Infinity';
  const text = String(value);
  return /[.e]/.test(text) ? text.replace(/e([+-])(\d)$/, 'e$10$2') : `${text}.0`;
}

function asciiString(text: string): string {
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * `event_id`: the first 16 hex digits of sha256 over the row without `event_id`. `recorded_at` is part of
 * it, as in the original since its "rollout event occurrence identity" fix: two observations of the same
 * thing at different times are two events.
 */
export function rolloutEventId(event: Record<string, unknown>): string {
  const stable: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) if (key !== 'event_id') stable[key] = value;
  return createHash('sha256').update(pythonJson(stable), 'utf8').digest('hex').slice(0, 16);
}

/** Builds one public-safe event row in the original's shape (refuses private material). */
export function buildRolloutEvent(input: RolloutEventInput): RolloutEvent {
  const goalId = input.goalId.trim();
  if (goalId === '') throw new LoopxError('usage', 'a rollout event needs a goal id');
  const row: Record<string, unknown> = {
    schema_version: ROLLOUT_EVENT_SCHEMA,
    goal_id: goalId,
    event_kind: input.eventKind,
    recorded_at: input.recordedAt,
    boundary: { ...BOUNDARY },
  };
  const scalars: [string, string | null | undefined][] = [
    ['agent_id', input.agentId],
    ['todo_id', input.todoId],
    ['run_id', input.runId],
    ['status', input.status],
    ['classification', input.classification],
    ['delivery_outcome', input.deliveryOutcome],
    ['summary', input.summary],
  ];
  for (const [key, value] of scalars) {
    const text = compactText(value, key === 'summary' ? 500 : 180, key);
    if (text !== null) row[key] = text;
  }
  const details: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(input.details ?? {})) {
    if (value === undefined) continue;
    const lowered = key.toLowerCase();
    if (key.trim() === '' || RAW_KEY_HINTS.some((hint) => lowered.includes(hint))) {
      throw new LoopxError(
        'rollout_event_not_public_safe',
        `rollout event details key ${JSON.stringify(key)} looks like raw or private material; use another name`,
        { field: `details.${key}` },
      );
    }
    details[key] = typeof value === 'string' ? compactText(value, 240, `details.${key}`) : value;
  }
  if (Object.keys(details).length > 0) row['details'] = details;
  // The row promises `credential_values_recorded: false`: whatever slipped past the callers' checks
  // (a turn id, a classification, a summary naming them) goes through the scrubber's credential rule.
  const scrubbed = redactCredentials(row);
  scrubbed['event_id'] = rolloutEventId(scrubbed);
  return RolloutEventSchema.parse(scrubbed);
}

/**
 * A log's rows as LoopX shows them (`evidence-log`, the goal detail's timeline): credentials
 * redacted with the scrubber's rule, for rows written by the original LoopX, an older LoopX or a hand.
 */
export function publishedRolloutEvents(events: readonly RolloutEvent[]): RolloutEvent[] {
  return redactCredentials([...events]);
}

export function rolloutEventLogPath(runtimeRoot: string, goalId: string): string {
  return path.join(goalRuntimeDir(runtimeRoot, goalId), ROLLOUT_EVENT_LOG_FILE);
}

/** The log of a goal runtime folder (`<rt>/goals/<goal>`). */
export function rolloutEventLogOf(goalDir: string): string {
  return path.join(goalDir, ROLLOUT_EVENT_LOG_FILE);
}

export interface SkippedEventLine {
  /** 1-based line number in the file. */
  line: number;
  reason: string;
}

export interface RolloutEventRead {
  file: string;
  exists: boolean;
  events: RolloutEvent[];
  /** Lines that are not a `loopx_rollout_event_v0` object: reported, skipped, never rewritten. */
  skipped: SkippedEventLine[];
}

/**
 * A cheap test on a parsed line before the schema check: rows it rejects are neither validated nor
 * returned (a receipt lookup in a log of 10,000 rows validates only the rows of its turn).
 *
 * `needle`, when set, is text every kept row's line holds verbatim unless the line contains a
 * backslash (an escape could spell it differently): {@link readRolloutEvents} then JSON-parses only
 * the lines holding the needle or a backslash, and `skipped` reports only bad lines among those.
 */
export type RawEventFilter = ((raw: Record<string, unknown>) => boolean) & { readonly needle?: string };

/** Reads every valid row of a log (missing file: no rows). Blank lines are ignored. */
export async function readRolloutEvents(file: string, keep?: RawEventFilter): Promise<RolloutEventRead> {
  let bytes: Buffer;
  try {
    bytes = await readFileBytesSafe(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { file, exists: false, events: [], skipped: [] };
    throw error;
  }
  const parsed =
    keep?.needle !== undefined && keep.needle !== ''
      ? parseCandidateLines(bytes, keep, keep.needle)
      : parseRolloutEvents(bytes.toString('utf8'), keep);
  return { file, exists: true, ...parsed };
}

export function parseRolloutEvents(
  text: string,
  keep?: RawEventFilter,
): { events: RolloutEvent[]; skipped: SkippedEventLine[] } {
  const events: RolloutEvent[] = [];
  const skipped: SkippedEventLine[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) parseLine(lines[i] ?? '', () => i + 1, keep, events, skipped);
  return { events, skipped };
}

/**
 * The needle path of {@link readRolloutEvents}: finds the lines holding the needle or a backslash
 * with Buffer searches and decodes and parses only those, so a turn's lookup in a long log costs
 * one read and a byte scan, not a JSON.parse per line. Same rows as parsing every line with `keep`.
 */
function parseCandidateLines(
  bytes: Buffer,
  keep: RawEventFilter,
  needle: string,
): { events: RolloutEvent[]; skipped: SkippedEventLine[] } {
  const events: RolloutEvent[] = [];
  const skipped: SkippedEventLine[] = [];
  const needleBytes = Buffer.from(needle, 'utf8');
  let countedTo = 0;
  let linesBefore = 0;
  const lineNumber = (start: number): number => {
    for (let at = bytes.indexOf(0x0a, countedTo); at !== -1 && at < start; at = bytes.indexOf(0x0a, at + 1))
      linesBefore++;
    countedTo = start;
    return linesBefore + 1;
  };
  // Each search resumes past the line last parsed and runs again only once its hit is behind that line,
  // so the scan stays linear in the file (a log where every line holds a backslash but none the needle
  // must not rescan the whole tail for the needle on every line).
  let from = 0;
  let hit = -2;
  let slash = -2;
  while (from < bytes.length) {
    if (hit !== -1 && hit < from) hit = bytes.indexOf(needleBytes, from);
    if (slash !== -1 && slash < from) slash = bytes.indexOf(0x5c, from);
    const at = hit === -1 ? slash : slash === -1 ? hit : Math.min(hit, slash);
    if (at === -1) break;
    const start = at === 0 ? 0 : bytes.lastIndexOf(0x0a, at - 1) + 1;
    const newline = bytes.indexOf(0x0a, at);
    const end = newline === -1 ? bytes.length : newline;
    parseLine(bytes.toString('utf8', start, end), () => lineNumber(start), keep, events, skipped);
    from = end + 1;
  }
  return { events, skipped };
}

function parseLine(
  line: string,
  lineNumber: () => number,
  keep: RawEventFilter | undefined,
  events: RolloutEvent[],
  skipped: SkippedEventLine[],
): void {
  if (line.trim() === '') return;
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    skipped.push({ line: lineNumber(), reason: 'not valid JSON (a torn or hand-edited line)' });
    return;
  }
  if (keep !== undefined && typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed))
    if (!keep(parsed as Record<string, unknown>)) return;
  const result = RolloutEventSchema.safeParse(parsed);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? 'row' : issue.path.join('.');
    skipped.push({
      line: lineNumber(),
      reason: `not a ${ROLLOUT_EVENT_SCHEMA} row: ${where}: ${issue?.message ?? '?'}`,
    });
    return;
  }
  events.push(result.data);
}

export interface AppendRolloutOptions {
  lock?: LockOptions;
}

/**
 * Appends rows to a goal's log under the log's lock. The goal folder must stay inside its runtime
 * root (a symlink out is refused). A final line without its newline (a writer killed mid-line) is
 * closed first, so the new row starts on its own line.
 */
export async function appendRolloutEvents(
  goalDir: string,
  events: readonly RolloutEvent[],
  options: AppendRolloutOptions = {},
): Promise<void> {
  if (events.length === 0) return;
  const file = rolloutEventLogOf(goalDir);
  const root = runtimeRootOfGoalDir(goalDir);
  await mkdirInside(root, goalDir);
  assertInside(root, file, 'append the rollout event log');
  await withFileLock(file, { operation: 'rollout_event_append', ...options.lock }, () => appendUnlocked(file, events));
}

/**
 * Only the rows of one turn (run_id): what receipt and step lookups need. A row of turn T written
 * without escapes holds `"T"` verbatim, so that is the needle, unless T itself needs escaping in
 * JSON (then every line is parsed).
 */
export function ofTurn(turnInstanceId: string): RawEventFilter {
  const keep = (raw: Record<string, unknown>): boolean => raw['run_id'] === turnInstanceId;
  // eslint-disable-next-line no-control-regex
  if (turnInstanceId === '' || /["\\\u0000-\u001f]/.test(turnInstanceId)) return keep;
  return Object.assign(keep, { needle: JSON.stringify(turnInstanceId) });
}

/**
 * Reads the log and, under the same lock, appends what `decide` returns for the rows it saw: the
 * read-check-append of a receipt, so two retries of one heartbeat cannot both append.
 */
export async function appendRolloutEventsChecked<T>(
  goalDir: string,
  decide: (read: RolloutEventRead) => { append: RolloutEvent[]; result: T },
  options: AppendRolloutOptions & { keep?: RawEventFilter } = {},
): Promise<T> {
  const file = rolloutEventLogOf(goalDir);
  const root = runtimeRootOfGoalDir(goalDir);
  await mkdirInside(root, goalDir);
  assertInside(root, file, 'append the rollout event log');
  return withFileLock(file, { operation: 'rollout_event_append', ...options.lock }, async () => {
    const decided = decide(await readRolloutEvents(file, options.keep));
    appendUnlocked(file, decided.append);
    return decided.result;
  });
}

function appendUnlocked(file: string, events: readonly RolloutEvent[]): void {
  if (events.length === 0) return;
  const body = events.map((e) => `${JSON.stringify(e)}\n`).join('');
  const fd = fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT, 0o644);
  try {
    const size = fs.fstatSync(fd).size;
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      const rfd = fs.openSync(file, 'r');
      try {
        fs.readSync(rfd, last, 0, 1, size - 1);
      } finally {
        fs.closeSync(rfd);
      }
      if (last[0] !== 0x0a) prefix = '\n';
    }
    fs.writeSync(fd, prefix + body);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
