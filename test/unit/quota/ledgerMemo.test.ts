import assert from 'node:assert/strict';
import { fixedClock } from '../../../src/core/clock';
import {
  ledgerFromFacts,
  ledgerMemoHolds,
  ledgerOfDigest,
  memoizedLedger,
  type IndexDigest,
  type LedgerFacts,
  type LedgerMemo,
  type QuotaLedger,
  type SpendFact,
} from '../../../src/core/quota/ledger';

/** A small deterministic generator (no timing, no Math.random). */
function rng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const BASE = Date.parse('2026-11-28T12:00:00Z');
const HOUR = 3_600_000;

/** Random facts around BASE: spends (some in the future, some duplicated, with usage), voids naming them. */
function randomFacts(random: () => number): LedgerFacts {
  const spends: SpendFact[] = [];
  const count = Math.floor(random() * 40);
  for (let i = 0; i < count; i++) {
    // Whole seconds, some on the same second, some up to 3 h after BASE (they enter the window later).
    const time = BASE + Math.floor((random() * 30 - 27) * 3600) * 1000;
    const effect = random() < 0.7 ? `effect-${Math.floor(random() * 30)}` : null;
    spends.push({
      generated_at: new Date(time).toISOString(),
      time,
      slots: 1 + Math.floor(random() * 3),
      effect_id: effect,
      agent_id: random() < 0.5 ? 'agent-a' : null,
      todo_id: null,
      turn_instance_id: null,
      usage:
        random() < 0.5
          ? { tokens: Math.floor(random() * 1000), cost_usd: random() / 7, estimated: random() < 0.3 }
          : null,
      json_path: null,
    });
  }
  spends.sort((a, b) => b.time - a.time);
  const voids = [];
  for (let i = 0; i < Math.floor(random() * 6); i++) {
    const target = spends[Math.floor(random() * spends.length)];
    voids.push({
      targetTime: target === undefined ? null : target.time,
      targetEffectId: target !== undefined && random() < 0.5 ? target.effect_id : null,
      slots: random() < 0.5 ? null : 1,
    });
  }
  return { spends, voids };
}

/** The fields a ledger is compared by (the per-spend list and the identity set included). */
function view(ledger: QuotaLedger): unknown {
  return {
    window_hours: ledger.window_hours,
    window_start: ledger.window_start,
    window_end: ledger.window_end,
    spent_slots: ledger.spent_slots,
    voided_slots: ledger.voided_slots,
    duplicate_spends: ledger.duplicate_spends,
    usage: ledger.usage,
    next_slot_frees_at: ledger.next_slot_frees_at,
    spends: ledger.spends,
    settled: [...ledger.settled_effect_ids].sort(),
  };
}

describe('ledger memo (a ledger kept for the span of instants it holds)', () => {
  it('equals ledgerFromFacts at every instant of a sweep, and reads the facts only when it no longer holds', () => {
    let held = 0;
    let recomputed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const random = rng(seed);
      const facts = randomFacts(random);
      const windowHours = [24, 1, 0.5, 5.25][seed % 4] as number;
      let memo: LedgerMemo | undefined;
      // Forward in uneven steps (some of 0 ms, some crossing many spends), then a step back in time.
      let now = BASE - 2 * HOUR;
      const nows: number[] = [];
      for (let i = 0; i < 60; i++) {
        nows.push(now);
        now += [0, 1, 999, 1000, 60_000, 17 * 60_000, HOUR][Math.floor(random() * 7)] as number;
      }
      nows.push(BASE - 3 * HOUR, BASE + 30 * HOUR);
      for (const at of nows) {
        const clock = fixedClock(new Date(at).toISOString());
        let reads = 0;
        const before = memo;
        const result = memoizedLedger(
          () => {
            reads++;
            return facts;
          },
          windowHours,
          clock,
          memo,
        );
        const expected = ledgerFromFacts(facts, windowHours, clock);
        // The scalar fields first: they must not need the facts when the memo held.
        const scalars = {
          spent: result.ledger.spent_slots,
          usage: result.ledger.usage,
          frees: result.ledger.next_slot_frees_at,
        };
        if (result.memo === before) {
          held++;
          assert.equal(reads, 0, `seed ${seed}: a holding memo reads no facts`);
        } else recomputed++;
        assert.deepEqual(
          scalars,
          { spent: expected.spent_slots, usage: expected.usage, frees: expected.next_slot_frees_at },
          `seed ${seed} at ${new Date(at).toISOString()}`,
        );
        assert.deepEqual(view(result.ledger), view(expected), `seed ${seed} at ${new Date(at).toISOString()}`);
        assert.ok(ledgerMemoHolds(result.memo, windowHours, at), 'the returned memo holds now');
        assert.equal(ledgerMemoHolds(result.memo, windowHours + 1, at), false, 'not for another window');
        memo = result.memo;
      }
    }
    assert.ok(held > 100 && recomputed > 100, `both paths ran (held ${held}, recomputed ${recomputed})`);
  });

  it('survives JSON (the persistent cache keeps it) and is kept on the digest, replaced only when it no longer holds', () => {
    const facts = randomFacts(rng(7));
    assert.ok(facts.spends.length > 5);
    const digest: IndexDigest = { facts, latest_waiting_on: null, has_latest: false };
    const at = (iso: string) => fixedClock(iso);
    const first = ledgerOfDigest(digest, 24, at('2026-11-28T12:00:00Z'));
    const memo = digest.ledger_memo;
    assert.ok(memo !== undefined);
    const copy: IndexDigest = {
      facts,
      latest_waiting_on: null,
      has_latest: false,
      ledger_memo: JSON.parse(JSON.stringify(memo)) as LedgerMemo,
    };
    const again = ledgerOfDigest(copy, 24, at('2026-11-28T12:00:00Z'));
    assert.deepEqual(view(again), view(first));
    ledgerOfDigest(digest, 24, at('2026-11-28T12:00:00Z'));
    assert.equal(digest.ledger_memo, memo, 'the same instant: the same memo object');
    ledgerOfDigest(digest, 24, at('2026-11-30T12:00:00Z'));
    assert.notEqual(digest.ledger_memo, memo, 'two days later every spend left the window: a new memo');
  });
});
