import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { Clock } from '../clock';
import { scrubValue, type ScrubContext } from '../privacy/scrub';
import { LiveStatusModel, type ReadyLiveSnapshot } from '../status/liveStatus';
import { goalItems, withRuntimeReports, type StatusPayload, type StatusPayloadItem } from '../status/statusPayload';
import { registryProjectRoot, resolveRepo, resolveRuntimeRoot } from '../registry/locate';
import { registryGoals } from '../registry/read';
import { analyzeGates } from '../state/gates';
import { projectStateDocument } from '../state/structured';

const gzipAsync = promisify(gzip);

/**
 * What the status server sends, built once per status snapshot and served many times: the
 * scrubbed payload and its serialized (and gzipped) bodies. The snapshots come from the live
 * status model (`core/status/liveStatus.ts`), which owns the caches and knows when an input
 * changed; the editor hands its own model in, so its views and its server share one.
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
  /** Watch the input files (default true); ignored when `model` is given. */
  watch?: boolean;
  /** A live status model to serve (the editor's); without one the source makes and owns its own. */
  model?: LiveStatusModel;
  /** Added to /status.json as `local_dashboard_api` (the server's route index). */
  dashboardApi?: Record<string, unknown>;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export const DEFAULT_STATUS_TTL_MS = 5_000;

export async function cachedBody(value: unknown): Promise<CachedBody> {
  return cachedBodyOf(Buffer.from(JSON.stringify(value), 'utf8'));
}

/** Markers standing for the goal entries in the serialized shell of /status.json (control characters: no scrubber rule touches them, no entry holds them). */
const ITEMS_MARKER = '\u0000loopx-attention-items\u0000';
const GOALS_MARKER = '\u0000loopx-run-history-goals\u0000';

interface ScrubbedEntry {
  value: unknown;
  /** `JSON.stringify(value)`, encoded once. */
  json: Buffer;
}

/**
 * The shell's JSON with each `["<marker>"]` replaced by the array of its entries' JSON, as bytes
 * (one copy of each entry's encoded JSON, no re-encoding of the whole); null unless every marker
 * occurs exactly once.
 */
