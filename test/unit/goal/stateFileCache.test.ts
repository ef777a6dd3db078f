import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalCache, processGoalCache, processStateFiles, StateFileCache } from '../../../src/core/goal/cache';
import { fileSystemGoalReader, GoalFiles, type GoalFileReader } from '../../../src/core/goal/files';
import { RACY_MS } from '../../../src/core/goal/persistentCache';
import { tempDir } from '../../support/tempDir';

const STATE = (next: string): string => `# Active Goal State\n\n## Next Action\n\n${next}\n`;

function countingReader(): { reader: GoalFileReader; reads: () => number } {
  let reads = 0;
  return {
    reader: {
      ...fileSystemGoalReader,
      readState: (file) => {
        reads++;
        return fileSystemGoalReader.readState(file);
      },
    },
    reads: () => reads,
  };
}

/** Writes the file and stamps its mtime with `tick`, whole seconds (exact in `utimes`), as a coarse-mtime file system would. */
function writeInTick(file: string, text: string, tick: number): void {
  fs.writeFileSync(file, text);
  fs.utimesSync(file, tick, tick);
}

/** Rewrites the file in place with text of the same size in the same mtime tick: the stamp stays equal. */
function rewriteKeepingStamp(file: string, text: string): void {
  const before = fs.statSync(file);
  writeInTick(file, text, before.mtimeMs / 1000); // in place: same inode
  const after = fs.statSync(file);
  assert.equal(after.ino, before.ino);
  assert.equal(after.size, before.size);
  assert.equal(after.mtimeMs, before.mtimeMs);
}

describe('the one state-file cache per process (core/goal/cache.ts)', () => {
  it('the decisions and the read views read through the same cache: one parse, one object', async () => {
    const file = path.join(tempDir('loopx-state-cache-'), 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(file, STATE('Build the report.'));
    const loaded = await processGoalCache().stateFile(file);
    const files = new GoalFiles(fileSystemGoalReader, processGoalCache());
    const stamp = await fileSystemGoalReader.stat(file);
    const { state } = await files.sources(
      { stateFile: file, indexFile: `${file}.none`, projectRoot: path.dirname(file) },
      [stamp, null],
    );
    assert.equal(state.kind, 'ok');
    assert.equal(state.kind === 'ok' ? state.doc : undefined, loaded.document, 'the same frozen parse');
    assert.equal(processGoalCache().stateFiles, processStateFiles());
  });

  it('a same-size rewrite in the same mtime tick is seen (the racy window): a decision never acts on stale text', async () => {
    const file = path.join(tempDir('loopx-state-cache-'), 'ACTIVE_GOAL_STATE.md');
    // This second (within the racy window of now): a rewrite in it keeps the stamp.
    writeInTick(file, STATE('Build the report A.'), Math.floor(Date.now() / 1000));
    const cache = new GoalCache();
    assert.match((await cache.stateFile(file)).text, /report A/);
    rewriteKeepingStamp(file, STATE('Build the report B.'));
    assert.match((await cache.stateFile(file)).text, /report B/, 'the loader sees the rewrite');
    const views = new StateFileCache();
    const counter = countingReader();
    await views.read(file, counter.reader);
    rewriteKeepingStamp(file, STATE('Build the report C.'));
    assert.match((await views.read(file, counter.reader)).text, /report C/, 'the read views see it too');
  });

  it('a file left alone past the racy window is not read again while its stamp holds; a changed stamp is', async () => {
    const file = path.join(tempDir('loopx-state-cache-'), 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(file, STATE('Build the report.'));
    const old = new Date(Date.now() - 2 * RACY_MS);
    fs.utimesSync(file, old, old);
    const cache = new StateFileCache();
    const counter = countingReader();
    const first = await cache.read(file, counter.reader);
    assert.equal(await cache.read(file, counter.reader), first);
    assert.equal(counter.reads(), 1, 'the stamp vouches for the text');
    fs.writeFileSync(file, STATE('Ship the report.'));
    assert.match((await cache.read(file, counter.reader)).text, /Ship/);
    assert.equal(counter.reads(), 2);
  });

  it('equal text keeps the parse; another reader (the editor serving a buffer) is never vouched for by this one’s stamp', async () => {
    const file = path.join(tempDir('loopx-state-cache-'), 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(file, STATE('Build the report.'));
    const cache = new StateFileCache();
    const first = await cache.read(file);
    assert.equal(await cache.read(file), first, 'racy, read again, same text: the same object');
    const buffer: GoalFileReader = { ...fileSystemGoalReader, readState: async () => STATE('Unsaved edit.') };
    assert.match((await cache.read(file, buffer)).text, /Unsaved edit/);
  });

  it('a missing file throws the reader’s error and is forgotten', async () => {
    const file = path.join(tempDir('loopx-state-cache-'), 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(file, STATE('Build the report.'));
    const cache = new StateFileCache();
    await cache.read(file);
    fs.rmSync(file);
    await assert.rejects(cache.read(file), (error: { code?: string }) => error.code === 'state_file_missing');
    assert.equal(cache.size, 0);
  });
});
