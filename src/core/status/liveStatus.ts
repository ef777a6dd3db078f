import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { Clock } from '../clock';
import { errorMessage } from '../errors';
import { goalRunsDir, goalRuntimeDir, RUN_INDEX_FILE } from '../runtime/layout';
import type { GoalQuotaSummary } from '../quota/summary';
import type { GoalFileReader, StateRead } from '../goal/files';
import type { GoalRef } from '../registry/goalRef';
import { GoalStatusCache, statusEntryKey, statusStateFile, type StatusRefKeys } from './goalStatus';
import { QuotaSummaryCache } from './quotaCache';
import { monitorDueChangesAt } from './projection/monitorDue';
import { projectedStatusQuota, statusQuotaReads } from './statusQuota';
import { RebuildStats } from './rebuildStats';
import type { RecentRunRow } from '../goal/recentRuns';
import { readAgentExecutorConfig, type ExecutorConfig } from '../executors/config';
import { activeLeaseHolders, type LeaseHolder } from '../leases/store';
import { registryGoalEntries } from '../registry/read';
import {
  goalItems,
  loadStatus,
  readStatusRegistry,
  statusTargets,
  type StatusPayload,
  type StatusPayloadItem,
  type StatusRegistry,
  type StatusRequest,
} from './statusPayload';
import { STATUS_NEUTRAL_CLASSIFICATIONS, type RunIndexEntry, type RunIndexRead } from '../runtime/runIndex';

/**
 * The one live status model of a registry. It owns the caches (per-goal status items by file
 * stamps, quota summaries by stamps and window), rebuilds only when an input changed, and tells
 * its listeners what changed: goals whose status moved, runs recorded since the last build (by
 * any process: the CLI, an agent, the editor), and quota that changed. The editor feeds VS Code's
 * watcher events into `invalidate()`; the CLI's `serve-status` lets it watch with `fs.watch`; the
 * editor's views, its status server and its extension API events all read the same instance.
 */

export interface LiveStatusOptions {
  registryPath: string;
  homeDir: string;
  runtimeRootOverride?: string | null;
  clock: Clock;
  /** Watch the inputs with fs.watch (the CLI's server); the editor feeds its own watcher events instead. */
  watch?: boolean;
  /** How long a snapshot is trusted without re-checking file stamps (default 5 s). */
  ttlMs?: number;
  /** Share the persistent cache in the runtime root with the CLI (diskCache.ts; default true). */
  persistentCache?: boolean;
  /** The file reads status makes (tests count them); the file system by default. */
  reader?: GoalFileReader;
}

export interface ReadyLiveSnapshot {
  ok: true;
  version: number;
  registryPath: string;
  /** Not scrubbed: surfaces that publish it scrub it (the status server does). */
  payload: StatusPayload;
  items: ReadonlyMap<string, StatusPayloadItem>;
  /** Each goal's quota summary (absent when it could not be computed). */
  quota: ReadonlyMap<string, GoalQuotaSummary>;
  /** Each goal's newest runs, from the persistent cache (absent without it, or when not kept: read the index). */
  recentRuns: ReadonlyMap<string, readonly RecentRunRow[]>;
  targets: readonly Pick<GoalRef, StatusRefKeys>[];
  /** The registry document the snapshot was built from (parsed once). */
  registry: Readonly<Record<string, unknown>>;
}

export interface FailedLiveSnapshot {
  ok: false;
  version: number;
  registryPath: string;
  /** Why the registry could not be read (not scrubbed). */
  error: string;
}

export type LiveSnapshot = ReadyLiveSnapshot | FailedLiveSnapshot;

/** What changed between two snapshots of a registry. */
export interface StatusDiff {
  registryPath: string;
  version: number;
  added: string[];
  removed: string[];
  /** Goals whose status item changed (added ones included). */
  changed: string[];
  /** Runs recorded since the previous snapshot (bookkeeping rows such as spends left out), newest first, per goal. */
  newRuns: { goalId: string; runs: NewRun[] }[];
  /** Goals whose quota summary changed (spend, reservation, settings or window). */
  quotaChanged: { goalId: string; quota: GoalQuotaSummary | null }[];
}

/** A run recorded since the previous snapshot: a turn's record, whichever process wrote it. */
export interface NewRun {
  generated_at: string | null;
  classification: string | null;
  agent_id: string | null;
  todo_id: string | null;
}

