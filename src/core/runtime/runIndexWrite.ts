import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { createFileExclusiveSync, formatJson, fsyncDirectory, writeNewFileInResolvedDirSync } from '../fs/atomicWrite';
import { assertInside } from '../fs/contain';
import { withFileLock, type LockOptions } from '../fs/fileLock';
import { goalRunsDir, RUN_INDEX_FILE, validateGoalId } from './layout';
import { isSweepableRecordName } from './sweep';
import { formatLocalIsoSeconds } from './time';
import { RunIndexRow } from './runIndex';

/**
 * Writing a goal's run history: `appendRun` writes a run's `.json` record and `.md` rendering (named after
 * `generated_at`) and appends its row to `<rt>/goals/<id>/runs/index.jsonl` under the index lock (its
 * locked re-read of the index, `unlessIndexed`, stays here with the writer). Reading it is `runIndex.ts`.
 */

/** What a writer must supply for a run record; the rest of the record passes through as given. */
export const RunRecordInput = z.looseObject({
  classification: z.string().min(1),
  recommended_action: z.string(),
  health_check: z.string(),
  generated_at: z.string().min(1).optional(),
  goal_id: z.string().optional(),
  agent_id: z.string().nullable().optional(),
  todo_id: z.string().nullable().optional(),
  progress_scope: z.string().nullable().optional(),
});
export type RunRecordInput = z.infer<typeof RunRecordInput>;

/** Record fields the index row repeats when present, besides the required ones. */
const OPTIONAL_INDEX_FIELDS = ['agent_id', 'todo_id', 'progress_scope'] as const;

/** `generated_at` with each run of characters outside `[0-9A-Za-z-]` replaced by `-`, ends trimmed. */
export function runArtifactStem(generatedAt: string): string {
  return generatedAt.replace(/[^0-9A-Za-z-]+/g, '-').replace(/^-+|-+$/g, '');
}

export interface ArtifactPair {
  jsonPath: string;
  markdownPath: string;
}

function pairAt(runsDir: string, base: string, n: number): ArtifactPair {
  const name = n === 1 ? base : `${base}-${n}`;
  return { jsonPath: path.join(runsDir, `${name}.json`), markdownPath: path.join(runsDir, `${name}.md`) };
}

/**
 * Lowest index known to be taken per base name, so a burst of runs in one second does not probe
 * -2, -3, … from the start every time. Only a hint: O_EXCL still decides.
 */
const nextIndexHint = new Map<string, number>();

function artifactBase(generatedAt: string, suffix: string | undefined): string {
  const stem = runArtifactStem(generatedAt);
  const cleanSuffix = suffix === undefined ? '' : runArtifactStem(suffix);
  const base = cleanSuffix === '' ? stem : stem === '' ? cleanSuffix : `${stem}-${cleanSuffix}`;
  if (base === '')
    throw new LoopxError(
      'invalid_run_record',
      'generated_at must contain letters or digits to name the run artifacts.',
      { generated_at: generatedAt },
    );
  return base;
}

/** The next free `.json`/`.md` pair, without creating anything (for dry runs). */
export function nextFreeArtifactPair(runsDir: string, generatedAt: string, suffix?: string): ArtifactPair {
  const base = artifactBase(generatedAt, suffix);
  for (let n = 1; ; n++) {
    const pair = pairAt(runsDir, base, n);
    if (!nameTaken(pair.jsonPath) && !nameTaken(pair.markdownPath)) return pair;
  }
}

