import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { SETTINGS } from '../core/commands/ids';
import { clockFromEnv } from '../core/clock';
import type { GoalQuotaSummary } from '../core/scheduling/shouldRun';
import type { GoalStatusItem } from '../core/status/goalStatus';
import { LiveStatusModel, type StatusDiff } from '../core/status/liveStatus';
import { loadRegistrySnapshot, type GoalSummary, type RegistrySnapshot } from '../core/status/workspaceGoals';
import { PROJECT_REGISTRY_RELATIVE_PATH } from '../core/registry/locate';

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
  private readonly diagnostics = this.register(vscode.languages.createDiagnosticCollection('loopx'));
  private snapshotList: RegistrySnapshot[] = [];
  /** One live status model per registry: the views, the status server and the API events share it. */
  private readonly live = new Map<string, LiveStatusModel>();
  private readonly clock = clockFromEnv();
  private details = new Map<string, GoalDetails>();
  private reloadTimer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;

  constructor(private readonly log: vscode.LogOutputChannel) {
    super();
    const watcher = this.register(vscode.workspace.createFileSystemWatcher('**/{.loopx/**,ACTIVE_GOAL_STATE.md}'));
    for (const event of [watcher.onDidChange, watcher.onDidCreate, watcher.onDidDelete]) {
      this.register(event(() => this.scheduleReload()));
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
        for (const model of this.live.values()) model.close();
        this.live.clear();
      },
    });
  }

  /** The live status model of a registry of this workspace (created on first use). */
  liveModel(registryPath: string): LiveStatusModel {
    let model = this.live.get(registryPath);
    if (model === undefined) {
      model = new LiveStatusModel({ registryPath, homeDir: homedir(), clock: this.clock, watch: false });
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

  /** Status and quota of a goal as of the last reload (undefined while loading or if unreadable). */
  detailsOf(goal: GoalSummary): GoalDetails | undefined {
    return this.details.get(goalKey(goal));
  }

  findGoal(goalId: string, registryPath?: string): GoalSummary | undefined {
    return this.goals.find(
      (g) => g.goalId === goalId && (registryPath === undefined || g.registryPath === registryPath),
    );
  }

  /** Registry files this workspace shows, in folder order, without duplicates. */
  registryPaths(): string[] {
    const paths: string[] = [];
    const folders = vscode.workspace.workspaceFolders ?? [];
    for (const folder of folders) {
      if (folder.uri.scheme === 'file') paths.push(join(folder.uri.fsPath, PROJECT_REGISTRY_RELATIVE_PATH));
    }
    const configured = vscode.workspace
      .getConfiguration(SETTINGS.section)
      .get<string>(SETTINGS.registryPath, '')
      .trim();
    if (configured !== '') {
      const base = folders[0]?.uri.fsPath ?? homedir();
      paths.push(isAbsolute(configured) ? configured : join(base, configured));
    }
    return [...new Set(paths)];
  }

  scheduleReload(): void {
    clearTimeout(this.reloadTimer);
    this.reloadTimer = setTimeout(() => void this.reload(), RELOAD_DEBOUNCE_MS);
  }

  async reload(): Promise<void> {
    // One load at a time; a reload requested meanwhile runs after it, on fresh data.
    const previous = this.loading;
    const next = (async () => {
      await previous;
      const started = performance.now();
      const snapshots = await Promise.all(
        this.registryPaths().map((p) => loadRegistrySnapshot(p, { homeDir: homedir() })),
      );
      this.snapshotList = snapshots.filter((s) => !s.ok || s.exists);
      this.details = await this.loadDetails(this.goals);
      this.publishDiagnostics(snapshots);
      this.log.trace(
        `loaded ${this.goals.length} goal(s) from ${this.snapshotList.length} registr${this.snapshotList.length === 1 ? 'y' : 'ies'} in ${(performance.now() - started).toFixed(1)} ms`,
      );
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
        details.set(goalKey(goal), { status: snapshot.items.get(goal.goalId), quota: snapshot.quota.get(goal.goalId) });
      }
    }
    return details;
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
}

export function goalKey(goal: Pick<GoalSummary, 'registryPath' | 'goalId'>): string {
  return `${goal.registryPath}#${goal.goalId}`;
}