function spliceEntries(shellJson: string, arrays: { marker: string; entries: ScrubbedEntry[] }[]): Buffer | null {
  const found: { at: number; length: number; entries: ScrubbedEntry[] }[] = [];
  for (const { marker, entries } of arrays) {
    const needle = `[${JSON.stringify(marker)}]`;
    const at = shellJson.indexOf(needle);
    if (at < 0 || shellJson.includes(needle, at + 1)) return null;
    found.push({ at, length: needle.length, entries });
  }
  found.sort((a, b) => a.at - b.at);
  const parts: Buffer[] = [];
  let from = 0;
  for (const { at, length, entries } of found) {
    parts.push(Buffer.from(`${shellJson.slice(from, at)}[`, 'utf8'));
    entries.forEach((scrubbed, i) => {
      if (i > 0) parts.push(COMMA);
      parts.push(scrubbed.json);
    });
    parts.push(CLOSE_BRACKET);
    from = at + length;
  }
  parts.push(Buffer.from(shellJson.slice(from), 'utf8'));
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');
const CLOSE_BRACKET = Buffer.from(']');

async function cachedBodyOf(json: Buffer): Promise<CachedBody> {
  return {
    json,
    gzip: await gzipAsync(json),
    etag: `"${createHash('sha256').update(json).digest('base64url').slice(0, 27)}"`,
  };
}

export class StatusSource {
  readonly model: LiveStatusModel;
  private readonly ownsModel: boolean;
  private readonly registryPath: string;
  private built: { modelVersion: number; snapshot: StatusSnapshot; reportsAtMs: number } | undefined;
  private building: Promise<StatusSnapshot> | undefined;
  private version = 0;
  private readonly goalBodyCache = new Map<string, { version: number; detail: CachedBody; projection: CachedBody }>();
  private scrubContext: ScrubContext;
  /**
   * Scrubbed goal entries of the last build by their raw entry object, under the scrub context they
   * were scrubbed with. Entries are never mutated once built, and loadStatus hands out the same
   * object for an unchanged goal, so identity stands for equal JSON.
   */
  private scrubbedEntries: { context: string; byEntry: Map<unknown, ScrubbedEntry> } = {
    context: '',
    byEntry: new Map(),
  };

  constructor(private readonly options: StatusSourceOptions) {
    this.registryPath = path.resolve(options.registryPath);
    this.ownsModel = options.model === undefined;
    this.model =
      options.model ??
      new LiveStatusModel({
        registryPath: this.registryPath,
        homeDir: options.homeDir,
        runtimeRootOverride: options.runtimeRootOverride ?? null,
        clock: options.clock,
        watch: options.watch !== false,
        ttlMs: options.ttlMs ?? DEFAULT_STATUS_TTL_MS,
      });
    this.scrubContext = { projectRoots: [registryProjectRoot(this.registryPath)], homeDir: options.homeDir };
  }

  /** Marks the snapshot stale: the next request rebuilds it. */
  invalidate(): void {
    this.model.invalidate();
  }

  /** How many distinct snapshots were served (for tests and logs). */
  get rebuilds(): number {
    return this.version;
  }

  async current(): Promise<StatusSnapshot> {
    const live = await this.model.current();
    // The run-history reports count from the time of the answer: an unchanged snapshot is served with them
    // recomputed once they are a TTL old (their items' bytes are reused).
    if (
      this.built !== undefined &&
      this.built.modelVersion === live.version &&
      this.options.clock.now().getTime() - this.built.reportsAtMs < (this.options.ttlMs ?? DEFAULT_STATUS_TTL_MS)
    )
      return this.built.snapshot;
    this.building ??= this.bodiesOf(live).finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  /** Details of one goal (every todo, open and holding gates, quota, recent runs, warnings), or null when it is not listed. */
  async goalBodies(goalId: string): Promise<{ detail: CachedBody; projection: CachedBody } | null> {
    const snapshot = await this.current();
    if (!snapshot.ok) return null;
    const item = snapshot.items.get(goalId);
    if (item === undefined) return null;
    const kept = this.goalBodyCache.get(goalId);
    if (kept !== undefined && kept.version === snapshot.version) return kept;
    const sources = await this.model.goalSources(goalId);
    if (sources === null) return null;
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
    if (this.ownsModel) this.model.close();
  }

  private async bodiesOf(live: Awaited<ReturnType<LiveStatusModel['current']>>): Promise<StatusSnapshot> {
    const version = ++this.version;
    const reportsAtMs = this.options.clock.now().getTime();
    const snapshot = live.ok
      ? await this.readyBodies(live, version, reportsAtMs)
      : await this.failedBody(live.error, version);
    this.goalBodyCache.clear();
    this.built = { modelVersion: live.version, snapshot, reportsAtMs };
    return snapshot;
  }

  private async readyBodies(live: ReadyLiveSnapshot, version: number, nowMs: number): Promise<StatusSnapshot> {
    const payload = withRuntimeReports(live.payload, nowMs);
    const repos = registryGoals(live.registry)
      .map((goal) => resolveRepo(goal, this.options.homeDir))
      .filter((repo): repo is string => repo !== null);
    this.scrubContext = {
      projectRoots: [...new Set([registryProjectRoot(this.registryPath), ...repos])],
      homeDir: this.options.homeDir,
      runtimeRoot: payload.runtime_root,
    };
    const { served, json: statusJson } = this.scrubPayload({
      ...payload,
      ...(this.options.dashboardApi ? { local_dashboard_api: this.options.dashboardApi } : {}),
    });
    const items = new Map(goalItems(served).map((item) => [item.goal_id, item]));
    const quota = {
      ok: true,
      goal_count: served.goal_count,
      goals: goalItems(served).map((item) => ({
        goal_id: item.goal_id,
        display_name: item.display_name,
        activation_state: item.activation_state,
        ...(item.quota ?? {}),
      })),
    };
    return {
      ok: true,
      version,
      payload: served,
      items,
      bodies: { status: await cachedBodyOf(statusJson), quota: await cachedBody(quota) },
    };
  }

  /**
   * `scrubValue(payload)`, scrubbing again only the goal entries (attention queue items, run history
   * goals) that are new since the last build: after a one-goal change the other entries, and their
   * encoded JSON, are taken from the last build. Scrubbing is local to each string (an array
   * element is scrubbed the same alone or inside the payload), so the result is the same value as
   * scrubbing the whole, and the body the same bytes as serializing it.
   */
  private scrubPayload<T extends StatusPayload>(payload: T): { served: T; json: Buffer } {
    const context = this.scrubContext;
    const contextKey = JSON.stringify(context);
    const previous =
      this.scrubbedEntries.context === contextKey ? this.scrubbedEntries.byEntry : new Map<unknown, ScrubbedEntry>();
    const next = new Map<unknown, ScrubbedEntry>();
    const entry = (value: unknown): ScrubbedEntry => {
      let scrubbed = next.get(value) ?? previous.get(value);
      if (scrubbed === undefined) {
        const clean = scrubValue(value, context);
        scrubbed = { value: clean, json: Buffer.from(JSON.stringify(clean), 'utf8') };
      }
      next.set(value, scrubbed);
      return scrubbed;
    };
    const { attention_queue: queue, run_history: history } = payload;
    const items = queue.items.map(entry);
    const goals = history.goals.map(entry);
    // The shell holds one marker string per array; the body is its serialization with the entries' bytes in their place.
    const shell = scrubValue(
      {
        ...payload,
        attention_queue: { ...queue, items: [ITEMS_MARKER] },
        run_history: { ...history, goals: [GOALS_MARKER] },
      },
      context,
    );
    this.scrubbedEntries = { context: contextKey, byEntry: next };
    // Assigning keys the shell already has keeps their place, so the object's key order is the payload's.
    const served = {
      ...shell,
      attention_queue: { ...shell.attention_queue, items: items.map((item) => item.value) },
      run_history: { ...shell.run_history, goals: goals.map((goal) => goal.value) },
    } as T;
    const spliced = spliceEntries(JSON.stringify(shell), [
      { marker: ITEMS_MARKER, entries: items },
      { marker: GOALS_MARKER, entries: goals },
    ]);
    // A marker found other than once (text of the shell holding one) falls back to serializing the whole.
    return { served, json: spliced ?? Buffer.from(JSON.stringify(served), 'utf8') };
  }

  private async failedBody(error: string, version: number): Promise<StatusSnapshot> {
    let runtimeRoot: string | null = null;
    try {
      runtimeRoot = resolveRuntimeRoot({
        registryPath: this.registryPath,
        registry: {},
        override: this.options.runtimeRootOverride ?? undefined,
        homeDir: this.options.homeDir,
      });
    } catch {
      runtimeRoot = null;
    }
    this.options.log?.('warn', `status unavailable: ${scrubValue(error, this.scrubContext)}`);
    return {
      ok: false,
      version,
      body: await cachedBody(
        scrubValue(
          { ok: false, registry: this.registryPath, runtime_root: runtimeRoot, error },
          { ...this.scrubContext, ...(runtimeRoot !== null ? { runtimeRoot } : {}) },
        ),
      ),
    };
  }
}
