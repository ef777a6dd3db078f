import { deepFreeze } from '../state/freeze';
import { parseStateDocument } from '../state/document';
import type { StateFileSnapshot } from '../state/stateFile';
import { isLoopxError } from '../errors';
import { RunHistoryReader } from '../quota/runHistory';
import { artifactFlagsHold, type RunIndexRead } from '../runtime/runIndex';
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

/** Registry documents kept per process: status reads one or two registries (the project's, the global one). */
const REGISTRIES_KEPT = 16;

/**
 * A read kept by the process's registry and run-index caches: whose reader read it, at which stamp,
 * and which holder (a `GoalFiles`, one per status cache) read it.
 */
interface Kept<T> {
  stamp: FileStamp | null;
  value: T;
  /** The reader that read it: another reader (a test's counting one, the editor's) never gets it. */
  reader: object;
  /** When the stat before the read was taken (wall clock). */
  statedAtMs: number;
  /** The holder whose read it is. */
  readBy: object;
}

/**
 * Whether `holder` may take `kept` for a file whose stamp is `stamp` now, read through `reader`: the
 * holder that read it trusts an equal stamp (as each status cache always did with its own reads);
 * another holder trusts it only by `StateFileCache`'s racy-stamp rule (the file's mtime at least
 * RACY_MS before the stat that preceded the kept read), so sharing a read never trusts a same-size
 * rewrite in the same mtime tick that a read of its own would have seen.
 */
function mayTake<T>(kept: Kept<T> | undefined, stamp: FileStamp, reader: object, holder: object): kept is Kept<T> {
  return (
    kept !== undefined &&
    kept.reader === reader &&
    sameStamp(kept.stamp, stamp) &&
    (kept.readBy === holder || kept.statedAtMs - stamp.mtimeMs > RACY_MS)
  );
}

type KeptRegistry = Kept<Record<string, unknown>>;

/**
 * The process's one cache of registry documents (every status cache's `GoalFiles` reads through it):
 * the parsed document by path, read again only when its stamp changed (see `mayTake`). Documents are
 * shared read-only: the parses derived from a document (`registry/read.ts`, per document) are then
 * made once per process too.
 */
export class RegistryCache {
  private readonly kept = new Map<string, KeptRegistry>();

  /** The registry document at `registryPath` (exists false: no file). Errors (bad JSON) propagate. */
  async read(
    registryPath: string,
    reader: Pick<GoalFileReader, 'stat' | 'readRegistry'>,
    holder: object,
  ): Promise<{ exists: boolean; registry: Record<string, unknown> }> {
    const statedAtMs = Date.now();
    const stamp = await reader.stat(registryPath);
    if (stamp === null) {
      this.kept.delete(registryPath);
      return { exists: false, registry: {} };
    }
    const kept = this.kept.get(registryPath);
    if (mayTake(kept, stamp, reader, holder)) return { exists: true, registry: kept.value };
    const registry = await reader.readRegistry(registryPath);
    this.kept.delete(registryPath);
    this.kept.set(registryPath, { stamp, value: registry, reader, statedAtMs, readBy: holder });
    if (this.kept.size > REGISTRIES_KEPT) this.kept.delete(this.kept.keys().next().value as string);
    return { exists: true, registry };
  }

  clear(): void {
    this.kept.clear();
  }
}

/** How many released run-index reads are kept for their next rebuild (see `RunIndexCache.release`). */
const RELEASED_INDEXES_KEPT = 2;

interface KeptIndexRead extends Kept<RunIndexRead> {
  /** The holders that hold it now (a status cache working on the goal). */
  holders: Set<object>;
  /** Released with `keepIndexRead`: no holder, kept for the goal's next rebuild. */
  released: boolean;
}

/**
 * The process's one cache of run indexes: the read views' full reads (`GoalFiles`, by stamp) and the
 * decisions' incremental histories (`history`: each index re-read only past what was read, see
 * `RunHistoryReader`), in memory only (the persistent cache is `persistentCache.ts`).
 *
 * A full read is held by the status caches working on its goal and dropped when the last lets go
 * (status over hundreds of goals must not hold every goal's rows at once), except the last
 * `RELEASED_INDEXES_KEPT` released with `keepIndexRead` (a goal being worked on: its state file is
 * edited between appends, and its item is rebuilt without parsing its index again while the read's
 * stamp and artifact flags still hold).
 */
export class RunIndexCache {
  /** The decisions' incremental run histories. */
  readonly history = new RunHistoryReader();
  private readonly reads = new Map<string, KeptIndexRead>();

