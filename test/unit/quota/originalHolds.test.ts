import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readQuotaLedger } from '../../../src/core/quota/ledger';
import { originalFootprint } from '../../../src/core/quota/reservations';
import { reserveTurn } from '../../../src/core/quota/admission';
import { settleReservation } from '../../../src/core/quota/settlement';
import { voidReservation } from '../../../src/core/quota/voids';
import {
  addRun,
  clockAt,
  hoursBefore,
  identityFor,
  loadGoal,
  makeWorkspace,
  readIndexRows,
  type Workspace,
} from './helpers';

/**
 * The original's count (`goal_quota_with_spend_ledger`): per run key (`generated_at`), the slots of its
 * `quota_slot_spent` rows minus the `quota_slot_voided` rows naming it, never below 0. It reads no reservations file.
 */
function originalSpent(ws: Workspace): number {
  const spent = new Map<string, number>();
  const voided = new Map<string, number>();
  for (const row of readIndexRows(ws, { holds: true })) {
    const event = (row['quota_event'] ?? {}) as Record<string, unknown>;
    const slots = Number(event['slots'] ?? row['slots'] ?? 1);
    const key = String(row['generated_at']);
    if (row['classification'] === 'quota_slot_spent') spent.set(key, (spent.get(key) ?? 0) + slots);
    if (row['classification'] === 'quota_slot_voided') {
      const target = String(event['voided_run_generated_at'] ?? row['voided_run_generated_at']);
      voided.set(target, (voided.get(target) ?? 0) + slots);
    }
  }
  let total = 0;
  for (const [key, slots] of spent) total += Math.max(0, slots - (voided.get(key) ?? 0));
  return total;
}

/** The mark the original's quota commands leave (its kernel-lock file beside the rollout event log). */
function markOriginalActive(ws: Workspace): void {
  const dir = path.join(ws.runtimeRoot, 'goals', ws.goalId);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'rollout-event-log.jsonl.lock'), '');
}

async function ourSpent(ws: Workspace, at: string): Promise<number> {
  const { ledger } = await readQuotaLedger({
    runtimeRoot: ws.runtimeRoot,
    goalId: ws.goalId,
    projectRoot: ws.dir,
    windowHours: 24,
    clock: clockAt(at),
  });
  return ledger.spent_slots;
}

describe('reservations the original LoopX counts (issue 30, the hard limit in a mixed team)', () => {
  it('a goal only we work on gets no hold rows', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 2 } });
    const goal = await loadGoal(ws);
    assert.equal(originalFootprint(goal), null);
    assert.equal(
      (await reserveTurn(goal, clockAt(), { identity: identityFor(ws, 'agent-a', 't1') })).status,
      'reserved',
    );
    assert.deepEqual(readIndexRows(ws, { holds: true }), []);
  });

  it('where the original is active, a reservation is a hold it counts; settling keeps exactly one spend', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 2 } });
    markOriginalActive(ws);
    const goal = await loadGoal(ws);
    assert.ok(originalFootprint(goal)?.endsWith('rollout-event-log.jsonl.lock'));
    const identity = identityFor(ws, 'agent-a', 't1');
    const reserved = await reserveTurn(goal, clockAt(), { identity });
    assert.equal(reserved.status, 'reserved');
    const holds = readIndexRows(ws, { holds: true });
    assert.deepEqual(
      holds.map((r) => [r['classification'], r['reservation_hold'], r['agent_id']]),
      [['quota_slot_spent', true, 'agent-a']],
    );
    assert.equal(originalSpent(ws), 1, 'the original counts the held slot');
    assert.equal(await ourSpent(ws, '2026-01-15T10:00:00Z'), 0, 'our ledger counts the reservation, not the hold');

    const settled = await settleReservation(goal, clockAt('2026-01-15T10:05:00Z'), { identity });
    assert.equal(settled.status, 'settled');
    assert.deepEqual(
      readIndexRows(ws, { holds: true }).map((r) => [r['classification'], r['reservation_hold'] ?? false]),
      [
        ['quota_slot_spent', true],
        ['quota_slot_spent', false],
        ['quota_slot_voided', true],
      ],
    );
    assert.equal(originalSpent(ws), 1, 'hold released after the spend: one slot in the original view');
    assert.equal(await ourSpent(ws, '2026-01-15T10:06:00Z'), 1);
  });

  it('a voided reservation releases its hold in the original view too', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    markOriginalActive(ws);
    const goal = await loadGoal(ws);
    const identity = identityFor(ws, 'agent-a', 't1');
    await reserveTurn(goal, clockAt(), { identity });
    assert.equal(originalSpent(ws), 1);
    assert.equal((await voidReservation(goal, clockAt(), { effectId: identity.effect_id })).status, 'voided');
    assert.equal(originalSpent(ws), 0);
  });

  it('an accountable delivery of an agent without a reservation holds the slot its spend will take', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } });
    markOriginalActive(ws);
    // The original's agent delivered 10 minutes ago and will spend next (it holds no reservation).
    await addRun(ws, hoursBefore(1 / 6), {
      classification: 'validated_progress',
      agent_id: 'agent-b',
      delivery_outcome: 'outcome_progress',
    });
    const goal = await loadGoal(ws);
    const refused = await reserveTurn(goal, clockAt(), { identity: identityFor(ws, 'agent-a', 't1') });
    assert.equal(refused.status, 'refused');
    assert.match(refused.reason, /1 of the reserved are deliveries whose spend is pending/);
    assert.equal(originalSpent(ws), 0, 'a refused admission writes no hold');
  });
});
