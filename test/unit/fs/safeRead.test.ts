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
