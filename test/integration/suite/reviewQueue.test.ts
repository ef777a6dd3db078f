import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

interface ReviewSnapshot {
  badge: number;
  turns: { key: string; label: string; description: string; contextValue: string; files: string[] }[];
}

/**
 * The review queue in a real host (docs/review.md): a turn run by the CLI in another process, in a
 * git repository, appears in the Review view; its diff opens on `loopx-snapshot:` documents; the
 * hover on a line it changed names it; Revert over a later human edit is refused (nothing written),
 * and otherwise restores the base bytes; Mark Reviewed takes it off the queue.
 */
describe('Review queue (real VS Code host)', function () {
  this.timeout(180_000);
  let folder = '';
  let restore: () => void = () => undefined;
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: folder,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@e',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@e',
      },
    });

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-qm', 'the demo as committed');
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    restore();
    rmSync(join(folder, '.git'), { recursive: true, force: true });
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('shows a CLI turn, opens its diff, names it in the hover, refuses a revert over a later edit, reverts to the base bytes', async () => {
    const before = (await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot')).turns.length;
    const run = loopxJson(['turn', 'run-once', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'], folder);
    assert.equal(run['status'], 'committed', JSON.stringify(run));

    // The Review view reads it: no refresh, the file watcher's run record reloads the queue.
    const turn = await waitFor(
      async () => {
        const snap = await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot');
        return snap.turns.length > before ? snap.turns[0] : undefined;
      },
      'the CLI turn in the Review view',
      60_000,
    );
    assert.match(turn.label, /^demo · todo_/);
    assert.match(turn.description, /tidy-notes/);
    assert.ok(turn.files.length > 0 && turn.files.every((f) => f.startsWith('notes/')), turn.files.join(','));
    const file = turn.files[0] ?? '';
    const target = join(folder, file);
    const head = readFileSync(target);
    const base = Buffer.from(git('show', `HEAD:${file}`));

    // Its diff opens: the base on the left, the head on the right, both snapshots.
    await vscode.commands.executeCommand('loopx.reviewOpenDiff', { key: turn.key, path: file });
    const input = await waitFor(
      async () => {
        const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
        return tab?.input instanceof vscode.TabInputTextDiff ? tab.input : undefined;
      },
      'the diff editor',
      60_000,
    );
    assert.equal(input.original.scheme, 'loopx-snapshot');
    assert.equal((await vscode.workspace.openTextDocument(input.original)).getText(), base.toString('utf8'));
    assert.equal((await vscode.workspace.openTextDocument(input.modified)).getText(), head.toString('utf8'));

    // The hover on a line the turn added names the turn.
    const document = await vscode.workspace.openTextDocument(target);
    const baseLines = base.toString('utf8').split('\n');
    const line = document
      .getText()
      .split('\n')
      .findIndex((text) => text.trim() !== '' && !baseLines.includes(text));
    assert.ok(line >= 0, 'the turn added a line');
    const hovers = await vscode.commands.executeCommand<vscode.Hover[]>(
      'vscode.executeHoverProvider',
      document.uri,
      new vscode.Position(line, 0),
    );
    const said = hovers
      .flatMap((h) => h.contents)
      .map((c) => (typeof c === 'string' ? c : c.value))
      .join('\n');
    assert.match(said, /LoopX: changed by a turn of demo/);
    assert.match(said, /tidy-notes/);

    // A person edits the file after the turn: Revert refuses, shows the conflict, writes nothing.
    const edited = `${head.toString('utf8')}\nA line the person added after the turn.\n`;
    writeFileSync(target, edited);
    const refused = await vscode.commands.executeCommand<{ ok: boolean; conflicts: number }>('loopx.reviewRevert', {
      key: turn.key,
      confirmed: true,
    });
    assert.equal(refused.ok, false);
    assert.equal(refused.conflicts, 1);
    assert.equal(readFileSync(target, 'utf8'), edited);
    const conflictTab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(conflictTab instanceof vscode.TabInputTextDiff, 'the conflict is shown as a diff');
    assert.equal(conflictTab.modified.fsPath, target);

    // Back to what the turn left: Revert puts the base bytes back.
    writeFileSync(target, head);
    const reverted = await vscode.commands.executeCommand<{ ok: boolean; reverted: boolean }>('loopx.reviewRevert', {
      key: turn.key,
      confirmed: true,
    });
    assert.equal(reverted.reverted, true);
    assert.deepEqual(readFileSync(target), base);

    // Mark Reviewed takes it off the queue (and the badge).
    await vscode.commands.executeCommand('loopx.reviewMarkReviewed', { key: turn.key });
    const after = await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot');
    assert.equal(
      after.turns.some((t) => t.key === turn.key),
      false,
    );
    assert.equal(after.badge, after.turns.length);
  });
});
