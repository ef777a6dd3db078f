import { createHash } from 'node:crypto';
import { homedir } from 'node:os';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { clockFromEnv } from '../core/clock';
import { errorMessage, isLoopxError } from '../core/errors';
import { generateStatusToken, STATUS_TOKEN_PATTERN } from '../core/server/security';
import {
  DEFAULT_STATUS_PORT,
  startStatusServer,
  STATUS_PATH,
  type ListeningStatusServer,
} from '../core/server/statusServer';
import { SETTINGS } from '../core/commands/ids';
import type { WorkspaceModel } from '../workspace/workspaceModel';

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
  port: number;
  requireToken: boolean;
}

/**
 * Runs the core status server inside the extension host while `loopx.statusServer.enabled` is on
 * and the workspace is trusted, for the first registry of the workspace. It restarts when the
 * settings or the registry change, invalidates the server's snapshot when the workspace model
 * reloads, and offers a free port when the configured one is taken.
 */
export class StatusServerController extends Disposable {
  private running: { server: ListeningStatusServer; desired: DesiredServer; token: string | null } | undefined;
  /** Start and stop run one at a time, in order. */
  private queue: Promise<void> = Promise.resolve();
  /** A free port chosen after a conflict, kept until the setting changes. */
  private portOverride: { configured: number; port: number } | undefined;
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
        if (this.running !== undefined && this.running.desired.registryPath !== this.desired()?.registryPath)
          void this.sync();
        else this.running?.server.source.invalidate();
      }),
    );
    void this.sync();
  }

  /** The status URL with its token, or undefined while the server is off. */
  get url(): string | undefined {
    if (this.running === undefined) return undefined;
    const base = `${this.running.server.origin}${STATUS_PATH}`;
    return this.running.token === null ? base : `${base}?token=${encodeURIComponent(this.running.token)}`;
  }

  /** "LoopX: Copy Status Server URL". */
  async copyUrl(): Promise<void> {
    await this.queue;
    const url = this.url;
    if (url !== undefined) {
      await vscode.env.clipboard.writeText(url);
      void vscode.window.showInformationMessage(
        vscode.l10n.t(
          'LoopX: copied the status server URL ({0}, with its token).',
          `${this.running?.server.origin ?? ''}${STATUS_PATH}`,
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

  override dispose(): void {
    this.stopped = true;
    const running = this.running;
    this.running = undefined;
    if (running !== undefined) void running.server.close();
    super.dispose();
  }

  /** Brings the server in line with the settings, trust and registry (queued behind earlier calls). */
  sync(): Promise<void> {
    this.queue = this.queue
      .then(() => this.reconcile())
      .catch((error: unknown) => {
        this.log.error(`status server: ${errorMessage(error)}`);
      });
    return this.queue;
  }

  private desired(): DesiredServer | undefined {
    const config = vscode.workspace.getConfiguration(STATUS_SERVER_SETTINGS.section);
    if (!config.get<boolean>(STATUS_SERVER_SETTINGS.enabled, false) || !vscode.workspace.isTrusted) return undefined;
    const registryPath =
      this.model.snapshots.find((snapshot) => snapshot.ok && snapshot.exists)?.registryPath ??
      this.model.registryPaths()[0];
    if (registryPath === undefined) return undefined;
    const configured = config.get<number>(STATUS_SERVER_SETTINGS.port, DEFAULT_STATUS_PORT);
    const port =
      Number.isInteger(configured) && configured >= 0 && configured <= 65535 ? configured : DEFAULT_STATUS_PORT;
    if (this.portOverride !== undefined && this.portOverride.configured !== port) this.portOverride = undefined;
    return {
      registryPath,
      port: this.portOverride?.port ?? port,
      requireToken: config.get<boolean>(STATUS_SERVER_SETTINGS.requireToken, true),
    };
  }

  private async reconcile(): Promise<void> {
    if (this.stopped) return;
    const desired = this.desired();
    const running = this.running;
    if (running !== undefined && desired !== undefined && sameServer(running.desired, desired)) return;
    if (running !== undefined) {
      this.running = undefined;
      await running.server.close();
      this.log.info(`status server on ${running.server.origin} stopped`);
    }
    if (desired === undefined) return;
    const token = desired.requireToken ? await this.token(desired.registryPath) : null;
    if (token === null)
      this.log.warn(
        'status server: loopx.statusServer.requireToken is off; any process on this machine can read the status',
      );
    try {
      const server = await startStatusServer({
        registryPath: desired.registryPath,
        homeDir: homedir(),
        clock: clockFromEnv(),
        token,
        port: desired.port,
        // The views' own live model: one set of caches, and the server is fresh when the views are.
        model: this.model.liveModel(desired.registryPath),
        log: (level, message) =>
          level === 'warn' ? this.log.warn(`status server: ${message}`) : this.log.info(`status server: ${message}`),
      });
      if (this.stopped) {
        await server.close();
        return;
      }
      this.running = { server, desired, token };
      this.log.info(
        `status server listening on ${server.origin} (${STATUS_PATH}; token ${token === null ? 'off' : 'required'})`,
      );
    } catch (error) {
      if (isLoopxError(error, 'port_in_use')) {
        void this.offerFreePort(desired.port);
        return;
      }
      throw error;
    }
  }

  private async offerFreePort(port: number): Promise<void> {
    this.log.warn(`status server: port ${port} on 127.0.0.1 is in use`);
    const useFreePort = vscode.l10n.t('Use a Free Port');
    const changePort = vscode.l10n.t('Change Port Setting');
    const choice = await vscode.window.showWarningMessage(
      vscode.l10n.t('LoopX: port {0} is already in use, so the status server did not start.', port),
      useFreePort,
      changePort,
    );
    if (choice === useFreePort) {
      this.portOverride = { configured: port, port: 0 };
      await this.sync();
      const url = this.url;
      if (url !== undefined) {
        const copyUrl = vscode.l10n.t('Copy URL');
        const copy = await vscode.window.showInformationMessage(
          vscode.l10n.t('LoopX: the status server runs on {0} for this session.', this.running?.server.origin ?? ''),
          copyUrl,
        );
        if (copy === copyUrl) await vscode.env.clipboard.writeText(url);
      }
    } else if (choice === changePort) {
      await vscode.commands.executeCommand(
        'workbench.action.openSettings',
        `${STATUS_SERVER_SETTINGS.section}.${STATUS_SERVER_SETTINGS.port}`,
      );
    }
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
  return a.registryPath === b.registryPath && a.port === b.port && a.requireToken === b.requireToken;
}
