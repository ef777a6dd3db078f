import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FolderTreeWatcher } from '../../../src/workspace/folderTreeWatcher';
import { waitUntil } from '../../support/waitFor';

describe('FolderTreeWatcher: a runtime root outside the folders, watched with Node', () => {
  let parent = '';
  let root = '';
  let seen: string[] = [];
  let watcher: FolderTreeWatcher | undefined;

  beforeEach(() => {
    parent = realpathSync(mkdtempSync(join(tmpdir(), 'loopx-tree-watch-')));
    root = join(parent, 'runtime');
    mkdirSync(join(root, 'goals', 'alpha', 'leases'), { recursive: true });
    seen = [];
  });

  afterEach(() => {
    watcher?.close();
    rmSync(parent, { recursive: true, force: true });
  });

  async function start(): Promise<FolderTreeWatcher> {
    const errors: string[] = [];
    watcher = new FolderTreeWatcher(
      root,
      (path) => seen.push(path),
      (message) => errors.push(message),
    );
    const started = watcher;
    await waitUntil(() => started.folders.length === 4, 'the four folders watched');
    assert.deepEqual(errors, []);
    return started;
  }

  it('reports a file written deep below the root', async () => {
    await start();
    const lease = join(root, 'goals', 'alpha', 'leases', 'todo-1.json');
    writeFileSync(lease, '{}');
    await waitUntil(() => seen.includes(lease), 'the lease file reported');
  });

  it('watches a folder created below the root, and files written into it', async () => {
    const started = await start();
    const runs = join(root, 'goals', 'beta', 'runs');
    mkdirSync(runs, { recursive: true });
    await waitUntil(() => started.folders.includes(runs), 'the new folders watched');
    const index = join(runs, 'index.jsonl');
    writeFileSync(index, '');
    await waitUntil(() => seen.includes(index), 'the file in the new folder reported');
  });

  it('follows the root when it is removed and created again (a new folder)', async () => {
    const started = await start();
    rmSync(root, { recursive: true, force: true });
    await waitUntil(() => started.folders.length === 0, 'the removed folders let go of');
    mkdirSync(join(root, 'goals', 'alpha', 'leases'), { recursive: true });
    await waitUntil(() => started.folders.length === 4, 'the new root watched again');
    assert.ok(seen.includes(root), 'the replaced root is reported (a full reload)');
    const lease = join(root, 'goals', 'alpha', 'leases', 'todo-2.json');
    writeFileSync(lease, '{}');
    await waitUntil(() => seen.includes(lease), 'a lease below the new root reported');
  });

  it('follows the root when another folder is renamed over it', async () => {
    const started = await start();
    const staged = join(parent, 'staged');
    mkdirSync(join(staged, 'goals', 'alpha'), { recursive: true });
    rmSync(root, { recursive: true, force: true });
    renameSync(staged, root);
    await waitUntil(() => seen.includes(root), 'the replaced root reported (a full reload)');
    await waitUntil(() => started.folders.includes(join(root, 'goals', 'alpha')), 'the renamed root watched');
    const state = join(root, 'goals', 'alpha', 'todos.json');
    writeFileSync(state, '{}');
    await waitUntil(() => seen.includes(state), 'a file below the renamed root reported');
  });

  it('watches a root that did not exist yet once it is created, and nothing after close', async () => {
    rmSync(root, { recursive: true, force: true });
    watcher = new FolderTreeWatcher(
      root,
      (path) => seen.push(path),
      () => undefined,
    );
    const started = watcher;
    // Its first look (asynchronous) has found nothing by then: the creation is seen from the parent.
    await new Promise((resolve) => setTimeout(resolve, 200));
    mkdirSync(join(root, 'goals'), { recursive: true });
    await waitUntil(() => started.folders.length === 2, 'the created root watched');
    started.close();
    assert.deepEqual(started.folders, []);
    const count = seen.length;
    writeFileSync(join(root, 'goals', 'late.json'), '{}');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.equal(seen.length, count, 'no event after close');
  });
});
