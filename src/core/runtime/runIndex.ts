import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { parseIsoInstant } from '../isoTime';
import { goalRunsDir, RUN_INDEX_FILE } from './layout';
import { jsonNestingExceeds, MAX_JSON_DEPTH } from '../fs/jsonFile';
import { runtimeFileIo } from './files';

/**
 * The run history of a goal: `<rt>/goals/<id>/runs/index.jsonl`, one compact JSON row per line,
 * each pointing at a pretty `.json` record and a `.md` rendering named after `generated_at`. This
 * file is the rows and their reading; writing them (`appendRun`) is `runIndexWrite.ts`.
 */

/** One index row as read. Every field is optional (old rows vary); unknown fields pass through. */
export const RunIndexRow = z.looseObject({
  generated_at: z.string().optional(),
  goal_id: z.string().optional(),
  classification: z.string().optional(),
  recommended_action: z.string().nullable().optional(),
  health_check: z.string().nullable().optional(),
  json_path: z.string().optional(),
  markdown_path: z.string().optional(),
  agent_id: z.string().nullable().optional(),
  todo_id: z.string().nullable().optional(),
  progress_scope: z.string().nullable().optional(),
});
export type RunIndexRow = z.infer<typeof RunIndexRow>;

/** A row as returned by {@link readRunIndex}: merged, with the existence of its artifacts. */
export const RunIndexEntry = RunIndexRow.extend({ json_exists: z.boolean(), markdown_exists: z.boolean() });
export type RunIndexEntry = z.infer<typeof RunIndexEntry>;

/** Runs that say nothing about the goal's own progress; `latestStatusRun` skips them. */
export const STATUS_NEUTRAL_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'quota_slot_spent',
  'quota_slot_voided',
  'quota_monitor_poll',
  'canary_promotion_readiness_smoke_group',
]);

/** Settlement bookkeeping rows: they say nothing about progress (the replan scan skips them). */
export const SETTLEMENT_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'quota_slot_spent',
  'quota_slot_voided',
  'delivery_completion_spend_accounted_v0',
]);

/** A settlement bookkeeping row (its classification compared with runs of whitespace collapsed, as the replan scan reads it). */
export function isSettlementRun(row: RunIndexRow): boolean {
  const classification = row.classification;
  return (
    typeof classification === 'string' &&
    SETTLEMENT_CLASSIFICATIONS.has(classification.split(/\s+/).filter(Boolean).join(' '))
  );
}

export interface RunIndexRead {
  index_file: string;
  exists: boolean;
  /** Non-blank lines, including the ones skipped. */
  raw_count: number;
  /** Lines that were not a JSON object (or had a known field of the wrong type), with the reason. */
  skipped: { line: number; reason: string }[];
  /** Merged rows, newest first. */
  rows: RunIndexEntry[];
  /**
   * Set (by status, which reads on) when the file could not be read at all (a directory, a FIFO, an
   * oversized or invalid file): why, naming the file and the fix. `rows` is then empty but unknown,
   * never "no runs" (admission refuses such an index instead).
   */
  unreadable?: string;
}

export interface ReadRunIndexOptions {
  /** Relative artifact paths resolve against the registry's project root. */
  projectRoot: string;
  /**
   * How many of the newest rows have their artifacts stat'ed while reading: `'all'` (default) or
   * a count, so a reader that shows the newest few rows of a long history does not stat every
   * artifact. Past the count, `json_exists`/`markdown_exists` are checked when first read on the
   * row itself; they are not enumerable there, so copies (spread, JSON, schema passthrough) do
   * not carry them and do not stat.
   */
  artifactChecks?: 'all' | number;
}

function artifactExists(file: string | undefined, projectRoot: string): boolean {
  if (file === undefined || file === '') return false;
  return fs.existsSync(path.resolve(projectRoot, file));
}

const ARTIFACT_FLAGS = [
  ['json_exists', 'json_path'],
  ['markdown_exists', 'markdown_path'],
] as const;

