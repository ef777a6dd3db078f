import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';

export interface GoalNode {
  readonly kind: 'goal';
  readonly id: string;
  readonly label: string;
  readonly description?: string;
}

/** The Goals view. Empty until goals exist, so its welcome content offers the first action. */
export class GoalsView extends Disposable implements vscode.TreeDataProvider<GoalNode> {
  private readonly changed = this.register(new vscode.EventEmitter<GoalNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private goals: GoalNode[] = [];

  constructor(viewId: string) {
    super();
    this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true }));
  }

  setGoals(goals: GoalNode[]): void {
    this.goals = goals;
    this.changed.fire(undefined);
  }

  getTreeItem(node: GoalNode): vscode.TreeItem {
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
    item.id = node.id;
    item.description = node.description;
    item.contextValue = 'goal';
    item.iconPath = new vscode.ThemeIcon('target');
    return item;
  }

  getChildren(node?: GoalNode): GoalNode[] {
    return node ? [] : this.goals;
  }
}
