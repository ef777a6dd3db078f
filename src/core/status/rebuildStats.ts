import { fileSystemGoalReader, type FileStamp, type GoalFileReader } from '../goal/files';

/**
 * A status reader whose stats are taken once per rebuild of the live model. One rebuild looks at
 * each input several times (the inputs' fingerprint, the goal's status item, its quota summary's
 * key, the run-index digest): with 100 goals that was ~900 `stat` calls for ~300 files. Inside
 * `during()` a file's first stat is kept and answered again; outside, every stat is fresh.
 * `forget()` (called on every invalidation: a watcher saw a change) drops the kept stats, so a
 * rebuild that starts, or goes on, after a change never sees a stamp from before it.
 */
export class RebuildStats implements GoalFileReader {
  private kept: Map<string, Promise<FileStamp | null>> | undefined;
  private depth = 0;

  constructor(private readonly inner: GoalFileReader = fileSystemGoalReader) {}

  /** Runs `work` with stats kept (nested and overlapping calls share them until the last ends). */
  async during<T>(work: () => Promise<T>): Promise<T> {
    if (this.depth++ === 0) this.kept = new Map();
    try {
      return await work();
    } finally {
      if (--this.depth === 0) this.kept = undefined;
    }
  }

  forget(): void {
    if (this.kept !== undefined) this.kept = new Map();
  }

  stat(file: string): Promise<FileStamp | null> {
    const kept = this.kept;
    if (kept === undefined) return this.inner.stat(file);
    let stamp = kept.get(file);
    if (stamp === undefined) {
      stamp = this.inner.stat(file);
      kept.set(file, stamp);
      // A failed stat is not kept: the next look tries again.
      stamp.catch(() => {
        if (kept.get(file) === stamp) kept.delete(file);
      });
    }
    return stamp;
  }

  readRegistry(file: string): Promise<Record<string, unknown>> {
    return this.inner.readRegistry(file);
  }

  readState(file: string): Promise<string> {
    return this.inner.readState(file);
  }

  readRunIndex(...args: Parameters<GoalFileReader['readRunIndex']>): ReturnType<GoalFileReader['readRunIndex']> {
    return this.inner.readRunIndex(...args);
  }
}
