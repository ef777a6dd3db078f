import { homedir } from 'node:os';
import { join, sep } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { SETTINGS } from '../core/commands/ids';
import { hostClock } from '../core/ops/hostSetup';
import type { GoalQuotaSummary } from '../core/quota/summary';
import type { GoalStatusItem } from '../core/status/goalStatus';
import type { LiveStatusModel, ReadyLiveSnapshot, StatusDiff } from '../core/status/liveStatus';
import type { RecentRunRow } from '../core/goal/recentRuns';
import type { GoalSummary, RegistrySnapshot } from '../core/ops/goalRows';
import { LiveStatusModel as LiveModel, loadRegistrySnapshot } from '../core/ops/editorHost';
import {
  agentDetailsOf,
  changedGoalKeys,
  GoalFactsSeen,
  recentRunsFrom,
  recentRunsOf,
  type AgentDetails,
  type TodoLease,
  type GoalFacts,
  type RecentRun,
  withExistingEvidence,
} from './goalExtras';
import { goalsOfChangedFiles, PendingChanges } from './changedGoals';
import { FolderTreeWatcher } from './folderTreeWatcher';
import { goalsByFolder, registrySources, watchTargets, type FolderGoals, type RegistrySource } from './registrySources';

const RELOAD_DEBOUNCE_MS = 200;

/**
 * The LoopX registries of this workspace (each folder's `.loopx/registry.json`, plus the
 * `loopx.registryPath` setting) and their goals. Reloads, debounced, when LoopX files change on
 * disk — agents and the CLI write them from outside the editor.
 */
