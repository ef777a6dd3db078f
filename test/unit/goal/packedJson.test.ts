import assert from 'node:assert/strict';
import { packJson, unpackJson } from '../../../src/core/goal/packedJson';

const roundTrip = (value: unknown): unknown => unpackJson(JSON.parse(JSON.stringify(packJson(value))));

describe('packed JSON of the persistent status cache', () => {
  it('round-trips ledger facts exactly (keys in order, nulls, nested usage) and is much smaller', () => {
    const spend = (i: number) => ({
      generated_at: `2026-12-01T05:${String(i % 60).padStart(2, '0')}:29+00:00`,
      time: 1796103569000 - i * 1000,
      slots: 1,
      effect_id: i % 3 === 0 ? `effect-${i}` : null,
      agent_id: null,
      todo_id: null,
      turn_instance_id: null,
      usage: i % 2 === 0 ? { input_tokens: i, output_tokens: 2 * i } : null,
      json_path: `/tmp/ws/runtime/goals/g/runs/2026-12-01T05-${i}-quota-slot-spent.json`,
    });
    const digest = {
      facts: {
        spends: Array.from({ length: 50 }, (_, i) => spend(i)),
        voids: [{ targetTime: 1, targetEffectId: null, slots: 2 }],
      },
      latest_waiting_on: 'codex',
      has_latest: true,
    };
    const back = roundTrip(digest);
    assert.deepEqual(back, digest);
    assert.equal(JSON.stringify(back), JSON.stringify(digest), 'same keys in the same order');
    assert.ok(JSON.stringify(packJson(digest)).length < JSON.stringify(digest).length / 2);
  });

  it('leaves lists it cannot pack as columns as they are (other keys, another order, a missing value, scalars), and objects with a `$cols` key of their own', () => {
    const cases: unknown[] = [
      [
        { a: 1, b: 2 },
        { b: 2, a: 1 },
      ],
      [{ a: 1 }, { a: 1, b: 2 }],
      [
        { a: 1, b: undefined },
        { a: 2, b: 3 },
      ],
      [{ a: 'x' }, 'y', null, 3],
      [[{ p: '/same/long/prefix/1' }, { p: '/same/long/prefix/2' }], []],
      [{ $cols: ['a'], $prefix: [null], $rows: [] }],
      { $cols: null, $obj: { x: 1 } },
      [
        { $cols: 1, b: 2 },
        { $cols: 3, b: 4 },
      ],
      { a: [], b: {}, c: [{ d: [{ e: 1 }, { e: 2 }] }, { d: [] }] },
    ];
    for (const value of cases) assert.equal(JSON.stringify(roundTrip(value)), JSON.stringify(value));
  });

  it('stores a shared text prefix once, and a column without a long shared prefix as it is', () => {
    const packed = packJson([
      { p: '/same/long/prefix/1', q: 'ab' },
      { p: '/same/long/prefix/2', q: 'ac' },
    ]) as {
      $prefix: (string | null)[];
      $rows: unknown[][];
    };
    assert.deepEqual(packed.$prefix, ['/same/long/prefix/', null]);
    assert.deepEqual(packed.$rows, [
      ['1', 'ab'],
      ['2', 'ac'],
    ]);
  });
});
