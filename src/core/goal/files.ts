import * as fs from 'node:fs';
import { errorMessage, isLoopxError } from '../errors';
import { readRegistry } from '../registry/read';
import { artifactFlagsHold, readRunIndex, type ReadRunIndexOptions, type RunIndexRead } from '../runtime/runIndex';
import type { StateDocument } from '../state/document';
import { readStateText } from '../state/stateFile';
import type { StateFileCache } from './cache';

/**
 * The goal files as the read views (status, the live model, the global views) read them: the last
 * read of every registry, state file and run index with its file stamp. A call stats the goal's
 * two files; only a changed stamp causes a read (a state file: see `StateFileCache` in `cache.ts`, the
 * process's one, which the decisions' `GoalLoader` reads through too). The run index is read
 * incrementally for the decisions (`GoalCache.runHistory`).
 */

/** A file's identity for the caches: any rewrite (atomic rename included) changes one of these. */
export interface FileStamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

/** The reads the read views make; injectable so tests can count them and the editor can serve unsaved buffers. */
export interface GoalFileReader {
  /** Null when the file does not exist. */
  stat(file: string): Promise<FileStamp | null>;
  readRegistry(file: string): Promise<Record<string, unknown>>;
  readState(file: string): Promise<string>;
  readRunIndex(indexFile: string, options: ReadRunIndexOptions): Promise<RunIndexRead>;
}

export const fileSystemGoalReader: GoalFileReader = {
  stat: async (file) => {
    try {
      // Sync: a stat is cheaper than the promise around it, and status stats two files per goal.
      const stats = fs.statSync(file, { throwIfNoEntry: false });
      return stats === undefined ? null : { mtimeMs: stats.mtimeMs, size: stats.size, ino: stats.ino };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
        return null;
      throw error;
    }
  },
  readRegistry,
  readState: readStateText,
  readRunIndex,
};

export function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** A state file as read for status: its text and parsed document, or why it could not be read. */
export type StateRead =
  { kind: 'ok'; text: string; doc: StateDocument } | { kind: 'error'; code: string; message: string };

/** Where one goal's files are. */
export interface GoalFilePaths {
  stateFile: string | null;
  indexFile: string;
  projectRoot: string;
}

interface Stamped<T> {
  stamp: FileStamp | null;
  value: T;
}

/**
 * How many released goals' run-index reads are kept when asked to (see `release`): a parsed index of
 * real shape (500 rows of 1 KB) takes ~10 MB, so only a couple of goals being worked on.
 */
const RELEASED_INDEXES_KEPT = 2;

/**
 * Keeps the last read of every registry, state file and run index with its file stamp: a read
 * happens only when the stamp changed since the last one.
 */
export class GoalFiles {
  private readonly registries = new Map<string, Stamped<Record<string, unknown>>>();
  private readonly indexes = new Map<string, Stamped<RunIndexRead | null>>();
  /** Index files found missing by the last look. */
  private readonly missingIndexes = new Set<string>();
  /**
   * The run-index reads of the goals released last with `keepIndexRead`, with their stamps. A goal
   * being worked on has its state file edited between appends: its item is then rebuilt without
   * parsing its index again, when the index's stamp and the read's artifact flags still hold.
   */
  private readonly releasedIndexes = new Map<string, Stamped<RunIndexRead | null>>();

  /**
   * `states`: the process's one state-file cache (`processStateFiles()`), shared with the decisions'
   * `GoalLoader`; its freshness rule is in `cache.ts`.
   */
  constructor(
    readonly reader: GoalFileReader,
    private readonly states: StateFileCache,
  ) {}

  /** The registry document, read again only when the file changed. Errors (bad JSON) propagate. */
  async registry(registryPath: string): Promise<{ exists: boolean; registry: Record<string, unknown> }> {
    const stamp = await this.reader.stat(registryPath);
    if (stamp === null) {
      this.registries.delete(registryPath);
      return { exists: false, registry: {} };
    }
    const cached = this.registries.get(registryPath);
    if (cached && sameStamp(cached.stamp, stamp)) return { exists: true, registry: cached.value };
    const registry = await this.reader.readRegistry(registryPath);
    this.registries.set(registryPath, { stamp, value: registry });
    return { exists: true, registry };
  }

  /** The stamps of the goal's state file and run index now (null: missing or not locatable). */
  async stamps(goal: GoalFilePaths): Promise<[FileStamp | null, FileStamp | null]> {
    return Promise.all([
      goal.stateFile === null ? Promise.resolve(null) : this.reader.stat(goal.stateFile),
      this.reader.stat(goal.indexFile),
    ]);
  }

