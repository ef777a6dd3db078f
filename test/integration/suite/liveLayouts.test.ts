import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { EXTENSION_ID } from '../../../src/core/commands/ids';
import type { TreeSnapshotNode } from '../../../src/views/treeSnapshot';
import { backUpWorkspace } from './workspaceBackup';
import { loopxJson } from '../../support/extensionHost';

/** Every rendered item of a tree snapshot, depth first. */
function flatten(nodes: readonly TreeSnapshotNode[]): TreeSnapshotNode[] {
  return nodes.flatMap((node) => [node, ...flatten(node.children)]);
}

/**
 * Views stay live in the layouts the workspace watcher (`**\/{.loopx/**,ACTIVE_GOAL_STATE.md}`)
 * does not see: a state file with another name, a runtime root outside the folders. In each,
 * another process (the built CLI) writes, and the Goals tree shows it with no refresh asked. (A
 * runtime root inside the folder but outside `.loopx/`, `./runtime`, is checked in the two-folder
 * suite, where it exists when the window opens: a folder tree moved in during the session is not
 * always watched by VS Code's own workspace watcher.)
 */
describe('Live views in every layout (issue 27, real VS Code host)', function () {
  this.timeout(90_000);
  let folder = '';
  let restore: () => void = () => undefined;
  const registryPath = () => join(folder, '.loopx', 'registry.json');

  function cli(args: string[]): Record<string, unknown> {
    return loopxJson(args, folder);
  }

  function editRegistry(edit: (registry: Record<string, unknown>) => Record<string, unknown>): void {
    const registry = JSON.parse(readFileSync(registryPath(), 'utf8')) as Record<string, unknown>;
    writeFileSync(registryPath(), JSON.stringify(edit(registry), null, 2));
  }

  /**
   * Reloads, then waits until no reload has happened for 1.5 s: the watcher events of the setup's own
   * writes (registry, copies) arrive late on a loaded machine, and a reload they cause after the
   * CLI's write would show it without the watcher under test.
   */
  async function settle(): Promise<void> {
    await vscode.commands.executeCommand('loopx.refresh');
    await vscode.commands.executeCommand('_loopx.treeSnapshot', 'goals', 1);
    for (;;) {
      await vscode.commands.executeCommand('_loopx.takeTreeRefreshes');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await vscode.commands.executeCommand('_loopx.treeSnapshot', 'goals', 1);
      const late = (await vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes')) ?? [];
      if (late.length === 0) return;
    }
  }

  /** Polls the rendered tree (no refresh asked) until `seen` holds; returns how long it took. */
  async function treeShows(seen: (items: TreeSnapshotNode[]) => boolean, what: string): Promise<number> {
    const started = Date.now();
    for (;;) {
      const tree = (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 3)) ?? [];
      if (seen(flatten(tree))) return Date.now() - started;
      if (Date.now() - started > 15_000) {
        const refreshes = await vscode.commands.executeCommand<string[][]>('_loopx.takeTreeRefreshes');
        const watched = await vscode.commands.executeCommand<string[]>('_loopx.watchedPaths');
        await vscode.commands.executeCommand('loopx.refresh');
        const after = flatten(
          (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 3)) ?? [],
        );
        assert.fail(
          `the Goals tree never showed ${what} (tree refreshes meanwhile: ${JSON.stringify(refreshes)}; watching ${JSON.stringify(watched)}; after an explicit refresh it ${seen(after) ? 'does' : 'still does not'}): ${JSON.stringify(tree).slice(0, 600)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** Takes a lease on an open agent todo from another process; the tree must mark that todo leased. */
  async function leaseShows(idempotencyKey: string): Promise<number> {
    const listed = cli(['todo', 'list', '--goal-id', 'tidy-notes'])['todos'] as {
      todo_id: string;
      title?: string;
      text: string;
      status: string;
      role: string;
      claimed_by?: string | null;
    }[];
    const free = listed.find((todo) => todo.role === 'agent' && todo.status === 'open' && !todo.claimed_by);
    assert.ok(free !== undefined, `an open, unclaimed agent todo to lease: ${JSON.stringify(listed)}`);
    const before = flatten(
      (await vscode.commands.executeCommand<TreeSnapshotNode[]>('_loopx.treeSnapshot', 'goals', 3)) ?? [],
    );
    assert.equal(before.filter((n) => n.contextValue?.endsWith('.leased')).length, 0, 'no todo is leased yet');
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
      idempotencyKey,
    ]);
    return treeShows((items) => items.some((n) => n.contextValue?.endsWith('.leased') === true), 'the leased todo');
  }

  before(async () => {
    const extension = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(extension);
    await extension.activate();
    folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    assert.ok(folder);
  });

  beforeEach(() => {
    restore = backUpWorkspace(folder);
  });

  afterEach(async () => {
    restore();
    rmSync(join(folder, 'scripts', 'GOAL.md'), { force: true });
    await settle();
  });

  it('a state file with another name: a todo edited by another process shows', async () => {
    // In scripts/, a folder there since the window opened that no suite replaces (a folder tree replaced wholesale
    // during the session is not always watched again by VS Code's workspace watcher).
    const dir = join(folder, 'scripts');
    cpSync(join(folder, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'), join(dir, 'GOAL.md'));
    editRegistry((registry) => ({
      ...registry,
      goals: (registry['goals'] as Record<string, unknown>[]).map((goal) => ({
        ...goal,
        state_file: 'scripts/GOAL.md',
      })),
    }));
    await settle();
    const watched = await vscode.commands.executeCommand<string[]>('_loopx.watchedPaths');
    assert.ok(watched?.includes(`file:${join(dir, 'GOAL.md')}`), `a watcher on GOAL.md: ${JSON.stringify(watched)}`);
    // Edited by another process, the way a person's editor or an agent would: only the state file changes (a CLI
    // command would also write the goal's event log under .loopx/runtime, which the workspace watcher sees).
    const edit = spawnSync(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const f = process.argv[1]; fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('Fix broken relative links between notes.', 'Fix broken relative links between notes (it-renamed-state).'));`,
        join(dir, 'GOAL.md'),
      ],
      { env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, encoding: 'utf8' },
    );
    assert.equal(edit.status, 0, edit.stderr);
    const ms = await treeShows(
      (items) => items.some((n) => n.label.includes('it-renamed-state')),
      'the todo edited by another process',
    );
    console.log(`    renamed state file: the edited todo showed in the tree after ${ms} ms`);
  });

  it('a runtime root outside the folders: a lease from the CLI shows', async () => {
    const outside = join(realpathSync(mkdtempSync(join(tmpdir(), 'loopx-it-layout-'))), 'runtime');
    const original = readFileSync(registryPath(), 'utf8');
    try {
      cpSync(join(folder, '.loopx', 'runtime'), outside, { recursive: true });
      editRegistry((registry) => ({ ...registry, common_runtime_root: outside }));
      await settle();
      const watched = await vscode.commands.executeCommand<string[]>('_loopx.watchedPaths');
      assert.ok(watched?.includes(`root:${outside}`), `a watcher on ${outside}: ${JSON.stringify(watched)}`);
      const ms = await leaseShows('it-layout-outside');
      console.log(`    runtime root outside the folders: the lease showed in the tree after ${ms} ms`);
    } finally {
      // The registry back first, so the editor lets go of its watcher before the folder goes: a watched folder
      // deleted under VS Code's watcher held up the workspace watcher's events for the next suite.
      writeFileSync(registryPath(), original);
      await settle();
      rmSync(join(outside, '..'), { recursive: true, force: true });
    }
  });
});
