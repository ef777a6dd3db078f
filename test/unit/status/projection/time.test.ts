import assert from 'node:assert/strict';
import { parseIsoInstant } from '../../../../src/core/isoTime';

describe('parseIsoInstant', () => {
  it("reads the original's timestamp forms, honouring offsets and treating naive times as UTC", () => {
    const utc = Date.UTC(2026, 5, 22, 0, 1, 0);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00+00:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22T08:01:00+08:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00Z'), utc);
    assert.equal(parseIsoInstant('2026-06-22T00:01:00'), utc);
    assert.equal(parseIsoInstant('2026-06-22 00:01:00.250000+00:00'), utc + 250);
    assert.equal(parseIsoInstant('2026-06-22'), Date.UTC(2026, 5, 22));
  });

  it('reads the usual `YYYY-MM-DDTHH:MM:SS±HH:MM` / `Z` shape exactly as any other spelling of it', () => {
    assert.equal(parseIsoInstant('2024-02-29T23:59:59-05:30'), Date.UTC(2024, 1, 29, 23, 59, 59) + 330 * 60_000);
    assert.equal(parseIsoInstant('2026-02-29T00:00:00Z'), null, 'not a leap year');
    assert.equal(parseIsoInstant('2100-02-29T00:00:00Z'), null);
    assert.equal(parseIsoInstant('2000-02-29T00:00:00Z'), Date.UTC(2000, 1, 29));
    // Surrounding whitespace is trimmed, so the padded spelling takes the general path: both must agree.
    const pad = (n: number): string => String(n).padStart(2, '0');
    for (const year of ['0050', '1900', '2000', '2023', '2024', '2100']) {
      for (let month = 0; month <= 13; month++) {
        for (const day of [0, 1, 28, 29, 30, 31, 32]) {
          for (const time of ['00:00:00', '23:59:59', '24:00:00', '12:60:00', '12:00:60']) {
            for (const offset of ['Z', '+00:00', '-12:30', '+14:00']) {
              const text = `${year}-${pad(month)}-${pad(day)}T${time}${offset}`;
              assert.equal(parseIsoInstant(text), parseIsoInstant(` ${text} `), text);
            }
          }
        }
      }
    }
  });

  it('returns null for anything else', () => {
    for (const text of ['yesterday', '2026-02-31T00:00:00Z', '2026-06-22T25:00:00Z', '', '/tmp/x', null, undefined]) {
      assert.equal(parseIsoInstant(text), null, String(text));
    }
  });
});
