import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Clock } from '../clock';
import { errorMessage } from '../errors';
import { scrubValue, type ScrubContext } from '../privacy/scrub';
import { GoalStatusCache, type GoalStatusTarget } from '../status/goalStatus';
import { loadStatus, statusTargets, type StatusPayload, type StatusPayloadItem } from '../status/statusPayload';
import { registryProjectRoot, resolveRepo, resolveRuntimeRoot } from '../registry/locate';
import { registryGoals } from '../registry/read';
import { goalRunsDir, goalRuntimeDir, RUN_INDEX_FILE } from '../runtime/layout';
import { analyzeGates } from '../state/gates';
import { projectStateDocument } from '../state/structured';
import { QuotaSummaryCache } from '../status/quotaCache';

const gzipAsync = promisify(gzip);

/**
 * The status server's read model, built once and served many times. A snapshot holds the
 * scrubbed status payload and its serialized (and gzipped) bodies. It is rebuilt only when an
 * input changed: fs.watch on the registry, state files, run-index and goal runtime folders marks
 * it dirty (the next request waits for the rebuild), and a short safety TTL re-checks the file
 * stamps (and quota windows) in the background, serving the current snapshot meanwhile, so a
 * missed watch event costs at most one TTL of staleness.
 */

export interface CachedBody {
  json: Buffer;
  gzip: Buffer;
  /** Strong validator of `json`. */
  etag: string;
}

export interface ReadySnapshot {
  ok: true;
  version: number;
  /** Scrubbed: no absolute paths, no credentials. */
  payload: StatusPayload;
  items: ReadonlyMap<string, StatusPayloadItem>;
  bodies: { status: CachedBody; quota: CachedBody };
}

export interface FailedSnapshot {
  ok: false;
  version: number;
  /** Scrubbed `{ok:false, registry, runtime_root, error}`. */
  body: CachedBody;
}

export type StatusSnapshot = ReadySnapshot | FailedSnapshot;