export interface Subscription {
  dispose(): void;
}

export const DEFAULT_LIVE_TTL_MS = 5_000;
/** How long after a rebuild the persistent cache is written (rebuilds in a burst write it once). */
const CACHE_SAVE_DELAY_MS = 100;
/** Beyond this many watched folders the TTL alone keeps the snapshot fresh. */
const MAX_WATCHED_DIRS = 2_000;

export class LiveStatusModel {
  readonly registryPath: string;
  private readonly cache: GoalStatusCache;
  private readonly quotaCache: QuotaSummaryCache;
  /** The file reads of both caches; a rebuild stats each input once. */
  private readonly stats: RebuildStats;
  private snapshot: LiveSnapshot | undefined;
  private fingerprint = '';
  private checkedAtMs = 0;
  private dirty = true;
  private refreshing: Promise<LiveSnapshot> | undefined;
  private version = 0;
  private readonly listeners = new Set<(diff: StatusDiff) => void>();
  private readonly watchers = new Map<string, fs.FSWatcher>();
  /** Which file names in a watched folder are inputs (null: all of them). */
  private readonly filters = new Map<string, ((file: string) => boolean) | null>();
  private closed = false;
  /** The persistent cache's save of the latest build, run after the snapshot is published (one at a time). */
  private pendingSave: (() => Promise<boolean>) | undefined;
  private saveTimer: NodeJS.Timeout | undefined;
  /** When a summary's monitor-due fields of the snapshot next change (projection/monitorDue.ts): rebuilt after. */
  private monitorChangesAtMs = Infinity;

  constructor(private readonly options: LiveStatusOptions) {
    this.registryPath = path.resolve(options.registryPath);
    this.stats = new RebuildStats(options.reader);
    this.cache = new GoalStatusCache(this.stats);
    this.quotaCache = new QuotaSummaryCache({
      registryPath: this.registryPath,
      clock: options.clock,
      reader: this.stats,
    });
  }

  /** Marks the snapshot stale: the next `current()` rebuilds what changed. */
  invalidate(): void {
    this.dirty = true;
    this.stats.forget();
  }

  /** How many rebuilds produced a new snapshot. */
  get rebuilds(): number {
    return this.version;
  }

  /** The latest snapshot, rebuilt first when an input changed (or re-checked in the background after the TTL). */
  async current(): Promise<LiveSnapshot> {
    if (this.snapshot !== undefined && !this.dirty) {
      if (performance.now() - this.checkedAtMs >= (this.options.ttlMs ?? DEFAULT_LIVE_TTL_MS))
        void this.refresh().catch(() => undefined);
      return this.snapshot;
    }
    return this.refresh();
  }

