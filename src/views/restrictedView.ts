import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';

/**
 * The "Restricted Mode" view, shown only while the workspace is untrusted (its `when` clause in
 * the manifest). It has no items: its welcome content says what LoopX does read-only and how to
 * trust the workspace.
 */
export class RestrictedModeView extends Disposable implements vscode.TreeDataProvider<never> {
  constructor(viewId: string) {
    super();
    this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
  }

  getTreeItem(node: never): vscode.TreeItem {
    return node;
  }

  getChildren(): never[] {
    return [];
  }
}
