import assert from 'node:assert/strict';
import {
  monitorDue,
  monitorDueChangesAt,
  monitorDueKey,
  monitorFields,
  withMonitorDue,
  type MonitorFields,
} from '../../../../src/core/status/projection/monitorDue';

/**
 * The original's monitor schedule on a status summary (scheduler/monitor_todo.py, todo_summary.py `monitor_due_*`,
 * `monitor_schedule_gap_*`): due, not yet due, without a schedule, expired, watch-only; "now" in whole seconds; and
 * the instant the answer next changes. The mixed tier compares them with the original's on its closure scenario.
 */

const at = (iso: string): number => Date.parse(iso);
const monitor = (id: string, fields: MonitorFields): MonitorFields & { todo_id: string } => ({
  todo_id: id,
  ...fields,
});
const ids = (items: readonly unknown[]): string[] => items.map((item) => (item as { todo_id: string }).todo_id);

describe('status todo summary: monitor-due counts and lists (time of the read)', () => {
  const lane = [
    monitor('todo_due', { cadence: '1h', next_due_at: '2026-07-01T10:00:00Z' }),
    monitor('todo_later', { next_due_at: '2026-07-01T12:00:00+00:00' }),
    monitor('todo_gap', {}),
    monitor('todo_expired', { next_due_at: '2026-07-01T09:00:00Z', expires_at: '2026-07-01T09:30:00Z' }),
    monitor('todo_watch', { watch_only: 'True', next_due_at: '2026-07-01T09:00:00' }),
    monitor('todo_unparsed', { next_due_at: 'tomorrow' }),
    monitor('todo_due_too', { next_due_at: '2026-07-01T08:00:00Z' }),
  ];

  it('counts due monitors (next_due_at passed, not expired) and lists the first; a gap is a monitor without schedule', () => {
    const fields = monitorDue({ monitor_open_items: lane, watch_only_monitor_count: 1 }, at('2026-07-01T11:00:00Z'));
    assert.equal(fields.monitor_due_count, 3);
    assert.deepEqual(ids(fields.monitor_due_items), ['todo_due']);
    assert.equal(fields.monitor_schedule_gap_count, 1);
    assert.deepEqual(ids(fields.monitor_schedule_gap_items), ['todo_gap']);
    assert.equal(fields.watch_only_monitor_due_count, 1);
  });

  it('moves with the clock: before, at and after the instants, in whole seconds', () => {
    const count = (iso: string): number => monitorDue({ monitor_open_items: lane }, at(iso)).monitor_due_count;
    assert.equal(count('2026-07-01T07:59:59Z'), 0);
    assert.equal(count('2026-07-01T08:00:00Z'), 1);
    // The original's now drops the milliseconds: at 10:00:00.900 a monitor due at 10:00:00.200 is not due yet.
    const fractional = [monitor('todo_fraction', { next_due_at: '2026-07-01T10:00:00.200Z' })];
    const dueAt = (iso: string): number => monitorDue({ monitor_open_items: fractional }, at(iso)).monitor_due_count;
    assert.deepEqual([dueAt('2026-07-01T10:00:00.900Z'), dueAt('2026-07-01T10:00:01Z')], [0, 1]);
    assert.equal(count('2026-07-01T09:00:00Z'), 3);
    assert.equal(count('2026-07-01T09:30:00Z'), 2);
    assert.equal(count('2026-07-01T12:00:00Z'), 4);
  });

  it('an expired monitor is no gap either; without watch-only monitors there is no watch-only due count', () => {
    const gapExpired = [monitor('todo_old_gap', { expires_at: '2026-07-01T00:00:00Z' })];
    const before = monitorDue({ monitor_open_items: gapExpired }, at('2026-06-30T00:00:00Z'));
    const after = monitorDue({ monitor_open_items: gapExpired }, at('2026-07-02T00:00:00Z'));
    assert.deepEqual([before.monitor_schedule_gap_count, after.monitor_schedule_gap_count], [1, 0]);
    assert.equal('watch_only_monitor_due_count' in before, false);
  });

  it('says when the answer next changes: the next due or expiry instant after now', () => {
    const now = at('2026-07-01T09:10:00Z');
    assert.equal(monitorDueChangesAt({ monitor_open_items: lane }, now), at('2026-07-01T09:30:00Z'));
    assert.equal(
      monitorDueChangesAt({ monitor_open_items: lane }, at('2026-07-01T12:00:00Z')),
      Infinity,
      'nothing after the last instant',
    );
    // A fractional instant is reached at the next whole second of the original's clock.
    assert.equal(
      monitorDueChangesAt({ monitor_open_items: [monitor('t', { next_due_at: '2026-07-01T10:00:00.200Z' })] }, now),
      at('2026-07-01T10:00:01Z'),
    );
    assert.equal(monitorDueChangesAt(null, now), Infinity);
  });

  it('reads the monitor metadata as the parser keeps it: whitespace collapsed, empty values dropped', () => {
    assert.deepEqual(monitorFields({ cadence: ' 1  h ', next_due_at: '  ', watch_only: 'true', note: 'x' }), {
      cadence: '1 h',
      watch_only: 'true',
    });
  });

  it('answers a new item: the cached one keeps no time-dependent field', () => {
    const cached: { goal_id: string; user_todos: unknown; agent_todos: object } = {
      goal_id: 'g',
      user_todos: null,
      agent_todos: { monitor_open_items: lane },
    };
    const answered = withMonitorDue(cached, at('2026-07-01T11:00:00Z'));
    assert.equal((answered.agent_todos as { monitor_due_count: number }).monitor_due_count, 3);
    assert.equal(answered.user_todos, null);
    assert.equal('monitor_due_count' in cached.agent_todos, false);
    // Its key changes exactly when the answer does.
    const keyAt = (iso: string): string => monitorDueKey(cached, at(iso));
    assert.equal(keyAt('2026-07-01T09:10:00Z'), keyAt('2026-07-01T09:29:59Z'));
    assert.notEqual(keyAt('2026-07-01T09:29:59Z'), keyAt('2026-07-01T09:30:00Z'));
  });
});
