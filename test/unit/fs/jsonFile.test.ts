import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError, type LoopxError } from '../../../src/core/errors';
import { formatJson, writeFileAtomic, writeFileAtomicSync, writeJsonAtomic } from '../../../src/core/fs/atomicWrite';
import {
  jsonErrorOffset,
  jsonNestingExceeds,
  readJsonFile,
  readJsonFileSync,
  updateJsonFile,
} from '../../../src/core/fs/jsonFile';
import { readLockHolder } from '../../../src/core/fs/fileLock';
import { expectSuccess, startTogether, startWorker, waitForOutput, type Worker } from '../../support/barrier';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const WORKER = path.join(__dirname, 'workers', 'lockWorker.ts');

after(() => {
  removeTempDirs();
});

async function rejection(promise: Promise<unknown>): Promise<LoopxError> {
  try {
    await promise;
  } catch (error) {
    if (isLoopxError(error)) return error;
    throw error;
  }
  assert.fail('expected a LoopxError');
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

describe('atomic writes', function () {
  this.timeout(120_000);
  const workers: Worker[] = [];
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  });

  it('writes JSON with 2-space indent, key order and non-ASCII kept, and a trailing newline', async () => {
    const file = path.join(tempDir(), 'deep', 'er', 'x.json');
    await writeJsonAtomic(file, { z: 1, a: { é: 'ü' } });
    assert.equal(fs.readFileSync(file, 'utf8'), '{\n  "z": 1,\n  "a": {\n    "é": "ü"\n  }\n}\n');
    assert.equal(formatJson([]), '[]\n');
  });

  it('keeps the permission bits of the file it replaces, and applies the mode to a new file', async () => {
    if (process.platform === 'win32') return;
    const dir = tempDir();
    const existing = path.join(dir, 'a.json');
    fs.writeFileSync(existing, '{}');
    fs.chmodSync(existing, 0o640);
    await writeFileAtomic(existing, '{"v":2}', { mode: 0o600 });
    assert.equal(fs.statSync(existing).mode & 0o777, 0o640);
    const fresh = path.join(dir, 'b.json');
    writeFileAtomicSync(fresh, 'x', { mode: 0o600 });
    assert.equal(fs.statSync(fresh).mode & 0o777, 0o600);
  });

  it('removes its temp file when the write fails', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'occupied');
    fs.mkdirSync(target); // renaming a file over a directory fails
    await assert.rejects(writeFileAtomic(target, 'data'));
    assert.deepEqual(fs.readdirSync(dir), ['occupied']);
  });

  it('a writer killed with SIGKILL mid-write leaves the complete old or the complete new file, never a partial one', async () => {
    const file = path.join(tempDir(), 'big.json');
    fs.writeFileSync(file, `${JSON.stringify({ version: 0, filler: '0'.repeat(4_000_000) })}\n`);
    for (let round = 0; round < 3; round++) {
      const writer = startWorker(WORKER, ['write-loop', file]);
      workers.push(writer);
      await waitForOutput(writer, 'started');
      for (let reads = 0; reads < 5; reads++) {
        assertCompleteVersion(fs.readFileSync(file, 'utf8'));
        await sleep(7 + round * 5);
      }
      writer.child.kill('SIGKILL');
      assert.equal(await writer.exited, 'SIGKILL');
      assertCompleteVersion(fs.readFileSync(file, 'utf8'));
    }
  });
});

function assertCompleteVersion(text: string): void {
  const doc = JSON.parse(text) as { version: number; filler: string };
  assert.equal(doc.filler.length, 4_000_000);
  assert.equal(doc.filler, String(doc.version % 10).repeat(4_000_000));
}

describe('JSON nesting check', () => {
  const nested = (depth: number, open = '[', close = ']'): string => `${open.repeat(depth)}${close.repeat(depth)}`;

  it('finds nesting one level past the limit, and none at the limit', () => {
    assert.equal(jsonNestingExceeds(nested(512)), false);
    assert.equal(jsonNestingExceeds(nested(513)), true);
    assert.equal(jsonNestingExceeds(`{"a":${nested(513, '{"b":', '}')}}`.replace(/}$/, '')), true);
    assert.equal(jsonNestingExceeds(nested(5), 4), true);
    assert.equal(jsonNestingExceeds(nested(4), 4), false);
  });

  it('reads many shallow openers as shallow, and openers inside strings as text', () => {
    // More openers than the limit in all, none deeper than 2: the quick count does not decide, the scan does.
    assert.equal(jsonNestingExceeds(`[${Array.from({ length: 600 }, () => '{"a":[1]}').join(',')}]`), false);
    assert.equal(jsonNestingExceeds(JSON.stringify({ text: '['.repeat(600) })), false);
    assert.equal(jsonNestingExceeds(JSON.stringify({ text: '"\\[' + '{'.repeat(600) })), false);
    // A long row with a handful of openers (a run index row) is not deep.
    assert.equal(jsonNestingExceeds(JSON.stringify({ a: 'x'.repeat(10_000), b: { c: [1, 2] } })), false);
  });
});

