import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readQuotaLedger } from '../../../src/core/quota/ledger';
import { reclaimExpiredReservations, voidReservation } from '../../../src/core/quota/voids';
import { reservationsPath } from '../../../src/core/quota/reservations';
import { reserveTurn } from '../../../src/core/quota/admission';
import { settleReservation } from '../../../src/core/quota/settlement';
import { appendRun } from '../../../src/core/runtime/runIndexWrite';
import { expectSuccess, startTogether, startWorker, waitForOutput } from '../../support/barrier';
import { clockAt, identityFor, loadGoal, makeWorkspace, NOW, readIndexRows } from './helpers';

const RACE_WORKER = path.join(__dirname, 'workers', 'raceWorker.ts');
const CRASH_WORKER = path.join(__dirname, 'workers', 'crashWorker.ts');
const minutesAfter = (minutes: number): string => new Date(new Date(NOW).getTime() + minutes * 60_000).toISOString();

describe('quota reservations (hard limits)', () => {
  it('reserved slots count against the limit and a settle turns the reservation into exactly one spend', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 2 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    const a = identityFor(ws, 'agent-a', 't1');
    const b = identityFor(ws, 'agent-b', 't2');
    const c = identityFor(ws, 'agent-a', 't3');
    assert.equal((await reserveTurn(goal, clock, { identity: a })).status, 'reserved');
    assert.equal((await reserveTurn(goal, clock, { identity: a })).status, 'already_reserved');
    assert.equal((await reserveTurn(goal, clock, { identity: b })).status, 'reserved');
    const third = await reserveTurn(goal, clock, { identity: c });
    assert.equal(third.status, 'refused');
    assert.match(third.reason, /0 spent \+ 2 reserved \+ 1 requested exceeds the 2 allowed/);

    const settled = await settleReservation(goal, clock, {
      identity: a,
      usage: { tokens: 1200, cost_usd: 0.25, minutes: 3, estimated: false },
    });
    assert.equal(settled.status, 'settled');
    assert.equal(settled.admission, 'reservation');
    const replay = await settleReservation(goal, clock, { identity: a });
    assert.deepEqual([replay.status, replay.appended, replay.idempotent_replay], ['replayed', false, true]);
    const rows = readIndexRows(ws);
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.['classification'], 'quota_slot_spent');
    assert.deepEqual(rows[0]?.['usage'], { tokens: 1200, cost_usd: 0.25, minutes: 3, estimated: false });
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      projectRoot: ws.dir,
      windowHours: 24,
      clock,
    });
    assert.equal(ledger.spent_slots, 1);
    assert.deepEqual(ledger.usage, { tokens: 1200, cost_usd: 0.25, minutes: 3, estimated: false });
  });

  it('settling an unexpired reservation succeeds even after the window filled up', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    const admitted = identityFor(ws, 'agent-a', 't1');
    await reserveTurn(goal, clock, { identity: admitted });
    // Another writer (e.g. the Python LoopX, which takes no reservation) fills the window meanwhile.
    await appendRun({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      clock,
      projectRoot: ws.dir,
      record: { classification: 'quota_slot_spent', recommended_action: '', health_check: 'x' },
      markdown: '#\n',
    });
    const direct = await settleReservation(goal, clock, { identity: identityFor(ws, 'agent-b', 'other') });
    assert.equal(direct.status, 'refused');
    const settled = await settleReservation(goal, clock, { identity: admitted });
    assert.equal(settled.status, 'settled');
    assert.equal(settled.quota.spent_slots, 2);
  });

  it('a settle without reservation never exceeds the limit, whatever --slots asks for', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 3 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    assert.equal(
      (await settleReservation(goal, clock, { identity: identityFor(ws, 'agent-a', 't1'), slots: 2 })).status,
      'settled',
    );
    const over = await settleReservation(goal, clock, { identity: identityFor(ws, 'agent-a', 't2'), slots: 5 });
    assert.equal(over.status, 'refused');
    assert.match(over.reason, /2 spent \+ 0 reserved \+ 5 requested exceeds the 3 allowed/);
    assert.equal(readIndexRows(ws).length, 1);
  });

  it('budgets are hard at admission: a reservation holds its estimate', async () => {
    const ws = makeWorkspace({ quota: { max_cost_usd: 1 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    assert.equal(
      (await reserveTurn(goal, clock, { identity: identityFor(ws, 'agent-a', 't1'), estimate: { cost_usd: 0.6 } }))
        .status,
      'reserved',
    );
    const second = await reserveTurn(goal, clock, {
      identity: identityFor(ws, 'agent-b', 't2'),
      estimate: { cost_usd: 0.6 },
    });
    assert.equal(second.status, 'refused');
    assert.match(second.reason, /max_cost_usd budget has 0.4 left/);
    await settleReservation(goal, clock, {
      identity: identityFor(ws, 'agent-a', 't1'),
      usage: { cost_usd: 1.1, estimated: false },
    });
    const after = await reserveTurn(goal, clock, { identity: identityFor(ws, 'agent-b', 't3') });
    assert.equal(after.status, 'refused');
    assert.match(after.reason, /max_cost_usd budget is used up/);
  });

  it('a paused goal (compute 0) admits no turn even with an explicit allowed_slots', async () => {
    const ws = makeWorkspace({ quota: { compute: 0, allowed_slots: 5 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    const reserved = await reserveTurn(goal, clock, { identity: identityFor(ws, 'agent-a', 't1') });
    assert.equal(reserved.status, 'refused');
    assert.match(reserved.reason, /0 compute quota \(paused\)/);
    const direct = await settleReservation(goal, clock, { identity: identityFor(ws, 'agent-a', 't2') });
    assert.equal(direct.status, 'refused');
    assert.equal(readIndexRows(ws).length, 0, 'nothing spent');
  });

  it('voidReservation releases the slot without writing a spend', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    const turn = identityFor(ws, 'agent-a', 't1');
    await reserveTurn(goal, clock, { identity: turn });
    const voided = await voidReservation(goal, clock, { effectId: turn.effect_id });
    assert.equal(voided.status, 'voided');
    assert.equal(voided.quota.remaining_slots, 1);
    assert.equal(readIndexRows(ws).length, 0);
    assert.equal((await reserveTurn(goal, clock, { identity: identityFor(ws, 'agent-b', 't2') })).status, 'reserved');
  });

  it('a reservation whose spend was appended before a crash is dropped, never spent twice', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 2 } });
    const goal = await loadGoal(ws);
    const clock = clockAt();
    const turn = identityFor(ws, 'agent-a', 't1');
    await reserveTurn(goal, clock, { identity: turn });
    // The crash window: the spend is durable but the reservation was not removed yet.
    await appendRun({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      clock,
      projectRoot: ws.dir,
      markdown: '#\n',
      record: {
        classification: 'quota_slot_spent',
        recommended_action: '',
        health_check: 'x',
        agent_id: 'agent-a',
        settlement_identity: turn,
      },
      indexFields: { settlement_identity: turn },
    });
    const next = await reserveTurn(goal, clock, { identity: identityFor(ws, 'agent-b', 't2') });
    assert.equal(next.status, 'reserved');
    assert.deepEqual(next.quota, { allowed_slots: 2, spent_slots: 1, reserved_slots: 1, remaining_slots: 0 });
    assert.equal((await settleReservation(goal, clock, { identity: turn })).status, 'replayed');
    const file = JSON.parse(fs.readFileSync(reservationsPath(goal), 'utf8')) as {
      reservations: { effect_id: string }[];
    };
    assert.deepEqual(
      file.reservations.map((r) => r.effect_id),
      ['g:agent-b:todo_parser:t2'],
    );
  });

  it('refuses to touch an unparsable reservations file and names it', async () => {
    const ws = makeWorkspace();
    const goal = await loadGoal(ws);
    fs.mkdirSync(path.dirname(reservationsPath(goal)), { recursive: true });
    fs.writeFileSync(reservationsPath(goal), '{"schema_version": "loopx_quota_reservations_v0", ');
    await assert.rejects(
      reserveTurn(goal, clockAt(), { identity: identityFor(ws, 'agent-a', 't1') }),
      (error: Error & { code?: string }) =>
        error.code === 'invalid_json' && error.message.includes('quota-reservations.json'),
    );
    assert.equal(fs.readFileSync(reservationsPath(goal), 'utf8'), '{"schema_version": "loopx_quota_reservations_v0", ');
  });

  it('8 processes racing 200 turns against 50 allowed slots write exactly 50 spends', async function () {
    this.timeout(180_000);
    const ws = makeWorkspace({
      quota: { allowed_slots: 50 },
      coordination: { registered_agents: Array.from({ length: 8 }, (_, i) => `racer-${i}`) },
    });
    const workers = await startTogether(
      Array.from({ length: 8 }, (_, i) => ({
        script: RACE_WORKER,
        args: [ws.registryPath, 'g', `racer-${i}`, '25'],
      })),
    );
    await Promise.all(workers.map(expectSuccess));
    const summaries = workers.map(
      (w) => JSON.parse(w.stdout().trim()) as { admitted: number; refused: number; settled: number },
    );
    assert.equal(
      summaries.reduce((n, s) => n + s.admitted + s.refused, 0),
      200,
    );
    assert.equal(
      summaries.reduce((n, s) => n + s.admitted, 0),
      50,
    );
    assert.equal(
      summaries.reduce((n, s) => n + s.settled, 0),
      50,
    );

    const rows = readIndexRows(ws);
    const spends = rows.filter((r) => r['classification'] === 'quota_slot_spent');
    assert.equal(spends.length, 50);
    const effectIds = spends.map((r) => (r['settlement_identity'] as { effect_id: string }).effect_id);
    assert.equal(new Set(effectIds).size, 50, 'no duplicate settlement identity');
    for (const row of spends)
      assert.ok(
        fs.existsSync(path.resolve(ws.dir, String(row['json_path']))),
        `record of ${String(row['json_path'])} exists`,
      );
    const runsDir = path.join(ws.runtimeRoot, 'goals', 'g', 'runs');
    assert.equal(
      fs
        .readdirSync(runsDir)
        .filter((f) => f.endsWith('-quota-slot-spent.json') || /-quota-slot-spent-\d+\.json$/.test(f)).length,
      50,
      'no lost or orphan record',
    );
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: 'g',
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    assert.equal(ledger.spent_slots, 50);
    assert.equal(ledger.usage.tokens, 5000);
    assert.equal(ledger.usage.estimated, true);
    const file = JSON.parse(
      fs.readFileSync(path.join(ws.runtimeRoot, 'goals', 'g', 'quota-reservations.json'), 'utf8'),
    ) as { reservations: unknown[] };
    assert.deepEqual(file.reservations, []);
  });

  it('a turn killed with SIGKILL after reserving: settled later within TTL it spends once', async function () {
    this.timeout(60_000);
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    const worker = startWorker(CRASH_WORKER, [ws.registryPath, 'g', 'agent-a', 'crash-1', NOW]);
    await waitForOutput(worker, 'RESERVED');
    worker.child.kill('SIGKILL');
    assert.equal(await worker.exited, 'SIGKILL');

    const goal = await loadGoal(ws);
    const within = clockAt(minutesAfter(10));
    assert.equal(
      (await reserveTurn(goal, within, { identity: identityFor(ws, 'agent-b', 'other') })).status,
      'refused',
      'the crashed turn still holds the only slot',
    );
    const turn = identityFor(ws, 'agent-a', 'crash-1');
    const settled = await settleReservation(goal, within, { identity: turn });
    assert.deepEqual([settled.status, settled.admission], ['settled', 'reservation']);
    assert.equal((await settleReservation(goal, within, { identity: turn })).status, 'replayed');
    assert.equal(readIndexRows(ws).filter((r) => r['classification'] === 'quota_slot_spent').length, 1);
  });

  it('a turn killed with SIGKILL after reserving: its reservation expires, is reclaimed, and a late settle cannot double-spend', async function () {
    this.timeout(60_000);
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    const worker = startWorker(CRASH_WORKER, [ws.registryPath, 'g', 'agent-a', 'crash-2', NOW]);
    await waitForOutput(worker, 'RESERVED');
    worker.child.kill('SIGKILL');
    await worker.exited;

    const goal = await loadGoal(ws);
    const afterTtl = clockAt(minutesAfter(31));
    const next = await reserveTurn(goal, afterTtl, { identity: identityFor(ws, 'agent-b', 'fresh') });
    assert.equal(next.status, 'reserved');
    assert.deepEqual(
      next.reclaimed.map((r) => r.effect_id),
      ['g:agent-a:todo_parser:crash-2'],
    );
    const late = await settleReservation(goal, afterTtl, { identity: identityFor(ws, 'agent-a', 'crash-2') });
    assert.equal(late.status, 'refused');
    assert.match(late.reason, /reservation of turn g:agent-a:todo_parser:crash-2 expired/);
    assert.equal(
      (await settleReservation(goal, afterTtl, { identity: identityFor(ws, 'agent-b', 'fresh') })).status,
      'settled',
    );
    assert.equal(readIndexRows(ws).length, 1);
    assert.deepEqual(await reclaimExpiredReservations(goal, afterTtl), []);
  });
});
