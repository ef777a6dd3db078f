import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { lockFilePath, MAX_STREAK, tryWithFileLock, withFileLock } from '../../../src/core/fs/fileLock';
import { expectSuccess, startTogether, startWorker, waitForOutput, type Worker } from '../../support/barrier';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const WORKER = path.join(__dirname, 'workers', 'lockWorker.ts');

after(() => {
  removeTempDirs();
});

const queueDir = (target: string): string => `${lockFilePath(target)}.queue`;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Resolves once `dir` holds `count` entries (a waiter has queued). */
async function queued(dir: string, count: number): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (fs.existsSync(dir) && fs.readdirSync(dir).length >= count) return;
    await sleep(2);
  }
  assert.fail(`${count} ticket(s) never appeared in ${dir}`);
}

describe('file lock queue', function () {
  this.timeout(120_000);
  const workers: Worker[] = [];
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  });

  it('hands the lock to waiters in arrival order, not back to whoever asks last', async () => {
    const target = path.join(tempDir(), 'x.json');
    const order: string[] = [];
    let release = (): void => undefined;
    const first = withFileLock(
      target,
      {},
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await sleep(5);
    const waiters: Promise<void>[] = [];
    for (const name of ['a', 'b', 'c']) {
      waiters.push(
        withFileLock(target, { pollMs: 200 }, () => {
          order.push(name);
        }),
      );
      await queued(queueDir(target), waiters.length);
      await sleep(3); // distinct arrival times
    }
    release();
    await first;
    // A latecomer arriving after the release still queues behind the waiters.
    waiters.push(
      withFileLock(target, {}, () => {
        order.push('late');
      }),
    );
    await Promise.all(waiters);
    assert.deepEqual(order, ['a', 'b', 'c', 'late']);
    assert.equal(fs.existsSync(queueDir(target)), false, 'the last waiter out removes the queue');
  });

  it('a streak writer re-takes the lock past the line at most MAX_STREAK times in a row, then a waiter gets it', async () => {
    const target = path.join(tempDir(), 'x.json');
    const order: string[] = [];
    let release = (): void => undefined;
    const first = withFileLock(
      target,
      { streak: true },
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await sleep(5);
    const waiter = withFileLock(target, {}, () => {
      order.push('waiter');
    });
    await queued(queueDir(target), 1);
    release();
    await first;
    // A loop of short holds right after the release: each asks again at once.
    for (let i = 0; i < 3 * MAX_STREAK; i++) {
      await withFileLock(target, { streak: true }, () => {
        order.push(`loop-${i}`);
      });
    }
    await waiter;
    const waited = order.indexOf('waiter');
    assert.ok(waited >= 0 && waited <= MAX_STREAK, `the waiter came after ${waited} loop holds: ${order.join(' ')}`);
    assert.equal(order.length, 3 * MAX_STREAK + 1, 'every hold ran once');
  });

  it('a try-once call does not jump the queue', async () => {
    const target = path.join(tempDir(), 'x.json');
    let release = (): void => undefined;
    const holder = withFileLock(
      target,
      {},
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await sleep(5);
    const waiter = withFileLock(target, {}, () => 'waited');
    await queued(queueDir(target), 1);
    release();
    await holder;
    assert.equal(await tryWithFileLock(target, {}, () => 'jumped'), null, 'the lock is free, but someone waits for it');
    assert.equal(await waiter, 'waited');
    assert.deepEqual(await tryWithFileLock(target, {}, () => 'free'), { value: 'free' });
  });

  it('a waiter that times out leaves no ticket behind', async () => {
    const target = path.join(tempDir(), 'x.json');
    let release = (): void => undefined;
    const holder = withFileLock(
      target,
      {},
      () =>
        new Promise<void>((resolve) => {
          release = resolve;
        }),
    );
    await sleep(5);
    await assert.rejects(
      withFileLock(target, { timeoutMs: 60 }, () => 'never'),
      (error: unknown) => isLoopxError(error, 'lock_acquire_timeout'),
    );
    assert.equal(fs.existsSync(queueDir(target)), false);
    release();
    await holder;
  });

  it('drops the ticket of a waiter that died instead of waiting behind it', async () => {
    const target = path.join(tempDir(), 'x.json');
    const holder = startWorker(WORKER, ['hold', target, 'holder', 'stalled']);
    workers.push(holder);
    await waitForOutput(holder, 'held');
    // A waiter in another process queues, then is killed while waiting.
    const doomed = startWorker(WORKER, ['plain-increment', target, '1']);
    workers.push(doomed);
    await queued(queueDir(target), 1);
    doomed.child.kill('SIGKILL');
    await doomed.exited;
    holder.child.kill('SIGKILL');
    await holder.exited;
    const ticketsLeft = fs.readdirSync(queueDir(target));
    assert.equal(ticketsLeft.length, 1, "the dead waiter's ticket is still there");
    const value = await withFileLock(target, { timeoutMs: 10_000 }, () => 'mine');
    assert.equal(value, 'mine');
    assert.equal(fs.existsSync(queueDir(target)), false);
  });

  it('4 processes incrementing through the lock lose nothing and leave no queue behind', async () => {
    const dir = tempDir();
    const counter = path.join(dir, 'counter.txt');
    const racers = await startTogether(
      Array.from({ length: 4 }, () => ({ script: WORKER, args: ['plain-increment', counter, '40'] })),
    );
    workers.push(...racers);
    await Promise.all(racers.map(expectSuccess));
    assert.equal(fs.readFileSync(counter, 'utf8'), '160');
    assert.deepEqual(fs.readdirSync(dir), ['counter.txt']);
  });
});
