import * as vscode from 'vscode';
import { Disposable } from './common/disposable';
import { CONTEXT_KEYS, VIEW_IDS } from './constants';
import { registerPaletteCommands } from './commands/registerCommands';
import { showAllCommands } from './commands/showCommands';
import { LOOPX_VERSION } from './core/version';
import { AgentsView } from './views/agentsView';
import { GoalsView } from './views/goalsView';

/** Wires the surfaces to the control plane. Owns every registration it makes. */
export class LoopxApp extends Disposable {
  readonly goalsView: GoalsView;
  readonly agentsView: AgentsView;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.goalsView = this.register(new GoalsView(VIEW_IDS.goals));
    this.agentsView = this.register(new AgentsView(VIEW_IDS.agents));
    for (const d of registerPaletteCommands({
      showCommands: () => showAllCommands(),
      refresh: () => this.refresh(),
      showLog: () => this.log.show(),
    }, log)) this.register(d);
  }

  async start(): Promise<void> {
    this.log.info(`LoopX ${LOOPX_VERSION} activating (VS Code ${vscode.version}, trusted: ${vscode.workspace.isTrusted})`);
    await this.refresh();
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.ready, true);
  }

  async refresh(): Promise<void> {
    await vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasGoals, false);
  }

  /** The API other extensions get from `getExtension(...).exports`. */
  get api(): { apiVersion: number; version: string } {
    return { apiVersion: 1, version: LOOPX_VERSION };
  }

  get extensionUri(): vscode.Uri {
    return this.context.extensionUri;
  }
}