  /**
   * The goal's state file and run index (read again only when changed). `stamps`: as just taken by
   * `stamps` (default: taken now); `artifactChecks`: how many newest rows get their artifacts stat'ed now.
   */
  async sources(
    goal: GoalFilePaths,
    stamps?: [FileStamp | null, FileStamp | null],
    artifactChecks = 0,
  ): Promise<{ state: StateRead; runs: RunIndexRead | null }> {
    const [stateStamp, indexStamp] = stamps ?? (await this.stamps(goal));
    const [state, runs] = await Promise.all([
      this.readState(goal.stateFile, stateStamp),
      this.readIndex(goal.indexFile, indexStamp, goal.projectRoot, artifactChecks),
    ]);
    return { state, runs };
  }

  /**
   * The run index as held from its last read (`read` null: the file did not exist), with the stamp
   * the file had when it was read, without a stat; undefined when none is held. Whatever is derived
   * from the read is keyed by the stamp of that read (a stat taken now may already be of rows appended since).
   */
  held(indexFile: string): { stamp: FileStamp | null; read: RunIndexRead | null } | undefined {
    const held = this.indexes.get(indexFile);
    if (held !== undefined) return { stamp: held.stamp, read: held.value };
    return this.missingIndexes.has(indexFile) ? { stamp: null, read: null } : undefined;
  }

  /**
   * Drops the goal's file reads: for callers that must not hold every goal's history at once.
   * `keepIndexRead`: keep its run-index read aside for its next rebuild (the live model's one-goal
   * refresh; a full build or a one-shot call keeps none).
   */
  release(goal: GoalFilePaths, options: { keepIndexRead?: boolean } = {}): void {
    const held = this.indexes.get(goal.indexFile);
    if (held !== undefined && options.keepIndexRead === true) {
      this.releasedIndexes.delete(goal.indexFile);
      this.releasedIndexes.set(goal.indexFile, held);
      if (this.releasedIndexes.size > RELEASED_INDEXES_KEPT)
        this.releasedIndexes.delete(this.releasedIndexes.keys().next().value as string);
    }
    this.indexes.delete(goal.indexFile);
    this.missingIndexes.delete(goal.indexFile);
    if (goal.stateFile !== null) this.states.forget(goal.stateFile);
  }

  private async readState(stateFile: string | null, stamp: FileStamp | null): Promise<StateRead> {
    if (stateFile === null) {
      return {
        kind: 'error',
        code: 'state_file_unresolved',
        message:
          'the goal has no state_file (or a relative one without an absolute repo) in the registry; set state_file',
      };
    }
    if (stamp === null) {
      this.states.forget(stateFile);
      return {
        kind: 'error',
        code: 'state_file_missing',
        message: `state file does not exist: ${stateFile}; create it (loopx bootstrap) or fix the goal's state_file in the registry`,
      };
    }
    try {
      const snapshot = await this.states.read(stateFile, this.reader, stamp);
      return { kind: 'ok', text: snapshot.text, doc: snapshot.document };
    } catch (error) {
      return {
        kind: 'error',
        code: isLoopxError(error) ? error.code : 'state_file_unreadable',
        message: errorMessage(error),
      };
    }
  }

  /** `artifactChecks`: how many newest rows get their artifacts stat'ed now (the rest on first access). */
  private async readIndex(
    indexFile: string,
    stamp: FileStamp | null,
    projectRoot: string,
    artifactChecks: number,
  ): Promise<RunIndexRead | null> {
    if (stamp === null) {
      this.indexes.delete(indexFile);
      this.releasedIndexes.delete(indexFile);
      this.missingIndexes.add(indexFile);
      return null;
    }
    this.missingIndexes.delete(indexFile);
    const cached = this.indexes.get(indexFile);
    if (cached && sameStamp(cached.stamp, stamp)) return cached.value;
    const released = this.releasedIndexes.get(indexFile);
    this.releasedIndexes.delete(indexFile);
    // A run's records can appear or go while its index stays as it was: the read's flags are checked.
    if (
      released !== undefined &&
      sameStamp(released.stamp, stamp) &&
      (released.value === null || artifactFlagsHold(released.value, projectRoot))
    ) {
      this.indexes.set(indexFile, released);
      return released.value;
    }
    let value: RunIndexRead;
    try {
      value = await this.reader.readRunIndex(indexFile, { projectRoot, artifactChecks });
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
    this.indexes.set(indexFile, { stamp, value });
    return value;
  }
}
