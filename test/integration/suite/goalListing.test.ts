import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { backUpWorkspace } from './workspaceBackup';

/**
 * A reload lists the goals from the registry first and fills the status and quota of goals never
 * read before in a second pass: the Goals view gets the new goal's node at once (a whole-tree
 * refresh), then a second refresh once its status is read, and what it reads then is the filled node.
 */
describe('Goals listed before their status is read (real VS Code host)', function () {
  this.timeout(60_000);
  let folder = '';
  let restore: () => void = () => undefined;

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.treeSnapshot', 'goals', 1);
  });

  after(async () => {
    restore();
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('a goal added to the registry is listed first, then filled by a second refresh', async () => {
    const registryPath = join(folder, '.loopx', 'registry.json');
    const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const [demo] = registry.goals;
    assert.ok(demo);
    registry.goals.push({ ...demo, id: 'tidy-notes-copy', display_name: 'Tidy the notes folder (copy)' });
    writeFileSync(registryPath, JSON.stringify(registry, null, 2));
    await vscode.commands.executeCommand('_loopx.takeTreeRefreshes');
    await vscode.commands.executeCommand('loopx.refresh');
    const refreshes = (await vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes')) ?? [];
    // Listed (goals came: the whole tree), then filled (the new goal's node, or the tree when VS Code had not rendered it yet).
    assert.deepEqual(refreshes[0], ['*'], JSON.stringify(refreshes));
    assert.equal(refreshes.length, 2, JSON.stringify(refreshes));
    assert.ok(
      refreshes[1]?.includes('tidy-notes-copy') || refreshes[1]?.[0] === '*',
      `the second refresh fills the new goal: ${JSON.stringify(refreshes)}`,
    );
    const goals = (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 2)) ?? [];
    const copy = goals.find((node) => node.label === 'Tidy the notes folder (copy)');
    assert.ok(copy, JSON.stringify(goals.map((node) => node.label)));
    assert.match(copy.description ?? '', /\d+ open/, 'the status is read');
    assert.doesNotMatch(copy.description ?? '', /reading status/);
    assert.ok(!copy.children.some((child) => child.label === 'Reading status…'));
  });
});
