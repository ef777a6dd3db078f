import { deepFreeze } from '../state/freeze';
import { parseStateDocument } from '../state/document';
import { readStateText, type StateFileSnapshot } from '../state/stateFile';
import { RunHistoryReader } from '../quota/runHistory';

/** Parsed state files kept per process (a decision per heartbeat asks again and again). */
const STATE_FILES_KEPT = 32;

/**
 * What the goal loader keeps in memory between loads, one per process: the parsed state files
 * (each re-read every time, re-parsed only when its text changed) and the run histories (each
 * index re-read only past the stamps of what was read: see `RunHistoryReader`). Nothing else in the
 * core keeps a cache of these files.
 */
export class GoalCache {
  /** In memory only: the one persistent cache is `persistentCache.ts`. */
  readonly runHistory = new RunHistoryReader();
  private readonly stateFiles = new Map<string, StateFileSnapshot>();

  /**
   * The state file for read-only callers: read every time and parsed again only when its text
   * differs from the last read of the same path (then the kept snapshot is the same object). The
   * snapshot is frozen, so a caller that tried to change it would throw, not corrupt the next reader's view.
   */
  async stateFile(filePath: string): Promise<StateFileSnapshot> {
    const text = await readStateText(filePath);
    const kept = this.stateFiles.get(filePath);
    if (kept !== undefined && kept.text === text) return kept;
    const snapshot = deepFreeze({ path: filePath, text, document: parseStateDocument(text) });
    this.stateFiles.delete(filePath);
    this.stateFiles.set(filePath, snapshot);
    if (this.stateFiles.size > STATE_FILES_KEPT) this.stateFiles.delete(this.stateFiles.keys().next().value as string);
    return snapshot;
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
