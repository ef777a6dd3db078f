import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { QueuedTurn, ReviewQueue } from '../review/reviewQueue';

export type ReviewNode =
  { kind: 'turn'; turn: QueuedTurn } | { kind: 'file'; turn: QueuedTurn; path: string; status: string };

/** What a tree test reads of the Review view (`_loopx.review.snapshot`). */
export interface ReviewViewSnapshot {
  badge: number;
  turns: { key: string; label: string; description: string; contextValue: string; files: string[] }[];
}

/**
 * The Review view: every turn not yet reviewed, newest first, across goals and agents (goal, agent,
 * todo, classification, validation, cost, gates raised), each with the files it changed; a file
 * opens its diff (base → head). The badge is the review debt.
 */
export class ReviewView extends Disposable implements vscode.TreeDataProvider<ReviewNode> {
  private readonly changed = this.register(new vscode.EventEmitter<ReviewNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<ReviewNode>;

  constructor(
    viewId: string,
    private readonly queue: ReviewQueue,
  ) {
    super();
    this.view = this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
    this.register(
      queue.onDidChangeQueue(() => {
        this.updateBadge();
        this.changed.fire(undefined);
      }),
    );
  }

  private updateBadge(): void {
    const debt = this.queue.unreviewed().length;
    this.view.badge =
      debt === 0
        ? undefined
        : {
            value: debt,
            tooltip: debt === 1 ? vscode.l10n.t('1 turn to review') : vscode.l10n.t('{0} turns to review', debt),
          };
  }

  getChildren(node?: ReviewNode): ReviewNode[] {
    if (node === undefined) return this.queue.unreviewed().map((turn) => ({ kind: 'turn', turn }));
    if (node.kind === 'turn')
      return node.turn.changed.map((c) => ({ kind: 'file', turn: node.turn, path: c.path, status: c.status }));
    return [];
  }

  getTreeItem(node: ReviewNode): vscode.TreeItem {
    if (node.kind === 'file') {
      const item = new vscode.TreeItem(node.path, vscode.TreeItemCollapsibleState.None);
      item.id = `review:${node.turn.key}:${node.path}`;
      item.description = statusWord(node.status);
      item.contextValue = `reviewFile.${node.status}`;
      item.iconPath = new vscode.ThemeIcon(
        node.status === 'added' ? 'diff-added' : node.status === 'deleted' ? 'diff-removed' : 'diff-modified',
      );
      item.command = {
        command: 'loopx.reviewOpenDiff',
        title: vscode.l10n.t('Open Turn Diff'),
        arguments: [{ key: node.turn.key, path: node.path }],
      };
      return item;
    }
    const t = node.turn;
    const item = new vscode.TreeItem(
      `${t.agent_id ?? '?'} · ${t.todo_id ?? vscode.l10n.t('no todo')}`,
      t.changed.length > 0 ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `review:${t.key}`;
    item.description = describeTurn(t);
    item.contextValue = `reviewTurn.${t.validation ?? 'none'}`;
    item.iconPath = new vscode.ThemeIcon(
      t.gate_todo_id !== null ? 'question' : t.validation === 'failed' ? 'error' : 'git-commit',
    );
    const tooltip = new vscode.MarkdownString();
    tooltip.appendText(
      [
        vscode.l10n.t('goal {0}, agent {1}, todo {2}', t.goal_id, t.agent_id ?? '?', t.todo_id ?? '—'),
        `${t.generated_at} · ${t.classification}${t.host_classification ? ` (${t.host_classification})` : ''}`,
        t.summary ?? '',
      ]
        .filter((l) => l !== '')
        .join('\n'),
    );
    item.tooltip = tooltip;
    return item;
  }

  snapshot(): ReviewViewSnapshot {
    return {
      badge: this.queue.unreviewed().length,
      turns: this.queue.unreviewed().map((turn) => {
        const item = this.getTreeItem({ kind: 'turn', turn });
        return {
          key: turn.key,
          label: String(item.label),
          description: String(item.description ?? ''),
          contextValue: item.contextValue ?? '',
          files: turn.changed.map((c) => c.path),
        };
      }),
    };
  }
}

function describeTurn(t: QueuedTurn): string {
  return [
    t.goal_id,
    t.generated_at,
    t.classification,
    t.validation === null ? null : vscode.l10n.t('validation {0}', t.validation),
    t.cost_usd === null ? null : `$${t.cost_usd.toFixed(2)}`,
    t.gate_todo_id === null ? null : vscode.l10n.t('gate {0}', t.gate_todo_id),
    t.changed.length === 1 ? vscode.l10n.t('1 file') : vscode.l10n.t('{0} files', t.changed.length),
  ]
    .filter(Boolean)
    .join(' · ');
}

function statusWord(status: string): string {
  switch (status) {
    case 'added':
      return vscode.l10n.t('added');
    case 'deleted':
      return vscode.l10n.t('deleted');
    default:
      return vscode.l10n.t('modified');
  }
}
