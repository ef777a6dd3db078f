import assert from 'node:assert/strict';
import { scopesOverlap, writeScopesOverlap, leaseEpoch, normalizeTtlSeconds } from '../../../src/core/leases/rules';

describe('task lease rules', () => {
  it('write scopes overlap when they can touch the same file', () => {
    const overlapping: [string, string][] = [
      ['src/core/**', 'src/core/leases/store.ts'],
      ['src/core/', 'src/core/leases/store.ts'],
      ['src/core/**', 'src/core/'],
      ['src/*.ts', 'src/a.ts'],
      ['**', 'anything/at/all'],
      ['docs/*.md', 'docs/**'],
      ['README.md', 'README.md'],
      ['src/', 'src/core/*.ts'],
    ];
    for (const [a, b] of overlapping) {
      assert.equal(scopesOverlap(a, b), true, `${a} ~ ${b}`);
      assert.equal(scopesOverlap(b, a), true, `${b} ~ ${a} (symmetric)`);
    }
    const disjoint: [string, string][] = [
      ['src/core/**', 'docs/leases.md'],
      ['src/*.ts', 'src/core/a.ts'], // * stays inside one folder
      ['src/core', 'src/core/a.ts'], // a file named src/core is not a folder scope
      ['docs/*.md', 'src/**'],
      ['README.md', 'README.md.bak'],
    ];
    for (const [a, b] of disjoint) {
      assert.equal(scopesOverlap(a, b), false, `${a} !~ ${b}`);
      assert.equal(scopesOverlap(b, a), false, `${b} !~ ${a} (symmetric)`);
    }
    assert.equal(writeScopesOverlap([], ['**']), false, 'a lease without scopes conflicts with nothing');
  });

  it('a record without lease_epoch is epoch 1; none is epoch 0; the TTL is 1 s … 24 h, default 45 min', () => {
    assert.equal(leaseEpoch(null), 0);
    assert.equal(leaseEpoch({ version: 7 }), 1);
    assert.equal(normalizeTtlSeconds(undefined), 2700);
    assert.equal(normalizeTtlSeconds(86400), 86400);
    assert.throws(() => normalizeTtlSeconds(0), /ttl/i);
    assert.throws(() => normalizeTtlSeconds(86401), /24 h/);
  });
});
