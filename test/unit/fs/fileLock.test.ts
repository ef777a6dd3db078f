import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError, type LoopxError } from '../../../src/core/errors';
import {
  LOCK_FILE_SUFFIX,
  lockFilePath,
  lockIdFor,
  readLockHolder,
  sanitizeLockLabel,
  tryWithFileLock,
  withFileLock,
} from '../../../src/core/fs/fileLock';
import { expectSuccess, startTogether, startWorker, waitForOutput, type Worker } from '../../support/barrier';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const WORKER = path.join(__dirname, 'workers', 'lockWorker.ts');

interface OperatorAction {
  action: string;
  holder_pid: number;
  retry_mode: string;
  steps: string[];
}
interface TimeoutDetails {
  error_code: string;
  incident_recorded: boolean;
  incident_channel: string;
  lock_timeout: { holder_pid: number; holder_agent_id: string; holder_operation: string; waited_seconds: number };
  operator_action: OperatorAction;
}
interface Incident {
  schema_version: string;
  error_code: string;
  lock_id: string;
  holder: { pid: number };
  waiter: { pid: number; agent_id: string };
  operator_action: OperatorAction;
}

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

/** Writes a lock file as a process that has since died would have left it. */
async function deadHolderLock(target: string): Promise<number> {
  const dead = startWorker(WORKER, ['hold', target, 'ghost', 'stalled']);
  await waitForOutput(dead, 'held');
  dead.child.kill('SIGKILL');
  await dead.exited;
  return dead.child.pid ?? -1;
}

