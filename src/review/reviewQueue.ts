import * as path from 'node:path';
import * as vscode from 'vscode';
import { runOperation } from '../core/ops/run';
import {
  reviewChangedLines,
  reviewList,
  reviewRevert,
  reviewSnapshotBlob,
  type ReviewRevertResult,
  type ReviewTurn,
} from '../core/ops/review';
import { editorEnvironment } from '../commands/operationRunner';
import { Disposable } from '../common/disposable';
import type { WorkspaceModel } from '../workspace/workspaceModel';

/**
 * The review queue's editor side (docs/review.md): the turns `review list` reads from every
 * registry of the window, which of them this user has reviewed (workspaceState, never the shared
 * files), the `loopx-snapshot:` documents the diff editor shows (a file's bytes in a turn's base or
 * head, read with `git cat-file`), Revert with its three-way check, and the hover naming the turn
 * that last changed a line.
 */

export const SNAPSHOT_SCHEME = 'loopx-snapshot';
const REVIEWED_KEY = 'loopx.review.reviewed';

/** A turn of the queue with the registry it came from. */
export interface QueuedTurn extends ReviewTurn {
  registryPath: string;
}

/** Node arguments the review commands take (tree nodes, or `{ key, path }` from code and tests). */
export interface ReviewTarget {
  key?: string;
  turn?: QueuedTurn;
  path?: string;
  /** Skips the confirmation of a revert (tests). */
  confirmed?: boolean;
}

/** A command's argument as a review target: a Review view node, or `{ key, path, confirmed }` from code. */
export function reviewTarget(arg: unknown): ReviewTarget | undefined {
  if (arg === null || typeof arg !== 'object') return undefined;
  const node = arg as { kind?: string; turn?: QueuedTurn; path?: string; key?: string; confirmed?: boolean };
  return {
    ...(node.turn !== undefined ? { turn: node.turn } : {}),
    ...(node.key !== undefined ? { key: node.key } : {}),
    ...(node.path !== undefined ? { path: node.path } : {}),
    ...(node.confirmed === true ? { confirmed: true } : {}),
  };
}

/** The URI of a file's bytes in one snapshot. */
export function snapshotUri(turn: ReviewTurn, side: 'base' | 'head', relativePath: string): vscode.Uri {
  return vscode.Uri.from({
    scheme: SNAPSHOT_SCHEME,
    path: `/${relativePath}`,
    query: new URLSearchParams({ root: turn.project_root, commit: turn.snapshot[side], side }).toString(),
  });
}

export class ReviewQueue extends Disposable implements vscode.TextDocumentContentProvider, vscode.HoverProvider {
  private turns: QueuedTurn[] = [];
  private readonly changed = this.register(new vscode.EventEmitter<void>());
  /** Fires when the list or the reviewed state changed. */
  readonly onDidChangeQueue = this.changed.event;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false;
  /** Per turn and file: the head's line ranges the turn changed, and the head's lines. */
  private readonly hunks = new Map<string, Promise<{ ranges: { start: number; count: number }[]; lines: string[] }>>();

  constructor(
    private readonly model: WorkspaceModel,
    private readonly state: vscode.Memento,
    private readonly log: vscode.LogOutputChannel,
  ) {
    super();
    this.register(vscode.workspace.registerTextDocumentContentProvider(SNAPSHOT_SCHEME, this));
    this.register(vscode.languages.registerHoverProvider({ scheme: 'file' }, this));
    // A run record written by any process reloads its goal; the queue reads again after the burst.
    this.register(model.onDidChange(() => this.scheduleReload()));
    this.register(model.onDidChangeGoals(() => this.scheduleReload()));
    this.register({ dispose: () => clearTimeout(this.timer) });
  }

  /** Every turn with a snapshot, newest first (reviewed ones too: the hover names them). */
  all(): readonly QueuedTurn[] {
    return this.turns;
  }

  /** The turns this user has not reviewed, newest first. */
  unreviewed(): QueuedTurn[] {
    const reviewed = this.reviewedKeys();
    return this.turns.filter((t) => !reviewed.has(t.key));
  }

  private reviewedKeys(): Set<string> {
    return new Set(this.state.get<string[]>(REVIEWED_KEY, []));
  }

