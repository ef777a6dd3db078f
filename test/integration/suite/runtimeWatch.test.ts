import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import { backUpWorkspace } from './workspaceBackup';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

/**
 * Copies a folder aside, removes it, lets the editor see it gone (`whileGone`), and copies it back: a new folder
 * (new inode) with the same files.
 */
async function replaceWholesale(dir: string, whileGone: () => Promise<void>): Promise<void> {
  const aside = join(mkdtempSync(join(tmpdir(), 'loopx-it-aside-')), 'copy');
  cpSync(dir, aside, { recursive: true });
  rmSync(dir, { recursive: true, force: true });
  await whileGone();
  cpSync(aside, dir, { recursive: true });
  rmSync(join(aside, '..'), { recursive: true, force: true });
}

/**
 * The file watchers survive a replaced runtime folder: the demo goal's runtime root moved outside
 * the workspace (LoopX's default keeps it under the home folder, which the workspace watcher does not
 * see), the folder replaced wholesale, then a task lease taken by another process must still refresh
 * that goal's tree node, with no explicit refresh.
 */
describe('File watchers after a replaced runtime folder (real VS Code host)', function () {
  this.timeout(90_000);
  let folder = '';
  let outside = '';
  let restore: () => void = () => undefined;

  function cli(args: string[]): Record<string, unknown> {
    return loopxJson(args, folder);
  }

  async function settle(): Promise<void> {
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.treeSnapshot', 'goals', 1);
    await vscode.commands.executeCommand('_loopx.takeTreeRefreshes');
  }

  async function leaseRefreshes(idempotencyKey: string): Promise<string[][]> {
    const listed = cli(['todo', 'list', '--goal-id', 'tidy-notes'])['todos'] as {
      todo_id: string;
      status: string;
      role: string;
      claimed_by?: string | null;
    }[];
    const free = listed.find((todo) => todo.role === 'agent' && todo.status === 'open' && !todo.claimed_by);
    assert.ok(free !== undefined, `an open, unclaimed agent todo to lease: ${JSON.stringify(listed)}`);
    const lease = ['--goal-id', 'tidy-notes', '--todo-id', free.todo_id];
    cli(['task-lease', 'acquire', ...lease, '--owner', 'codex-main', '--idempotency-key', idempotencyKey]);
    try {
      const seen: string[][] = [];
      await waitFor(async () => {
        seen.push(...((await vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes')) ?? []));
        return seen.length > 0 ? true : undefined;
      }, 'a tree refresh after the external lease');
      return seen;
    } finally {
      const held = cli(['task-lease', 'inspect', ...lease])['lease'] as { version?: number } | null;
      cli([
        'task-lease',
        'release',
        ...lease,
        '--owner',
        'codex-main',
        '--idempotency-key',
        idempotencyKey,
        '--expected-version',
        String(held?.version ?? 1),
      ]);
    }
  }

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
    restore = backUpWorkspace(folder);
    // The runtime root outside the workspace, as LoopX's default (under the home folder) puts it.
    outside = join(realpathSync(mkdtempSync(join(tmpdir(), 'loopx-it-outside-'))), 'runtime');
    cpSync(join(folder, '.loopx', 'runtime'), outside, { recursive: true });
    const registryPath = join(folder, '.loopx', 'registry.json');
    const registry = JSON.parse(readFileSync(registryPath, 'utf8')) as Record<string, unknown>;
    writeFileSync(registryPath, JSON.stringify({ ...registry, common_runtime_root: outside }, null, 2));
    await settle();
    await vscode.commands.executeCommand('_loopx.takeCommandFailures');
  });

  after(async () => {
    restore();
    rmSync(join(outside, '..'), { recursive: true, force: true });
    await vscode.commands.executeCommand('loopx.refresh');
  });

  it('a lease written under a runtime root outside the workspace refreshes that goal', async () => {
    await settle();
    assert.deepEqual(await leaseRefreshes('it-outside-lease'), [['tidy-notes']]);
  });

  it('still does after that runtime root was replaced wholesale', async () => {
    await settle();
    await replaceWholesale(outside, async () => {
      await settle();
      await new Promise((resolve) => setTimeout(resolve, 2000));
    });
    await settle();
    assert.deepEqual(await leaseRefreshes('it-outside-replaced'), [['tidy-notes']]);
  });
});
