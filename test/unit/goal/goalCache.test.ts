import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalCache } from '../../../src/core/goal/cache';
import { fileSystemGoalReader, GoalFiles, type GoalFileReader } from '../../../src/core/goal/files';
import { RACY_MS } from '../../../src/core/goal/persistentCache';
import { tempDir } from '../../support/tempDir';

/** A file-system reader that counts its registry and run-index reads. */
function countingReader(): { reader: GoalFileReader; registryReads: () => number; indexReads: () => number } {
  let registryReads = 0;
  let indexReads = 0;
  return {
    reader: {
      ...fileSystemGoalReader,
      readRegistry: (file) => {
        registryReads++;
        return fileSystemGoalReader.readRegistry(file);
      },
      readRunIndex: (file, options) => {
        indexReads++;
        return fileSystemGoalReader.readRunIndex(file, options);
      },
    },
    registryReads: () => registryReads,
    indexReads: () => indexReads,
  };
}

const ROW = (runId: string, minute: number): string =>
  `${JSON.stringify({ run_id: runId, generated_at: `2026-12-01T10:0${minute}:00Z`, status: 'ok' })}\n`;

/** Sets the file's mtime `ms` in the past (whole seconds). */
function age(file: string, ms: number): void {
  const at = Math.floor((Date.now() - ms) / 1000);
  fs.utimesSync(file, at, at);
}

/** A same-size rewrite in place keeping the mtime: the stamp stays equal. */
function rewriteKeepingStamp(file: string, text: string): void {
  const before = fs.statSync(file);
  fs.writeFileSync(file, text);
  fs.utimesSync(file, before.mtimeMs / 1000, before.mtimeMs / 1000);
  const after = fs.statSync(file);
  assert.deepEqual([after.ino, after.size, after.mtimeMs], [before.ino, before.size, before.mtimeMs]);
}

function workspace(): {
  registry: string;
  index: string;
  paths: { stateFile: null; indexFile: string; projectRoot: string };
} {
  const dir = tempDir('loopx-goal-cache-');
  const registry = path.join(dir, 'registry.json');
  const index = path.join(dir, 'index.jsonl');
  fs.writeFileSync(registry, JSON.stringify({ goals: [{ id: 'g1' }] }));
  fs.writeFileSync(index, ROW('run-1', 1) + ROW('run-2', 2));
  // Whole seconds (exact in utimes), within the racy window of now, as a coarse-mtime file system stamps them.
  for (const file of [registry, index]) age(file, 0);
  return { registry, index, paths: { stateFile: null, indexFile: index, projectRoot: dir } };
}

describe('one registry and run-index cache per process (core/goal/cache.ts)', () => {
  it('two status caches share one read of a settled registry and run index (one parse, the same objects)', async () => {
    const { registry, index, paths } = workspace();
    age(registry, 2 * RACY_MS);
    age(index, 2 * RACY_MS);
    const cache = new GoalCache();
    const counter = countingReader();
    const first = new GoalFiles(counter.reader, cache);
    const second = new GoalFiles(counter.reader, cache);
    const a = await first.registry(registry);
    const b = await second.registry(registry);
    assert.equal(b.registry, a.registry, 'the same document');
    assert.equal(counter.registryReads(), 1);
    const runsA = (await first.sources(paths)).runs;
    const runsB = (await second.sources(paths)).runs;
    assert.equal(runsA?.rows.length, 2);
    assert.equal(runsB, runsA, 'the same read');
    assert.equal(counter.indexReads(), 1);
    assert.equal(second.held(index)?.read, runsA, 'held by both');
  });

  it('a same-size rewrite in the same mtime tick (the racy window) is read again by another status cache', async () => {
    const { registry, index, paths } = workspace();
    const cache = new GoalCache();
    const counter = countingReader();
    const first = new GoalFiles(counter.reader, cache);
    await first.registry(registry);
    await first.sources(paths);
    rewriteKeepingStamp(registry, JSON.stringify({ goals: [{ id: 'g2' }] }));
    rewriteKeepingStamp(index, ROW('run-3', 3) + ROW('run-4', 4));
    const second = new GoalFiles(counter.reader, cache);
    assert.deepEqual((await second.registry(registry)).registry, { goals: [{ id: 'g2' }] });
    assert.deepEqual((await second.sources(paths)).runs?.rows.map((row) => row.run_id).sort(), ['run-3', 'run-4']);
    assert.equal(counter.registryReads(), 2);
    assert.equal(counter.indexReads(), 2);
  });

  it('another reader (a test’s, the editor’s) never gets a read made through this one', async () => {
    const { registry, paths } = workspace();
    age(registry, 2 * RACY_MS);
    const cache = new GoalCache();
    const one = countingReader();
    const other = countingReader();
    await new GoalFiles(one.reader, cache).registry(registry);
    await new GoalFiles(one.reader, cache).sources(paths);
    await new GoalFiles(other.reader, cache).registry(registry);
    await new GoalFiles(other.reader, cache).sources(paths);
    assert.deepEqual([other.registryReads(), other.indexReads()], [1, 1]);
  });

  it('a run-index read is dropped when its last holder lets go (status over many goals holds none after)', async () => {
    const { index, paths } = workspace();
    age(index, 2 * RACY_MS);
    const cache = new GoalCache();
    const counter = countingReader();
    const first = new GoalFiles(counter.reader, cache);
    const second = new GoalFiles(counter.reader, cache);
    await first.sources(paths);
    await second.sources(paths);
    first.release(paths);
    assert.equal(first.held(index), undefined);
    assert.notEqual(second.held(index), undefined, 'still held by the other');
    second.release(paths);
    assert.equal(second.held(index), undefined);
    await new GoalFiles(counter.reader, cache).sources(paths);
    assert.equal(counter.indexReads(), 2, 'read again: nothing was kept');
  });
});