/**
 * Whether the artifact flags of a read (its rows stat'ed when read, and the lazy flags looked at
 * since) still say what the files say now. A run's records may appear or go while its index stays
 * as it was, so a read kept across a change of its goal is reused only when this holds.
 */
export function artifactFlagsHold(read: RunIndexRead, projectRoot: string): boolean {
  for (const row of read.rows) {
    for (const [flag, field] of ARTIFACT_FLAGS) {
      // A lazy flag not looked at yet is an accessor on the prototype: it will stat when asked.
      const own = Object.getOwnPropertyDescriptor(row, flag);
      if (own !== undefined && own.value !== artifactExists(row[field], projectRoot)) return false;
    }
  }
  return true;
}

/**
 * The {@link RunIndexRow} check without building a copy: true when every known field has its
 * type (strings, some also null). The schema stays the contract; it runs only on rows that fail
 * this, to name the field.
 */
function hasRowShape(value: Record<string, unknown>): value is RunIndexRow {
  return (
    optionalText(value['generated_at']) &&
    optionalText(value['goal_id']) &&
    optionalText(value['classification']) &&
    optionalText(value['json_path']) &&
    optionalText(value['markdown_path']) &&
    nullableText(value['recommended_action']) &&
    nullableText(value['health_check']) &&
    nullableText(value['agent_id']) &&
    nullableText(value['todo_id']) &&
    nullableText(value['progress_scope'])
  );
}

function optionalText(value: unknown): boolean {
  return value === undefined || typeof value === 'string';
}

function nullableText(value: unknown): boolean {
  return value === undefined || value === null || typeof value === 'string';
}

/** Stats an artifact the first time its flag is read, then keeps the answer on the row (not enumerable). */
function lazyArtifactFlag(
  name: 'json_exists' | 'markdown_exists',
  pathField: 'json_path' | 'markdown_path',
  projectRoot: string,
): PropertyDescriptor {
  const keep = (row: RunIndexRow, value: boolean): void => {
    Object.defineProperty(row, name, { value, enumerable: false, configurable: true, writable: true });
  };
  return {
    enumerable: false,
    configurable: true,
    get(this: RunIndexRow) {
      const value = artifactExists(this[pathField], projectRoot);
      keep(this, value);
      return value;
    },
    set(this: RunIndexRow, value: boolean) {
      keep(this, value);
    },
  };
}

/** Prototypes giving rows lazy artifact flags, one per project root (rows of one read share it). */
const lazyArtifactPrototypes = new Map<string, object>();

function lazyArtifactPrototype(projectRoot: string): object {
  let prototype = lazyArtifactPrototypes.get(projectRoot);
  if (prototype === undefined) {
    prototype = Object.create(Object.prototype, {
      json_exists: lazyArtifactFlag('json_exists', 'json_path', projectRoot),
      markdown_exists: lazyArtifactFlag('markdown_exists', 'markdown_path', projectRoot),
    }) as object;
    // Bounded: a process reads few projects; the map only saves rebuilding a prototype.
    if (lazyArtifactPrototypes.size >= 64) lazyArtifactPrototypes.clear();
    lazyArtifactPrototypes.set(projectRoot, prototype);
  }
  return prototype;
}

type MergedRow = IndexLineEntry;

function newerFirst(a: MergedRow, b: MergedRow): number {
  if (a.time !== null && b.time !== null && a.time !== b.time) return b.time - a.time;
  if ((a.time === null) !== (b.time === null)) return a.time === null ? 1 : -1;
  return b.order - a.order;
}

/** Whether `line` holds only whitespace (as `trim` sees it), without copying it. */
function isBlank(line: string): boolean {
  if (line.length === 0) return true;
  const first = line.charCodeAt(0);
  // A row starts with '{'; anything else that is not whitespace is not blank either.
  if (first === 123 || (first > 32 && first < 127)) return false;
  return line.trim() === '';
}

/** One parsed index line: the row, its line order and its time (null: missing or unparsable). */
export interface IndexLineEntry {
  row: RunIndexRow;
  /** Line of the row (0-based; of its latest copy once merged). */
  order: number;
  time: number | null;
}

