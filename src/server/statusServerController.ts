import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { errorMessage, isLoopxError } from '../core/errors';
import { hostClock } from '../core/ops/hostSetup';
import {
  DEFAULT_STATUS_PORT,
  generateStatusToken,
  startStatusServer,
  STATUS_PATH,
  STATUS_TOKEN_PATTERN,
} from '../core/ops/statusService';
import type { ListeningStatusServer } from '../core/server/statusServer';
import { SETTINGS } from '../core/commands/ids';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { portToListenOn, preferredStatusPort } from './statusServerPorts';

/** Settings of the status server (`loopx.statusServer.*`). */
export const STATUS_SERVER_SETTINGS = {
  section: SETTINGS.section,
  enabled: SETTINGS.statusServerEnabled,
  port: SETTINGS.statusServerPort,
  requireToken: SETTINGS.statusServerRequireToken,
} as const;

/**
 * Where a workspace's token lives in SecretStorage (which is shared by every window of the
 * extension): one key per registry served, so each workspace has its own token.
 */
export function statusTokenSecretKey(registryPath: string): string {
  return `loopx.statusServer.token.${createHash('sha256').update(registryPath).digest('hex').slice(0, 16)}`;
}

interface DesiredServer {
  registryPath: string;
  /** The port asked for (`preferredStatusPort`); the server may listen on another when it was busy. */
  preferredPort: number;
  requireToken: boolean;
}

interface RunningServer {
  server: ListeningStatusServer;
  desired: DesiredServer;
  token: string | null;
}

/** A running server as a user reaches it: its registry, its folder, and its URL through `asExternalUri`. */
export interface ServedRegistry {
  registryPath: string;
  folder: string | undefined;
  /** The local origin (`http://127.0.0.1:<port>`). */
  origin: string;
  /** The status URL with its token, as handed out (through `vscode.env.asExternalUri`). */
  url: string;
}

/**
 * Runs the core status server inside the extension host while `loopx.statusServer.enabled` is on
 * and the workspace is trusted: one server per registry of the window (each on its own port, with
 * its own token), so every registry of a multi-root window is served and `/status.json` stays the
 * one-registry payload dashboards read. Servers restart when the settings or the registries change;
 * their snapshots are invalidated when the workspace model reloads. A busy port (another window's
 * server) is replaced by a free one, logged, and shown by Copy Status Server URL.
 */
