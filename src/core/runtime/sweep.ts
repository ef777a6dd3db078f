import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { parseTempName, TEMP_HOST_TAG } from '../fs/atomicWrite';
import { isPidAlive, LOCK_FILE_SUFFIX } from '../fs/fileLock';
import { runtimeFileIo } from './files';
import { isRecord } from '../registry/schema';
import { goalRunsDir, goalRuntimeDir, RUN_INDEX_FILE } from './layout';

/**
 * Clears what a `kill -9` can leave in a goal's runtime folders, and nothing else:
 *
 *   - temp files of atomic writes (`.<name>.<host>-<pid>.<random>.tmp`) whose writer, on this
 *     host, is gone. A live writer's temp file (or one of another host, or of an older naming
 *     without a pid) is never touched;
 *   - lock files (`*.loopx-lock`) whose holder is dead, through the lock code's own reclaim;
 *   - orphan spend artifacts: a `*-quota-slot-spent[-N].json/.md` pair that no line of the run
 *     index names. The ledger counts index rows only, so such a pair was never counted and removing
 *     it changes no total; the turn that wrote it still holds its reservation and settles again on
 *     resume. Decided under the index lock, which a spend's writer holds from reserving the names
 *     to appending the line (other runs write their records before taking it, but never under a
 *     spend's name), so no live writer's pair can be mistaken for an orphan. Only our records are
 *     removed: an empty name reservation, or a spend record with our `slots` field;
 *   - empty run records: any `runs/<name>.json` that is empty and that no index line names. Our
 *     writers create a record under its name already whole (hard link of a written temp file), so
 *     an empty unindexed one is a killed older writer's reservation (the record never existed), not
 *     a record. Readers go through the index, so they never read one.
 *
 * Only the goal's runtime folder, its `turns/` and its `runs/` are looked at, never recursively.
 */

const SPEND_ARTIFACT = /-quota-slot-spent(-[0-9]+)?\.(json|md)$/;

/**
 * Whether a run record of this file name is one the sweep may remove as an orphan when no index
 * line names it. Writers create such records only under the index lock (see `appendRun`).
 */
export function isSweepableRecordName(name: string): boolean {
  return SPEND_ARTIFACT.test(name);
}

export interface SweepResult {
  temp_files: string[];
  locks: string[];
  orphan_artifacts: string[];
}

export interface SweepOptions {
  clock: Clock;
  /** How long to wait for the run-index lock; a busy index skips the artifact step until next time. */
  indexLockTimeoutMs?: number;
  /**
   * Files outside the runtime folders whose own leftovers go too (the goal's state file): a dead
   * holder's lock on exactly that file, and our temp files of exactly that file.
   */
  files?: readonly string[];
}