export class WorkspaceModel extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  private readonly statusChanged = this.register(new vscode.EventEmitter<StatusDiff>());
  /** What changed in a registry's status (new runs, quota), whichever process changed the files. */
  readonly onDidChangeStatus = this.statusChanged.event;
  private readonly goalsChanged = this.register(new vscode.EventEmitter<'all' | GoalSummary[]>());
  /**
   * Which goals a reload (or a loop starting or stopping) changed: `'all'` when goals were added,
   * removed or a registry changed, else only the goals whose status, quota, runs or loop changed.
   */
  readonly onDidChangeGoals = this.goalsChanged.event;
  private readonly diagnostics = this.register(vscode.languages.createDiagnosticCollection('loopx'));
  /** Loops running in this window, by goal key: Stop Loop aborts them after their current phase. */
  private readonly loops = new Map<string, AbortController>();
  private runs = new Map<string, { version: string; runs: RecentRun[] }>();
  private executors = new Map<string, ReadonlyMap<string, string>>();
  private leases = new Map<string, ReadonlyMap<string, TodoLease>>();
  private fingerprints: { shape: string; facts: Map<string, GoalFactsSeen> } = { shape: '', facts: new Map() };
  /** Watchers of the runtime roots and state files the workspace watcher does not see, by `root:`/`file:` path. */
  private readonly runtimeWatchers = new Map<string, vscode.Disposable>();
  private snapshotList: RegistrySnapshot[] = [];
  /** The registries of the last reload and their folders. */
  private sources: RegistrySource[] = [];
  /** One live status model per registry: the views, the status server and the API events share it. */
  private readonly live = new Map<string, LiveStatusModel>();
  private readonly clock = hostClock();
  private details = new Map<string, GoalDetails>();
  /** Each registry's raw goal entries by id, from the document its live model read in the last reload. */
  /** Goals of the current listing whose status and quota have not been read yet (keys). */
  private unread = new Set<string>();
  private reloadTimer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private reloadStarted: number | undefined;
  /** Files the watchers saw change since the last reload was scheduled. */
  private readonly pendingFiles = new PendingChanges();

  constructor(private readonly log: vscode.LogOutputChannel) {
    super();
    const watcher = this.register(vscode.workspace.createFileSystemWatcher('**/{.loopx/**,ACTIVE_GOAL_STATE.md}'));
    for (const event of [watcher.onDidChange, watcher.onDidCreate, watcher.onDidDelete]) {
      this.register(event((uri) => this.scheduleReload(uri)));
    }
    this.register(vscode.workspace.onDidChangeWorkspaceFolders(() => this.scheduleReload()));
    this.register(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration(`${SETTINGS.section}.${SETTINGS.registryPath}`)) this.scheduleReload();
      }),
    );
    this.register({ dispose: () => clearTimeout(this.reloadTimer) });
    this.register({
      dispose: () => {
        for (const watcher of this.runtimeWatchers.values()) watcher.dispose();
        this.runtimeWatchers.clear();
        for (const loop of this.loops.values()) loop.abort();
      },
    });
    this.register({
      dispose: () => {
        for (const model of this.live.values()) model.close();
        this.live.clear();
      },
    });
  }

  /** The live status model of a registry of this workspace (created on first use). */
  liveModel(registryPath: string): LiveStatusModel {
    let model = this.live.get(registryPath);
    if (model === undefined) {
      model = new LiveModel({ registryPath, homeDir: homedir(), clock: this.clock, watch: false });
      model.onDidChange((diff) => this.statusChanged.fire(diff));
      this.live.set(registryPath, model);
    }
    return model;
  }

  get snapshots(): readonly RegistrySnapshot[] {
    return this.snapshotList;
  }

  get goals(): GoalSummary[] {
    return this.snapshotList.flatMap((s) => (s.ok ? s.goals : []));
  }

  /** The goal's item of its registry's live status model (the extension API's `getGoalStatus`). */
  async statusItem(goal: GoalSummary): Promise<GoalStatusItem | undefined> {
    const snapshot = await this.liveModel(goal.registryPath).current();
    return snapshot.ok ? snapshot.items.get(goal.goalId) : undefined;
  }

  /** Status and quota of a goal as of the last reload (undefined while loading or if unreadable). */
  detailsOf(goal: GoalSummary): GoalDetails | undefined {
    return this.details.get(goalKey(goal));
  }

  /** The goal is listed from the registry but its status and quota are still being read (the first pass of a reload). */
  isReading(goal: GoalSummary): boolean {
    return this.unread.has(goalKey(goal));
  }

  /** Resolves once the reloads asked for so far are done (every listed goal's status read). */
  async settled(): Promise<void> {
    for (let seen = this.loading; seen !== undefined;) {
      await seen;
      if (this.loading === seen) return;
      seen = this.loading;
    }
  }

  /** The newest runs of a goal (bookkeeping left out), as of the last reload. */
  recentRunsOf(goal: GoalSummary): readonly RecentRun[] {
    return this.runs.get(goalKey(goal))?.runs ?? [];
  }

  /** The same runs as the Recent runs group lists them: each Markdown record checked now, when shown. */
  recentRunsShown(goal: GoalSummary): readonly RecentRun[] {
    return withExistingEvidence(this.recentRunsOf(goal));
  }

  /** The goal's time-active hard task leases by todo id, as of the last reload. */
  leasesOf(goal: GoalSummary): ReadonlyMap<string, TodoLease> {
    return this.leases.get(goalKey(goal)) ?? new Map();
  }

  /** Per agent of the workspace's goals: its goals, claims, last turn and executor. */
  agentDetails(): AgentDetails[] {
    return agentDetailsOf(this.goalFacts());
  }

  private goalFacts(): GoalFacts[] {
    return this.goals.map((goal) => ({
      goal,
      status: this.detailsOf(goal)?.status,
      runs: this.recentRunsOf(goal),
      executors: this.executors.get(goalKey(goal)) ?? new Map(),
    }));
  }

  isLoopRunning(goal: GoalSummary): boolean {
    return this.loops.has(goalKey(goal));
  }

  /** Records a loop starting on a goal; the returned signal aborts when Stop Loop is run. */
  beginLoop(goal: GoalSummary): { signal: AbortSignal; end: () => void } {
    const key = goalKey(goal);
    if (this.loops.has(key))
      throw new Error(vscode.l10n.t('A loop already runs on "{0}" in this window; stop it first.', goal.goalId));
    const controller = new AbortController();
    this.loops.set(key, controller);
    this.goalsChanged.fire([goal]);
    return {
      signal: controller.signal,
      end: () => {
        if (this.loops.get(key) !== controller) return;
        this.loops.delete(key);
        this.goalsChanged.fire([goal]);
      },
    };
  }

  /** Asks the goal's running loop to stop after its current phase; false when none runs. */
  stopLoop(goal: GoalSummary): boolean {
    const controller = this.loops.get(goalKey(goal));
    if (controller === undefined) return false;
    controller.abort();
    return true;
  }

  findGoal(goalId: string, registryPath?: string): GoalSummary | undefined {
    return this.goals.find(
      (g) => g.goalId === goalId && (registryPath === undefined || g.registryPath === registryPath),
    );
  }

  /** Registry files this workspace shows, in folder order, without duplicates. */
  registryPaths(): string[] {
    return this.registrySources().map((source) => source.registryPath);
  }

  /**
   * The registries of this window and the folder each came from: each folder's
   * `.loopx/registry.json` and the `loopx.registryPath` read with that folder as the resource
   * (the setting is `resource`-scoped: a folder may name its own; relative paths resolve against it).
   */
  registrySources(): RegistrySource[] {
    const folders = (vscode.workspace.workspaceFolders ?? []).filter((folder) => folder.uri.scheme === 'file');
    const setting = (scope?: vscode.Uri): string =>
      vscode.workspace.getConfiguration(SETTINGS.section, scope).get<string>(SETTINGS.registryPath, '');
    return registrySources(
      folders.map((folder) => ({ name: folder.name, path: folder.uri.fsPath, registryPath: setting(folder.uri) })),
      setting(),
      homedir(),
    );
  }

  /** The goals by workspace folder when the window has several folders; null: one folder or none (a flat list). */
  goalsByFolder(): FolderGoals[] | null {
    const folders = (vscode.workspace.workspaceFolders ?? [])
      .filter((folder) => folder.uri.scheme === 'file')
      .map((folder) => ({ name: folder.name, path: folder.uri.fsPath }));
    return goalsByFolder(folders, this.sources, this.goals);
  }

  /** When the reload now running (or the last one) started, in performance.now() ms (the benchmarks time a refresh from it). */
  get reloadStartedAt(): number | undefined {
    return this.reloadStarted;
  }

  /**
   * Reloads after a short pause. With the file a watcher saw change, the reload re-reads only the
   * goals the changed files belong to (see `goalsOfChangedFiles`); without one, everything.
   */
  scheduleReload(changed?: vscode.Uri): void {
    this.pendingFiles.add(changed === undefined || changed.scheme !== 'file' ? undefined : changed.fsPath);
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => {
      const files = this.pendingFiles.take();
      const goals = files === 'all' || this.snapshotList.length === 0 ? 'all' : goalsOfChangedFiles(files, this.goals);
      void (goals === 'all' ? this.reload() : this.reloadGoals(goals));
    }, RELOAD_DEBOUNCE_MS);
  }

  /**
   * Re-reads only these goals (their status item, quota, runs and leases) and fires the change for
   * them alone; the registry and every other goal are left as the last reload read them.
   */
  async reloadGoals(goals: readonly GoalSummary[]): Promise<void> {
    const previous = this.loading;
    const next = (async () => {
      await previous;
      if (goals.length === 0) return;
      const started = performance.now();
      this.reloadStarted = started;
      const current = new Set(this.goals.map(goalKey));
      const targets = goals.filter((goal) => current.has(goalKey(goal)));
      const byRegistry = new Map<string, GoalSummary[]>();
      for (const goal of targets)
        byRegistry.set(goal.registryPath, [...(byRegistry.get(goal.registryPath) ?? []), goal]);
      const now = hostClock().now();
      const changed: GoalSummary[] = [];
      for (const [registryPath, registryGoals] of byRegistry) {
        const snapshot = await this.liveModel(registryPath).refreshGoals(registryGoals.map((goal) => goal.goalId));
        if (!snapshot.ok) {
          this.log.warn(`status of ${registryPath}: ${snapshot.error}`);
          continue;
        }
        for (const goal of registryGoals) {
          const key = goalKey(goal);
          this.details.set(key, detailsFrom(snapshot, goal.goalId));
          this.leases.set(key, this.liveModel(registryPath).goalLeases(goal.goalId, now));
          await this.refreshRuns(goal);
          const facts = this.factsOf(goal);
          const seen = this.fingerprints.facts.get(key);
          this.fingerprints.facts.set(key, facts);
          if (seen === undefined || seen.changedIn(facts)) changed.push(goal);
        }
      }
      this.log.trace(
        `reloaded ${targets.length} goal(s) in ${(performance.now() - started).toFixed(1)} ms (${changed.length} changed)`,
      );
      if (changed.length === 0) return;
      // The tree first: the status bar and the webviews follow in the same turn.
      this.goalsChanged.fire(changed);
      this.changed.fire();
    })();
    this.loading = next;
    await next;
  }

  /**
   * Reloads every registry. `listed` is called once the goals are listed (their nodes shown from the
   * registry, before goals never read before have their status and quota), or at the end.
   */
  async reload(options: { listed?: () => void } = {}): Promise<void> {
    // One load at a time; a reload requested meanwhile runs after it, on fresh data.
    const previous = this.loading;
    const next = (async () => {
      await previous;
      const started = performance.now();
      this.reloadStarted = started;
      this.sources = this.registrySources();
      const snapshots = await Promise.all(
        this.sources.map((source) => loadRegistrySnapshot(source.registryPath, { homeDir: homedir() })),
      );
      this.snapshotList = snapshots.filter((s) => !s.ok || s.exists);
      // Goals never read before (the first load, a goal just added) are listed from the registry at
      // once and filled when their status and quota are read: the second pass refreshes their nodes.
      this.unread = new Set(this.goals.map(goalKey).filter((key) => !this.details.has(key)));
      if (this.unread.size > 0) {
        this.fireGoalChanges();
        this.changed.fire();
      }
      options.listed?.();
      this.details = await this.loadDetails(this.goals);
      this.unread = new Set();
      await this.loadExtras(this.goals);
      this.watchRuntimeRoots(this.goals);
      this.publishDiagnostics(snapshots);
      this.log.trace(
        `loaded ${this.goals.length} goal(s) from ${this.snapshotList.length} registr${this.snapshotList.length === 1 ? 'y' : 'ies'} in ${(performance.now() - started).toFixed(1)} ms`,
      );
      this.fireGoalChanges();
      this.changed.fire();
    })();
    this.loading = next;
    await next;
  }

  /**
   * Per-goal status and quota from each registry's live model: only goals whose files changed are
   * re-read, and each model tells its listeners what changed.
   */
  private async loadDetails(goals: GoalSummary[]): Promise<Map<string, GoalDetails>> {
    const registryPaths = new Set(goals.map((goal) => goal.registryPath));
    for (const [registryPath, model] of this.live) {
      if (!registryPaths.has(registryPath)) {
        model.close();
        this.live.delete(registryPath);
      }
    }
    const details = new Map<string, GoalDetails>();
    for (const registryPath of registryPaths) {
      const model = this.liveModel(registryPath);
      model.invalidate();
      const snapshot = await model.current();
      if (!snapshot.ok) {
        this.log.warn(`status of ${registryPath}: ${snapshot.error}`);
        continue;
      }
      for (const goal of goals) {
        if (goal.registryPath !== registryPath) continue;
        details.set(goalKey(goal), detailsFrom(snapshot, goal.goalId));
      }
    }
    return details;
  }

  /** Recent runs (re-read only for goals whose run index changed) and the agents' executors. */
  private async loadExtras(goals: GoalSummary[]): Promise<void> {
    const runs = new Map<string, { version: string; runs: RecentRun[] }>();
    const executors = new Map<string, ReadonlyMap<string, string>>();
    const leases = new Map<string, ReadonlyMap<string, TodoLease>>();
    const now = hostClock().now();
    for (const goal of goals) {
      const key = goalKey(goal);
      const model = this.liveModel(goal.registryPath);
      leases.set(key, model.goalLeases(goal.goalId, now));
      const status = this.details.get(key)?.status;
      const version = runsVersion(status);
      const previous = this.runs.get(key);
      if (previous !== undefined && previous.version === version) runs.set(key, previous);
      else runs.set(key, { version, runs: await this.recentRuns(goal) });
      const labels = new Map<string, string>();
      for (const [agentId, config] of model.executorConfigs(goal.goalId, goal.agents))
        labels.set(
          agentId,
          config === 'invalid'
            ? 'executor config invalid'
            : config === null
              ? 'no executor configured'
              : `executor: ${config.preset}`,
        );
      executors.set(key, labels);
    }
    this.runs = runs;
    this.executors = executors;
    this.leases = leases;
  }

  /**
   * A goal's newest runs: as the status cache keeps them with its run index's digest, else read
   * from the index (the cache is off, or was written without them).
   */
  private async recentRuns(goal: GoalSummary): Promise<RecentRun[]> {
    const kept = this.details.get(goalKey(goal))?.recentRuns;
    return kept !== undefined ? recentRunsOf(kept, goal) : this.readRecentRuns(goal);
  }

  /**
   * Reads the goal's run index for its newest runs through its registry's live model, which lets go
   * of the read at once (`LiveStatusModel.goalRuns`: keeping every goal's whole run history would
   * cost +35 MB on M).
   */
  private async readRecentRuns(goal: GoalSummary): Promise<RecentRun[]> {
    const rows = await this.liveModel(goal.registryPath)
      .goalRuns(goal.goalId)
      .catch(() => []);
    return recentRunsFrom(rows, goal);
  }

  /** Re-reads one goal's recent runs when its run index moved. */
  private async refreshRuns(goal: GoalSummary): Promise<void> {
    const key = goalKey(goal);
    const version = runsVersion(this.details.get(key)?.status);
    if (this.runs.get(key)?.version === version) return;
    this.runs.set(key, { version, runs: await this.recentRuns(goal) });
  }

  /** What the tree shows of a goal: a change in it is a change of the goal's node. */
  private factsOf(goal: GoalSummary): GoalFactsSeen {
    const key = goalKey(goal);
    const details = this.details.get(key);
    return new GoalFactsSeen(
      JSON.stringify([goal, [...(this.executors.get(key) ?? [])], [...(this.leases.get(key) ?? [])]]),
      [details?.status, details?.quota, details?.recentRuns, this.runs.get(key)?.runs],
    );
  }

  /** Fires `onDidChangeGoals` for the goals whose facts changed since the previous reload. */
  private fireGoalChanges(): void {
    const shape = JSON.stringify(
      this.snapshotList.map((s) => (s.ok ? [s.registryPath, s.goals.map((g) => g.goalId)] : [s.registryPath, s.error])),
    );
    const facts = new Map<string, GoalFactsSeen>();
    for (const goal of this.goals) facts.set(goalKey(goal), this.factsOf(goal));
    const next = { shape, facts };
    const changed = changedGoalKeys(this.fingerprints, next);
    this.fingerprints = next;
    if (changed === 'all') this.goalsChanged.fire('all');
    else if (changed.length > 0) this.goalsChanged.fire(this.goals.filter((g) => changed.includes(goalKey(g))));
  }

  /**
   * Watches every runtime root and state file the registries name that the workspace watcher does
   * not see (`watchTargets`): a runtime root outside `.loopx/` or outside the folders (LoopX's
   * default is under the home folder), a state file with another name or place.
   */
  private watchRuntimeRoots(goals: GoalSummary[]): void {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const targets = watchTargets(goals, folders);
    const wanted = new Map<string, () => vscode.Disposable>();
    // Inside a folder, a glob over the workspace watcher's events (a RelativePattern there asks VS Code for a
    // second watch of a watched path, whose events did not arrive in code-server); outside, a watcher of its own.
    const watcherOf = (base: string, pattern: string): vscode.FileSystemWatcher => {
      const inFolder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(base)) !== undefined;
      return vscode.workspace.createFileSystemWatcher(
        inFolder && !/[*?[\]{}]/.test(base)
          ? `${base.split(sep).join('/')}/${pattern}`
          : new vscode.RelativePattern(vscode.Uri.file(base), pattern),
      );
    };
    const watch = (base: string, pattern: string) => (): vscode.Disposable => {
      const watcher = watcherOf(base, pattern);
      const subscriptions = [watcher.onDidChange, watcher.onDidCreate, watcher.onDidDelete].map((event) =>
        event((uri) => this.scheduleReload(uri)),
      );
      return vscode.Disposable.from(watcher, ...subscriptions);
    };
    // A runtime root outside the folders: Node's watch, which follows the root when it is replaced wholesale (VS
    // Code 1.90–1.93's watcher of it went silent then, even re-created; see FolderTreeWatcher).
    const watchOutside = (root: string) => (): vscode.Disposable => {
      const watcher = new FolderTreeWatcher(
        root,
        (path) => this.scheduleReload(vscode.Uri.file(path)),
        (message) => this.log.warn(message),
      );
      return { dispose: () => watcher.close() };
    };
    for (const root of targets.runtimeRoots) {
      const outside = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(root)) === undefined;
      wanted.set(`root:${root}`, outside ? watchOutside(root) : watch(root, '**'));
    }
    for (const file of targets.stateFiles) wanted.set(`file:${join(file.dir, file.name)}`, watch(file.dir, file.name));
    for (const [key, watcher] of this.runtimeWatchers) {
      if (wanted.has(key)) continue;
      watcher.dispose();
      this.runtimeWatchers.delete(key);
    }
    for (const [key, create] of wanted) if (!this.runtimeWatchers.has(key)) this.runtimeWatchers.set(key, create());
    this.log.trace(
      `watching ${[...this.runtimeWatchers.keys()].join(', ') || 'no file outside the workspace watcher'}`,
    );
  }

  /** What the extra watchers watch (`root:<path>`, `file:<path>`), for tests through a hidden command. */
  get watchedPaths(): string[] {
    return [...this.runtimeWatchers.keys()];
  }

  private publishDiagnostics(snapshots: RegistrySnapshot[]): void {
    this.diagnostics.clear();
    for (const snapshot of snapshots) {
      if (snapshot.ok) continue;
      const line = Math.max(0, (snapshot.error.line ?? 1) - 1);
      const column = Math.max(0, (snapshot.error.column ?? 1) - 1);
      const diagnostic = new vscode.Diagnostic(
        new vscode.Range(line, column, line, column + 1),
        snapshot.error.message,
        vscode.DiagnosticSeverity.Error,
      );
      diagnostic.source = 'LoopX';
      diagnostic.code = snapshot.error.code;
      this.diagnostics.set(vscode.Uri.file(snapshot.registryPath), [diagnostic]);
      this.log.error(snapshot.error.message);
    }
  }
}

export interface GoalDetails {
  status: GoalStatusItem | undefined;
  quota: GoalQuotaSummary | undefined;
  /** Its newest runs as the status cache keeps them (undefined: not kept, the run index is read). */
  recentRuns?: readonly RecentRunRow[] | undefined;
}

function detailsFrom(snapshot: ReadyLiveSnapshot, goalId: string): GoalDetails {
  return {
    status: snapshot.items.get(goalId),
    quota: snapshot.quota.get(goalId),
    recentRuns: snapshot.recentRuns.get(goalId),
  };
}

/** What the recent runs of a goal were read for: they are read again when its run index moves. */
function runsVersion(status: GoalStatusItem | undefined): string {
  return `${status?.raw_index_records ?? 0}:${status?.unique_runs ?? 0}:${status?.latest_runs[0]?.generated_at ?? ''}`;
}

export function goalKey(goal: Pick<GoalSummary, 'registryPath' | 'goalId'>): string {
  return `${goal.registryPath}#${goal.goalId}`;
}
