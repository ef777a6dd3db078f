import assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { waitFor } from '../../support/waitFor';
import { loopxJson } from '../../support/extensionHost';

interface Served {
  registryPath: string;
  folder: string | undefined;
  origin: string;
  url: string;
}

/**
 * A window with two folders (materializeTwoFolderWorkspace): `alpha` with the demo's
 * `.loopx/registry.json`, `beta` with its own `loopx.registryPath` (`config/registry.json`, runtime
 * root `beta/runtime`). The status server is on in the user settings, on LOOPX_MULTIROOT_STATUS_PORT.
 */
describe('Two-folder workspace (issue 27, real VS Code host)', function () {
  this.timeout(90_000);
  let alpha = '';
  let beta = '';

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    const folders = vscode.workspace.workspaceFolders ?? [];
    assert.deepEqual(
      folders.map((f) => f.name),
      ['alpha', 'beta'],
    );
    alpha = folders[0]?.uri.fsPath ?? '';
    beta = folders[1]?.uri.fsPath ?? '';
  });

  it("honours each folder's loopx.registryPath and groups the goals by folder in the Goals tree", async () => {
    const tree = (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 2)) ?? [];
    assert.deepEqual(
      tree.map((folder) => ({
        label: folder.label,
        description: folder.description,
        contextValue: folder.contextValue,
        goals: folder.children.map((goal) => goal.label),
      })),
      [
        { label: 'alpha', description: '1 goal', contextValue: 'folder', goals: ['Tidy the notes folder'] },
        { label: 'beta', description: '1 goal', contextValue: 'folder', goals: ['Tidy the beta notes'] },
      ],
    );
  });

  it('serves both registries, each on its own port, through the URLs Copy Status Server URL hands out', async () => {
    const served = await waitFor(async () => {
      const list = (await vscode.commands.executeCommand<Served[]>('_loopx.statusServers')) ?? [];
      return list.length === 2 ? list : undefined;
    }, 'two status servers');
    assert.deepEqual(
      served.map((s) => [s.folder, s.registryPath]),
      [
        ['alpha', join(alpha, '.loopx', 'registry.json')],
        ['beta', join(beta, 'config', 'registry.json')],
      ],
    );
    const configured = Number(process.env['LOOPX_MULTIROOT_STATUS_PORT']);
    assert.ok(configured > 0, 'the driver sets LOOPX_MULTIROOT_STATUS_PORT');
    assert.deepEqual(
      served.map((s) => Number(new URL(s.origin).port)),
      [configured, configured + 1],
      'the configured port, then the next one',
    );
    for (const [index, name] of ['Tidy the notes folder', 'Tidy the beta notes'].entries()) {
      const registryPath = served[index]?.registryPath;
      await vscode.commands.executeCommand('loopx.copyStatusServerUrl', registryPath);
      const url = await vscode.env.clipboard.readText();
      assert.equal(url, served[index]?.url);
      const answer = await fetch(url);
      assert.equal(answer.status, 200, await answer.clone().text());
      const body = (await answer.json()) as { ok: boolean; attention_queue: { items: { display_name: string }[] } };
      assert.equal(body.ok, true);
      assert.deepEqual(
        body.attention_queue.items.map((item) => item.display_name),
        [name],
        `${registryPath} is served`,
      );
    }
  });

  it("a todo another process adds to beta's registry shows under beta", async () => {
    loopxJson(
      [
        '--registry',
        join(beta, 'config', 'registry.json'),
        'todo',
        'add',
        '--goal-id',
        'tidy-notes',
        '--text',
        'Sort the beta bikes (it-multiroot)',
      ],
      beta,
    );
    const flatten = (nodes: readonly TreeSnapshotNode[]): TreeSnapshotNode[] =>
      nodes.flatMap((node) => [node, ...flatten(node.children)]);
    const tree = await waitFor(async () => {
      const nodes = (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 4)) ?? [];
      return flatten(nodes).some((n) => n.label.includes('it-multiroot')) ? nodes : undefined;
    }, 'the new todo in the tree');
    const [alphaNode, betaNode] = tree;
    assert.ok(!flatten(alphaNode?.children ?? []).some((n) => n.label.includes('it-multiroot')), 'not under alpha');
    assert.ok(
      flatten(betaNode?.children ?? []).some((n) => n.label.includes('it-multiroot')),
      'under beta',
    );
  });

  it("a runtime root inside the folder but outside .loopx/ (beta's ./runtime): a lease from the CLI shows", async () => {
    const registry = join(beta, 'config', 'registry.json');
    const cli = (args: string[]): Record<string, unknown> => loopxJson(['--registry', registry, ...args], beta);
    const watched = await vscode.commands.executeCommand<string[]>('_loopx.watchedPaths');
    assert.ok(
      watched?.includes(`root:${join(beta, 'runtime')}`),
      `a watcher on beta/runtime: ${JSON.stringify(watched)}`,
    );
    const todos = cli(['todo', 'list', '--goal-id', 'tidy-notes'])['todos'] as {
      todo_id: string;
      status: string;
      role: string;
      claimed_by?: string | null;
    }[];
    const free = todos.find((todo) => todo.role === 'agent' && todo.status === 'open' && !todo.claimed_by);
    assert.ok(free !== undefined, 'an open, unclaimed agent todo to lease');
    const leased = (nodes: readonly TreeSnapshotNode[]): boolean =>
      nodes.some((n) => n.contextValue?.endsWith('.leased') === true || leased(n.children));
    const betaTree = async () =>
      ((await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 5)) ?? [])[1];
    assert.equal(leased([(await betaTree()) as TreeSnapshotNode]), false, 'nothing leased yet');
    cli([
      'task-lease',
      'acquire',
      '--goal-id',
      'tidy-notes',
      '--todo-id',
      free.todo_id,
      '--owner',
      'codex-main',
      '--idempotency-key',
      'it-multiroot-runtime',
    ]);
    await waitFor(
      async () => (leased([(await betaTree()) as TreeSnapshotNode]) ? true : undefined),
      'the leased todo under beta',
    );
  });
});
