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

  it('prints what JSON.stringify prints for any text, number and key: lone surrogates, escapes, -0, large and tiny numbers', () => {
    const anyLeaf = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({
        unit: fc.constantFrom('"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', 'é', '😀'),
      }),
      fc.double({ noNaN: false }),
      fc.constantFrom(-0, 0, Number.MAX_SAFE_INTEGER + 2, 2 ** 64, 1e21, 1e-7, 5e-324, Number.MAX_VALUE),
      fc.bigInt().map((n) => Number(n)),
    );
    const { anyTree } = fc.letrec((tie) => ({
      anyTree: fc.oneof(
        { depthSize: 'small' },
        anyLeaf,
        tie('array'),
        tie('object'),
        fc.constantFrom({}, [], [[]], { a: {} }),
      ),
      array: fc.array(tie('anyTree'), { maxLength: 4 }),
      object: fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), tie('anyTree'), { maxKeys: 4 }),
    }));
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ unit: 'binary', maxLength: 4 }), anyTree),
        fc.integer({ min: 0, max: 4 }),
        fc.integer({ min: 1, max: 300 }),
        (value, depth, chunk) => {
          assert.equal(streamed(value, depth, chunk).text, expected(value));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('a value stringified whole below the walk goes out as its own write, not copied into a gathered one', () => {
    const items = Array.from({ length: 20 }, (_, i) => ({ goal_id: `goal-${i}`, text: 'y'.repeat(40_000 + i) }));
    const value = { ok: true, attention_queue: { items } };
    const pieces: string[] = [];
    writeJsonPretty(value, (piece) => pieces.push(piece));
    assert.equal(pieces.join(''), expected(value));
    // Each item is 3 levels deep: JSON.stringify indents it by 6 spaces, and its text is written alone.
    for (const item of items) {
      const text = JSON.stringify([[[item]]], null, 2)
        .split('\n')
        .slice(3, -3)
        .join('\n')
        .slice(6);
      assert.ok(pieces.includes(text), `${item.goal_id} written alone`);
    }
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
