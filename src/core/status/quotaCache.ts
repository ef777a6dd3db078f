import type { Clock } from '../clock';
import { fileSystemGoalReader, type FileStamp, type GoalFileReader } from '../goal/files';
import type { GoalRef } from '../registry/goalRef';
import type { StatusRefKeys } from './goalStatusSchema';
import type { GoalQuotaSummary } from '../quota/summary';
import { goalRuntimeDir, runIndexPath } from '../runtime/layout';
import { statusGoalQuotaSummary, type StatusQuotaReads } from './statusQuota';

/**
 * Quota summaries for a long-lived reader (the status server). A summary reads the registry, the
 * run index and the reservations of its goal, and depends on the time only through the rolling
 * window and the expiry of live reservations. So it is kept while those files are unchanged (the
 * goal's runtime folder stamp covers the atomically replaced reservations file) until the next
 * spend leaves the window (`next_slot_frees_at`); with live reservations, only for
 * RESERVATION_RECHECK_MS (when one expires is not in the summary); never longer than `maxAgeMs`.
 */

interface Entry {
  key: string;
  summary: GoalQuotaSummary;
  validUntilMs: number;
}

export interface QuotaSummaryCacheOptions {
  registryPath: string;
  clock: Clock;
  maxAgeMs?: number;
  reader?: GoalFileReader;
}

export const DEFAULT_QUOTA_MAX_AGE_MS = 10 * 60_000;
export const RESERVATION_RECHECK_MS = 15_000;

export class QuotaSummaryCache {
  private readonly entries = new Map<string, Entry>();
  private readonly reader: GoalFileReader;

  constructor(private readonly options: QuotaSummaryCacheOptions) {
    this.reader = options.reader ?? fileSystemGoalReader;
  }

  /**
   * The stamps a summary of `target` depends on, as one comparable key. `indexStamp`: the run
   * index's stamp when the caller read it (its summary is of that read), instead of a stat now.
   */
  async inputsKey(target: Pick<GoalRef, 'runtimeRoot' | 'goalId'>, indexStamp?: FileStamp | null): Promise<string> {
    const stamps: (FileStamp | null)[] = await Promise.all([
      this.reader.stat(this.options.registryPath),
      indexStamp !== undefined ? indexStamp : this.reader.stat(runIndexPath(target.runtimeRoot, target.goalId)),
      this.reader.stat(goalRuntimeDir(target.runtimeRoot, target.goalId)),
    ]);
    return JSON.stringify(stamps);
  }

  /** Whether the kept summary of a goal is still valid for inputs `key` at the clock's now. */
  isFresh(goalId: string, key: string): boolean {
    const entry = this.entries.get(goalId);
    return entry !== undefined && entry.key === key && this.options.clock.now().getTime() < entry.validUntilMs;
  }

  /**
   * The goal's summary, recomputed only when its inputs changed or its window moved, from the reads status
   * holds (`reads`: the goal, and its run index or digest with the stamp it was read at).
   */
  async summary(target: Pick<GoalRef, StatusRefKeys>, reads: StatusQuotaReads): Promise<GoalQuotaSummary> {
    const key = await this.inputsKey(target, reads.index.kind === 'unread' ? undefined : reads.index.stamp);
    const kept = this.entries.get(target.goalId);
    if (kept !== undefined && this.isFresh(target.goalId, key)) return kept.summary;
    const summary = await statusGoalQuotaSummary(reads, this.options.clock);
    const now = this.options.clock.now().getTime();
    const frees = summary.next_slot_frees_at === null ? NaN : Date.parse(summary.next_slot_frees_at);
    const validUntilMs = Math.min(
      now + (this.options.maxAgeMs ?? DEFAULT_QUOTA_MAX_AGE_MS),
      Number.isNaN(frees) ? Infinity : frees,
      summary.reserved_slots > 0 ? now + RESERVATION_RECHECK_MS : Infinity,
    );
    this.entries.set(target.goalId, { key, summary, validUntilMs });
    return summary;
  }

  /** Forgets goals that are no longer listed. */
  retain(goalIds: ReadonlySet<string>): void {
    for (const goalId of this.entries.keys()) if (!goalIds.has(goalId)) this.entries.delete(goalId);
  }
}
