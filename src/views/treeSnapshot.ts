import type * as vscode from 'vscode';

/** One rendered tree item and its children, as a person would read them in the view. */
export interface TreeSnapshotNode {
  label: string;
  description?: string;
  contextValue?: string;
  /** With `tooltips`: the tooltip's text (a MarkdownString's source), and whether it came on hover (`resolveTreeItem`). */
  tooltip?: string;
  tooltipOnHover?: boolean;
  /** The tooltip is Markdown that may render HTML or run commands (`supportHtml` or `isTrusted`). */
  tooltipTrusted?: boolean;
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
  tooltips = false,
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
      ...(tooltips ? await tooltipOf(provider, item, child) : {}),
      children: depth > 1 ? await snapshotTree(provider, depth - 1, child, tooltips) : [],
    });
  }
  return nodes;
}

/** The item's tooltip as the view shows it on hover: the item's own, else what `resolveTreeItem` adds. */
async function tooltipOf<T>(
  provider: vscode.TreeDataProvider<T>,
  item: vscode.TreeItem,
  node: T,
): Promise<Pick<TreeSnapshotNode, 'tooltip' | 'tooltipOnHover' | 'tooltipTrusted'>> {
  const described = (tooltip: vscode.TreeItem['tooltip'], onHover: boolean) =>
    tooltip === undefined
      ? {}
      : typeof tooltip === 'string'
        ? { tooltip, tooltipOnHover: onHover, tooltipTrusted: false }
        : {
            tooltip: tooltip.value,
            tooltipOnHover: onHover,
            tooltipTrusted:
              tooltip.supportHtml === true || (tooltip.isTrusted !== undefined && tooltip.isTrusted !== false),
          };
  if (item.tooltip !== undefined || provider.resolveTreeItem === undefined) return described(item.tooltip, false);
  const never: vscode.CancellationToken = {
    isCancellationRequested: false,
    onCancellationRequested: () => ({ dispose: () => undefined }),
  };
  return described((await provider.resolveTreeItem(item, node, never))?.tooltip, true);
}
