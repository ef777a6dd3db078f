import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { WorkspaceModel } from '../workspace/workspaceModel';

export type AgentsNode =
  | { kind: 'agent'; agentId: string; goals: { goalId: string; displayName: string }[] }
  | { kind: 'agentGoal'; agentId: string; goalId: string; displayName: string };

/** The Agents view: agents registered on the workspace's goals, each with the goals it may act for. */
export class AgentsView extends Disposable implements vscode.TreeDataProvider<AgentsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<AgentsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    viewId: string,
    private readonly model: WorkspaceModel,
  ) {
    super();
    this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
    this.register(model.onDidChange(() => this.changed.fire(undefined)));
  }

  getTreeItem(node: AgentsNode): vscode.TreeItem {
    if (node.kind === 'agent') {
      const item = new vscode.TreeItem(node.agentId, vscode.TreeItemCollapsibleState.Collapsed);
      item.id = `agent:${node.agentId}`;
      item.description = `${node.goals.length} goal${node.goals.length === 1 ? '' : 's'}`;
      item.contextValue = 'agent';
      item.iconPath = new vscode.ThemeIcon('person');
      return item;
    }
    const item = new vscode.TreeItem(node.displayName, vscode.TreeItemCollapsibleState.None);
    item.id = `agent:${node.agentId}:goal:${node.goalId}`;
    item.description = node.goalId;
    item.iconPath = new vscode.ThemeIcon('target');
    return item;
  }

  getChildren(node?: AgentsNode): AgentsNode[] {
    if (node) {
      return node.kind === 'agent'
        ? node.goals.map((g) => ({ kind: 'agentGoal' as const, agentId: node.agentId, ...g }))
        : [];
    }
    const byAgent = new Map<string, { goalId: string; displayName: string }[]>();
    for (const goal of this.model.goals) {
      for (const agentId of goal.agents) {
        const list = byAgent.get(agentId) ?? [];
        list.push({ goalId: goal.goalId, displayName: goal.displayName });
        byAgent.set(agentId, list);
      }
    }
    return [...byAgent.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([agentId, goals]) => ({ kind: 'agent' as const, agentId, goals }));
  }
}
