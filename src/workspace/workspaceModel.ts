import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { SETTINGS } from '../core/commands/ids';
import { clockFromEnv } from '../core/clock';
import { errorMessage } from '../core/errors';
import type { GoalQuotaSummary } from '../core/scheduling/shouldRun';
import { QuotaSummaryCache } from '../core/status/quotaCache';
import { GoalStatusCache, type GoalStatusItem } from '../core/status/goalStatus';
import { loadRegistrySnapshot, type GoalSummary, type RegistrySnapshot } from '../core/status/workspaceGoals';
import { PROJECT_REGISTRY_RELATIVE_PATH } from '../core/registry/locate';

const RELOAD_DEBOUNCE_MS = 200;
const DETAILS_CONCURRENCY = 8;

/**
 * The LoopX registries of this workspace (each folder's `.loopx/registry.json`, plus the
 * `loopx.registryPath` setting) and their goals. Reloads, debounced, when LoopX files change on
 * disk — agents and the CLI write them from outside the editor.
 */
export class WorkspaceModel extends Disposable {
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  readonly onDidChange = this.changed.event;
  private readonly diagnostics = this.register(vscode.languages.createDiagnosticCollection('loopx'));
  private snapshotList: RegistrySnapshot[] = [];
  private readonly statusCache = new GoalStatusCache();
  private readonly quotaCaches = new Map<string, QuotaSummaryCache>();
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
   * Per-goal status (cached by file stamps: only changed goals are re-read) and the quota window.
   * Each registry is read once, and a goal's quota reuses the run index its status just read.
   */
  private async loadDetails(goals: GoalSummary[]): Promise<Map<string, GoalDetails>> {
    const registries = new Map<string, Promise<Record<string, unknown> | undefined>>();
    const registryOf = (registryPath: string): Promise<Record<string, unknown> | undefined> => {
      let loaded = registries.get(registryPath);
      if (loaded === undefined) {
        // Unreadable: each goal's quota then reads it itself and reports why.
        loaded = this.statusCache.registry(registryPath).then(
          (r) => (r.exists ? r.registry : undefined),
          () => undefined,
        );
        registries.set(registryPath, loaded);
      }
      return loaded;
    };
    const detailsOf = async (goal: GoalSummary): Promise<[string, GoalDetails]> => {
      const status = await this.statusCache.goalStatus(goal, { homeDir: homedir() }).catch((error: unknown) => {
        this.log.warn(`status of ${goal.goalId}: ${errorMessage(error)}`);
        return undefined;
      });
      const registry = await registryOf(goal.registryPath);
      const runIndex = status === undefined ? undefined : this.statusCache.heldRunIndex(goal);
      const quota = await this.quotaCacheOf(goal.registryPath)
        .summary(goal, {
          ...(registry !== undefined ? { registry } : {}),
          ...(runIndex !== undefined ? { runIndex } : {}),
        })
        .catch((error: unknown) => {
          this.log.warn(`quota of ${goal.goalId}: ${errorMessage(error)}`);
          return undefined;
        });
      // Items and quota stay cached by file stamps; the parsed histories need not stay in memory.
      this.statusCache.release(goal);
      return [goalKey(goal), { status, quota }];
    };
    // A few goals at a time: each holds its whole run history until its quota is computed.
    const entries: [string, GoalDetails][] = [];
    for (let start = 0; start < goals.length; start += DETAILS_CONCURRENCY) {
      entries.push(...(await Promise.all(goals.slice(start, start + DETAILS_CONCURRENCY).map(detailsOf))));
    }
    for (const [registryPath, cache] of this.quotaCaches) {
      cache.retain(new Set(goals.filter((g) => g.registryPath === registryPath).map((g) => g.goalId)));
    }
    return new Map(entries);
  }

  private quotaCacheOf(registryPath: string): QuotaSummaryCache {
    let cache = this.quotaCaches.get(registryPath);
    if (cache === undefined) {
      cache = new QuotaSummaryCache({ registryPath, homeDir: homedir(), clock: this.clock });
      this.quotaCaches.set(registryPath, cache);
    }
    return cache;
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
