import assert from 'node:assert/strict';
import fc from 'fast-check';
import { writeJsonPretty } from '../../../src/cli/jsonStream';

/** What writeJsonPretty must print, byte for byte. */
const expected = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

function streamed(value: unknown, depth: number, chunkChars: number): { text: string; writes: number } {
  let text = '';
  let writes = 0;
  writeJsonPretty(
    value,
    (piece) => {
      text += piece;
      writes++;
    },
    { depth, chunkChars },
  );
  return { text, writes };
}

/** Values JSON.stringify treats specially, mixed into ordinary JSON data. */
const oddLeaf = fc.constantFrom<unknown>(
  undefined,
  () => 1,
  Symbol('s'),
  Number.NaN,
  Number.POSITIVE_INFINITY,
  -0,
  new Date(Date.UTC(2026, 11, 2, 13, 0, 0)),
  new Number(3),
  new String('boxed'),
  new Boolean(false),
  { toJSON: (key: string) => `toJSON of ${key}` },
  { toJSON: () => ({ nested: [1, undefined, 'x'] }) },
  { toJSON: () => undefined },
);
const leaf = fc.oneof(
  fc.string({ unit: 'grapheme' }),
  fc.double(),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  oddLeaf,
);
const { tree } = fc.letrec((tie) => ({
  tree: fc.oneof({ depthSize: 'small', withCrossShrink: true }, leaf, tie('array'), tie('object')),
  array: fc.array(tie('tree'), { maxLength: 5 }),
  object: fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 6 }), tie('tree'), { maxKeys: 5 }),
}));

describe('CLI JSON output in pieces', () => {
  it('prints exactly what JSON.stringify(value, null, 2) prints, at every walk depth and chunk size', () => {
    fc.assert(
      fc.property(tree, fc.integer({ min: 0, max: 5 }), fc.integer({ min: 1, max: 200 }), (value, depth, chunk) => {
        if (JSON.stringify(value) === undefined) return; // printOutput is only given objects
        assert.equal(streamed(value, depth, chunk).text, expected(value));
      }),
      { numRuns: 2000 },
    );
  });

  it('a large answer goes out in many writes of bounded size, not as one string', () => {
    const items = Array.from({ length: 2000 }, (_, i) => ({
      goal_id: `goal-${i}`,
      text: 'x'.repeat(5000),
      todos: [i],
    }));
    const value = { ok: true, attention_queue: { items }, run_history: { goals: items.slice(0, 10) } };
    const pieces: string[] = [];
    writeJsonPretty(value, (piece) => pieces.push(piece));
    assert.equal(pieces.join(''), expected(value));
    assert.ok(pieces.length > 5, `${pieces.length} writes`);
    assert.ok(Math.max(...pieces.map((piece) => piece.length)) < 2 * (1 << 18));
  });

  it('the edge shapes: empty containers, a toJSON that answers undefined in an array, a nested empty object', () => {
    for (const value of [
      {},
      [],
      { a: {} },
      { a: [] },
      [{ toJSON: () => undefined }],
      { a: { toJSON: () => undefined } },
    ])
      for (const depth of [0, 1, 2, 3]) assert.equal(streamed(value, depth, 4).text, expected(value));
  });
});
