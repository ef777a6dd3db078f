import assert from 'node:assert/strict';
import { parseIsoInstant } from '../../../src/core/projection/time';

describe('parseIsoInstant', () => {
  it('reads the original\'s timestamp forms, honouring offsets and treating naive times as UTC', () => {
    const utc = Date.UTC(2026, 5, 22, 0, 1, 0);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00+00:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22T08:01:00+08:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00Z'), utc);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22 00:01:00.250000+00:00'), utc + 250);
    assert.equal(parseIsoInstant('2026-06-22'), Date.UTC(2026, 5, 22));
  });

  it('returns null for anything else', () => {
    for (const text of ['yesterday', '2026-02-31T00:00:00Z', '2026-06-22T25:00:00Z', '', '/tmp/x', null, undefined]) {
      assert.equal(parseIsoInstant(text), null, String(text));
    }
  });
});
