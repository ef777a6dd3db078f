import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { fixedClock } from '../../../src/core/clock';
import type { LedgerFacts } from '../../../src/core/quota/ledger';
import { PersistentCache, statusCachePath } from '../../../src/core/goal/persistentCache';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { loadStatusAt, statusRef } from '../../support/status';
import { statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');

// The collector, for a test that asks what a long-lived cache keeps alive.
v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const collect = async (): Promise<void> => {
  // A WeakRef target stays alive until the job that looked at it ends.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  gc();
};

/**
 * What the status caches keep between calls: the editor and the status server keep them for hours,
 * over hundreds of goals (the extension host's memory on L is an issue-19 target).
 */
describe('what the status caches keep alive', () => {
  let dir = '';
  let registryPath = '';
  let stateFile = '';
  const target = () =>
    statusRef({
      goalId: 'tidy-notes',
      projectRoot: dir,
      runtimeRoot: path.join(dir, '.loopx', 'runtime'),
      entry: { display_name: 'Tidy the notes folder', status: 'active', domain: 'docs', state_file: stateFile },
    });

  beforeEach(() => {
    dir = materializeDemoWorkspace(
      path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-retained-'))), 'demo'),
    );
    registryPath = path.join(dir, '.loopx', 'registry.json');
    stateFile = path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md');
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true }));

  it("a kept status item holds none of its state file's text (no slice of it keeps it alive)", async () => {
    // 16 MB of notes after the todos: any string of the item sliced from the text would keep all of it.
    const padding = 16 * 1024 * 1024;
    fs.appendFileSync(stateFile, `\n## Notes\n${'n'.repeat(padding)}\n`);
    const cache = new GoalStatusCache();
    await collect();
    const before = process.memoryUsage().heapUsed;
    const item = await cache.goalStatus(target(), { homeDir: dir });
    assert.ok((item.agent_todos?.items.length ?? 0) > 0, 'the item has todos (titles and texts from the state file)');
    // The read itself is dropped, as the live model does once the goal is built; the item stays.
    cache.release(target());
    await collect();
    const kept = process.memoryUsage().heapUsed - before;
    assert.ok(kept < padding / 4, `the cache keeps ${(kept / 1e6).toFixed(1)} MB after the state read is dropped`);
    assert.equal(
      (await cache.goalStatus(target(), { homeDir: dir })).agent_todos?.items[0]?.title,
      item.agent_todos?.items[0]?.title,
    );
  });

  it('once saved, a run index digest keeps its facts packed: the parsed spends are not held, and read back equal', async () => {
    const cache = new GoalStatusCache();
    await loadStatusAt({
      registryPath,
      homeDir: dir,
      cache,
      persistentCache: true,
      quotaSummary: statusQuotaSummaries({ registryPath, clock: CLOCK, homeDir: dir }),
    });
    const disk = cache.disk;
    assert.ok(disk !== undefined);
    const indexFile = path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');
    const entry = (disk as unknown as { indexes: Map<string, { digest: { facts: LedgerFacts } }> }).indexes.get(
      indexFile,
    );
    assert.ok(entry !== undefined);
    const expected = JSON.stringify(entry.digest.facts);
    assert.ok(entry.digest.facts.spends.length > 0, 'the demo has a spend');
    let held: WeakRef<LedgerFacts> | undefined = new WeakRef(entry.digest.facts);
    assert.ok(fs.existsSync(statusCachePath(path.join(dir, '.loopx', 'runtime'))), 'the status call saved the cache');
    await collect();
    assert.equal(held.deref(), undefined, 'the parsed facts were let go');
    held = undefined;
    assert.equal(JSON.stringify(entry.digest.facts), expected, 'and are parsed again from their packed bytes');
    // A cache loaded from the file is the same: facts parsed when read, not held.
    const loaded = PersistentCache.open(statusCachePath(path.join(dir, '.loopx', 'runtime')));
    const digest = loaded.indexDigest(indexFile, (await cache.files.reader.stat(indexFile)) ?? null, dir);
    assert.ok(digest !== undefined);
    const loadedRef = new WeakRef(digest.facts);
    assert.equal(JSON.stringify(digest.facts), expected);
    await collect();
    assert.equal(loadedRef.deref(), undefined);
  });
});
