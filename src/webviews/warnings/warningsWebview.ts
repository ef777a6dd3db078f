import * as vscode from 'vscode';
import { editorErrorText } from '../../common/errorWording';
import { webviewL10nBundle } from '../../common/l10n';
import { Disposable } from '../../common/disposable';
import { VIEW_IDS } from '../../core/commands/ids';
import { refreshState } from '../../core/ops/refresh';
import { runOperation } from '../../core/ops/run';
import { todoAdd } from '../../core/ops/todo';
import { editorEnvironment } from '../../commands/operationRunner';
import { Cancelled } from '../../commands/pickers';
import { goalKey, type WorkspaceModel } from '../../workspace/workspaceModel';
import { shellHtml, webviewOptions } from '../shared/html';
import { buildCards, type CardTarget } from './cards';
import { warningsToHostSchema, type CardActionKind, type HostToWarnings, type WarningCard } from './protocol';

export const WARNINGS_PANEL_TYPE = 'loopx.warningsPanel';

/** What a message from the webview led to (returned to tests through the hidden command). */
export interface MessageOutcome {
  accepted: boolean;
  ok?: boolean;
  message: string;
}

/**
 * The projection-warnings webview, as an editor panel ("LoopX: Show Projection Warnings") and as a
 * view in the LoopX container. Both render the same cards from the workspace model, update when it
 * changes, and run each card action as an operation after a preview and a confirmation.
 */
export class WarningsWebviews extends Disposable implements vscode.WebviewViewProvider {
  private panel: vscode.WebviewPanel | undefined;
  private view: vscode.WebviewView | undefined;
  private cards: WarningCard[] = [];
  private targets = new Map<string, CardTarget>();
  private readonly posted: HostToWarnings[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: WorkspaceModel,
    private readonly log: vscode.LogOutputChannel,
    /** Told when a webview's script sends its first message (`ready`): the benchmarks time the first paint. */
    private readonly onWebviewReady: (event: 'webview-ready') => void = () => {},
  ) {
    super();
    this.rebuild();
    this.register(vscode.window.registerWebviewViewProvider(VIEW_IDS.warnings, this));
    this.register(
      vscode.window.registerWebviewPanelSerializer(WARNINGS_PANEL_TYPE, {
        deserializeWebviewPanel: async (panel) => this.adopt(panel),
      }),
    );
    this.register(
      model.onDidChange(() => {
        this.rebuild();
        this.postRender();
      }),
    );
    this.register({ dispose: () => this.panel?.dispose() });
    // Hidden commands for the real-host tests: what was posted last, and a message as if the webview sent it.
    this.register(
      vscode.commands.registerCommand('_loopx.warnings.snapshot', () => ({
        cards: this.cards,
        html: this.panel?.webview.html ?? this.view?.webview.html ?? null,
        posted: [...this.posted],
        visible: this.panel !== undefined,
      })),
    );
    this.register(
      vscode.commands.registerCommand(
        '_loopx.warnings.receive',
        (message: unknown, options?: { confirmed?: boolean }) => this.receive(message, options?.confirmed === true),
      ),
    );
  }

  /** Opens (or reveals) the panel. */
  show(): void {
    if (this.panel) {
      this.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      WARNINGS_PANEL_TYPE,
      vscode.l10n.t('LoopX: Projection Warnings'),
      vscode.ViewColumn.Active,
      { ...webviewOptions(this.extensionUri), retainContextWhenHidden: false },
    );
    this.adopt(panel);
  }

  /** How many warnings the model shows now (the status bar offers the panel when there are some). */
  get count(): number {
    return this.cards.length;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = webviewOptions(this.extensionUri);
    this.attach(view.webview);
    view.onDidDispose(() => (this.view = undefined));
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    panel.webview.options = webviewOptions(this.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'loopx.svg');
    this.attach(panel.webview);
    panel.onDidDispose(() => (this.panel = undefined));
  }

  private attach(webview: vscode.Webview): void {
    webview.html = shellHtml(webview, this.extensionUri, {
      title: vscode.l10n.t('LoopX: Projection Warnings'),
      script: 'warnings.js',
      styles: ['media/webview.css'],
    });
    webview.onDidReceiveMessage((message: unknown) => void this.receive(message, false));
  }

