import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { parseTempName, TEMP_HOST_TAG } from '../fs/atomicWrite';
import { isPidAlive, LOCK_FILE_SUFFIX, reclaimAbandonedLock, withFileLock } from '../fs/fileLock';
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
 *     resume. Decided under the index lock, which every one of our writers holds from reserving the
 *     names to appending the line, so no live writer's pair can be mistaken for an orphan. Only our
 *     records are removed: an empty name reservation, or a spend record with our `slots` field;
 *   - empty run records: any `runs/<name>.json` that is empty and that no index line names. A
 *     writer reserves a run's name by creating its `.json` empty (O_EXCL) and then writes it
 *     atomically, all under the index lock; an empty unindexed one seen under that lock is a killed
 *     writer's reservation (the record never existed), not a record. Readers go through the index,
 *     so they never read one.
 *
 * Only the goal's runtime folder, its `turns/` and its `runs/` are looked at, never recursively.
 */

const SPEND_ARTIFACT = /-quota-slot-spent(-[0-9]+)?\.(json|md)$/;

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
    if (reclaimAbandonedLock(file)) removed.push(file);
  }
}

/** A dead holder's lock on `file`, and our dead writers' temp files of `file` (nothing else in its folder). */
function sweepFileLeftovers(file: string, result: SweepResult): void {
  const lock = `${file}${LOCK_FILE_SUFFIX}`;
  if (reclaimAbandonedLock(lock)) result.locks.push(lock);
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

function unnamedSpendStems(runsDir: string, indexText: string): string[] {
  const stems = new Set<string>();
  for (const name of listDir(runsDir)) {
    if (!SPEND_ARTIFACT.test(name)) continue;
    // Conservative: a name anywhere in the index (even in a torn line) counts as named.
    if (indexText.includes(name)) continue;
    stems.add(name.replace(/\.(json|md)$/, ''));
  }
  return [...stems].sort();
}

/** Empty `.json` files of runs/ that no index line names: name reservations of killed writers. */
function unnamedEmptyRecords(runsDir: string, indexText: string): string[] {
  const files: string[] = [];
  for (const name of listDir(runsDir)) {
    if (!name.endsWith('.json') || name.startsWith('.') || indexText.includes(name)) continue;
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

async function sweepOrphanSpends(runsDir: string, options: SweepOptions, removed: string[]): Promise<void> {
  const indexFile = path.join(runsDir, RUN_INDEX_FILE);
  // Cheap check first, without the lock: most runs have nothing to do.
  const indexText = readText(indexFile);
  if (unnamedSpendStems(runsDir, indexText).length === 0 && unnamedEmptyRecords(runsDir, indexText).length === 0)
    return;
  try {
    await withFileLock(
      indexFile,
      { operation: 'sweep_orphan_spends', clock: options.clock, timeoutMs: options.indexLockTimeoutMs ?? 1000 },
      () => {
        for (const stem of unnamedSpendStems(runsDir, readText(indexFile))) {
          const json = path.join(runsDir, `${stem}.json`);
          if (!isOurSpendArtifact(json)) continue;
          // The .md first: the .json reserves the name until the pair is gone.
          for (const file of [path.join(runsDir, `${stem}.md`), json]) if (removeIfExists(file)) removed.push(file);
        }
        // Re-checked under the lock: every writer holds it from reserving the name to appending the line.
        for (const file of unnamedEmptyRecords(runsDir, readText(indexFile)))
          if (removeIfExists(file)) removed.push(file);
      },
    );
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