/** Whether anything has this name, a dangling symlink included (existsSync follows links and would say no). */
function nameTaken(file: string): boolean {
  try {
    fs.lstatSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/**
 * Reserves a fresh pair: the `.json` is created exclusively as the sentinel, already holding `json`
 * when given (so a writer killed right after leaves a whole record, never an empty file); a pair
 * whose `.json` or `.md` exists (even as a dangling symlink) is skipped (`-2`, `-3`, …). Nothing is
 * ever overwritten. The files are created in `ioDir` (the folder with its symlinks resolved, when the
 * caller has resolved it); the paths returned are under `runsDir` as given, which the index row names.
 */
export function reserveArtifactPair(
  runsDir: string,
  generatedAt: string,
  suffix?: string,
  json?: string,
  ioDir: string = runsDir,
): ArtifactPair {
  const base = artifactBase(generatedAt, suffix);
  fs.mkdirSync(ioDir, { recursive: true });
  const hintKey = path.join(runsDir, base);
  for (let n = nextIndexHint.get(hintKey) ?? 1; ; n++) {
    const pair = pairAt(runsDir, base, n);
    const io = pairAt(ioDir, base, n);
    if (nameTaken(io.markdownPath)) continue;
    if (json !== undefined) {
      if (!createFileExclusiveSync(io.jsonPath, json)) continue;
    } else {
      try {
        fs.closeSync(fs.openSync(io.jsonPath, 'wx', 0o644));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
        throw error;
      }
    }
    if (n > 1) {
      // Bounded: the hint only matters for the current burst.
      if (nextIndexHint.size >= 256) nextIndexHint.clear();
      nextIndexHint.set(hintKey, n + 1);
    }
    return pair;
  }
}

export interface AppendRunOptions {
  runtimeRoot: string;
  goalId: string;
  /** The full JSON record. `generated_at` (local time from `clock`) and `goal_id` are filled in when absent. */
  record: Record<string, unknown>;
  /** The human rendering written next to it. */
  markdown: string;
  /** File-name suffix after the stem, e.g. `quota-slot-spent`. */
  suffix?: string;
  /** Extra index-row fields beyond the standard ones (e.g. `state`, `turn_instance_id`). */
  indexFields?: Record<string, unknown>;
  /** When given, artifact paths inside this project are written relative to it; otherwise absolute. */
  projectRoot?: string;
  clock: Clock;
  /** Holder labels for the index lock (agent, operation); policy `mutation` by default. */
  lock?: LockOptions;
  /** Compute the row and the next free names, write nothing. */
  dryRun?: boolean;
  /**
   * Idempotency decided under the index lock: when a row already in the index matches, the run is
   * already recorded (a concurrent retry wrote it) and nothing is written. `needle` is text every
   * matching index line contains (a cheap filter before parsing), `matches` the exact test.
   */
  unlessIndexed?: { needle: string; matches: (row: RunIndexRow) => boolean };
}

export interface AppendRunResult {
  appended: boolean;
  dry_run: boolean;
  /** True when `unlessIndexed` found the run already recorded: `row` is that row, nothing was written. */
  already_indexed?: boolean;
  row: RunIndexRow;
  /** Absolute paths of the artifacts (written, or that would be written). */
  json_file: string;
  markdown_file: string;
  index_file: string;
}

function rowPath(file: string, projectRoot: string | undefined): string {
  if (projectRoot === undefined) return file;
  const relative = path.relative(projectRoot, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative) ? relative : file;
}

function buildRow(record: RunRecordInput, goalId: string, pair: ArtifactPair, options: AppendRunOptions): RunIndexRow {
  const row: Record<string, unknown> = {
    generated_at: record.generated_at,
    goal_id: goalId,
    classification: record.classification,
    recommended_action: record.recommended_action,
    health_check: record.health_check,
    json_path: rowPath(pair.jsonPath, options.projectRoot),
    markdown_path: rowPath(pair.markdownPath, options.projectRoot),
  };
  for (const field of OPTIONAL_INDEX_FIELDS) {
    if (record[field] !== undefined && record[field] !== null) row[field] = record[field];
  }
  return RunIndexRow.parse({ ...row, ...options.indexFields });
}

/** The newest index row that `filter` matches, read synchronously (the caller holds the index lock). */
function indexedRowSync(
  indexFile: string,
  filter: { needle: string; matches: (row: RunIndexRow) => boolean },
): RunIndexRow | null {
  let text: string;
  try {
    text = fs.readFileSync(indexFile, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const lines = text.split('\n');
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i] ?? '';
    if (!line.includes(filter.needle)) continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      continue; // a torn or foreign line is not a record of this run
    }
    const row = RunIndexRow.safeParse(parsed);
    if (row.success && filter.matches(row.data)) return row.data;
  }
  return null;
}

/** Appends `line` to the index, first closing a torn last line (a writer killed mid-append) so it cannot swallow ours. */
function appendIndexLineSync(indexFile: string, line: string): void {
  const fd = fs.openSync(indexFile, 'a+', 0o644);
  try {
    const { size } = fs.fstatSync(fd);
    let prefix = '';
    if (size > 0) {
      const last = Buffer.alloc(1);
      fs.readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = '\n';
    }
    // O_APPEND: the line lands at the end whatever the position.
    fs.writeFileSync(fd, `${prefix}${line}\n`, 'utf8');
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Records one run: reserves a unique artifact pair, writes the JSON record and the Markdown
 * atomically, then appends one index line, all under the cross-process lock of the index.
 */
export async function appendRun(options: AppendRunOptions): Promise<AppendRunResult> {
  const goalId = validateGoalId(options.goalId);
  const parsed = RunRecordInput.safeParse(options.record);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new LoopxError(
      'invalid_run_record',
      `run record field ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}. A run needs classification, recommended_action and health_check strings.`,
      { goal_id: goalId, field: issue?.path.join('.') ?? null },
    );
  }
  if (parsed.data.goal_id !== undefined && parsed.data.goal_id !== goalId) {
    throw new LoopxError(
      'invalid_run_record',
      `run record goal_id ${JSON.stringify(parsed.data.goal_id)} does not match goal ${JSON.stringify(goalId)}.`,
      { goal_id: goalId },
    );
  }
  const record: RunRecordInput = {
    generated_at: formatLocalIsoSeconds(options.clock.now()),
    goal_id: goalId,
    ...parsed.data,
  };
  const generatedAt = record.generated_at ?? '';
  const runsDir = goalRunsDir(options.runtimeRoot, goalId);
  const indexFile = path.join(runsDir, RUN_INDEX_FILE);

  if (options.dryRun === true) {
    const pair = nextFreeArtifactPair(runsDir, generatedAt, options.suffix);
    return {
      appended: false,
      dry_run: true,
      row: buildRow(record, goalId, pair, options),
      json_file: pair.jsonPath,
      markdown_file: pair.markdownPath,
      index_file: indexFile,
    };
  }

  // The runs folder, the artifacts and the index stay inside the runtime root, whatever symlinks lie on the way.
  const ioDir = assertInside(options.runtimeRoot, runsDir, 'create the folder');
  fs.mkdirSync(ioDir, { recursive: true });
  assertInside(options.runtimeRoot, indexFile, 'append to');
  const markdown = options.markdown.endsWith('\n') ? options.markdown : `${options.markdown}\n`;
  const writePair = (dir: string): WrittenPair =>
    writeArtifactPair(runsDir, dir, generatedAt, options.suffix, formatJson(record), markdown);
  // The records are written and fsynced before the lock is taken, so concurrent writers' fsyncs
  // overlap (the filesystem commits them together) and the lock covers only the index line. Not
  // for records the sweep may judge orphans (spends): it decides under the index lock, so those
  // are written inside it, from reserving the name to appending the line.
  const early = isSweepableRecordName(`${artifactBase(generatedAt, options.suffix)}.json`)
    ? undefined
    : writePair(ioDir);
  let appending = false;
  try {
    return await withFileLock(
      indexFile,
      // Appends are short: a writer appending in a loop keeps the lock for a short streak (see fileLock.ts).
      { operation: 'append_run', streak: true, ...options.lock, clock: options.lock?.clock ?? options.clock },
      () => {
        // Synchronous under the lock: waiting on the thread pool between short file operations only
        // lengthens the hold the other writers queue behind. The folder is resolved again here.
        const heldDir = assertInside(options.runtimeRoot, runsDir, 'write the run records into');
        const recorded =
          options.unlessIndexed === undefined
            ? null
            : indexedRowSync(assertInside(options.runtimeRoot, indexFile, 'read'), options.unlessIndexed);
        if (recorded !== null) {
          if (early !== undefined) removePair(ioDir, early.pair);
          const resolve = (file: string | undefined): string =>
            file === undefined ? '' : path.resolve(options.projectRoot ?? runsDir, file);
          return {
            appended: false,
            dry_run: false,
            already_indexed: true,
            row: recorded,
            json_file: resolve(recorded.json_path),
            markdown_file: resolve(recorded.markdown_path),
            index_file: indexFile,
          };
        }
        let written = early !== undefined && heldDir === ioDir && pairUnchanged(heldDir, early) ? early : undefined;
        if (written === undefined) {
          // Spend records, or early records that went (an archive moved the folder meanwhile): written now.
          if (early !== undefined) removePair(ioDir, early.pair);
          written = writePair(heldDir);
        }
        let row: RunIndexRow;
        try {
          row = buildRow(record, goalId, written.pair, options);
        } catch (error) {
          removePair(heldDir, written.pair);
          throw error;
        }
        const line = JSON.stringify(row);
        const target = assertInside(options.runtimeRoot, indexFile, 'append to');
        // From here a failure may have left part of the line: the records it names stay.
        appending = true;
        appendIndexLineSync(target, line);
        return {
          appended: true,
          dry_run: false,
          row,
          json_file: written.pair.jsonPath,
          markdown_file: written.pair.markdownPath,
          index_file: indexFile,
        };
      },
    );
  } catch (error) {
    // A failed append writes nothing: our early records were never indexed.
    if (early !== undefined && !appending) removePair(ioDir, early.pair);
    throw error;
  }
}

/** A pair written by {@link writeArtifactPair}: its paths and the identity of both files. */
interface WrittenPair {
  pair: ArtifactPair;
  /** `dev:ino` of the JSON and the Markdown file as written. */
  identity: string;
}

function fileIdentity(file: string): string | undefined {
  try {
    const stat = fs.lstatSync(file);
    return stat.isFile() ? `${stat.dev}:${stat.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function pairIdentity(ioDir: string, pair: ArtifactPair): string {
  return `${fileIdentity(path.join(ioDir, path.basename(pair.jsonPath)))}/${fileIdentity(path.join(ioDir, path.basename(pair.markdownPath)))}`;
}

function pairUnchanged(ioDir: string, written: WrittenPair): boolean {
  return pairIdentity(ioDir, written.pair) === written.identity;
}

/** Our own records of a run never indexed: removed, the Markdown first (the JSON reserves the name). */
function removePair(ioDir: string, pair: ArtifactPair): void {
  fs.rmSync(path.join(ioDir, path.basename(pair.markdownPath)), { force: true });
  fs.rmSync(path.join(ioDir, path.basename(pair.jsonPath)), { force: true });
}

/**
 * Reserves a fresh pair in `ioDir` (the runs folder, resolved and checked) with the JSON record
 * written under its name, writes the Markdown atomically, fsyncs both files and then the folder.
 * A failure leaves neither file behind.
 */
function writeArtifactPair(
  runsDir: string,
  ioDir: string,
  generatedAt: string,
  suffix: string | undefined,
  json: string,
  markdown: string,
): WrittenPair {
  // The record is written with its name: a kill at any moment leaves no empty record behind.
  const pair = reserveArtifactPair(runsDir, generatedAt, suffix, json, ioDir);
  try {
    writeNewFileInResolvedDirSync(ioDir, path.basename(pair.markdownPath), markdown);
    fsyncDirectory(ioDir);
    return { pair, identity: pairIdentity(ioDir, pair) };
  } catch (error) {
    removePair(ioDir, pair);
    throw error;
  }
}
