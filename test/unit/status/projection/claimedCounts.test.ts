import assert from 'node:assert/strict';
import { claimedCounts } from '../../../../src/core/status/projection/claimedCounts';

/** The original's claimed/unclaimed open counts on a todo summary (the mixed tier compares them with its own). */
describe('status todo summary: claimed_open_count / unclaimed_open_count', () => {
  it('counts open (and blocked) todos with a valid claim against the other open ones', () => {
    assert.deepEqual(
      claimedCounts([
        { status: 'open', claimed_by: 'codex-a' },
        { status: 'blocked', claimed_by: 'Codex B' },
        { status: 'open', claimed_by: null },
        { status: 'open', claimed_by: '!bad' },
        { status: 'done', claimed_by: 'codex-a' },
        { status: 'deferred', claimed_by: 'codex-a' },
      ]),
      { claimed_open_count: 2, unclaimed_open_count: 2 },
    );
  });

  it('absent when no open todo is claimed (a claimed done todo does not count)', () => {
    assert.equal(
      claimedCounts([
        { status: 'open', claimed_by: null },
        { status: 'done', claimed_by: 'codex-a' },
      ]),
      null,
    );
    assert.equal(claimedCounts([]), null);
  });
});
