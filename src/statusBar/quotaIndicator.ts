import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { paletteCommandId, paletteCommands } from '../core/commands/catalog';
import type { GoalSummary } from '../core/ops/goalRows';
import { goalKey, type WorkspaceModel } from '../workspace/workspaceModel';
import { leastHeadroom, presentIndicator, type IndicatorInput, type IndicatorPresentation } from './presentation';

const commandId = (key: string): string => {
  const spec = paletteCommands().find((s) => s.key === key);
  if (!spec) throw new Error(`no palette command ${key}`);
  return paletteCommandId(spec);
};

/**
 * The status-bar quota indicator: the goal selected in the Goals view, else the one with the least
 * headroom. Hidden while the workspace has no LoopX registry. A click opens the quota of all goals.
 */
export class QuotaIndicator extends Disposable {
  private readonly item: vscode.StatusBarItem;
  private selected: string | undefined;
  private shown: { goal: GoalSummary; presentation: IndicatorPresentation } | undefined;

  constructor(
    private readonly model: WorkspaceModel,
    private readonly warningCount: () => number,
    /** Turns not yet reviewed (the Review view's badge), named in the tooltip. */
    private readonly reviewDebt: () => number = () => 0,
    private readonly overdueGates: () => number = () => 0,
    overdueChanged?: vscode.Event<unknown>,
  ) {
    super();
    this.item = this.register(vscode.window.createStatusBarItem('loopx.quota', vscode.StatusBarAlignment.Left, 50));
    this.item.name = vscode.l10n.t('LoopX Quota');
    this.item.command = commandId('quotaOverview');
    this.register(model.onDidChange(() => this.update()));
    // A loop starting or stopping in this window changes no file: the model says so per goal.
    this.register(model.onDidChangeGoals(() => this.update()));
    // Gates pass their due time with the clock: the Gate Inbox says when its rows change.
    if (overdueChanged !== undefined) this.register(overdueChanged(() => this.update()));
    this.register(
      vscode.commands.registerCommand('_loopx.quotaIndicator.snapshot', () => ({
        visible: this.shown !== undefined,
        goalId: this.shown?.goal.goalId ?? null,
        text: this.item.text,
        kind: this.shown?.presentation.kind ?? null,
        background: this.shown?.presentation.background ?? null,
        tooltip: typeof this.item.tooltip === 'string' ? this.item.tooltip : (this.item.tooltip?.value ?? null),
      })),
    );
    this.update();
  }

  /** The review debt changed: the tooltip says so. */
  refresh(): void {
    this.update();
  }

  /** The goal of the Goals view's selection (any node of a goal), or undefined to follow headroom. */
  select(goal: GoalSummary | undefined): void {
    this.selected = goal ? goalKey(goal) : undefined;
    this.update();
  }

  inputOf(goal: GoalSummary): IndicatorInput {
    const details = this.model.detailsOf(goal);
    return {
      goalId: goal.goalId,
      displayName: goal.displayName,
      quota: details?.quota,
      openGates: details?.status?.open_gates.length ?? 0,
      error: details?.status?.active_state.error?.message ?? null,
      loopRunning: this.model.isLoopRunning(goal),
      overdueGates: this.overdueGates(),
    };
  }

  private target(): GoalSummary | undefined {
    const goals = this.model.goals;
    const selected = goals.find((g) => goalKey(g) === this.selected);
    if (selected) return selected;
    return leastHeadroom(goals, (goal) => this.model.detailsOf(goal)?.quota);
  }

  private update(): void {
    const goal = this.model.snapshots.length === 0 ? undefined : this.target();
    if (!goal) {
      this.shown = undefined;
      this.item.hide();
      return;
    }
    // Listed but not read yet (the first pass of a reload): an unknown quota is not an error; wait for the second pass.
    if (this.model.isReading(goal)) return;
    const presentation = presentIndicator(this.inputOf(goal));
    this.shown = { goal, presentation };
    this.item.text = presentation.text;
    this.item.backgroundColor =
      presentation.background === null
        ? undefined
        : new vscode.ThemeColor(`statusBarItem.${presentation.background}Background`);
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip
      .appendMarkdown(`**${vscode.l10n.t('LoopX quota — ')}`)
      .appendText(goal.displayName)
      .appendMarkdown('**\n\n');
    for (const line of presentation.details) tooltip.appendMarkdown('- ').appendText(line).appendMarkdown('\n');
    const warnings = this.warningCount();
    if (warnings > 0)
      tooltip.appendMarkdown(
        `\n$(warning) ${warnings === 1 ? vscode.l10n.t('1 projection warning') : vscode.l10n.t('{0} projection warnings', warnings)} — [${vscode.l10n.t('Show')}](command:${commandId('showProjectionWarnings')})`,
      );
    const debt = this.reviewDebt();
    if (debt > 0)
      tooltip.appendMarkdown(
        `\n\n$(checklist) ${debt === 1 ? vscode.l10n.t('1 turn to review') : vscode.l10n.t('{0} turns to review', debt)} — [${vscode.l10n.t('Review')}](command:${commandId('reviewList')})`,
      );
    const overdue = this.overdueGates();
    if (overdue > 0)
      tooltip.appendMarkdown(
        `\n$(bell-dot) [${vscode.l10n.t('Open the Gate Inbox')}](command:${commandId('gateInbox')})`,
      );
    tooltip.appendMarkdown(`\n\n${vscode.l10n.t('Click for the quota of all goals.')}`);
    tooltip.isTrusted = {
      enabledCommands: [commandId('showProjectionWarnings'), commandId('reviewList'), commandId('gateInbox')],
    };
    this.item.tooltip = tooltip;
    this.item.accessibilityInformation = {
      label: vscode.l10n.t('LoopX quota of {0}: {1}', goal.goalId, presentation.word),
    };
    this.item.show();
  }
}
