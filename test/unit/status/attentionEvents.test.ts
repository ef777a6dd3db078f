import assert from 'node:assert/strict';
import {
  attentionEvents,
  coalesceEvents,
  withoutOwnActions,
  type AttentionGoalFacts,
  type AttentionSnapshot,
} from '../../../src/core/status/attentionEvents';

const T0 = Date.parse('2026-07-01T10:00:00Z');
const MIN = 60_000;

function goal(id: string, facts: Partial<AttentionGoalFacts> = {}): AttentionGoalFacts {
  return {
    goalKey: `/r.json#${id}`,
    goalId: id,
    registryPath: '/r.json',
    openGates: [],
    quota: { exceeded: false, reason: 'eligible' },
    replanLanes: [],
    stopped: false,
    latestFailure: null,
    leases: [],
    ...facts,
  };
}

function snap(atMs: number, ...goals: AttentionGoalFacts[]): AttentionSnapshot {
  return { atMs, goals: new Map(goals.map((g) => [g.goalKey, g])) };
}

const gate = (todoId: string, dueAt: string | null = null) => ({ todoId, title: `Gate ${todoId}`, dueAt });
const kinds = (events: { kind: string; subject: string }[]) => events.map((e) => `${e.kind}:${e.subject}`);

describe('attention events: previous snapshot + next snapshot → what needs the person', () => {
  it('startup: no previous snapshot, no events, whatever the state (nothing is replayed)', () => {
    const busy = goal('a', {
      openGates: [gate('todo_g1', '2026-07-01T09:00:00Z')],
      quota: { exceeded: true, reason: 'throttled' },
      replanLanes: ['codex'],
      stopped: true,
      latestFailure: { at: '2026-07-01T09:59:00Z', classification: 'validation_failed', agentId: 'codex' },
      leases: [{ todoId: 'todo_w', owner: 'codex', expiresAt: '2026-07-01T10:01:00Z' }],
    });
    assert.deepEqual(attentionEvents(null, snap(T0, busy)), []);
    // A goal seen for the first time later is a baseline too.
    assert.deepEqual(attentionEvents(snap(T0), snap(T0 + MIN, busy)), []);
  });

  it('gate_opened: a gate id that was not open before; a gate that stays open is not news again', () => {
    const before = snap(T0, goal('a', { openGates: [gate('todo_g1')] }));
    const after = snap(T0 + MIN, goal('a', { openGates: [gate('todo_g1'), gate('todo_g2')] }));
    assert.deepEqual(kinds(attentionEvents(before, after)), ['gate_opened:todo_g2']);
    assert.deepEqual(
      attentionEvents(after, snap(T0 + 2 * MIN, goal('a', { openGates: [gate('todo_g1'), gate('todo_g2')] }))),
      [],
    );
  });

  it('gate_overdue: once, when the clock passes the due time or the due time is moved into the past', () => {
    const due = '2026-07-01T10:05:00Z';
    const s1 = snap(T0, goal('a', { openGates: [gate('todo_g1', due)] }));
    const s2 = snap(T0 + 4 * MIN, goal('a', { openGates: [gate('todo_g1', due)] }));
    const s3 = snap(T0 + 6 * MIN, goal('a', { openGates: [gate('todo_g1', due)] }));
    const s4 = snap(T0 + 7 * MIN, goal('a', { openGates: [gate('todo_g1', due)] }));
    assert.deepEqual(attentionEvents(s1, s2), []);
    assert.deepEqual(kinds(attentionEvents(s2, s3)), ['gate_overdue:todo_g1']);
    assert.deepEqual(attentionEvents(s3, s4), []);
    const moved = snap(T0 + 8 * MIN, goal('a', { openGates: [gate('todo_g1', '2026-07-01T10:06:00Z')] }));
    assert.deepEqual(kinds(attentionEvents(s4, moved)), ['gate_overdue:todo_g1']);
  });

  it('quota_reached: exceeded turns true (not while it stays true)', () => {
    const ok = snap(T0, goal('a'));
    const out = snap(T0 + MIN, goal('a', { quota: { exceeded: true, reason: '3 spent of 3 allowed slots' } }));
    const events = attentionEvents(ok, out);
    assert.deepEqual(kinds(events), ['quota_reached:quota']);
    assert.equal(events[0]?.detail, '3 spent of 3 allowed slots');
    assert.deepEqual(
      attentionEvents(out, snap(T0 + 2 * MIN, goal('a', { quota: { exceeded: true, reason: 'x' } }))),
      [],
    );
  });

  it('replan_due: a lane that newly owes a replan', () => {
    const before = snap(T0, goal('a', { replanLanes: ['codex'] }));
    const after = snap(T0 + MIN, goal('a', { replanLanes: ['codex', 'claude'] }));
    assert.deepEqual(kinds(attentionEvents(before, after)), ['replan_due:claude']);
  });

  it('loop_stopped: the goal stops, or a new failed turn is recorded (by any process)', () => {
    const failure = { at: '2026-07-01T10:00:30Z', classification: 'validation_failed', agentId: 'codex' };
    const before = snap(T0, goal('a'));
    const after = snap(T0 + MIN, goal('a', { stopped: true, latestFailure: failure }));
    assert.deepEqual(kinds(attentionEvents(before, after)), ['loop_stopped:stopped', 'loop_stopped:failed']);
    assert.deepEqual(
      attentionEvents(after, snap(T0 + 2 * MIN, goal('a', { stopped: true, latestFailure: failure }))),
      [],
    );
  });

  it('lease_expiring: once per expiry instant, when it enters the warning window; a renewal warns again later', () => {
    const lease = (expiresAt: string) => [{ todoId: 'todo_w', owner: 'codex', expiresAt }];
    const exp = '2026-07-01T10:10:00Z';
    const far = snap(T0, goal('a', { leases: lease(exp) }));
    const near = snap(T0 + 6 * MIN, goal('a', { leases: lease(exp) }));
    const nearer = snap(T0 + 7 * MIN, goal('a', { leases: lease(exp) }));
    assert.deepEqual(
      attentionEvents(far, near, { leaseWarningMs: 5 * MIN }).map((e) => e.kind),
      ['lease_expiring'],
    );
    assert.deepEqual(attentionEvents(near, nearer, { leaseWarningMs: 5 * MIN }), []);
    const renewed = snap(T0 + 8 * MIN, goal('a', { leases: lease('2026-07-01T10:12:00Z') }));
    assert.deepEqual(
      attentionEvents(nearer, renewed, { leaseWarningMs: 5 * MIN }).map((e) => e.kind),
      ['lease_expiring'],
    );
    // Already expired: not "about to expire".
    const gone = snap(T0 + 20 * MIN, goal('a', { leases: lease('2026-07-01T10:12:00Z') }));
    assert.deepEqual(attentionEvents(far, gone, { leaseWarningMs: 5 * MIN }), []);
  });

  it("own actions: a live mark drops its goal's events (of its subject and kinds only); an expired mark drops nothing", () => {
    const before = snap(T0, goal('a'), goal('b'));
    const after = snap(
      T0 + MIN,
      goal('a', { openGates: [gate('todo_mine'), gate('todo_theirs')] }),
      goal('b', { openGates: [gate('todo_b')] }),
    );
    const events = attentionEvents(before, after);
    assert.equal(events.length, 3);
    const mark = { goalKey: '/r.json#a', subject: 'todo_mine', kinds: ['gate_opened' as const], untilMs: T0 + 2 * MIN };
    assert.deepEqual(kinds(withoutOwnActions(events, [mark], T0 + MIN)), [
      'gate_opened:todo_theirs',
      'gate_opened:todo_b',
    ]);
    assert.equal(withoutOwnActions(events, [mark], T0 + 3 * MIN).length, 3);
    const wholeGoal = { goalKey: '/r.json#a', untilMs: T0 + 2 * MIN };
    assert.deepEqual(kinds(withoutOwnActions(events, [wholeGoal], T0 + MIN)), ['gate_opened:todo_b']);
    const otherKind = { goalKey: '/r.json#a', kinds: ['quota_reached' as const], untilMs: T0 + 2 * MIN };
    assert.equal(withoutOwnActions(events, [otherKind], T0 + MIN).length, 3);
  });

  it('coalescing: one notice per kind for a burst, repeats dropped, kinds in a fixed order', () => {
    const before = snap(T0, goal('a'), goal('b'));
    const after = snap(
      T0 + MIN,
      goal('a', { openGates: [gate('todo_1'), gate('todo_2')], quota: { exceeded: true, reason: 'r' } }),
      goal('b', { openGates: [gate('todo_3')] }),
    );
    const events = attentionEvents(before, after);
    const notices = coalesceEvents([...events, ...events]);
    assert.deepEqual(
      notices.map((n) => [n.kind, n.events.length]),
      [
        ['gate_opened', 3],
        ['quota_reached', 1],
      ],
    );
  });
});
