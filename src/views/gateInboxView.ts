import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { paletteCommandId } from '../core/commands/catalog';
import { hostClock } from '../core/ops/hostSetup';
import { shortDuration, type GateInboxRow } from '../core/ops/gate';
import type { StatusGate } from '../core/status/goalStatus';
import type { GoalSummary } from '../core/ops/goalRows';
import type { GateNode } from './nodes';
import { GateInboxSource, type InboxEntry } from '../workspace/attention';
import type { WorkspaceModel } from '../workspace/workspaceModel';

/** A gate of the inbox: the Goals tree's gate node (nodes.ts) plus its inbox row, so the gate commands (Approve, Reject, …) take it. */
export interface InboxNode extends GateNode {
  row: GateInboxRow;
}

/** The gate as the goal's status lists it, else as its inbox row tells it (the status is being re-read). */
function gateOf(model: WorkspaceModel, goal: GoalSummary, row: GateInboxRow): StatusGate {
  const listed = model.detailsOf(goal)?.status?.open_gates.find((gate) => gate.todo_id === row.todo_id);
  return (
    listed ?? {
      todo_id: row.todo_id,
      text: row.text,
      title: row.title,
      status: 'open',
      gate_state: 'open',
      line: row.line,
      blocks_agent: row.blocks_agent,
      global_gate: row.global_gate,
      unblocks_todo_ids: [],
      decision_scope: null,
      unscoped: !row.global_gate && row.blocks_agent === null && row.blocked_todo_ids.length === 0,
      blocked_todo_ids: row.blocked_todo_ids,
      due_at: row.due_at,
      updated_at: null,
    }
  );
}

/** How long a gate has blocked, the agent time it holds back, and its due time, for a row's description. */
export function inboxDescription(row: GateInboxRow, showGoal: boolean): string {
  return [
    showGoal ? row.goal_id : null,
    row.blocked_ms === null ? null : vscode.l10n.t('blocked {0}', shortDuration(row.blocked_ms)),
    row.held_agent_todos > 1 && row.agent_blocked_ms !== null
      ? vscode.l10n.t('{0} agent time', shortDuration(row.agent_blocked_ms))
      : null,
    row.due_at === null
      ? null
      : row.overdue
        ? vscode.l10n.t('overdue since {0}', row.due_at)
        : vscode.l10n.t('due {0}', row.due_at),
  ]
    .filter(Boolean)
    .join(' · ');
}

/**
 * The Gate Inbox view (`loopx.gateInbox`): every open gate of every goal, longest blocked first, the
 * count on the view's badge. Its rows are gate nodes: the gate menus of the Goals tree apply.
 */
export class GateInboxView extends Disposable implements vscode.TreeDataProvider<InboxNode> {
  private readonly changed = this.register(new vscode.EventEmitter<InboxNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly treeView: vscode.TreeView<InboxNode>;
  private readonly source: GateInboxSource;
  private nodes: InboxNode[] = [];

  constructor(
    viewId: string,
    private readonly model: WorkspaceModel,
  ) {
    super();
    this.source = new GateInboxSource(model);
    this.treeView = this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
    this.register(model.onDidChange(() => void this.refresh()));
    // Blocked times and due times move with the clock: the rows are re-read each minute.
    const timer = setInterval(() => void this.refresh(), 60_000);
    this.register({ dispose: () => clearInterval(timer) });
    void this.refresh();
  }

  /** The inbox rows now (the quick pick and the tests read them). */
  async entries(): Promise<InboxEntry[]> {
    return this.source.entries(hostClock(process.env).now().getTime());
  }

  private async refresh(): Promise<InboxNode[]> {
    return (async () => {
      const entries = await this.entries();
      this.nodes = entries.map(({ goal, row }) => ({
        kind: 'gate',
        goal,
        gate: gateOf(this.model, goal, row),
        row,
      }));
      const count = this.nodes.length;
      const overdue = this.nodes.filter((n) => n.row.overdue).length;
      this.treeView.badge =
        count === 0
          ? undefined
          : {
              value: count,
              tooltip:
                overdue > 0
                  ? vscode.l10n.t('{0} open gates, {1} overdue', count, overdue)
                  : count === 1
                    ? vscode.l10n.t('1 open gate')
                    : vscode.l10n.t('{0} open gates', count),
            };
      this.treeView.message = count === 0 ? vscode.l10n.t('No open gate waits for you.') : undefined;
      this.changed.fire(undefined);
      return this.nodes;
    })();
  }

  /** Waits for the fill in progress (tests read the filled view). */
  async settled(): Promise<void> {
    await this.model.settled();
    await this.refresh();
  }

  getChildren(parent?: InboxNode): InboxNode[] {
    return parent === undefined ? this.nodes : [];
  }

  getTreeItem(node: InboxNode): vscode.TreeItem {
    const { row } = node;
    const item = new vscode.TreeItem(row.title, vscode.TreeItemCollapsibleState.None);
    item.id = `${row.registry_path}#${row.goal_id}:inbox:${row.todo_id}`;
    item.description = inboxDescription(row, true);
    const lines = [row.text, '', `${row.goal_id} · ${row.todo_id}`];
    if (row.blocked_since !== null)
      lines.push(
        row.blocked_since_source === 'todo_add_event'
          ? vscode.l10n.t('Open since {0} (when it was added)', row.blocked_since)
          : vscode.l10n.t('Open since at least {0} (when it was last written)', row.blocked_since),
      );
    if (row.blocked_todo_ids.length > 0) lines.push(vscode.l10n.t('holds back: {0}', row.blocked_todo_ids.join(', ')));
    item.tooltip = lines.join('\n');
    item.contextValue = `gate.open${row.overdue ? '.overdue' : ''}`;
    item.iconPath = new vscode.ThemeIcon(
      row.overdue ? 'bell-dot' : 'shield',
      new vscode.ThemeColor(row.overdue ? 'list.errorForeground' : 'list.warningForeground'),
    );
    item.command = {
      command: paletteCommandId({ key: 'openInStateFile' }),
      title: vscode.l10n.t('Open in State File'),
      arguments: [node],
    };
    return item;
  }

  get count(): number {
    return this.nodes.length;
  }

  get overdueCount(): number {
    return this.nodes.filter((n) => n.row.overdue).length;
  }
}