function listDir(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function removeIfExists(file: string): boolean {
  try {
    fs.unlinkSync(file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

/** Our temp files in `dir` whose writer on this host is dead (only those of `target`, when given). */
function sweepTempFiles(dir: string, removed: string[], target?: string): void {
  for (const name of listDir(dir)) {
    const temp = parseTempName(name);
    if (temp === null || temp.hostTag !== TEMP_HOST_TAG || isPidAlive(temp.pid)) continue;
    if (target !== undefined && temp.target !== target) continue;
    if (removeIfExists(path.join(dir, name))) removed.push(path.join(dir, name));
  }
}

function sweepLocks(dir: string, removed: string[]): void {
  for (const name of listDir(dir)) {
    if (!name.endsWith(LOCK_FILE_SUFFIX)) continue;
    const file = path.join(dir, name);
    if (runtimeFileIo(dir, { kind: 'reclaimLock', file })) removed.push(file);
  }
}

/** A dead holder's lock on `file`, and our dead writers' temp files of `file` (nothing else in its folder). */
function sweepFileLeftovers(file: string, result: SweepResult): void {
  const lock = `${file}${LOCK_FILE_SUFFIX}`;
  if (runtimeFileIo(path.dirname(file), { kind: 'reclaimLock', file: lock })) result.locks.push(lock);
  sweepTempFiles(path.dirname(file), result.temp_files, path.basename(file));
}

/** Whether a spend artifact is one of ours: an empty name reservation, or our spend record. */
function isOurSpendArtifact(jsonFile: string): boolean {
  let text: string;
  try {
    text = fs.readFileSync(jsonFile, 'utf8');
  } catch {
    return false; // our writers reserve the .json first and remove it last: an .md alone is not ours
  }
  if (text === '') return true;
  try {
    const record: unknown = JSON.parse(text);
    return isRecord(record) && record['classification'] === 'quota_slot_spent' && typeof record['slots'] === 'number';
  } catch {
    return false;
  }
}

/**
 * Whether the index names a file: `indexText.includes(name)`. Conservative: a name anywhere in the
 * index (even in a torn line) counts as named.
 */
type NamedTest = (name: string) => boolean;

function textNames(indexText: string): NamedTest {
  return (name) => indexText.includes(name);
}

function unnamedSpendStems(runsDir: string, named: NamedTest): string[] {
  const stems = new Set<string>();
  for (const name of listDir(runsDir)) {
    if (!SPEND_ARTIFACT.test(name)) continue;
    if (named(name)) continue;
    stems.add(name.replace(/\.(json|md)$/, ''));
  }
  return [...stems].sort();
}

/** Empty `.json` files of runs/ that no index line names: name reservations of killed writers. */
function unnamedEmptyRecords(runsDir: string, named: NamedTest): string[] {
  const files: string[] = [];
  for (const name of listDir(runsDir)) {
    if (!name.endsWith('.json') || name.startsWith('.') || named(name)) continue;
    const file = path.join(runsDir, name);
    try {
      const stat = fs.lstatSync(file);
      if (stat.isFile() && stat.size === 0) files.push(file);
    } catch {
      // gone meanwhile
    }
  }
  return files.sort();
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

// ---------------------------------------------------------------------------------------------
// The pre-check's name set, kept per index between sweeps of one process (issue 19: a turn swept
// the goal by testing every file of runs/ against the whole index text, files × index bytes).

/** Runs of characters that can end a file name in `.json`/`.md` as the index writes paths. */
const NAME_TOKEN = /[^"/\\\s]+\.(?:json|md)/g;
const STAMP_BYTES = 4096;

interface IndexNames {
  dev: number;
  ino: number;
  /** Bytes read, always just after a newline. */
  offset: number;
  head: string;
  tail: string;
  /** Every token of `[0, offset)`: each one is a substring of those bytes. */
  names: Set<string>;
}

const indexNames = new Map<string, IndexNames>();

function readRange(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let done = 0;
  while (done < buffer.length) {
    const n = fs.readSync(fd, buffer, done, buffer.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return buffer.subarray(0, done);
}

function stamps(fd: number, offset: number): { head: string; tail: string } {
  return {
    head: readRange(fd, 0, Math.min(offset, STAMP_BYTES)).toString('latin1'),
    tail: readRange(fd, Math.max(0, offset - STAMP_BYTES), offset).toString('latin1'),
  };
}

function addTokens(names: Set<string>, text: string): void {
  for (const match of text.matchAll(NAME_TOKEN)) names.add(match[0]);
}

/**
 * Names the index certainly holds, read incrementally: the bytes read before are kept when the file
 * is the same (device, inode) and its first and last 4 KB up to the old offset are unchanged, and
 * only whole lines appended since are tokenized. Every name in the set is a substring of the index
 * as it was read, so a stale set (an index rewritten behind identical ends) can only say "named"
 * where the text no longer does: the sweep then keeps a file, never removes one. A name not in the
 * set is decided by the exact test on the whole text.
 */
function knownIndexNames(indexFile: string): Set<string> {
  let fd: number;
  try {
    fd = fs.openSync(indexFile, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  } catch {
    indexNames.delete(indexFile);
    return new Set();
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile()) return new Set();
    let state = indexNames.get(indexFile);
    if (state !== undefined) {
      const same =
        state.dev === stat.dev && state.ino === stat.ino && stat.size >= state.offset ? stamps(fd, state.offset) : null;
      if (same === null || same.head !== state.head || same.tail !== state.tail) state = undefined;
    }
    state ??= { dev: stat.dev, ino: stat.ino, offset: 0, head: '', tail: '', names: new Set() };
    const bytes = readRange(fd, state.offset, stat.size);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end > 0) {
      addTokens(state.names, bytes.subarray(0, end).toString('utf8'));
      state.offset += end;
      const ends = stamps(fd, state.offset);
      state.head = ends.head;
      state.tail = ends.tail;
    }
    indexNames.set(indexFile, state);
    return state.names;
  } finally {
    fs.closeSync(fd);
  }
}

/** The pre-check's test: the kept name set, then (rarely: orphans, torn lines) the exact test on the whole text. */
function namedByIndex(indexFile: string): NamedTest {
  const names = knownIndexNames(indexFile);
  let exact: NamedTest | null = null;
  return (name) => names.has(name) || (exact ??= textNames(readText(indexFile)))(name);
}

async function sweepOrphanSpends(runsDir: string, options: SweepOptions, removed: string[]): Promise<void> {
  const indexFile = path.join(runsDir, RUN_INDEX_FILE);
  // Cheap check first, without the lock: most runs have nothing to do.
  const named = namedByIndex(indexFile);
  if (unnamedSpendStems(runsDir, named).length === 0 && unnamedEmptyRecords(runsDir, named).length === 0) return;
  try {
    await runtimeFileIo(runsDir, {
      kind: 'lock',
      file: indexFile,
      lock: { operation: 'sweep_orphan_spends', clock: options.clock, timeoutMs: options.indexLockTimeoutMs ?? 1000 },
      work: () => {
        // Decided on the whole text, read under the lock.
        for (const stem of unnamedSpendStems(runsDir, textNames(readText(indexFile)))) {
          const json = path.join(runsDir, `${stem}.json`);
          if (!isOurSpendArtifact(json)) continue;
          // The .md first: the .json reserves the name until the pair is gone.
          for (const file of [path.join(runsDir, `${stem}.md`), json]) if (removeIfExists(file)) removed.push(file);
        }
        // Re-checked under the lock: every writer holds it from reserving the name to appending the line.
        for (const file of unnamedEmptyRecords(runsDir, textNames(readText(indexFile))))
          if (removeIfExists(file)) removed.push(file);
      },
    });
  } catch (error) {
    if (error instanceof LoopxError && error.code === 'lock_acquire_timeout') return; // a writer is busy: next time
    throw error;
  }
}

/** Sweeps the leftovers of killed LoopX processes from one goal's runtime folders (see above). */
export async function sweepGoalLeftovers(
  runtimeRoot: string,
  goalId: string,
  options: SweepOptions,
): Promise<SweepResult> {
  const result: SweepResult = { temp_files: [], locks: [], orphan_artifacts: [] };
  const goalDir = goalRuntimeDir(runtimeRoot, goalId);
  const runsDir = goalRunsDir(runtimeRoot, goalId);
  const dirs = [goalDir, path.join(goalDir, 'turns'), runsDir];
  for (const dir of dirs) sweepTempFiles(dir, result.temp_files);
  for (const dir of dirs) sweepLocks(dir, result.locks);
  for (const file of options.files ?? []) sweepFileLeftovers(file, result);
  await sweepOrphanSpends(runsDir, options, result.orphan_artifacts);
  return result;
}
