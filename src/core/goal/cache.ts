import { deepFreeze } from '../state/freeze';
import { parseStateDocument } from '../state/document';
import type { StateFileSnapshot } from '../state/stateFile';
import { RunHistoryReader } from '../quota/runHistory';
import { fileSystemGoalReader, sameStamp, type FileStamp, type GoalFileReader } from './files';
import { RACY_MS } from './persistentCache';

/** Parsed state files kept per process (a decision per heartbeat asks again and again; the read views release theirs). */
const STATE_FILES_KEPT = 128;

/** The reads a state file needs: its stamp and its text. */
export type StateTextReader = Pick<GoalFileReader, 'stat' | 'readState'>;

interface KeptState {
  snapshot: StateFileSnapshot;
  /** The file's stamp when its text was read (null: not stat'ed, as for a reader that cannot). */
  stamp: FileStamp | null;
  /** When the stat before that read was taken (wall clock, the file system's mtimes are too). */
  statedAtMs: number;
  /** Whose text it is: the editor's reader may serve unsaved buffers, so only that reader's stamp vouches for it. */
  reader: StateTextReader;
}

/**
 * The process's one cache of state files, for the decisions (`GoalLoader`) and the read views
 * (`GoalFiles`) alike: the text and its frozen parse, with the stamp the file had when read.
 *
 * Freshness rule (a decision must never act on a stale state file), the racy-stamp rule git uses
 * for its index:
 * - the file is stat'ed on every call; a changed stamp (mtime, size, inode) means a re-read;
 * - an equal stamp is trusted without reading only when the file's mtime was at least RACY_MS
 *   (the file system's timestamp granularity, generously: FAT's is 2 s) before the stat that
 *   preceded the kept read. Any write after that read then has a later mtime, so it changes the
 *   stamp. A file modified within RACY_MS of the read could have been rewritten at the same size
 *   in the same mtime tick: its text is read again and compared;
 * - a read text equal to the kept text reuses the kept parse (the same frozen object).
 * Why not "always re-read, reuse the parse when the text is equal": status stats 100 goals' files
 * where reading them costs more, and the rule above is as safe for a file left alone for RACY_MS.
 * The trade: a file system whose clock runs more than RACY_MS behind this machine's could hide a
 * same-size same-tick rewrite; the persistent cache trusts stamps on the same terms.
 */
export class StateFileCache {
  private readonly kept = new Map<string, KeptState>();

  /**
   * The state file, read again as the rule above says. `stamp`: as just taken by the caller
   * (undefined: stat'ed now). Throws what the reader throws (`state_file_missing`, not UTF-8, …),
   * and a missing file is forgotten.
   */
  async read(
    filePath: string,
    reader: StateTextReader = fileSystemGoalReader,
    stamp?: FileStamp | null,
  ): Promise<StateFileSnapshot> {
    const statedAtMs = Date.now();
    // A stat that fails (a permission, a loop) leaves the read to say why, as it did before this cache.
    const now = stamp !== undefined ? stamp : await reader.stat(filePath).catch(() => null);
    const kept = this.kept.get(filePath);
    if (
      kept !== undefined &&
      now !== null &&
      kept.reader === reader &&
      sameStamp(kept.stamp, now) &&
      kept.statedAtMs - now.mtimeMs > RACY_MS
    ) {
      this.touch(filePath, kept);
      return kept.snapshot;
    }
    let text: string;
    try {
      text = await reader.readState(filePath);
    } catch (error) {
      this.kept.delete(filePath);
      throw error;
    }
    const snapshot =
      kept !== undefined && kept.snapshot.text === text
        ? kept.snapshot
        : deepFreeze({ path: filePath, text, document: parseStateDocument(text) });
    this.touch(filePath, { snapshot, stamp: now, statedAtMs, reader });
    return snapshot;
  }

  /** Forgets one file (a read view letting go of a goal). */
  forget(filePath: string): void {
    this.kept.delete(filePath);
  }

  clear(): void {
    this.kept.clear();
  }

  get size(): number {
    return this.kept.size;
  }

  private touch(filePath: string, entry: KeptState): void {
    this.kept.delete(filePath);
    this.kept.set(filePath, entry);
    if (this.kept.size > STATE_FILES_KEPT) this.kept.delete(this.kept.keys().next().value as string);
  }
}

/**
 * What the goal loader keeps in memory between loads, one per process: the state files (see
 * `StateFileCache`, shared with the read views' `GoalFiles`) and the run histories (each index
 * re-read only past the stamps of what was read: see `RunHistoryReader`).
 */
export class GoalCache {
  /** In memory only: the one persistent cache is `persistentCache.ts`. */
  readonly runHistory = new RunHistoryReader();
  readonly stateFiles = new StateFileCache();

  /**
   * The state file for read-only callers (see `StateFileCache` for when it is read again). The
   * snapshot is frozen, so a caller that tried to change it would throw, not corrupt the next reader's view.
   */
  stateFile(filePath: string): Promise<StateFileSnapshot> {
    return this.stateFiles.read(filePath);
  }

  /** Forgets what this process read (the persistent cache stays). */
  clear(): void {
    this.runHistory.clear();
    this.stateFiles.clear();
  }
}

let processCache: GoalCache | null = null;

/** The process's goal cache (the CLI, the extension host and a turn loop each keep one). */
export function processGoalCache(): GoalCache {
  return (processCache ??= new GoalCache());
}

/** The process's one state-file cache (the loader's and the read views'). */
export function processStateFiles(): StateFileCache {
  return processGoalCache().stateFiles;
}