export class StatusServerController extends Disposable {
  private readonly running = new Map<string, RunningServer>();
  /** Start and stop run one at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  /** Free ports chosen after a preferred port was busy, by preferred port, kept for the session. */
  private readonly busyPorts = new Map<number, number>();
  private stopped = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly model: WorkspaceModel,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.register(
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`${STATUS_SERVER_SETTINGS.section}.statusServer`)) void this.sync();
      }),
    );
    this.register(vscode.workspace.onDidGrantWorkspaceTrust(() => void this.sync()));
    this.register(
      model.onDidChange(() => {
        const wanted = this.desired().map((d) => d.registryPath);
        if (wanted.length !== this.running.size || wanted.some((path) => !this.running.has(path))) void this.sync();
        else for (const running of this.running.values()) running.server.source.invalidate();
      }),
    );
    void this.sync();
  }

  /**
   * The running servers with the URL each is handed out under: `vscode.env.asExternalUri` maps the
   * loopback URL to one the user's browser reaches (a forwarded port over SSH, code-server's
   * `/proxy/<port>/`), and that URL's host is let through the server's Host gate.
   */
  async served(): Promise<ServedRegistry[]> {
    await this.queue;
    const folders = new Map(this.model.registrySources().map((s) => [s.registryPath, s.folder?.name]));
    const served: ServedRegistry[] = [];
    for (const running of this.running.values()) {
      // The origin alone is mapped and the path put on after: code-server 4.90's asExternalUri drops a path.
      const local = vscode.Uri.parse(`${running.server.origin}/`);
      const mapped = await vscode.env.asExternalUri(local);
      const external = mapped.with({ path: `${mapped.path.replace(/\/?$/, '/')}${STATUS_PATH.replace(/^\//, '')}` });
      if (external.authority.toLowerCase() !== local.authority.toLowerCase())
        running.server.allowExternalHost(external.authority);
      // The token goes on after the mapping: it is not the proxy's to see in a path or log.
      const base = external.toString(true);
      const url =
        running.token === null
          ? base
          : `${base}${base.includes('?') ? '&' : '?'}token=${encodeURIComponent(running.token)}`;
      served.push({
        registryPath: running.desired.registryPath,
        folder: folders.get(running.desired.registryPath),
        origin: running.server.origin,
        url,
      });
    }
    return served;
  }

  /** "LoopX: Copy Status Server URL" (a registry path as argument picks that registry's server without asking). */
  async copyUrl(registryPath?: unknown): Promise<void> {
    const served = await this.served();
    if (served.length > 0) {
      const chosen =
        served.find((s) => s.registryPath === registryPath) ??
        (served.length === 1 ? served[0] : await this.pickServed(served));
      if (chosen === undefined) return;
      await vscode.env.clipboard.writeText(chosen.url);
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'LoopX: copied the status server URL of {0} ({1}, served on {2}).',
          chosen.folder ?? basename(dirname(dirname(chosen.registryPath))),
          chosen.url.replace(/([?&]token=)[^&]*/, '$1…'),
          chosen.origin,
        ),
      );
      return;
    }
    const reason = !vscode.workspace.isTrusted
      ? vscode.l10n.t('it runs only in a trusted workspace')
      : this.model.registryPaths().length === 0
        ? vscode.l10n.t('no workspace folder is open')
        : vscode.l10n.t('it is turned off');
    const turnOn = vscode.l10n.t('Turn It On');
    // Not awaited: the command resolves once the server's state is settled, answered or not.
    void vscode.window
      .showInformationMessage(vscode.l10n.t('LoopX: the status server is not running: {0}.', reason), turnOn)
      .then(async (choice) => {
        if (choice === turnOn) {
          await vscode.workspace
            .getConfiguration(STATUS_SERVER_SETTINGS.section)
            .update(STATUS_SERVER_SETTINGS.enabled, true, vscode.ConfigurationTarget.Workspace);
        }
      });
  }

  private async pickServed(served: ServedRegistry[]): Promise<ServedRegistry | undefined> {
    const picked = await vscode.window.showQuickPick(
      served.map((s) => ({
        label: s.folder ?? basename(dirname(dirname(s.registryPath))),
        description: s.origin,
        detail: s.registryPath,
        served: s,
      })),
      { title: vscode.l10n.t('LoopX: Copy the status server URL of which registry?') },
    );
    return picked?.served;
  }

  override dispose(): void {
    this.stopped = true;
    const running = [...this.running.values()];
    this.running.clear();
    for (const server of running) void server.server.close();
    super.dispose();
  }

  /** Brings the servers in line with the settings, trust and registries (queued behind earlier calls). */
  sync(): Promise<void> {
    this.queue = this.queue
      .then(() => this.reconcile())
      .catch((error: unknown) => {
        this.log.error(`status server: ${errorMessage(error)}`);
      });
    return this.queue;
  }

  /** One server per registry of the window (the ones that exist; else the first it would read). */
  private desired(): DesiredServer[] {
    const config = vscode.workspace.getConfiguration(STATUS_SERVER_SETTINGS.section);
    if (!config.get<boolean>(STATUS_SERVER_SETTINGS.enabled, false) || !vscode.workspace.isTrusted) return [];
    const existing = this.model.snapshots.filter((s) => s.ok && s.exists).map((s) => s.registryPath);
    const first = this.model.registryPaths()[0];
    const registries = existing.length > 0 ? existing : first === undefined ? [] : [first];
    const configured = config.get<number>(STATUS_SERVER_SETTINGS.port, DEFAULT_STATUS_PORT);
    const requireToken = config.get<boolean>(STATUS_SERVER_SETTINGS.requireToken, true);
    return registries.map((registryPath, index) => ({
      registryPath,
      preferredPort: preferredStatusPort(configured, index, DEFAULT_STATUS_PORT),
      requireToken,
    }));
  }

  private async reconcile(): Promise<void> {
    if (this.stopped) return;
    const desired = new Map(this.desired().map((d) => [d.registryPath, d]));
    for (const [registryPath, running] of [...this.running]) {
      const wanted = desired.get(registryPath);
      if (wanted !== undefined && sameServer(running.desired, wanted)) continue;
      this.running.delete(registryPath);
      await running.server.close();
      this.log.info(`status server on ${running.server.origin} (${registryPath}) stopped`);
    }
    for (const wanted of desired.values()) {
      if (this.stopped) return;
      if (!this.running.has(wanted.registryPath)) await this.start(wanted);
    }
  }

  private async start(desired: DesiredServer): Promise<void> {
    const token = desired.requireToken ? await this.token(desired.registryPath) : null;
    if (token === null)
      this.log.warn(
        'status server: loopx.statusServer.requireToken is off; any process on this machine can read the status',
      );
    const listen = (port: number) =>
      startStatusServer({
        registryPath: desired.registryPath,
        homeDir: homedir(),
        clock: hostClock(),
        token,
        port,
        // The views' own live model: one set of caches, and the server is fresh when the views are.
        model: this.model.liveModel(desired.registryPath),
        log: (level, message) =>
          level === 'warn' ? this.log.warn(`status server: ${message}`) : this.log.info(`status server: ${message}`),
      });
    const port = portToListenOn(desired.preferredPort, this.busyPorts);
    let server: ListeningStatusServer;
    try {
      server = await listen(port);
    } catch (error) {
      if (!isLoopxError(error, 'port_in_use') || port === 0) throw error;
      // Another window (or program) holds the port: a free one, said in the log and by Copy Status Server URL.
      server = await listen(0);
      this.busyPorts.set(desired.preferredPort, server.port);
      this.log.warn(
        `status server: port ${port} on 127.0.0.1 is in use (another window's status server?); serving ${desired.registryPath} on free port ${server.port} for this session`,
      );
    }
    if (this.stopped) {
      await server.close();
      return;
    }
    this.running.set(desired.registryPath, { server, desired, token });
    this.log.info(
      `status server listening on ${server.origin} (${STATUS_PATH}; ${desired.registryPath}; token ${token === null ? 'off' : 'required'})`,
    );
  }

  /** The workspace's token from SecretStorage, generated and stored on first use. */
  private async token(registryPath: string): Promise<string> {
    const key = statusTokenSecretKey(registryPath);
    const stored = await this.context.secrets.get(key);
    if (stored !== undefined && STATUS_TOKEN_PATTERN.test(stored)) return stored;
    const token = generateStatusToken();
    await this.context.secrets.store(key, token);
    return token;
  }
}

function sameServer(a: DesiredServer, b: DesiredServer): boolean {
  return a.registryPath === b.registryPath && a.preferredPort === b.preferredPort && a.requireToken === b.requireToken;
}
