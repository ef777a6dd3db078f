import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { readFileSafe, readFileSafeSync } from '../../../src/core/fs/safeRead';

/**
 * The safe reader checks the opened handle again: a path that is a regular file when stat'ed and
 * a FIFO when opened (swapped in between) is refused, not read as an empty file (mutation audit,
 * issue 34: without the re-check after open this went unnoticed). The swap is made deterministic by
 * wrapping `stat`: it answers for the regular file, then puts a FIFO in its place before the open.
 */
/** The module object itself (an `import * as` namespace is read-only): what safeRead.ts calls through. */
const nodeFs = createRequire(__filename)('node:fs') as typeof fs;

describe('safe reads: the handle is checked again after open', function () {
  if (process.platform === 'win32') return; // no FIFOs (and no O_NONBLOCK) there

  const dirs: string[] = [];
  const restore: (() => void)[] = [];
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  function regularFileToSwap(): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-saferead-'));
    dirs.push(dir);
    const file = path.join(dir, 'registry.json');
    fs.writeFileSync(file, '{"goals": []}\n');
    return file;
  }

  function swapToFifo(file: string): void {
    fs.rmSync(file);
    const made = spawnSync('mkfifo', [file]);
    assert.equal(made.status, 0, `mkfifo: ${String(made.stderr)}`);
  }

  /** Replaces `owner[name]` (a stat function) with one that stats first, then swaps `file` to a FIFO. */
  function swapAfterStat<K extends string>(owner: Record<K, unknown>, name: K, file: string, sync: boolean): void {
    const original = owner[name] as (...args: unknown[]) => unknown;
    owner[name] = sync
      ? (...args: unknown[]) => {
          const stat = original(...args);
          if (args[0] === file) swapToFifo(file);
          return stat;
        }
      : async (...args: unknown[]) => {
          const stat = await original(...args);
          if (args[0] === file) swapToFifo(file);
          return stat;
        };
    restore.push(() => {
      owner[name] = original;
    });
  }

  const refusedAsFifo = (error: unknown): boolean =>
    isLoopxError(error, 'file_not_regular') && /FIFO/.test((error as Error).message);

  it('sync: a file swapped to a FIFO between stat and open is refused', () => {
    const file = regularFileToSwap();
    swapAfterStat(nodeFs as unknown as Record<'statSync', unknown>, 'statSync', file, true);
    assert.throws(() => readFileSafeSync(file), refusedAsFifo);
    assert.ok(fs.statSync(file).isFIFO(), 'the swap happened');
  });

  it('async: a file swapped to a FIFO between stat and open is refused', async () => {
    const file = regularFileToSwap();
    swapAfterStat(nodeFs.promises as unknown as Record<'stat', unknown>, 'stat', file, false);
    await assert.rejects(readFileSafe(file), refusedAsFifo);
    assert.ok(fs.statSync(file).isFIFO(), 'the swap happened');
  });
});

describe('safe reads: how far a read goes', () => {
  const dirs: string[] = [];
  const restore: (() => void)[] = [];
  afterEach(() => {
    for (const undo of restore.splice(0)) undo();
    for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
  });

  function file(text: string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-saferead-len-'));
    dirs.push(dir);
    const name = path.join(dir, 'record.json');
    fs.writeFileSync(name, text);
    return name;
  }

  /** Wraps `fs.readSync`: counts the calls, and `shortFirst` makes the first one read only that many bytes. */
  function countReads(shortFirst?: number): { calls: number } {
    const original = nodeFs.readSync;
    const seen = { calls: 0 };
    (nodeFs as unknown as Record<'readSync', unknown>)['readSync'] = (
      fd: number,
      buffer: Buffer,
      offset: number,
      length: number,
      position: null,
    ) => {
      seen.calls += 1;
      const asked = seen.calls === 1 && shortFirst !== undefined ? Math.min(length, shortFirst) : length;
      return original(fd, buffer, offset, asked, position);
    };
    restore.push(() => {
      (nodeFs as unknown as Record<'readSync', unknown>)['readSync'] = original;
    });
    return seen;
  }

  it('a file read whole in one read is not read again to find its end', () => {
    const name = file('{"slots": 1}\n'.repeat(50));
    const reads = countReads();
    assert.equal(readFileSafeSync(name), '{"slots": 1}\n'.repeat(50));
    assert.equal(reads.calls, 1);
  });

  it('a read cut short before the size seen goes on reading', () => {
    const name = file('x'.repeat(1000));
    const reads = countReads(10);
    assert.equal(readFileSafeSync(name), 'x'.repeat(1000));
    assert.ok(reads.calls >= 2);
  });

  it('a file that grew after fstat is read to its new end (sync and async)', async () => {
    const name = file('first line\n');
    for (const sync of [true, false]) {
      fs.writeFileSync(name, 'first line\n');
      const owner = (sync ? nodeFs : nodeFs.promises) as unknown as Record<string, unknown>;
      const key = sync ? 'fstatSync' : 'open';
      const original = owner[key] as (...args: unknown[]) => unknown;
      if (sync)
        owner[key] = (...args: unknown[]) => {
          const stat = original(...args);
          fs.appendFileSync(name, 'appended after fstat\n');
          return stat;
        };
      else
        owner[key] = async (...args: unknown[]) => {
          const handle = (await original(...args)) as fs.promises.FileHandle;
          const stat = await handle.stat();
          const realStat = handle.stat.bind(handle);
          handle.stat = (async () => {
            fs.appendFileSync(name, 'appended after fstat\n');
            handle.stat = realStat;
            return stat;
          }) as typeof handle.stat;
          return handle;
        };
      try {
        const text = sync ? readFileSafeSync(name) : await readFileSafe(name);
        assert.equal(text, 'first line\nappended after fstat\n', sync ? 'sync' : 'async');
      } finally {
        owner[key] = original;
      }
    }
  });
});
