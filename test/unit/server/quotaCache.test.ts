import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Clock } from '../../../src/core/clock';
import { loadGoalRef } from '../../support/goalRef';
import { settlementIdentity } from '../../../src/core/quota/identity';
import { reserveTurn } from '../../../src/core/quota/admission';
import { QuotaSummaryCache, RESERVATION_RECHECK_MS } from '../../../src/core/status/quotaCache';
import type { StatusQuotaReads } from '../../../src/core/status/statusQuota';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';
import { statusRef } from '../../support/status';

/** A clock the test moves by hand. */
function movableClock(start: string): Clock & { set(iso: string): void; advance(ms: number): void } {
  let now = new Date(start).getTime();
  return {
    now: () => new Date(now),
    set: (iso) => {
      now = new Date(iso).getTime();
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

describe('quota summary cache of the status server', () => {
  function setup() {
    const dir = materializeDemoWorkspace(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-quota-cache-')), 'ws'));
    const registryPath = path.join(dir, '.loopx', 'registry.json');
    const runtimeRoot = path.join(dir, '.loopx', 'runtime');
    const target = statusRef({ goalId: 'tidy-notes', projectRoot: dir, runtimeRoot, entry: { display_name: 'Tidy' } });
    const clock = movableClock('2026-11-28T09:30:00Z');
    const cache = new QuotaSummaryCache({ registryPath, clock });
    /** What status would hand the cache: the goal, with no run index read (the summary reads it). */
    const reads = async (): Promise<StatusQuotaReads> => ({
      goal: await loadGoalRef({ registryPath, goalId: 'tidy-notes', homeDir: os.homedir() }),
      index: { kind: 'unread' },
    });
    return { dir, registryPath, runtimeRoot, target, clock, cache, reads };
  }

  it('keeps a summary until the spend leaves the window (or it is 10 minutes old), and recomputes it then', async () => {
    const { cache, target, clock, reads } = setup();
    const first = await cache.summary(target, await reads());
    assert.equal(first.spent_slots, 1);
    assert.equal(first.next_slot_frees_at, '2026-11-29T08:56:00.000Z');
    assert.equal(await cache.summary(target, await reads()), first, 'the same object while nothing changed');
    clock.set('2026-11-28T09:39:59Z');
    assert.equal(await cache.summary(target, await reads()), first, 'within the maximum age');
    clock.set('2026-11-29T08:50:00Z');
    const aged = await cache.summary(target, await reads());
    assert.notEqual(aged, first, 'older than the maximum age (10 minutes): recomputed');
    assert.equal(aged.spent_slots, 1);
    clock.set('2026-11-29T08:55:59Z');
    assert.equal(await cache.summary(target, await reads()), aged, 'the spend is still inside the window');
    clock.set('2026-11-29T08:56:01Z');
    const later = await cache.summary(target, await reads());
    assert.notEqual(later, aged);
    assert.equal(later.spent_slots, 0, 'the spend left the 24 h window: recomputed at once');
  });

  it('recomputes when the run index or the reservations change, and rechecks live reservations soon', async () => {
    const { cache, target, clock, runtimeRoot, registryPath, reads } = setup();
    const first = await cache.summary(target, await reads());
    const key = await cache.inputsKey(target);
    assert.equal(cache.isFresh('tidy-notes', key), true);
    const index = path.join(runtimeRoot, 'goals', 'tidy-notes', 'runs', 'index.jsonl');
    fs.appendFileSync(
      index,
      `${JSON.stringify({ generated_at: '2026-11-28T09:20:00+00:00', goal_id: 'tidy-notes', classification: 'quota_slot_spent', recommended_action: 'x', agent_id: 'demo', quota_slots: 1 })}\n`,
    );
    const changedKey = await cache.inputsKey(target);
    assert.notEqual(changedKey, key);
    assert.equal(cache.isFresh('tidy-notes', changedKey), false);
    const second = await cache.summary(target, await reads());
    assert.notEqual(second, first);

    // A real reservation: written atomically into the goal folder, live for an hour.
    const goal = await loadGoalRef({ registryPath, goalId: 'tidy-notes', homeDir: os.homedir() });
    assert.ok(goal);
    const reserved = await reserveTurn(goal, clock, {
      identity: settlementIdentity({
        goalId: 'tidy-notes',
        agentId: 'demo',
        todoId: 'todo_related',
        turnInstanceId: 'turn-0002',
      }),
    });
    assert.equal(reserved.status, 'reserved');
    const afterReserve = await cache.inputsKey(target);
    assert.equal(
      cache.isFresh('tidy-notes', afterReserve),
      false,
      'the atomic write into the goal folder changes its stamp',
    );
    const third = await cache.summary(target, await reads());
    assert.equal(third.reserved_slots, 1);
    clock.advance(RESERVATION_RECHECK_MS - 1);
    assert.equal(cache.isFresh('tidy-notes', afterReserve), true);
    clock.advance(2);
    assert.equal(
      cache.isFresh('tidy-notes', afterReserve),
      false,
      'with a live reservation the summary is rechecked soon: it may expire',
    );
  });
});
