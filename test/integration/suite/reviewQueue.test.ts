import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

/** The extension's own folder (its built CLI), read when a test needs it. */
const extensionPath = (): string => vscode.extensions.getExtension(EXTENSION_ID)?.extensionPath ?? '';
/** A probe that may wait on a real turn of another process: a minute before it fails. */
const until = <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => waitFor(probe, what, 60_000);

interface ReviewSnapshot {
  badge: number;
  turns: { key: string; label: string; description: string; contextValue: string; files: string[] }[];
}

/**
 * The review queue in a real host (docs/review.md): a turn run by the CLI in another process, in a
 * git repository, appears in the Review view; its diff opens on `loopx-snapshot:` documents; the
 * hover on a line it changed names it; Revert over a later human edit is refused (nothing written),
 * and otherwise restores the base bytes; Mark Reviewed takes it off the queue. Turns run by the editor
 * and heartbeat turns an MCP client drives through `loopx mcp` are listed the same way.
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
  it('whatever process ran it: a turn run by the editor and a heartbeat turn driven by an MCP client are in the Review view too', async () => {
    const before = await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot');
    const known = new Set(before.turns.map((t) => t.key));
    const newTurns = async () =>
      (await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot')).turns.filter(
        (t) => !known.has(t.key),
      );

    // The editor's Run One Turn (the demo agent, a real process started by the extension).
    const run = await vscode.commands.executeCommand<{ ok: boolean; message: string } | undefined>(
      'loopx.turnRunOnce',
      { goalId: 'tidy-notes', agentIds: ['demo'], confirmed: true },
    );
    assert.equal(run?.ok, true, run?.message ?? 'no result (see the LoopX log)');
    const editorTurn = await until(
      async () => (await newTurns()).find((t) => t.label.startsWith('demo · ')),
      'the editor turn in the Review view',
    );
    assert.ok(editorTurn.files.length > 0 && editorTurn.files.every((f) => f.startsWith('notes/')));

    // An agent driving its own heartbeat through LoopX's MCP server (`loopx mcp`, another process):
    // should_run reserves the turn (its base), the agent edits, completes its todo, writes back (its head), spends.
    const client = new Client({ name: 'review-queue-test', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [join(extensionPath(), 'out', 'cli.js'), 'mcp'],
        cwd: folder,
        env: { ...(process.env as Record<string, string>), ELECTRON_RUN_AS_NODE: '1' },
        stderr: 'pipe',
      }),
    );
    const turn = { goalId: 'tidy-notes', agentId: 'codex-main', turnInstanceId: 'mcp-review-1' };
    const callTool = async (name: string, args: Record<string, unknown>) => {
      const result = (await client.callTool({ name, arguments: args })) as {
        isError?: boolean;
        content: unknown;
        structuredContent?: Record<string, unknown>;
      };
      assert.notEqual(result.isError, true, `${name}: ${JSON.stringify(result.content)}`);
      return result.structuredContent ?? {};
    };
    try {
      const guard = await callTool('should_run', turn);
      assert.equal(guard['should_run'], true, JSON.stringify(guard).slice(0, 800));
      const todoId = String((guard['heartbeat_receipt'] as { todo_id?: string } | undefined)?.todo_id);
      writeFileSync(join(folder, 'notes', 'links-checked.md'), '# Links checked\n\nEvery relative link resolves.\n');
      await callTool('todo_complete', { ...turn, todoId, evidence: 'notes/links-checked.md lists the check' });
      await callTool('refresh_state', {
        ...turn,
        classification: 'validated_progress',
        deliveryOutcome: 'outcome_progress',
      });
      await callTool('spend_slot', { ...turn, source: 'heartbeat', execute: true });
    } finally {
      await client.close();
    }
    const mcpTurn = await until(
      async () => (await newTurns()).find((t) => t.label.startsWith('codex-main · ')),
      'the MCP-driven turn in the Review view',
    );
    assert.deepEqual(mcpTurn.files, ['notes/links-checked.md']);
    assert.match(mcpTurn.description, /tidy-notes/);
    const snapshot = await vscode.commands.executeCommand<ReviewSnapshot>('_loopx.review.snapshot');
    assert.equal(snapshot.badge, snapshot.turns.length, 'both count in the review debt');
  });
});