export interface StatusSourceOptions {
  registryPath: string;
  homeDir: string;
  runtimeRootOverride?: string | null;
  clock: Clock;
  /** How long a snapshot is trusted without re-checking file stamps (default 5 s). */
  ttlMs?: number;
  /** Watch the input files (default true). */
  watch?: boolean;
  /** Added to /status.json as `local_dashboard_api` (the server's route index). */
  dashboardApi?: Record<string, unknown>;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export const DEFAULT_STATUS_TTL_MS = 5_000;
/** Beyond this many watched folders the TTL alone keeps the snapshot fresh. */
const MAX_WATCHED_DIRS = 2_000;

export async function cachedBody(value: unknown): Promise<CachedBody> {
  const json = Buffer.from(JSON.stringify(value), 'utf8');
  return {
    json,
    gzip: await gzipAsync(json),
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`,
  };
}

export class StatusSource {
  private readonly cache = new GoalStatusCache();
  private readonly quota: QuotaSummaryCache;
  private readonly registryPath: string;
  private snapshot: StatusSnapshot | undefined;
  private fingerprint = '';
  private checkedAtMs = 0;
  private dirty = true;
  private refreshing: Promise<StatusSnapshot> | undefined;
  private version = 0;
  private readonly watchers = new Map<string, fs.FSWatcher>();
  /** Which file names in a watched folder are inputs (null: all of them). */
  private readonly filters = new Map<string, ((file: string) => boolean) | null>();
  private readonly goalBodyCache = new Map<string, { version: number; detail: CachedBody; projection: CachedBody }>();
  private targets: GoalStatusTarget[] = [];
  private scrubContext: ScrubContext;
  private closed = false;

  constructor(private readonly options: StatusSourceOptions) {
    this.registryPath = path.resolve(options.registryPath);
    this.quota = new QuotaSummaryCache({
      registryPath: this.registryPath,
      homeDir: options.homeDir,
      runtimeRootOverride: options.runtimeRootOverride ?? null,
      clock: options.clock,
    });
    this.scrubContext = { projectRoots: [registryProjectRoot(this.registryPath)], homeDir: options.homeDir };
  }

  /** Marks the snapshot stale: the next request rebuilds it. */
  invalidate(): void {
    this.dirty = true;
  }

  /** How many rebuilds produced a new snapshot (for tests and logs). */
  get rebuilds(): number {
    return this.version;
  }

  async current(): Promise<StatusSnapshot> {
    const now = performance.now();
    if (this.snapshot !== undefined && !this.dirty) {
      if (now - this.checkedAtMs >= (this.options.ttlMs ?? DEFAULT_STATUS_TTL_MS))
        void this.refresh().catch(() => undefined);
      return this.snapshot;
    }
    return this.refresh();
  }

  /** Details of one goal (every todo, open and holding gates, quota, recent runs, warnings), or null when it is not listed. */
  async goalBodies(goalId: string): Promise<{ detail: CachedBody; projection: CachedBody } | null> {
    const snapshot = await this.current();
    if (!snapshot.ok) return null;
    const item = snapshot.items.get(goalId);
    const target = this.targets.find((t) => t.goalId === goalId);
    if (item === undefined || target === undefined) return null;
    const kept = this.goalBodyCache.get(goalId);
    if (kept !== undefined && kept.version === snapshot.version) return kept;
    const sources = await this.cache.goalSources(target);
    const doc = sources.state.kind === 'ok' ? sources.state.doc : null;
    const structured = doc === null ? null : projectStateDocument(doc, { goalId });
    const gates = doc === null ? null : analyzeGates(doc);
    const todo = (t: NonNullable<typeof structured>['todos']['user']['items'][number]) => ({
      todo_id: t.todo_id,
      role: t.role,
      index: t.index,
      status: t.status,
      done: t.done,
      text: t.text,
      title: t.title,
      priority: t.priority,
      claimed_by: t.claimed_by,
      task_class: t.task_class,
      line: t.line,
    });
    const detail = scrubValue(
      {
        ok: true,
        goal_id: item.goal_id,
        display_name: item.display_name,
        status: item.status,
        activation_state: item.activation_state,
        waiting_on: item.waiting_on,
        severity: item.severity,
        recommended_action: item.recommended_action,
        quota: item.quota ?? null,
        todos: {
          user: structured?.todos.user.items.map(todo) ?? [],
          agent: structured?.todos.agent.items.map(todo) ?? [],
        },
        gates: { open: item.open_gates, holding: gates?.holding_gates ?? [] },
        recent_runs: item.latest_runs,
        warnings: item.projection_warnings,
        active_state: item.active_state,
      },
      this.scrubContext,
    );
    const bodies = {
      version: snapshot.version,
      detail: await cachedBody(detail),
      projection: await cachedBody({
        ok: true,
        goal_id: item.goal_id,
        goal_channel_projection: item.goal_channel_projection,
      }),
    };
    this.goalBodyCache.set(goalId, bodies);
    return bodies;
  }

  close(): void {
    this.closed = true;
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
  }

  private refresh(): Promise<StatusSnapshot> {
    this.refreshing ??= this.rebuildIfChanged().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  /** Stamps of every input, and whether a kept quota summary has expired (its window moved). */
  private async inputsFingerprint(): Promise<{ fingerprint: string; quotaExpired: boolean }> {
    const { exists, registry } = await this.cache.registry(this.registryPath);
    if (!exists) return { fingerprint: 'registry-missing', quotaExpired: false };
    this.targets = statusTargets(registry, this.registryPath, {
      homeDir: this.options.homeDir,
      runtimeRootOverride: this.options.runtimeRootOverride ?? null,
    });
    const reader = this.cache.reader;
    const parts = await Promise.all(
      this.targets.map(async (target) => {
        const [state, index, quotaKey] = await Promise.all([
          target.stateFile === null ? null : reader.stat(target.stateFile),
          reader.stat(path.join(goalRunsDir(target.runtimeRoot, target.goalId), RUN_INDEX_FILE)),
          this.quota.inputsKey(target),
        ]);
        return {
          stamps: [target.goalId, state, index, quotaKey],
          quotaFresh: this.quota.isFresh(target.goalId, quotaKey),
        };
      }),
    );
    return {
      fingerprint: JSON.stringify([
        await reader.stat(this.registryPath),
        this.targets,
        parts.map((part) => part.stamps),
      ]),
      quotaExpired: parts.some((part) => !part.quotaFresh),
    };
  }

  private async rebuildIfChanged(): Promise<StatusSnapshot> {
    this.dirty = false;
    let fingerprint: string | null = null;
    let quotaExpired = false;
    try {
      ({ fingerprint, quotaExpired } = await this.inputsFingerprint());
    } catch {
      fingerprint = null; // Unreadable registry: the rebuild reports it.
    }
    this.checkedAtMs = performance.now();
    if (
      this.snapshot !== undefined &&
      fingerprint !== null &&
      fingerprint === this.fingerprint &&
      !(this.snapshot.ok && quotaExpired)
    )
      return this.snapshot;
    const snapshot = await this.build();
    this.fingerprint = fingerprint ?? '';
    this.snapshot = snapshot;
    if (!this.closed && this.options.watch !== false) this.syncWatchers();
    return snapshot;
  }

  private async build(): Promise<StatusSnapshot> {
    const version = ++this.version;
    const runtimeRootOverride = this.options.runtimeRootOverride ?? null;
    try {
      const payload = await loadStatus({
        registryPath: this.registryPath,
        homeDir: this.options.homeDir,
        runtimeRootOverride,
        cache: this.cache,
        quotaSummary: (goal) => this.quota.summary(goal),
      });
      this.quota.retain(new Set(payload.attention_queue.items.map((item) => item.goal_id)));
      const { registry } = await this.cache.registry(this.registryPath);
      const repos = registryGoals(registry)
        .map((goal) => resolveRepo(goal, this.options.homeDir))
        .filter((repo): repo is string => repo !== null);
      this.scrubContext = {
        projectRoots: [...new Set([registryProjectRoot(this.registryPath), ...repos])],
        homeDir: this.options.homeDir,
        runtimeRoot: payload.runtime_root,
      };
      const served = scrubValue(
        { ...payload, ...(this.options.dashboardApi ? { local_dashboard_api: this.options.dashboardApi } : {}) },
        this.scrubContext,
      );
      const items = new Map(served.attention_queue.items.map((item) => [item.goal_id, item]));
      const quota = {
        ok: true,
        goal_count: served.goal_count,
        goals: served.attention_queue.items.map((item) => ({
          goal_id: item.goal_id,
          display_name: item.display_name,
          activation_state: item.activation_state,
          ...(item.quota ?? {}),
        })),
      };
      this.goalBodyCache.clear();
      return {
        ok: true,
        version,
        payload: served,
        items,
        bodies: { status: await cachedBody(served), quota: await cachedBody(quota) },
      };
    } catch (error) {
      let runtimeRoot: string | null = null;
      try {
        runtimeRoot = resolveRuntimeRoot({
          registryPath: this.registryPath,
          registry: {},
          override: runtimeRootOverride ?? undefined,
          homeDir: this.options.homeDir,
        });
      } catch {
        runtimeRoot = null;
      }
      this.options.log?.('warn', `status unavailable: ${scrubValue(errorMessage(error), this.scrubContext)}`);
      return {
        ok: false,
        version,
        body: await cachedBody(
          scrubValue(
            { ok: false, registry: this.registryPath, runtime_root: runtimeRoot, error: errorMessage(error) },
            { ...this.scrubContext, ...(runtimeRoot !== null ? { runtimeRoot } : {}) },
          ),
        ),
      };
    }
  }

  /** Watches the folders of every input; events for unrelated files in them are ignored. */
  private syncWatchers(): void {
    const wanted = new Map<string, ((file: string) => boolean) | null>();
    const only = (name: string) => (file: string) => file === name || file.startsWith(`.${name}.`);
    wanted.set(path.dirname(this.registryPath), only(path.basename(this.registryPath)));
    for (const target of this.targets) {
      if (target.stateFile !== null) {
        const dir = path.dirname(target.stateFile);
        const previous = wanted.get(dir);
        const mine = only(path.basename(target.stateFile));
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