  /** Re-checks the inputs now and returns the (possibly unchanged) snapshot. */
  refresh(): Promise<LiveSnapshot> {
    this.refreshing ??= this.stats
      .during(() => this.rebuildIfChanged())
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /**
   * Re-reads only these goals (a watcher saw their files change): their status items and quota
   * are rebuilt from their own files, every other goal's item is kept without a look at its files,
   * and the listeners get the differences of these goals only. Falls back to a full `refresh()`
   * when there is no snapshot yet, the registry file changed, or a goal is not in the snapshot.
   * The snapshot's aggregate payload (counts, contract, attention queue) is left as it was, so the
   * model stays marked stale: the next `current()` (the status server's) re-checks every input.
   */
  async refreshGoals(goalIds: readonly string[]): Promise<LiveSnapshot> {
    await this.refreshing;
    // The caller saw these goals' files change: stats kept by a rebuild still running predate that.
    this.stats.forget();
    return this.stats.during(() => this.rebuildGoals(goalIds));
  }

  private async rebuildGoals(goalIds: readonly string[]): Promise<LiveSnapshot> {
    const previous = this.snapshot;
    if (previous === undefined || !previous.ok) return this.refresh();
    const targets = goalIds.map((goalId) => previous.targets.find((target) => target.goalId === goalId));
    const { exists, registry } = await this.cache.registry(this.registryPath).catch(() => ({
      exists: false,
      registry: undefined,
    }));
    if (!exists || registry !== previous.registry || targets.some((target) => target === undefined)) {
      this.invalidate();
      return this.refresh();
    }
    const items = new Map(previous.items);
    const quota = new Map(previous.quota);
    const recentRuns = new Map(previous.recentRuns);
    for (const goalId of new Set(goalIds)) {
      quota.delete(goalId);
      recentRuns.delete(goalId);
      const payload = await this.statusRegistry()
        .then((read) => loadStatus({ ...this.statusRequest(read, quota, recentRuns, true), goalId, reports: false }))
        .catch(() => null);
      const item = payload === null ? undefined : goalItems(payload).find((found) => found.goal_id === goalId);
      if (item === undefined) {
        // The goal could not be projected alone (its registry entry moved meanwhile): rebuild everything.
        this.invalidate();
        return this.refresh();
      }
      items.set(goalId, item);
    }
    // A full refresh that finished while these goals were read published a newer snapshot: publishing
    // ours would put its other goals back to older items. Redo the goals on top of the newer one.
    if (this.snapshot !== previous) return this.refreshGoals(goalIds);
    const snapshot: ReadyLiveSnapshot = { ...previous, version: ++this.version, items, quota, recentRuns };
    this.snapshot = snapshot;
    // The payload and the fingerprint still describe the previous build: the next current() re-checks.
    this.dirty = true;
    if (this.listeners.size > 0) {
      const only = (s: ReadyLiveSnapshot): ReadyLiveSnapshot => ({
        ...s,
        items: new Map(goalIds.flatMap((id) => (s.items.has(id) ? [[id, s.items.get(id)!] as const] : []))),
        quota: new Map(goalIds.flatMap((id) => (s.quota.has(id) ? [[id, s.quota.get(id)!] as const] : []))),
      });
      const diff = diffSnapshots(only(previous), only(snapshot));
      if (diff !== null) {
        diff.newRuns = await this.newRunsOf(only(previous), only(snapshot));
        for (const listener of [...this.listeners]) listener(diff);
      }
    }
    return snapshot;
  }

  /** Called with each snapshot's differences from the previous one (never for an unchanged rebuild). */
  onDidChange(listener: (diff: StatusDiff) => void): Subscription {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }

  /** The parsed files of one goal of the current snapshot (for detail views). */
  async goalSources(goalId: string): Promise<{ state: StateRead; runs: RunIndexRead | null } | null> {
    const snapshot = await this.current();
    const target = snapshot.ok ? snapshot.targets.find((t) => t.goalId === goalId) : undefined;
    return target === undefined ? null : this.cache.goalSources(target);
  }

  /**
   * One goal's runs, newest first (empty when the goal or its index is not there), read through this
   * model's file cache and let go of at once: holding every goal's whole run history would cost the
   * editor +35 MB on M. For the editor's Recent runs when the persistent cache did not keep them.
   */
  async goalRuns(goalId: string): Promise<RunIndexEntry[]> {
    const snapshot = await this.current();
    const target = snapshot.ok ? snapshot.targets.find((t) => t.goalId === goalId) : undefined;
    if (target === undefined) return [];
    try {
      return (await this.cache.goalSources(target)).runs?.rows ?? [];
    } finally {
      this.cache.release(target);
    }
  }

  /**
   * One goal's agents' executor configs, from its registry entry in the latest snapshot: `null` when
   * none is configured (or the snapshot does not have the goal), `'invalid'` when it does not parse.
   * For the editor's Goals and Agents trees, right after `current()` or `refreshGoals`.
   */
  executorConfigs(goalId: string, agentIds: readonly string[]): ReadonlyMap<string, ExecutorConfig | null | 'invalid'> {
    const snapshot = this.snapshot;
    const entry = snapshot?.ok === true ? registryGoalEntries(snapshot.registry).get(goalId) : undefined;
    const configs = new Map<string, ExecutorConfig | null | 'invalid'>();
    for (const agentId of agentIds) {
      try {
        configs.set(agentId, entry === undefined ? null : readAgentExecutorConfig(entry, agentId));
      } catch {
        configs.set(agentId, 'invalid');
      }
    }
    return configs;
  }

  /**
   * One goal's task leases held at `now` (todo id → holder), read from its lease files each call
   * (they change without a status input changing); empty when the latest snapshot does not have the goal.
   */
  goalLeases(goalId: string, now: Date): Map<string, LeaseHolder> {
    const snapshot = this.snapshot;
    const target = snapshot?.ok === true ? snapshot.targets.find((t) => t.goalId === goalId) : undefined;
    return target === undefined ? new Map() : activeLeaseHolders(target, now);
  }

  close(): void {
    this.closed = true;
    this.flushCacheSave();
    this.listeners.clear();
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  /** Stamps of every input, and whether a kept quota summary has expired (its window moved). */
  private async inputsFingerprint(): Promise<{ fingerprint: string; quotaExpired: boolean; linkedFiles: string }> {
    const { exists, registry } = await this.cache.registry(this.registryPath);
    if (!exists) return { fingerprint: 'registry-missing', quotaExpired: false, linkedFiles: '' };
    const targets = statusTargets(registry, this.registryPath, {
      homeDir: this.options.homeDir,
      runtimeRootOverride: this.options.runtimeRootOverride ?? null,
    });
    const reader = this.cache.files.reader;
    const parts = await Promise.all(
      targets.map(async (target) => {
        const stateFile = statusStateFile(target);
        const [state, index, quotaKey, linked] = await Promise.all([
          stateFile === null ? null : reader.stat(stateFile),
          reader.stat(path.join(goalRunsDir(target.runtimeRoot, target.goalId), RUN_INDEX_FILE)),
          this.quotaCache.inputsKey(target),
          // The item's other inputs: its rollout event log and the files its todos link (`review_materials`).
          Promise.all(this.cache.itemInputFiles(target).map(async (file) => [file, await reader.stat(file)] as const)),
        ]);
        return {
          stamps: [target.goalId, state, index, quotaKey, linked],
          linkedFiles: linked.map(([file]) => file),
          quotaFresh: this.quotaCache.isFresh(target.goalId, quotaKey),
        };
      }),
    );
    return {
      fingerprint: JSON.stringify([
        await reader.stat(this.registryPath),
        targets.map(statusEntryKey),
        parts.map((part) => part.stamps),
      ]),
      quotaExpired: parts.some((part) => !part.quotaFresh),
      linkedFiles: JSON.stringify(parts.map((part) => part.linkedFiles)),
    };
  }

  private async rebuildIfChanged(): Promise<LiveSnapshot> {
    this.dirty = false;
    let fingerprint: string | null = null;
    let quotaExpired = false;
    let linkedFiles = '';
    try {
      ({ fingerprint, quotaExpired, linkedFiles } = await this.inputsFingerprint());
    } catch {
      fingerprint = null; // Unreadable registry: the rebuild reports it.
    }
    this.checkedAtMs = performance.now();
    const previous = this.snapshot;
    if (
      previous !== undefined &&
      fingerprint !== null &&
      fingerprint === this.fingerprint &&
      !(previous.ok && quotaExpired) &&
      this.options.clock.now().getTime() < this.monitorChangesAtMs
    )
      return previous;
    const snapshot = await this.build();
    this.monitorChangesAtMs = snapshot.ok ? monitorChangesAt(snapshot.items.values(), this.options.clock) : Infinity;
    // The build may name other files its items came from (the files their todos link): their stamps as of now.
    if (fingerprint !== null) {
      const after = await this.inputsFingerprint().catch(() => null);
      if (after !== null && after.linkedFiles !== linkedFiles) fingerprint = after.fingerprint;
    }
    this.fingerprint = fingerprint ?? '';
    this.snapshot = snapshot;
    if (!this.closed && this.options.watch === true && snapshot.ok) this.syncWatchers(snapshot.targets);
    // Comparing every item costs a serialization of both snapshots: only done when someone listens (the CLI's server does not).
    const diff = this.listeners.size === 0 ? null : diffSnapshots(previous, snapshot);
    if (diff !== null) {
      diff.newRuns = await this.newRunsOf(previous, snapshot);
      for (const listener of [...this.listeners]) listener(diff);
    }
    return snapshot;
  }

  /** The rows appended to each goal's run index since `before`, read only for goals whose count grew. */
  private async newRunsOf(before: LiveSnapshot | undefined, after: LiveSnapshot): Promise<StatusDiff['newRuns']> {
    if (before === undefined || !before.ok || !after.ok) return [];
    const found: StatusDiff['newRuns'] = [];
    for (const [goalId, item] of after.items) {
      const previous = before.items.get(goalId);
      if (previous === undefined || item.unique_runs <= previous.unique_runs) continue;
      const target = after.targets.find((t) => t.goalId === goalId);
      if (target === undefined) continue;
      const { runs } = await this.cache.goalSources(target);
      this.cache.release(target);
      const rows = (runs?.rows ?? []).slice(0, item.unique_runs - previous.unique_runs);
      const turns = rows
        .filter((row) => row.classification === undefined || !STATUS_NEUTRAL_CLASSIFICATIONS.has(row.classification))
        .map((row) => ({
          generated_at: row.generated_at ?? null,
          classification: row.classification ?? null,
          agent_id: row.agent_id ?? null,
          todo_id: row.todo_id ?? null,
        }));
      if (turns.length > 0) found.push({ goalId, runs: turns });
    }
    return found;
  }

  private async build(): Promise<LiveSnapshot> {
    const version = ++this.version;
    const quota = new Map<string, GoalQuotaSummary>();
    const recentRuns = new Map<string, readonly RecentRunRow[]>();
    try {
      const payload = await loadStatus(this.statusRequest(await this.statusRegistry(), quota, recentRuns));
      const { registry } = await this.cache.registry(this.registryPath);
      const targets = statusTargets(registry, this.registryPath, {
        homeDir: this.options.homeDir,
        runtimeRootOverride: this.options.runtimeRootOverride ?? null,
      });
      this.quotaCache.retain(new Set(targets.map((target) => target.goalId)));
      return {
        ok: true,
        version,
        registryPath: this.registryPath,
        payload,
        items: new Map(goalItems(payload).map((item) => [item.goal_id, item])),
        quota,
        recentRuns,
        targets,
        registry,
      };
    } catch (error) {
      return { ok: false, version, registryPath: this.registryPath, error: errorMessage(error) };
    }
  }

  /**
   * What every build of this model asks `loadStatus`: the shared caches, the cache save deferred
   * until the snapshot is out (a rebuild would otherwise wait for the whole cache to be written),
   * and each goal's quota summary collected into `quota`, its parsed history released once built.
   */
  /** The registry as every build of this model reads it: through the shared cache (read again only when changed). */
  private statusRegistry(): Promise<StatusRegistry> {
    return readStatusRegistry(
      {
        registryPath: this.registryPath,
        homeDir: this.options.homeDir,
        runtimeRootOverride: this.options.runtimeRootOverride ?? null,
      },
      this.cache,
    );
  }

  private statusRequest(
    registry: StatusRegistry,
    quota: Map<string, GoalQuotaSummary>,
    recentRuns: Map<string, readonly RecentRunRow[]>,
    /** One-goal rebuilds keep the goal's index read for its next one (see GoalStatusCache.release). */
    keepIndexReads = false,
  ): StatusRequest {
    return {
      registry,
      cache: this.cache,
      clock: this.options.clock,
      persistentCache: this.options.persistentCache ?? true,
      deferCacheSave: (save) => this.scheduleCacheSave(save),
      quotaSummary: async (goal, sources) => {
        // The quota state as `loopx status` shows it (following the item's route: an operator gate, a
        // health problem), so /status.json, the editor and the CLI render one model.
        const summary = projectedStatusQuota(
          await this.quotaCache.summary(
            goal,
            statusQuotaReads(goal, sources, { registryPath: this.registryPath, homeDir: this.options.homeDir }),
          ),
          sources.attention,
          sources.registryEntry,
        );
        quota.set(goal.goalId, summary);
        if (sources.index.kind === 'digest' && sources.index.recentRuns !== null)
          recentRuns.set(goal.goalId, sources.index.recentRuns);
        this.cache.release(goal, { keepIndexRead: keepIndexReads });
        return summary;
      },
    };
  }

  private scheduleCacheSave(save: () => Promise<boolean>): void {
    this.pendingSave = save;
    if (this.closed) {
      this.flushCacheSave();
      return;
    }
    this.saveTimer ??= setTimeout(() => this.flushCacheSave(), CACHE_SAVE_DELAY_MS);
    this.saveTimer.unref();
  }

  private lastSave: Promise<void> = Promise.resolve();

  private flushCacheSave(): void {
    if (this.saveTimer !== undefined) clearTimeout(this.saveTimer);
    this.saveTimer = undefined;
    const save = this.pendingSave;
    this.pendingSave = undefined;
    // A cache that cannot be written is a miss next time, never an error (save() swallows its failures).
    if (save !== undefined)
      this.lastSave = save().then(
        () => undefined,
        () => undefined,
      );
  }

  /** Resolves when the last cache save started (by `close()` or a build) has ended: before removing the files. */
  saved(): Promise<void> {
    return this.lastSave;
  }

  /** Watches the folders of every input; events for unrelated files in them are ignored. */
  private syncWatchers(targets: readonly Pick<GoalRef, StatusRefKeys>[]): void {
    const wanted = new Map<string, ((file: string) => boolean) | null>();
    const only = (name: string) => (file: string) => file === name || file.startsWith(`.${name}.`);
    wanted.set(path.dirname(this.registryPath), only(path.basename(this.registryPath)));
    for (const target of targets) {
      const stateFile = statusStateFile(target);
      if (stateFile !== null) {
        const dir = path.dirname(stateFile);
        const previous = wanted.get(dir);
        const mine = only(path.basename(stateFile));
        wanted.set(
          dir,
          previous === undefined ? mine : previous === null ? null : (file) => previous(file) || mine(file),
        );
      }
      wanted.set(goalRunsDir(target.runtimeRoot, target.goalId), only(RUN_INDEX_FILE));
      wanted.set(goalRuntimeDir(target.runtimeRoot, target.goalId), null);
    }
    for (const [dir, watcher] of this.watchers) {
      if (!wanted.has(dir)) {
        watcher.close();
        this.watchers.delete(dir);
      }
    }
    for (const [dir, relevant] of wanted) {
      this.filters.set(dir, relevant);
      if (this.watchers.has(dir) || this.watchers.size >= MAX_WATCHED_DIRS) continue;
      try {
        const watcher = fs.watch(dir, { persistent: false }, (_event, file) => {
          const filter = this.filters.get(dir);
          if (file === null || filter === null || filter === undefined || filter(file.toString())) this.invalidate();
        });
        watcher.on('error', () => {
          watcher.close();
          this.watchers.delete(dir);
          this.invalidate();
        });
        this.watchers.set(dir, watcher);
      } catch {
        // The folder does not exist (yet): the TTL notices when it appears.
      }
    }
  }
}

const stableJson = (value: unknown): string => JSON.stringify(value) ?? '';

/** What changed from `before` to `after`, or null when nothing a listener cares about did. */
export function diffSnapshots(before: LiveSnapshot | undefined, after: LiveSnapshot): StatusDiff | null {
  const beforeItems = before?.ok === true ? before.items : new Map<string, StatusPayloadItem>();
  const afterItems = after.ok ? after.items : new Map<string, StatusPayloadItem>();
  const beforeQuota = before?.ok === true ? before.quota : new Map<string, GoalQuotaSummary>();
  const afterQuota = after.ok ? after.quota : new Map<string, GoalQuotaSummary>();
  const added = [...afterItems.keys()].filter((id) => !beforeItems.has(id));
  const removed = [...beforeItems.keys()].filter((id) => !afterItems.has(id));
  const changed: string[] = [];
  const quotaChanged: StatusDiff['quotaChanged'] = [];
  for (const [goalId, item] of afterItems) {
    const previous = beforeItems.get(goalId);
    if (previous === undefined || stableJson(previous) !== stableJson(item)) changed.push(goalId);
    // A goal seen for the first time has no quota "change"; later ones compare what they spend and allow.
    if (
      previous !== undefined &&
      stableJson(quotaFacts(beforeQuota.get(goalId))) !== stableJson(quotaFacts(afterQuota.get(goalId)))
    )
      quotaChanged.push({ goalId, quota: afterQuota.get(goalId) ?? null });
  }
  const statusFlipped = before !== undefined && before.ok !== after.ok;
  if (
    added.length + removed.length + changed.length + quotaChanged.length === 0 &&
    !statusFlipped &&
    before !== undefined
  )
    return null;
  // The new runs are filled in by the model, which can read the rows.
  return {
    registryPath: after.registryPath,
    version: after.version,
    added,
    removed,
    changed,
    newRuns: [],
    quotaChanged,
  };
}

/** The first instant after now at which an item's monitor-due fields change. */
function monitorChangesAt(items: Iterable<StatusPayloadItem>, clock: Clock): number {
  const now = clock.now().getTime();
  let next = Infinity;
  for (const item of items)
    next = Math.min(next, monitorDueChangesAt(item.user_todos, now), monitorDueChangesAt(item.agent_todos, now));
  return next;
}

/** The parts of a quota summary that mean a change to people (not the moving clock). */
function quotaFacts(quota: GoalQuotaSummary | undefined): unknown {
  if (quota === undefined) return null;
  const { next_slot_frees_at: _frees, reason: _reason, ...facts } = quota;
  return facts;
}
