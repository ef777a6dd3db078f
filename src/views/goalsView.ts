import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { GoalSummary, RegistrySnapshot } from '../core/readModel/workspaceGoals';
import type { WorkspaceModel } from '../workspace/workspaceModel';

export type GoalsNode =
  | { kind: 'goal'; goal: GoalSummary }
  | { kind: 'detail'; id: string; label: string; description?: string; icon: string; tooltip?: string }
  | { kind: 'registryError'; snapshot: Extract<RegistrySnapshot, { ok: false }> };

/** The Goals view: every goal of the workspace's registries. Empty → the welcome content shows. */
export class GoalsView extends Disposable implements vscode.TreeDataProvider<GoalsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<GoalsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly treeView: vscode.TreeView<GoalsNode>;

  constructor(viewId: string, private readonly model: WorkspaceModel) {
    super();
    this.treeView = this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true }));
    this.register(model.onDidChange(() => this.changed.fire(undefined)));
  }

  getTreeItem(node: GoalsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'goal': {
        const { goal } = node;
        const item = new vscode.TreeItem(goal.displayName, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `goal:${goal.registryPath}:${goal.goalId}`;
        item.description = goal.displayName === goal.goalId ? goal.status : `${goal.goalId} · ${goal.status}`;
        item.contextValue = `goal.${goal.status}`;
        item.iconPath = new vscode.ThemeIcon(goal.status === 'active' ? 'target' : 'circle-outline');
        item.tooltip = new vscode.MarkdownString(undefined, false);
        item.tooltip.appendText(`${goal.displayName} (${goal.goalId})\nstatus: ${goal.status}\nproject: ${basename(goal.projectRoot)}`);
        return item;
      }
      case 'detail': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        if (node.tooltip) item.tooltip = node.tooltip;
        return item;
      }
      case 'registryError': {
        const { snapshot } = node;
        const item = new vscode.TreeItem(`${basename(dirname(dirname(snapshot.registryPath)))}: registry cannot be read`, vscode.TreeItemCollapsibleState.None);
        item.id = `registryError:${snapshot.registryPath}`;
        item.description = snapshot.error.code;
        item.tooltip = snapshot.error.message;
        item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
        const line = Math.max(0, (snapshot.error.line ?? 1) - 1);
        const column = Math.max(0, (snapshot.error.column ?? 1) - 1);
        item.command = {
          command: 'vscode.open', title: 'Open Registry',
          arguments: [vscode.Uri.file(snapshot.registryPath), { selection: new vscode.Range(line, column, line, column) }],
        };
        return item;
      }
    }
  }

  getChildren(node?: GoalsNode): GoalsNode[] {
    if (!node) {
      const errors: GoalsNode[] = this.model.snapshots.flatMap((s) => (s.ok ? [] : [{ kind: 'registryError' as const, snapshot: s }]));
      return [...errors, ...this.model.goals.map((goal) => ({ kind: 'goal' as const, goal }))];
    }
    if (node.kind !== 'goal') return [];
    const { goal } = node;
    const key = `${goal.registryPath}:${goal.goalId}`;
    const quota = goal.quota;
    return [
      { kind: 'detail', id: `quota:${key}`, label: 'Quota', icon: 'dashboard', description: `${quota.allowed_slots} slots of ${quota.slot_minutes} min per ${quota.window_hours} h (compute ${quota.compute})` },
      { kind: 'detail', id: `agents:${key}`, label: 'Agents', icon: 'person', description: goal.agents.length > 0 ? goal.agents.join(', ') : 'none registered' },
    ];
  }
}
