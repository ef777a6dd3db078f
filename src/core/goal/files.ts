import * as fs from 'node:fs';
import { errorMessage, isLoopxError } from '../errors';
import { readRegistry } from '../registry/read';
import { readRunIndex, type ReadRunIndexOptions, type RunIndexRead } from '../runtime/runIndex';
import type { StateDocument } from '../state/document';
import { readStateText } from '../state/stateFile';
import type { GoalCache } from './cache';

/**
 * The goal files as the read views (status, the live model, the global views) read them, through the
 * process's one cache per file kind (`GoalCache` in `cache.ts`, which the decisions' `GoalLoader` reads
 * through too): a call stats the goal's two files; only a changed stamp causes a read. The run index
 * is read in full here and incrementally for the decisions (`GoalCache.runIndexes`).
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

/**
 * The goal files as one status cache reads them, through the process's caches (`GoalCache`: one per
 * file kind, shared with the decisions' `GoalLoader` and every other status cache): a read happens
 * only when the file's stamp changed since the read kept (see `cache.ts` for when another holder's
 * read is taken). The run-index reads this status cache works on are held until it lets them go.
 */
export class GoalFiles {
  /** Index files found missing by this cache's last look. */
  private readonly missingIndexes = new Set<string>();

  /**
   * `caches`: the process's (`processGoalCache()`); the freshness rules are in `cache.ts`.
   */
  constructor(
    readonly reader: GoalFileReader,
    private readonly caches: Pick<GoalCache, 'registries' | 'stateFiles' | 'runIndexes'>,
  ) {}

  /** The registry document, read again only when the file changed. Errors (bad JSON) propagate. */
  registry(registryPath: string): Promise<{ exists: boolean; registry: Record<string, unknown> }> {
    return this.caches.registries.read(registryPath, this.reader, this);
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
    const statedAtMs = Date.now();
    const [stateStamp, indexStamp] = stamps ?? (await this.stamps(goal));
    const [state, runs] = await Promise.all([
      this.readState(goal.stateFile, stateStamp),
      this.readIndex(goal.indexFile, indexStamp, goal.projectRoot, artifactChecks, statedAtMs),
    ]);
    return { state, runs };
  }

  /**
   * The run index as held from its last read (`read` null: the file did not exist), with the stamp
   * the file had when it was read, without a stat; undefined when none is held. Whatever is derived
   * from the read is keyed by the stamp of that read (a stat taken now may already be of rows appended since).
   */
  held(indexFile: string): { stamp: FileStamp | null; read: RunIndexRead | null } | undefined {
    const held = this.caches.runIndexes.held(indexFile, this);
    if (held !== undefined) return held;
    return this.missingIndexes.has(indexFile) ? { stamp: null, read: null } : undefined;
  }

  /**
   * Lets go of the goal's file reads: for callers that must not hold every goal's history at once.
   * `keepIndexRead`: keep its run-index read aside for its next rebuild (the live model's one-goal
   * refresh; a full build or a one-shot call keeps none).
   */
  release(goal: GoalFilePaths, options: { keepIndexRead?: boolean } = {}): void {
    this.caches.runIndexes.release(goal.indexFile, this, options.keepIndexRead === true);
    this.missingIndexes.delete(goal.indexFile);
    if (goal.stateFile !== null) this.caches.stateFiles.forget(goal.stateFile);
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
      this.caches.stateFiles.forget(stateFile);
      return {
        kind: 'error',
        code: 'state_file_missing',
        message: `state file does not exist: ${stateFile}; create it (loopx bootstrap) or fix the goal's state_file in the registry`,
      };
    }
    try {
      const snapshot = await this.caches.stateFiles.read(stateFile, this.reader, stamp);
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
    statedAtMs: number,
  ): Promise<RunIndexRead | null> {
    if (stamp === null) {
      this.caches.runIndexes.missing(indexFile);
      this.missingIndexes.add(indexFile);
      return null;
    }
    this.missingIndexes.delete(indexFile);
    return this.caches.runIndexes.read(
      indexFile,
      stamp,
      { projectRoot, artifactChecks, statedAtMs },
      this.reader,
      this,
    );
  }
}
