import * as vscode from 'vscode';
import { editorErrorText } from '../../common/errorWording';
import { webviewL10nBundle } from '../../common/l10n';
import { Disposable } from '../../common/disposable';
import { evidenceLog } from '../../core/ops/evidenceLog';
import { quotaHistory } from '../../core/ops/quota';
import { runOperation } from '../../core/ops/run';
import type { GoalSummary } from '../../core/ops/goalRows';
import { editorEnvironment } from '../../commands/operationRunner';
import { goalKey, type WorkspaceModel } from '../../workspace/workspaceModel';
import { shellHtml, webviewOptions } from '../shared/html';
import { goalDetailOf } from './detail';
import { detailStateSchema, detailToHostSchema, type HostToDetail } from './protocol';

export const GOAL_DETAIL_PANEL_TYPE = 'loopx.goalDetail';
/** How many of the newest rollout events the timeline reads. */
const TIMELINE_EVENT_WINDOW = 150;

/**
 * "LoopX: Show Goal Detail": one panel per goal with its spend over the quota window as a chart
 * (slots, and cost and tokens when budgets are set, against the limits), the todo frontier and the
 * latest runs, and a timeline of the rollout event log by turn. Restored after a reload by its serializer; updates when the goal's files change.
 */
export class GoalDetailWebviews extends Disposable {
  private readonly panels = new Map<
    string,
    { panel: vscode.WebviewPanel; goal: GoalSummary; ready: boolean; next: Promise<HostToDetail> }
  >();
  private readonly posted: HostToDetail[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: WorkspaceModel,
    private readonly log: vscode.LogOutputChannel,
    /** Told when a webview's script sends its first message (`ready`): the benchmarks time the first paint. */
    private readonly onWebviewReady: (event: 'webview-ready') => void = () => {},
  ) {
    super();
    this.register(
      vscode.window.registerWebviewPanelSerializer(GOAL_DETAIL_PANEL_TYPE, {
        deserializeWebviewPanel: async (panel, state: unknown) => {
          const ref = detailStateSchema.safeParse(state);
          const goal = ref.success ? this.model.findGoal(ref.data.goalId, ref.data.registryPath) : undefined;
          if (!goal) {
            panel.dispose();
            return;
          }
          this.adopt(panel, goal);
        },
      }),
    );
    this.register(model.onDidChange(() => this.refreshAll()));
    this.register({ dispose: () => [...this.panels.values()].forEach((p) => p.panel.dispose()) });
    this.register(
      vscode.commands.registerCommand('_loopx.goalDetail.snapshot', () => ({
        open: [...this.panels.keys()],
        posted: [...this.posted],
      })),
    );
  }

  show(goal: GoalSummary): void {
    const existing = this.panels.get(goalKey(goal));
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const panel = vscode.window.createWebviewPanel(
      GOAL_DETAIL_PANEL_TYPE,
      `LoopX: ${goal.displayName}`,
      vscode.ViewColumn.Active,
      webviewOptions(this.extensionUri),
    );
    this.adopt(panel, goal);
  }

  private adopt(panel: vscode.WebviewPanel, goal: GoalSummary): void {
    const key = goalKey(goal);
    // The data is read while the webview loads its script, not after its first message.
    this.panels.set(key, { panel, goal, ready: false, next: this.build(goal) });
    panel.webview.options = webviewOptions(this.extensionUri);
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'loopx.svg');
    panel.webview.html = shellHtml(panel.webview, this.extensionUri, {
      title: `LoopX: ${goal.goalId}`,
      script: 'goalDetail.js',
      styles: ['out/webviews/uPlot.min.css', 'media/webview.css'],
    });
    panel.webview.onDidReceiveMessage((raw: unknown) => {
      const parsed = detailToHostSchema.safeParse(raw);
      if (!parsed.success) {
        this.log.warn(`ignored a malformed message from the goal detail webview: ${parsed.error.message}`);
        return;
      }
      this.onWebviewReady('webview-ready');
      const entry = this.panels.get(key);
      if (entry) entry.ready = true;
      void this.post(key);
    });
    panel.onDidDispose(() => this.panels.delete(key));
  }

  private refreshAll(): void {
    for (const [key, entry] of this.panels) {
      const goal = this.model.findGoal(entry.goal.goalId, entry.goal.registryPath);
      if (goal) entry.goal = goal;
      entry.next = this.build(entry.goal);
      if (entry.ready) void this.post(key);
    }
  }

  /** The render message of a goal: its quota history, status and event log. */
  private async build(goal: GoalSummary): Promise<HostToDetail> {
    try {
      const env = editorEnvironment(goal.registryPath);
      const history = await runOperation(quotaHistory, { goalId: goal.goalId }, env);
      // The event log is a second source: when it cannot be read, the chart and runs still render.
      const log = await runOperation(evidenceLog, { goalId: goal.goalId, limit: TIMELINE_EVENT_WINDOW }, env).catch(
        (error: unknown) => ({ error: editorErrorText(error) }),
      );
      const detail = goalDetailOf(goal, history, this.model.detailsOf(goal)?.status, log);
      const bundle = webviewL10nBundle();
      return {
        type: 'render',
        detail,
        ref: { registryPath: goal.registryPath, goalId: goal.goalId },
        ...(bundle === undefined ? {} : { l10n: bundle }),
      };
    } catch (error) {
      return { type: 'error', message: editorErrorText(error) };
    }
  }

  /** Posts the panel's newest render message (a later one, built meanwhile, wins). */
  private async post(key: string): Promise<void> {
    const entry = this.panels.get(key);
    if (!entry) return;
    const pending = entry.next;
    const message = await pending;
    if (this.panels.get(key) !== entry || entry.next !== pending) return;
    this.posted.push(message);
    if (this.posted.length > 20) this.posted.shift();
    await entry.panel.webview.postMessage(message);
  }
}