export interface ParsedIndexLines {
  raw_count: number;
  skipped: { line: number; reason: string }[];
  entries: IndexLineEntry[];
}

/**
 * Parses index text line by line with the reader's rules (blank lines skipped; bad JSON, non-objects
 * and rows with a known field of the wrong type skipped and reported). `firstLine` is the 0-based
 * line number of the text's first line, so a tail read goes on numbering where the prefix ended.
 */
export function parseIndexLines(text: string, firstLine = 0): ParsedIndexLines {
  let rawCount = 0;
  const skipped: { line: number; reason: string }[] = [];
  const entries: IndexLineEntry[] = [];
  // JSON.parse ignores the '\r' a CRLF line keeps, as it ignores other surrounding whitespace.
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const index = firstLine + i;
    if (isBlank(line)) continue;
    rawCount++;
    if (jsonNestingExceeds(line)) {
      skipped.push({ line: index + 1, reason: `nested more than ${MAX_JSON_DEPTH} levels deep` });
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped.push({ line: index + 1, reason: 'not valid JSON' });
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      skipped.push({ line: index + 1, reason: 'not a JSON object' });
      continue;
    }
    const record = value as Record<string, unknown>;
    if (!hasRowShape(record)) {
      const parsed = RunIndexRow.safeParse(record);
      skipped.push({
        line: index + 1,
        reason: `field ${parsed.success ? '' : (parsed.error.issues[0]?.path.join('.') ?? '')} has the wrong type`,
      });
      continue;
    }
    entries.push({ row: record, order: index, time: parseIsoInstant(record.generated_at) });
  }
  return { raw_count: rawCount, skipped, entries };
}

/**
 * Parsed lines as the reader returns them: duplicates merged (later over earlier), newest first,
 * unparsable or missing times last, on a tie the later line first. Consumes `entries` (sorts in place).
 */
export function mergeIndexEntries(entries: IndexLineEntry[]): IndexLineEntry[] {
  return mergeDuplicates(appendOrderIsOldestFirst(entries) ? entries.reverse() : entries.sort(newerFirst));
}

/** The key under which rows describing the same run are merged. */
export function runMergeKey(row: RunIndexRow): string {
  return JSON.stringify([row.generated_at ?? null, row.json_path ?? null, row.markdown_path ?? null]);
}

/**
 * Gives a row kept elsewhere (a cache) the reader's lazy artifact flags: `json_exists` and
 * `markdown_exists` are stat'ed when first read, not enumerable.
 */
export function withLazyArtifactFlags<T extends RunIndexRow>(row: T, projectRoot: string): T & RunIndexEntry {
  return Object.setPrototypeOf({ ...row }, lazyArtifactPrototype(projectRoot)) as T & RunIndexEntry;
}

/**
 * Reads an index: blank lines skipped; bad JSON and non-objects skipped (and reported); rows with
 * the same (generated_at, json_path, markdown_path) merged, later over earlier; sorted newest
 * first, unparsable or missing timestamps last, and on a tie the later line first.
 */
export async function readRunIndex(indexFile: string, options: ReadRunIndexOptions): Promise<RunIndexRead> {
  return readRunIndexSync(indexFile, options);
}

/** {@link readRunIndex}, synchronously (it reads one whole file; for a caller that cannot wait). */
export function readRunIndexSync(indexFile: string, options: ReadRunIndexOptions): RunIndexRead {
  let text: string;
  try {
    // Sync: one read of a whole small file; the promise API costs more than the read itself here.
    text = runtimeFileIo(path.dirname(indexFile), { kind: 'readTextSync', file: indexFile });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      return { index_file: indexFile, exists: false, raw_count: 0, skipped: [], rows: [] };
    throw error;
  }
  const parsed = parseIndexLines(text);
  const sorted = mergeIndexEntries(parsed.entries);
  const checked =
    options.artifactChecks === undefined || options.artifactChecks === 'all'
      ? sorted.length
      : Math.max(0, options.artifactChecks);
  const lazy = checked < sorted.length ? lazyArtifactPrototype(options.projectRoot) : null;
  const rows = new Array<RunIndexEntry>(sorted.length);
  for (let i = 0; i < sorted.length; i++) {
    // Rows are fresh objects of this read (parsed here, or merged copies): flags are added in place.
    const row = (sorted[i] as IndexLineEntry).row as RunIndexEntry;
    if (i < checked || lazy === null) {
      row.json_exists = artifactExists(row.json_path, options.projectRoot);
      row.markdown_exists = artifactExists(row.markdown_path, options.projectRoot);
    } else {
      Object.setPrototypeOf(row, lazy);
    }
    rows[i] = row;
  }
  return { index_file: indexFile, exists: true, raw_count: parsed.raw_count, skipped: parsed.skipped, rows };
}