  private rebuild(): void {
    const goals = this.model.goals.map((goal) => ({
      key: goalKey(goal),
      goalId: goal.goalId,
      displayName: goal.displayName,
      status: this.model.detailsOf(goal)?.status,
    }));
    const built = buildCards(goals);
    this.cards = built.cards;
    this.targets = built.targets;
  }

  private post(message: HostToWarnings): void {
    this.posted.push(message);
    if (this.posted.length > 20) this.posted.shift();
    void this.panel?.webview.postMessage(message);
    void this.view?.webview.postMessage(message);
  }

  private postRender(): void {
    const bundle = webviewL10nBundle();
    this.post({
      type: 'render',
      cards: this.cards,
      goal_count: this.model.goals.length,
      ...(bundle === undefined ? {} : { l10n: bundle }),
    });
  }

  /** A message from a webview: validated, then acted on. Anything malformed is refused and logged. */
  async receive(raw: unknown, confirmed: boolean): Promise<MessageOutcome> {
    const parsed = warningsToHostSchema.safeParse(raw);
    if (!parsed.success) {
      const message = `ignored a malformed message from the warnings webview: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`).join('; ')}`;
      this.log.warn(message);
      return { accepted: false, message };
    }
    const message = parsed.data;
    if (message.type === 'ready') {
      this.onWebviewReady('webview-ready');
      this.postRender();
      return { accepted: true, message: 'rendered' };
    }
    const target = this.targets.get(message.key);
    if (!target) {
      const text = vscode.l10n.t('This warning is gone (the files changed since it was shown).');
      this.post({ type: 'result', key: message.key, ok: false, message: text });
      return { accepted: true, ok: false, message: text };
    }
    try {
      const text = await this.act(target, message.action, confirmed);
      this.post({ type: 'result', key: message.key, ok: true, message: text });
      return { accepted: true, ok: true, message: text };
    } catch (error) {
      if (error instanceof Cancelled) return { accepted: true, ok: false, message: 'cancelled' };
      this.log.error(
        `warning action ${message.action} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
      const text = editorErrorText(error);
      this.post({ type: 'result', key: message.key, ok: false, message: text });
      return { accepted: true, ok: false, message: text };
    }
  }

  /** The agent a goal-scope refresh is recorded for: the only one, or the user's pick when the goal registers several. */
  private async agentFor(goalId: string, agents: readonly string[], confirmed: boolean): Promise<string | undefined> {
    if (agents.length <= 1 || confirmed) return agents[0];
    const picked = await vscode.window.showQuickPick([...agents], {
      title: vscode.l10n.t('Record the refresh of {0} for which agent?', goalId),
      placeHolder: vscode.l10n.t('The goal registers several agents; the run is recorded for one of them'),
    });
    if (picked === undefined) throw new Cancelled();
    return picked;
  }

  private async act(target: CardTarget, action: CardActionKind, confirmed: boolean): Promise<string> {
    const goal = this.model.goals.find((g) => goalKey(g) === target.goalKey);
    if (!goal) throw new Error(vscode.l10n.t('The goal {0} is no longer in this workspace.', target.goalId));
    if (action === 'open_state') {
      await openStateFile(goal.stateFile, target.line);
      return vscode.l10n.t('opened the state file');
    }
    const env = editorEnvironment(goal.registryPath);
    const ask = async (question: string, detail: string, button: string): Promise<void> => {
      if (confirmed) return;
      const choice = await vscode.window.showWarningMessage(question, { modal: true, detail }, button);
      if (choice !== button) throw new Cancelled();
    };
    switch (action) {
      case 'set_next_action':
      case 'keep_route':
      case 'refresh_state': {
        const nextAction = action === 'set_next_action' ? target.proposedNextAction : null;
        if (action === 'set_next_action' && nextAction === null)
          throw new Error(vscode.l10n.t('This warning proposes no text.'));
        const keep = action === 'keep_route' ? target.currentNextAction : null;
        const agentId = await this.agentFor(goal.goalId, goal.agents, confirmed);
        const request = {
          goalId: goal.goalId,
          classification: 'state_refreshed',
          progressScope: 'goal' as const,
          ...(agentId !== undefined ? { agentId } : {}),
          ...(nextAction !== null ? { nextAction } : {}),
          ...(keep !== null ? { recommendedAction: keep } : {}),
        };
        const preview = await runOperation(refreshState, { ...request, dryRun: true }, env);
        const detail =
          nextAction !== null
            ? vscode.l10n.t(
                'The durable Next Action of {0} becomes:\n\n{1}\n\nand a state_refreshed run is recorded.',
                goal.goalId,
                nextAction,
              )
            : keep !== null
              ? vscode.l10n.t('A state_refreshed run is recorded that recommends the current Next Action:\n\n{0}', keep)
              : vscode.l10n.t(
                  'A state_refreshed run is recorded from the state file as it is now (recommended action: {0}).',
                  preview.recommended_action ?? vscode.l10n.t('derived'),
                );
        await ask(
          action === 'set_next_action'
            ? vscode.l10n.t('Write a new Next Action for {0}?', goal.goalId)
            : vscode.l10n.t('Refresh the state of {0}?', goal.goalId),
          detail,
          action === 'set_next_action' ? vscode.l10n.t('Write Next Action') : vscode.l10n.t('Record'),
        );
        await runOperation(refreshState, request, env);
        await this.model.reload();
        return action === 'set_next_action'
          ? vscode.l10n.t('Next Action written; a state_refreshed run was recorded.')
          : vscode.l10n.t('State refreshed.');
      }
      case 'record_replan': {
        if (target.replan === null) throw new Error(vscode.l10n.t('This warning owes no replan.'));
        const { obligationId, agentId } = target.replan;
        const request = {
          goalId: goal.goalId,
          classification: 'autonomous_replan',
          replanObligationId: obligationId,
          ...(agentId !== null
            ? { agentId, progressScope: 'agent_lane' as const }
            : { progressScope: 'goal' as const }),
        };
        const preview = await runOperation(refreshState, { ...request, dryRun: true }, env);
        await ask(
          agentId === null
            ? vscode.l10n.t('Record the replan of {0}?', goal.goalId)
            : vscode.l10n.t('Record the replan of {0} for {1}?', goal.goalId, agentId),
          vscode.l10n.t(
            'An autonomous_replan run is recorded that discharges {0}; quota should-run stops answering autonomous_replan_required for this lane. Replan the todos in the state file first (recommended action: {1}).',
            obligationId,
            preview.recommended_action ?? vscode.l10n.t('derived from the state file'),
          ),
          vscode.l10n.t('Record Replan'),
        );
        await runOperation(refreshState, request, env);
        await this.model.reload();
        return vscode.l10n.t('Replan recorded; {0} is discharged.', obligationId);
      }
      case 'add_todo': {
        if (target.addTodo === null) throw new Error(vscode.l10n.t('This warning proposes no todo.'));
        await ask(
          target.addTodo.role === 'agent'
            ? vscode.l10n.t('Add an agent todo to {0}?', goal.goalId)
            : vscode.l10n.t('Add a user todo to {0}?', goal.goalId),
          target.addTodo.text,
          vscode.l10n.t('Add Todo'),
        );
        await runOperation(todoAdd, { goalId: goal.goalId, role: target.addTodo.role, text: target.addTodo.text }, env);
        await this.model.reload();
        return target.addTodo.role === 'agent'
          ? vscode.l10n.t('Added an agent todo.')
          : vscode.l10n.t('Added a user todo.');
      }
    }
  }
}

/** Opens the goal's state file at `line`, else at its "## Next Action" heading. */
export async function openStateFile(stateFile: string | null, line: number | null): Promise<void> {
  if (!stateFile) throw new Error(vscode.l10n.t('This goal has no state file.'));
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(stateFile));
  let target = line === null ? -1 : line - 1;
  if (target < 0) {
    for (let i = 0; i < document.lineCount; i++) {
      if (/^#{1,6}\s+Next Action\b/i.test(document.lineAt(i).text)) {
        target = i;
        break;
      }
    }
  }
  const position = new vscode.Position(Math.max(0, Math.min(target, document.lineCount - 1)), 0);
  await vscode.window.showTextDocument(document, { selection: new vscode.Range(position, position) });
}