describe('file lock', function () {
  this.timeout(120_000);
  const workers: Worker[] = [];
  afterEach(() => {
    for (const worker of workers.splice(0)) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
  });

  it('sanitizes agent and operation labels like the original', () => {
    assert.equal(sanitizeLockLabel('Agent A'), 'Agent_A');
    assert.equal(sanitizeLockLabel('..-x/y z-._'), 'x_y_z');
    assert.equal(sanitizeLockLabel('a'.repeat(200)).length, 128);
  });

  it('case 36: the holder record names pid, agent, operation and a UTC acquired_at; release frees it', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'registry.json');
    const seen = await withFileLock(
      target,
      { agentId: 'Agent A', operation: 'sync global', clock: fixedClock('2026-01-15T10:00:00Z') },
      async () => {
        const raw = fs.readFileSync(`${target}${LOCK_FILE_SUFFIX}`, 'utf8');
        assert.ok(!raw.includes(dir), 'the holder record never contains the target path');
        if (process.platform !== 'win32') assert.equal(fs.statSync(`${target}${LOCK_FILE_SUFFIX}`).mode & 0o777, 0o600);
        return readLockHolder(target);
      },
    );
    assert.ok(seen);
    const holder = seen;
    assert.equal(holder.schema_version, 'file_lock_holder_v0');
    assert.equal(holder.pid, process.pid);
    assert.equal(holder.agent_id, 'Agent_A');
    assert.equal(holder.operation, 'sync_global');
    assert.equal(holder.policy, 'mutation');
    assert.equal(holder.acquired_at, '2026-01-15T10:00:00Z');
    assert.equal(holder.hostname, os.hostname());
    assert.equal(holder.lock_id, lockIdFor(target));
    assert.match(holder.lock_id, /^[0-9a-f]{16}$/);
    assert.equal(await readLockHolder(target), null, 'released');
    assert.ok(!fs.existsSync(lockFilePath(target)));
  });

  it('takes the agent from LOOPX_AGENT_ID, else "unknown", and the operation from the policy', async () => {
    const target = path.join(tempDir(), 'x.json');
    await withFileLock(target, { env: { LOOPX_AGENT_ID: 'codex main' }, policy: 'monitor' }, async () => {
      const holder = await readLockHolder(target);
      assert.equal(holder?.agent_id, 'codex_main');
      assert.equal(holder?.operation, 'monitor');
    });
    await withFileLock(target, { env: {} }, async () => {
      assert.equal((await readLockHolder(target))?.agent_id, 'unknown');
    });
  });

  it('resolves symlinked targets to one lock', async () => {
    const dir = tempDir();
    const real = path.join(dir, 'real.json');
    fs.writeFileSync(real, '{}');
    const alias = path.join(dir, 'alias.json');
    fs.symlinkSync(real, alias);
    assert.equal(lockIdFor(alias), lockIdFor(real));
    let releaseHold = (): void => undefined;
    let signalHeld = (): void => undefined;
    const held = new Promise<void>((resolve) => {
      signalHeld = resolve;
    });
    const hold = withFileLock(
      real,
      {},
      () =>
        new Promise<void>((resolve) => {
          releaseHold = resolve;
          signalHeld();
        }),
    );
    await held;
    assert.equal(await tryWithFileLock(alias, {}, () => 'second'), null);
    releaseHold();
    await hold;
    assert.deepEqual(await tryWithFileLock(alias, {}, () => 'after'), { value: 'after' });
  });

  it('refuses a nested acquire of the same lock at once instead of deadlocking', async () => {
    const target = path.join(tempDir(), 'x.json');
    const error = await rejection(
      withFileLock(target, { timeoutMs: 60_000 }, () => withFileLock(target, { timeoutMs: 60_000 }, () => 'inner')),
    );
    assert.equal(error.code, 'lock_not_reentrant');
    assert.equal(await readLockHolder(target), null, 'the outer hold was released');
  });

  it('lets concurrent holds in one process wait for each other (not re-entry)', async () => {
    const target = path.join(tempDir(), 'x.json');
    let inside = 0;
    let maxInside = 0;
    await Promise.all(
      Array.from({ length: 5 }, () =>
        withFileLock(target, { pollMs: 1 }, async () => {
          inside++;
          maxInside = Math.max(maxInside, inside);
          await new Promise((resolve) => setTimeout(resolve, 5));
          inside--;
        }),
      ),
    );
    assert.equal(maxInside, 1);
  });

  it('release deletes only its own record, never a lock another holder took meanwhile', async () => {
    const target = path.join(tempDir(), 'x.json');
    const foreign = JSON.stringify({
      schema_version: 'file_lock_holder_v0',
      lock_id: lockIdFor(target),
      policy: 'mutation',
      pid: process.pid,
      agent_id: 'other',
      operation: 'op',
      acquired_at: '2026-01-01T00:00:00Z',
      hostname: os.hostname(),
      nonce: 'someone-else',
    });
    // As if our hold had been judged stale and reclaimed by another process while we still ran.
    await withFileLock(target, {}, () => {
      fs.rmSync(lockFilePath(target));
      fs.writeFileSync(lockFilePath(target), foreign);
    });
    assert.equal(fs.readFileSync(lockFilePath(target), 'utf8'), foreign, "the other holder's lock is still there");
    assert.equal((await readLockHolder(target))?.nonce, 'someone-else');
  });

  it('releases the lock when the held function throws', async () => {
    const target = path.join(tempDir(), 'x.json');
    await assert.rejects(
      withFileLock(target, {}, () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(await readLockHolder(target), null);
  });

  it('case 37: a stalled holder in another process makes a 150 ms waiter time out with a structured error and one incident line', async () => {
    const dir = tempDir();
    const target = path.join(dir, 'registry.json');
    const holder = startWorker(WORKER, ['hold', target, 'codex-holder', 'sync-global']);
    workers.push(holder);
    await waitForOutput(holder, 'held');

    const error = await rejection(
      withFileLock(target, { timeoutMs: 150, agentId: 'codex-waiter', operation: 'register-agent' }, () => 'never'),
    );
    assert.equal(error.code, 'lock_acquire_timeout');
    assert.match(error.message, new RegExp(`holder pid ${holder.child.pid}`));
    const details = error.details as unknown as TimeoutDetails;
    assert.equal(details.error_code, 'lock_acquire_timeout');
    assert.equal(details.incident_recorded, true);
    assert.equal(details.incident_channel, 'registry.json.lock.incidents.jsonl');
    assert.equal(details.lock_timeout.holder_pid, holder.child.pid);
    assert.equal(details.lock_timeout.holder_agent_id, 'codex-holder');
    assert.equal(details.lock_timeout.holder_operation, 'sync-global');
    assert.ok(details.lock_timeout.waited_seconds >= 0.1);
    assert.equal(details.operator_action.retry_mode, 'manual_after_holder_inspection');
    assert.equal(details.operator_action.holder_pid, holder.child.pid);
    assert.ok(details.operator_action.steps.some((s) => /Do not delete/.test(s)));

    const incidentsPath = path.join(dir, 'registry.json.lock.incidents.jsonl');
    const text = fs.readFileSync(incidentsPath, 'utf8');
    const lines = text.trim().split('\n');
    assert.equal(lines.length, 1);
    assert.ok(!text.includes(dir), 'the incident line never contains the target path');
    const incident = JSON.parse(lines[0] ?? '') as Incident;
    assert.equal(incident.schema_version, 'file_lock_incident_v0');
    assert.equal(incident.error_code, 'lock_acquire_timeout');
    assert.equal(incident.lock_id, lockIdFor(target));
    assert.equal(incident.holder.pid, holder.child.pid);
    assert.equal(incident.waiter.pid, process.pid);
    assert.equal(incident.waiter.agent_id, 'codex-waiter');
    assert.equal(incident.operator_action.action, 'inspect_lock_holder');
    if (process.platform !== 'win32') assert.equal(fs.statSync(incidentsPath).mode & 0o777, 0o600);

    assert.equal(await tryWithFileLock(target, {}, () => 'never'), null, 'try-once yields null while busy');
    assert.equal(fs.readFileSync(incidentsPath, 'utf8').trim().split('\n').length, 1, 'try-once records no incident');

    const single = await rejection(withFileLock(target, { policy: 'single_flight' }, () => 'never'));
    assert.equal((single.details as unknown as TimeoutDetails).operator_action.retry_mode, 'skip_duplicate_attempt');
    assert.ok(fs.existsSync(lockFilePath(target)), "the waiters never removed the live holder's lock");
  });

  it('reclaims the lock of a holder killed with SIGKILL on the next acquire', async () => {
    const target = path.join(tempDir(), 'registry.json');
    const deadPid = await deadHolderLock(target);
    assert.equal((await readLockHolder(target))?.pid, deadPid, 'the dead holder left its lock behind');
    const value = await withFileLock(target, { timeoutMs: 10_000 }, async () => (await readLockHolder(target))?.pid);
    assert.equal(value, process.pid);
    assert.equal(await readLockHolder(target), null);
  });

  it("try-once also reclaims a dead holder's lock", async () => {
    const target = path.join(tempDir(), 'registry.json');
    await deadHolderLock(target);
    assert.deepEqual(await tryWithFileLock(target, {}, () => 'got it'), { value: 'got it' });
  });

  it('reclaims a lock file older than this process that names our own pid (pid reuse)', async () => {
    const target = path.join(tempDir(), 'x.json');
    fs.writeFileSync(
      lockFilePath(target),
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: lockIdFor(target),
        policy: 'mutation',
        pid: process.pid,
        agent_id: 'old',
        operation: 'old',
        acquired_at: '2026-01-01T00:00:00Z',
        hostname: os.hostname(),
        nonce: 'from-a-previous-boot',
      }),
    );
    const beforeThisProcess = new Date(Date.now() - process.uptime() * 1000 - 60_000);
    fs.utimesSync(lockFilePath(target), beforeThisProcess, beforeThisProcess);
    assert.deepEqual(await tryWithFileLock(target, {}, () => 1), { value: 1 });
  });

  it('treats a fresh lock with our pid but an unknown hold (e.g. a worker thread) as live', async () => {
    const target = path.join(tempDir(), 'x.json');
    fs.writeFileSync(
      lockFilePath(target),
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: lockIdFor(target),
        policy: 'mutation',
        pid: process.pid,
        agent_id: 'thread',
        operation: 'op',
        acquired_at: '2026-01-01T00:00:00Z',
        hostname: os.hostname(),
        nonce: 'other-thread',
      }),
    );
    assert.equal(await tryWithFileLock(target, {}, () => 1), null);
  });

  it('never reclaims a lock held on another host', async () => {
    const target = path.join(tempDir(), 'x.json');
    fs.writeFileSync(
      lockFilePath(target),
      JSON.stringify({
        schema_version: 'file_lock_holder_v0',
        lock_id: lockIdFor(target),
        policy: 'mutation',
        pid: 999_999_999,
        agent_id: 'remote',
        operation: 'op',
        acquired_at: '2026-01-01T00:00:00Z',
        hostname: `${os.hostname()}-elsewhere`,
        nonce: 'n',
      }),
    );
    assert.equal(await tryWithFileLock(target, {}, () => 1), null);
  });

  it('keeps mutual exclusion when many processes race to reclaim one stale lock (3 rounds)', async () => {
    const dir = tempDir();
    const counter = path.join(dir, 'counter.txt');
    for (let round = 1; round <= 3; round++) {
      await deadHolderLock(counter);
      // Behind the barrier all six find the dead holder's lock at once (without it they trickled in and
      // the first had long reclaimed it: the race passed with the reclaim guard removed). A racer that
      // finds another one inside the lock fails at once.
      const racers = await startTogether(
        Array.from({ length: 6 }, () => ({ script: WORKER, args: ['exclusive-increment', counter, '5'] })),
      );
      workers.push(...racers);
      await Promise.all(racers.map(expectSuccess));
      assert.equal(fs.readFileSync(counter, 'utf8'), String(30 * round));
    }
    assert.deepEqual(fs.readdirSync(dir).sort(), ['counter.txt'], 'no lock, guard or temp file is left behind');
  });
});