  /** The read `holder` holds of `indexFile`, with the stamp it was read at; undefined when it holds none. */
  held(indexFile: string, holder: object): { stamp: FileStamp | null; read: RunIndexRead } | undefined {
    const kept = this.reads.get(indexFile);
    return kept !== undefined && kept.holders.has(holder) ? { stamp: kept.stamp, read: kept.value } : undefined;
  }

  /**
   * The run index as read at `stamp` (the file exists), read again unless a kept read may be taken:
   * the holder's own at an equal stamp; else one kept (its own released one, or another holder's by
   * the racy-stamp rule) whose artifact flags still hold. `artifactChecks`: how many newest rows of
   * a new read get their artifacts stat'ed now (the rest on first access).
   */
  async read(
    indexFile: string,
    stamp: FileStamp,
    options: { projectRoot: string; artifactChecks: number; statedAtMs: number },
    reader: Pick<GoalFileReader, 'readRunIndex'>,
    holder: object,
  ): Promise<RunIndexRead> {
    const kept = this.reads.get(indexFile);
    if (kept !== undefined && kept.holders.has(holder) && kept.reader === reader && sameStamp(kept.stamp, stamp))
      return kept.value;
    // A run's records can appear or go while its index stays as it was: the read's flags are checked.
    if (mayTake(kept, stamp, reader, holder) && artifactFlagsHold(kept.value, options.projectRoot)) {
      kept.holders.add(holder);
      kept.released = false;
      return kept.value;
    }
    let value: RunIndexRead;
    try {
      value = await reader.readRunIndex(indexFile, {
        projectRoot: options.projectRoot,
        artifactChecks: options.artifactChecks,
      });
    } catch (error) {
      // One goal's unreadable index (a FIFO, a device, an oversized file) must not fail the whole
      // status: the goal shows its runs as unknown with the reason (a warning, never "0 runs"), and
      // every other goal reads on. Admission refuses the same index with the same message.
      if (!isLoopxError(error)) throw error;
      value = {
        index_file: indexFile,
        exists: true,
        raw_count: 0,
        skipped: [{ line: 0, reason: error.message }],
        rows: [],
        unreadable: error.message,
      };
    }
    // Other holders of an older read get this one on their next look (their `held` is then empty).
    this.reads.delete(indexFile);
    this.reads.set(indexFile, {
      stamp,
      value,
      reader,
      statedAtMs: options.statedAtMs,
      readBy: holder,
      holders: new Set([holder]),
      released: false,
    });
    return value;
  }

  /** The index no longer exists: no read of it is kept. */
  missing(indexFile: string): void {
    this.reads.delete(indexFile);
  }

  /**
   * `holder` lets go of its read of `indexFile`. The last holder's read is dropped, or kept for the
   * goal's next rebuild when `keepIndexRead` (the newest `RELEASED_INDEXES_KEPT` such reads).
   */
  release(indexFile: string, holder: object, keepIndexRead: boolean): void {
    const kept = this.reads.get(indexFile);
    if (kept === undefined || !kept.holders.delete(holder) || kept.holders.size > 0) return;
    if (!keepIndexRead) {
      this.reads.delete(indexFile);
      return;
    }
    kept.released = true;
    this.reads.delete(indexFile);
    this.reads.set(indexFile, kept);
    const released = [...this.reads].filter(([, entry]) => entry.released);
    for (const [file] of released.slice(0, Math.max(0, released.length - RELEASED_INDEXES_KEPT)))
      this.reads.delete(file);
  }

  clear(): void {
    this.history.clear();
    this.reads.clear();
  }
}

/**
 * What this process keeps in memory of the goal files, one cache per file kind: the registries
 * (`RegistryCache`), the state files (`StateFileCache`) and the run indexes (`RunIndexCache`: the
 * read views' full reads and the decisions' incremental histories). The decisions (`GoalLoader`) and
 * the read views (`GoalFiles`, under every status cache) read through the same one.
 */
export class GoalCache {
  /** In memory only: the one persistent cache is `persistentCache.ts`. */
  readonly registries = new RegistryCache();
  readonly stateFiles = new StateFileCache();
  readonly runIndexes = new RunIndexCache();

  /** The decisions' incremental run histories (`runIndexes.history`). */
  get runHistory(): RunHistoryReader {
    return this.runIndexes.history;
  }

  /**
   * The state file for read-only callers (see `StateFileCache` for when it is read again). The
   * snapshot is frozen, so a caller that tried to change it would throw, not corrupt the next reader's view.
   */
  stateFile(filePath: string): Promise<StateFileSnapshot> {
    return this.stateFiles.read(filePath);
  }

  /** Forgets what this process read (the persistent cache stays). */
  clear(): void {
    this.registries.clear();
    this.runIndexes.clear();
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
