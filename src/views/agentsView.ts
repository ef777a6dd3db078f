import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';

export interface AgentNode {
  readonly kind: 'agent';
  readonly id: string;
  readonly label: string;
  readonly description?: string;
}

/** The Agents view: agents registered on the workspace's goals (read-only). */
export class AgentsView extends Disposable implements vscode.TreeDataProvider<AgentNode> {
  private readonly changed = this.register(new vscode.EventEmitter<AgentNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private agents: AgentNode[] = [];

  constructor(viewId: string) {
    super();
    this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
  }

  setAgents(agents: AgentNode[]): void {
    this.agents = agents;
    this.changed.fire(undefined);
  }

  getTreeItem(node: AgentNode): vscode.TreeItem {
    const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
    item.id = node.id;
    item.description = node.description;
    item.contextValue = 'agent';
    item.iconPath = new vscode.ThemeIcon('person');
    return item;
  }

  getChildren(node?: AgentNode): AgentNode[] {
    return node ? [] : this.agents;
  }
}
