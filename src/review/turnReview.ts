import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  revertChange,
  takeTurnSnapshot,
  type FileChange,
  type SnapshotOptions,
  type TurnSnapshot,
} from './turnSnapshot';

/**
 * "Review Changes" after a turn: the files it changed (see turnSnapshot.ts), each opened in VS Code's
 * diff editor — the left side is the snapshot, served read-only under the `loopx-original:` scheme —
 * and "Revert" for a file the user rejects, after a confirmation. Revert writes, so it refuses in an
 * untrusted workspace (restricted mode), where "Revert a File…" is not offered either. The hidden
 * commands `_loopx.review.open` and `_loopx.review.revert` ({ reviewId, path, confirmed }) drive it
 * from tests; `_loopx.review.begin` (snapshot options) and `_loopx.review.end` (its handle) record a
 * review around changes a test makes itself — they only read files, so the untrusted tier can review.
 */

export const ORIGINAL_SCHEME = 'loopx-original';
/** The buttons, in the display language (asked for when shown). */
export const reviewChangesButton = (): string => vscode.l10n.t('Review Changes');
const revertAFileButton = (): string => vscode.l10n.t('Revert a File…');

/** What a run hands back to its caller: the review to open and the files it lists. */
export interface TurnReviewSummary {
  id: string;
  kind: TurnSnapshot['kind'];
  truncated: boolean;
  files: FileChange[];
}

interface Review {
  id: string;
  title: string;
  snapshot: TurnSnapshot;
}

export class TurnReviews implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly reviews = new Map<string, Review>();
  private readonly pending = new Map<string, TurnSnapshot>();
  private readonly disposables: vscode.Disposable[] = [];
  private next = 1;

  constructor() {
    this.disposables.push(
      vscode.workspace.registerTextDocumentContentProvider(ORIGINAL_SCHEME, this),
      vscode.commands.registerCommand('_loopx.review.open', (id: string) => this.open(id)),
      vscode.commands.registerCommand(
        '_loopx.review.revert',
        (arg: { reviewId: string; path: string; confirmed?: boolean }) =>
          this.revert(arg.reviewId, arg.path, arg.confirmed === true),
      ),
      vscode.commands.registerCommand('_loopx.review.begin', async (options: SnapshotOptions) => {
        const handle = `s${this.next++}`;
        this.pending.set(handle, await takeTurnSnapshot(options));
        return handle;
      }),
      vscode.commands.registerCommand('_loopx.review.end', (handle: string) => {
        const snapshot = this.pending.get(handle);
        this.pending.delete(handle);
        return this.after(snapshot, `the changes since ${handle}`);
      }),
    );
  }

  /** Snapshots a run's project before it starts; undefined (and the run goes on) when that fails. */
  async before(options: SnapshotOptions, log: vscode.LogOutputChannel): Promise<TurnSnapshot | undefined> {
    try {
      return await takeTurnSnapshot(options);
    } catch (error) {
      log.warn(`no pre-turn snapshot, so "Review Changes" is not offered: ${String(error)}`);
      return undefined;
    }
  }

  /** After the run: what it changed, kept for review (the last 10 runs). */
  async after(snapshot: TurnSnapshot | undefined, title: string): Promise<TurnReviewSummary | undefined> {
    if (snapshot === undefined) return undefined;
    const files = await snapshot.changes();
    const id = `r${this.next++}`;
    this.reviews.set(id, { id, title, snapshot });
    for (const old of [...this.reviews.keys()].slice(0, Math.max(0, this.reviews.size - 10))) this.reviews.delete(old);
    return { id, kind: snapshot.kind, truncated: snapshot.truncated, files };
  }

  provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const [id, ...rest] = uri.path.replace(/^\//, '').split('/');
    const review = this.reviews.get(id ?? '');
    if (review === undefined) return Promise.resolve('');
    return review.snapshot.original(rest.join('/')).then((bytes) => bytes?.toString('utf8') ?? '');
  }

  /** Opens a diff editor per changed file; then offers to revert one. Returns the files shown. */
  async open(id: string): Promise<FileChange[]> {
    const review = this.reviewOf(id);
    const files = await review.snapshot.changes();
    if (files.length === 0) {
      void vscode.window.showInformationMessage(
        vscode.l10n.t('LoopX: {0} changed no file (or every change was reverted).', review.title),
      );
      return files;
    }
    for (const file of files) {
      const left = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${id}/${file.path}` });
      const right =
        file.status === 'deleted'
          ? vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${id}-deleted/${file.path}` })
          : vscode.Uri.file(path.join(review.snapshot.projectRoot, file.path));
      await vscode.commands.executeCommand(
        'vscode.diff',
        left,
        right,
        vscode.l10n.t('{0} ({1} by the turn)', file.path, fileStatusWord(file.status)),
        {
          preview: false,
          preserveFocus: true,
        },
      );
    }
    // Revert writes: restricted mode shows the diffs but offers no revert.
    const offers = vscode.workspace.isTrusted ? [revertAFileButton()] : [];
    void vscode.window
      .showInformationMessage(vscode.l10n.t('LoopX: {0} changed {1} file(s).', review.title, files.length), ...offers)
      .then(async (choice) => {
        if (choice !== revertAFileButton()) return;
        const picked = await vscode.window.showQuickPick(
          files.map((f) => ({ label: f.path, description: fileStatusWord(f.status) })),
          { title: vscode.l10n.t('Revert which file to how it was before the turn?') },
        );
        if (picked !== undefined) await this.revert(id, picked.label, false);
      });
    return files;
  }

  /** Puts one file back after a confirmation (skipped with `confirmed`); true when it was reverted. */
  async revert(id: string, relativePath: string, confirmed: boolean): Promise<boolean> {
    if (!vscode.workspace.isTrusted)
      throw new Error(
        vscode.l10n.t(
          'Reverting "{0}" writes to the workspace, and this workspace is not trusted (restricted mode); nothing was reverted. Trust the workspace to revert.',
          relativePath,
        ),
      );
    const review = this.reviewOf(id);
    if (!confirmed) {
      const original = await review.snapshot.original(relativePath);
      const detail =
        original === null
          ? vscode.l10n.t('This will delete it (the turn created it); your later edits to it are lost.')
          : vscode.l10n.t('This will restore the bytes it had before the turn; your later edits to it are lost.');
      const revertButton = vscode.l10n.t('Revert');
      const choice = await vscode.window.showWarningMessage(
        vscode.l10n.t('Revert "{0}"?', relativePath),
        { modal: true, detail },
        revertButton,
      );
      if (choice !== revertButton) return false;
    }
    const done = await revertChange(review.snapshot, relativePath);
    void vscode.window.showInformationMessage(
      done === 'deleted'
        ? vscode.l10n.t('LoopX: {0} deleted.', relativePath)
        : vscode.l10n.t('LoopX: {0} restored.', relativePath),
    );
    return true;
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  private reviewOf(id: string): Review {
    const review = this.reviews.get(id);
    if (review === undefined)
      throw new Error(vscode.l10n.t('No turn review "{0}" in this window (only the last 10 runs are kept).', id));
    return review;
  }
}

/** A changed file's status in the display language. */
function fileStatusWord(status: string): string {
  switch (status) {
    case 'added':
      return vscode.l10n.t('added');
    case 'modified':
      return vscode.l10n.t('modified');
    case 'deleted':
      return vscode.l10n.t('deleted');
    default:
      return status;
  }
}