describe('JSON files', function () {
  this.timeout(180_000);
  const workers: Worker[] = [];
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  });

  it('reports invalid JSON with file, line, column and the fix', async () => {
    const file = path.join(tempDir(), 'registry.json');
    fs.writeFileSync(file, '{\n  "goals": [\n    {"id": "a",}\n  ]\n}\n');
    const error = await rejection(readJsonFile(file));
    assert.equal(error.code, 'invalid_json');
    assert.equal(error.details['line'], 3);
    assert.equal(error.details['column'], 16);
    assert.equal(error.details['path'], file);
    assert.match(
      error.message,
      new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not valid JSON \\(line 3, column 16`),
    );
    assert.match(error.message, /Fix the file/);
    assert.throws(() => readJsonFileSync(file), /line 3, column 16/);
  });

  it('locates errors that Node reports without a position', () => {
    assert.equal(jsonErrorOffset('{"a": x}'), 6);
    assert.equal(jsonErrorOffset('{"a": 1} x'), 9);
    assert.equal(jsonErrorOffset(''), 0);
    assert.equal(jsonErrorOffset('{"a": "\\q"}'), 8);
    assert.equal(jsonErrorOffset('[1, 2'), 5);
    assert.equal(jsonErrorOffset('{"a": -}'), 6);
  });

  it('reports a missing file as file_not_found', async () => {
    const error = await rejection(readJsonFile(path.join(tempDir(), 'none.json')));
    assert.equal(error.code, 'file_not_found');
  });

  it('tolerates a UTF-8 byte-order mark', async () => {
    const file = path.join(tempDir(), 'bom.json');
    fs.writeFileSync(file, '\uFEFF{"a":1}');
    assert.deepEqual(await readJsonFile(file), { a: 1 });
  });

  it('never overwrites a file it cannot parse', async () => {
    const file = path.join(tempDir(), 'registry.json');
    const broken = '{"goals": [ {"id": "a"} \n';
    fs.writeFileSync(file, broken);
    let called = false;
    const error = await rejection(
      updateJsonFile(
        file,
        () => {
          called = true;
          return { goals: [] };
        },
        {},
      ),
    );
    assert.equal(error.code, 'invalid_json');
    assert.equal(called, false);
    assert.equal(fs.readFileSync(file, 'utf8'), broken);
    assert.equal(await readLockHolder(file), null, 'the lock was released');
  });

  it('writes only when the content changed, and hands mutate a copy', async () => {
    const file = path.join(tempDir(), 'x.json');
    const created = await updateJsonFile(
      file,
      (current) => {
        assert.equal(current, undefined, 'a missing file is undefined');
        return { b: 1, a: [1] };
      },
      {},
    );
    assert.equal(created.changed, true);
    const before = fs.statSync(file).mtimeMs;
    const same = await updateJsonFile(
      file,
      (current) => {
        const doc = current as { b: number; a: number[] };
        doc.a.push(2);
        return { b: 1, a: [1] };
      },
      {},
    );
    assert.deepEqual(same, { changed: false, value: { b: 1, a: [1] } });
    assert.equal(fs.statSync(file).mtimeMs, before);
    assert.equal((await updateJsonFile(file, () => undefined, {})).changed, false);
    const reordered = await updateJsonFile(file, () => ({ a: [1], b: 1 }), {});
    assert.equal(reordered.changed, true, 'key order is part of the file');
    assert.equal(fs.readFileSync(file, 'utf8'), '{\n  "a": [\n    1\n  ],\n  "b": 1\n}\n');
  });

  it('8 processes x 50 increments through updateJsonFile end at exactly 400, and a concurrent reader never sees invalid JSON', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'counter.json');
    const stop = path.join(dir, 'stop');
    fs.writeFileSync(file, formatJson({ count: 0, keep: 'unknown fields survive' }));
    const reader = startWorker(WORKER, ['reader', file, stop]);
    workers.push(reader);
    const writers = await startTogether(
      Array.from({ length: 8 }, (_, i) => ({ script: WORKER, args: ['increment', file, '50', `agent-${i}`] })),
    );
    workers.push(...writers);
    await Promise.all(writers.map(expectSuccess));
    fs.writeFileSync(stop, '');
    await expectSuccess(reader);
    const report = JSON.parse(reader.stdout()) as { reads: number; invalid: number };
    assert.equal(report.invalid, 0);
    assert.ok(report.reads > 0);
    assert.deepEqual(JSON.parse(fs.readFileSync(file, 'utf8')), { count: 400, keep: 'unknown fields survive' });
    assert.deepEqual(fs.readdirSync(dir).sort(), ['counter.json', 'stop'], 'no lock or temp file is left behind');
  });
});
