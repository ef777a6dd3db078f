import type * as vscode from 'vscode';

/** One rendered tree item and its children, as a person would read them in the view. */
export interface TreeSnapshotNode {
  label: string;
  description?: string;
  contextValue?: string;
  children: TreeSnapshotNode[];
}

function labelText(label: string | vscode.TreeItemLabel | undefined): string {
  return typeof label === 'string' ? label : (label?.label ?? '');
}

/**
 * Walks a tree provider the way the view does (getChildren, then getTreeItem) and returns what it
 * renders: the labels, descriptions and context values of every item, expanded `depth` levels.
 * The integration tests read views through it (a hidden command), the real host's own rendering
 * of the same items being out of an extension's reach.
 */
export async function snapshotTree<T>(
  provider: vscode.TreeDataProvider<T>,
  depth = 3,
  parent?: T,
): Promise<TreeSnapshotNode[]> {
  const children = (await provider.getChildren(parent)) ?? [];
  const nodes: TreeSnapshotNode[] = [];
  for (const child of children) {
    const item = await provider.getTreeItem(child);
    const description = typeof item.description === 'string' ? item.description : undefined;
    nodes.push({
      label: labelText(item.label),
      ...(description === undefined ? {} : { description }),
      ...(item.contextValue === undefined ? {} : { contextValue: item.contextValue }),
      children: depth > 1 ? await snapshotTree(provider, depth - 1, child) : [],
    });
  }
  return nodes;
}