/**
 * Merges the rows that describe the same run, (generated_at, json_path, markdown_path) equal, the
 * later line over the earlier, in an array sorted newest first. Such rows have the same time, so
 * they sit in one group of equal times (unparsable times form one group at the end).
 */
function mergeDuplicates(sorted: MergedRow[]): MergedRow[] {
  let out: MergedRow[] | null = null;
  for (let start = 0; start < sorted.length;) {
    const time = (sorted[start] as MergedRow).time;
    let end = start + 1;
    while (end < sorted.length && (sorted[end] as MergedRow).time === time) end++;
    if (end - start > 1) {
      const group = sorted.slice(start, end);
      const merged = mergeGroup(group);
      if (merged.length !== group.length && out === null) out = sorted.slice(0, start);
      if (out !== null) out.push(...merged);
    } else if (out !== null) {
      out.push(sorted[start] as MergedRow);
    }
    start = end;
  }
  return out ?? sorted;
}

/** One group of equal times, newest first: duplicates merged, each at the line of its latest copy. */
function mergeGroup(group: readonly MergedRow[]): MergedRow[] {
  const byRun = new Map<string, MergedRow>();
  for (let i = group.length - 1; i >= 0; i--) {
    const entry = group[i] as MergedRow;
    const key = runMergeKey(entry.row);
    const earlier = byRun.get(key);
    if (earlier === undefined) byRun.set(key, { ...entry });
    else byRun.set(key, { row: { ...earlier.row, ...entry.row }, order: entry.order, time: entry.time });
  }
  if (byRun.size === group.length) return [...group];
  return [...byRun.values()].sort((a, b) => b.order - a.order);
}

/**
 * True when every entry has a time and they ascend with the line order (an index appended to in
 * time order, the usual case): newest first is then the reverse, with no sort.
 */
function appendOrderIsOldestFirst(entries: readonly MergedRow[]): boolean {
  let previous: MergedRow | undefined;
  for (const entry of entries) {
    if (entry.time === null) return false;
    if (previous !== undefined && (entry.time < (previous.time as number) || entry.order < previous.order))
      return false;
    previous = entry;
  }
  return true;
}

/** The run history of one goal under a runtime root. */
export async function readGoalRuns(
  runtimeRoot: string,
  goalId: string,
  options: ReadRunIndexOptions,
): Promise<RunIndexRead> {
  return readRunIndex(path.join(goalRunsDir(runtimeRoot, goalId), RUN_INDEX_FILE), options);
}

export function isStatusNeutralRun(row: RunIndexRow): boolean {
  return (
    (row.classification !== undefined && STATUS_NEUTRAL_CLASSIFICATIONS.has(row.classification)) ||
    row.progress_scope === 'agent_lane'
  );
}

/** The newest run that speaks for the goal: not status-neutral and not scoped to one agent lane. */
export function latestStatusRun<T extends RunIndexRow>(rowsNewestFirst: readonly T[]): T | null {
  return rowsNewestFirst.find((row) => !isStatusNeutralRun(row)) ?? null;
}

/** The newest run scoped to a single agent lane. */
export function latestAgentLaneRun<T extends RunIndexRow>(rowsNewestFirst: readonly T[]): T | null {
  return rowsNewestFirst.find((row) => row.progress_scope === 'agent_lane') ?? null;
}