  private scheduleReload(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.reload(), 150);
  }

  /** Reads the queue again from every registry of the window. */
  async reload(): Promise<void> {
    if (this.loading !== undefined) {
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      const turns: QueuedTurn[] = [];
      for (const registryPath of this.model.registryPaths()) {
        try {
          const list = await runOperation(reviewList, { limit: 10000 }, editorEnvironment(registryPath));
          turns.push(...list.turns.map((t) => ({ ...t, registryPath })));
        } catch (error) {
          // A folder without a registry has no turns; anything else is logged, and the rest still shows.
          if (!String(error).includes('registry_missing') && !String(error).includes('does not exist'))
            this.log.warn(`review queue: ${registryPath}: ${String(error)}`);
        }
      }
      turns.sort((a, b) => b.generated_at.localeCompare(a.generated_at));
      this.turns = turns;
      this.hunks.clear();
      this.changed.fire();
    })().finally(() => {
      this.loading = undefined;
    });
    await this.loading;
    if (this.again) {
      this.again = false;
      await this.reload();
    }
  }

  turnOf(target: ReviewTarget | undefined): QueuedTurn {
    const turn = target?.turn ?? this.turns.find((t) => t.key === target?.key);
    if (turn === undefined)
      throw new Error(vscode.l10n.t('No turn "{0}" in the review queue.', target?.key ?? '(none)'));
    return turn;
  }

  async markReviewed(target: ReviewTarget | undefined, upToHere: boolean): Promise<number> {
    const turn = this.turnOf(target);
    const reviewed = this.reviewedKeys();
    const marked = upToHere ? this.turns.filter((t) => t.generated_at <= turn.generated_at) : [turn];
    for (const t of marked) reviewed.add(t.key);
    // Keys of turns no longer listed are dropped, so the state does not grow without bound.
    const listed = new Set(this.turns.map((t) => t.key));
    await this.state.update(
      REVIEWED_KEY,
      [...reviewed].filter((k) => listed.has(k)),
    );
    this.changed.fire();
    return marked.length;
  }

  /** Opens a file's diff: the turn's base on the left, its head on the right. */
  async openDiff(target: ReviewTarget | undefined): Promise<void> {
    const turn = this.turnOf(target);
    const file = target?.path ?? turn.changed[0]?.path;
    if (file === undefined) return;
    await vscode.commands.executeCommand(
      'vscode.diff',
      snapshotUri(turn, 'base', file),
      snapshotUri(turn, 'head', file),
      vscode.l10n.t('{0} ({1}, turn of {2})', file, turn.agent_id ?? '?', turn.generated_at),
      { preview: true },
    );
  }

  async openEvidence(target: ReviewTarget | undefined): Promise<void> {
    const turn = this.turnOf(target);
    const file = turn.markdown_path ?? turn.json_path;
    if (file === null) throw new Error(vscode.l10n.t('The turn of {0} has no evidence file.', turn.generated_at));
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
  }

  /**
   * Reverts a turn (every file, or `path`): previews first; a file changed after the turn refuses
   * the whole revert, writes nothing and opens the conflict (the turn's head against the file now).
   */
  async revert(target: ReviewTarget | undefined): Promise<ReviewRevertResult | undefined> {
    // From the palette: pick a turn of the queue.
    if (target?.turn === undefined && target?.key === undefined) {
      const picked = await vscode.window.showQuickPick(
        this.unreviewed().map((t) => ({
          label: `${t.agent_id ?? '?'} · ${t.todo_id ?? '—'}`,
          description: `${t.goal_id} · ${t.generated_at}`,
          key: t.key,
        })),
        { title: vscode.l10n.t('Revert which turn?') },
      );
      if (picked === undefined) return undefined;
      target = { key: picked.key };
    }
    const turn = this.turnOf(target);
    const env = editorEnvironment(turn.registryPath);
    const args = { goalId: turn.goal_id, turn: turn.key, ...(target?.path ? { path: target.path } : {}) };
    const preview = await runOperation(reviewRevert, { ...args, execute: false }, env);
    if (preview.conflicts > 0) {
      const conflict = preview.files.find((f) => f.conflict);
      if (conflict !== undefined)
        await vscode.commands.executeCommand(
          'vscode.diff',
          snapshotUri(turn, 'head', conflict.path),
          vscode.Uri.file(path.join(turn.project_root, conflict.path)),
          vscode.l10n.t('{0} (the turn left ↔ now)', conflict.path),
          { preview: true },
        );
      void vscode.window.showWarningMessage(
        vscode.l10n.t(
          'LoopX: not reverted. {0} file(s) changed after the turn ({1}); nothing was written.',
          preview.conflicts,
          preview.files
            .filter((f) => f.conflict)
            .map((f) => f.path)
            .join(', '),
        ),
      );
      return preview;
    }
    if (target?.confirmed !== true) {
      const revertButton = vscode.l10n.t('Revert');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t(
          'Revert {0} file(s) to how they were before the turn of {1}?',
          preview.files.length,
          turn.agent_id ?? '?',
        ),
        { modal: true, detail: preview.files.map((f) => `${f.action}: ${f.path}`).join('\n') },
        revertButton,
      );
      if (choice !== revertButton) return undefined;
    }
    const done = await runOperation(reviewRevert, { ...args, execute: true }, env);
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: reverted {0} file(s).', done.files.length));
    return done;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    const root = query.get('root');
    const commit = query.get('commit');
    if (root === null || commit === null) return '';
    const bytes = await reviewSnapshotBlob(root, commit, uri.path.replace(/^\//, ''));
    return bytes?.toString('utf8') ?? '';
  }

  /** The newest turn whose head still holds this line as the turn wrote it. */
  async turnOfLine(file: vscode.Uri, line: number, lineText: string): Promise<QueuedTurn | undefined> {
    for (const turn of this.turns) {
      const relative = path.relative(turn.project_root, file.fsPath).split(path.sep).join('/');
      if (relative.startsWith('..') || !turn.changed.some((c) => c.path === relative && c.status !== 'deleted'))
        continue;
      const key = `${turn.key}\0${relative}`;
      let hunks = this.hunks.get(key);
      if (hunks === undefined) {
        hunks = (async () => ({
          ranges: await reviewChangedLines(turn, relative).catch(() => []),
          lines: ((await reviewSnapshotBlob(turn.project_root, turn.snapshot.head, relative)) ?? Buffer.alloc(0))
            .toString('utf8')
            .split(/\r?\n/),
        }))();
        this.hunks.set(key, hunks);
      }
      const { ranges, lines } = await hunks;
      const oneBased = line + 1;
      const inRange = (l: number): boolean => ranges.some((r) => l >= r.start && l < r.start + r.count);
      // The line where the turn left it, or (moved by later edits) a line of the same text the turn wrote.
      if (inRange(oneBased) && lines[oneBased - 1] === lineText) return turn;
      if (
        lineText.trim() !== '' &&
        ranges.some((r) => lines.slice(r.start - 1, r.start - 1 + r.count).includes(lineText))
      )
        return turn;
    }
    return undefined;
  }

  async provideHover(document: vscode.TextDocument, position: vscode.Position): Promise<vscode.Hover | undefined> {
    if (this.turns.length === 0) return undefined;
    const turn = await this.turnOfLine(document.uri, position.line, document.lineAt(position.line).text);
    if (turn === undefined) return undefined;
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(`**${vscode.l10n.t('LoopX: changed by a turn of {0}', turn.agent_id ?? '?')}**\n\n`);
    md.appendMarkdown('- ')
      .appendText(vscode.l10n.t('goal {0}, todo {1}', turn.goal_id, turn.todo_id ?? '—'))
      .appendMarkdown('\n');
    md.appendMarkdown('- ').appendText(`${turn.generated_at} · ${turn.classification}`).appendMarkdown('\n');
    if (turn.cost_usd !== null || turn.tokens !== null)
      md.appendMarkdown('- ')
        .appendText(
          vscode.l10n.t(
            'cost {0}',
            [
              turn.cost_usd === null ? null : `$${turn.cost_usd.toFixed(2)}`,
              turn.tokens === null ? null : `${turn.tokens} tokens`,
            ]
              .filter(Boolean)
              .join(', '),
          ),
        )
        .appendMarkdown('\n');
    if (turn.markdown_path !== null)
      md.appendMarkdown(`\n[${vscode.l10n.t('Open the evidence')}](${vscode.Uri.file(turn.markdown_path).toString()})`);
    return new vscode.Hover(md);
  }
}
