import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gateInboxRows, shortDuration, todoAddedTimes, type InboxGateInput } from '../../../src/core/status/gateInbox';
import { buildRolloutEvent, rolloutEventLogPath } from '../../../src/core/evidence/rolloutLog';

const NOW = Date.parse('2026-07-01T12:00:00Z');

function input(
  todoId: string,
  gate: Partial<InboxGateInput['gate']> = {},
  addedAt: string | null = null,
): InboxGateInput {
  return {
    goalId: 'g',
    registryPath: '/r.json',
    gate: {
      todo_id: todoId,
      title: todoId,
      text: todoId,
      line: 3,
      blocked_todo_ids: [],
      blocks_agent: null,
      global_gate: false,
      due_at: null,
      updated_at: null,
      ...gate,
    },
    addedAt,
  };
}

describe('gate inbox rows', () => {
  it('orders by blocked time, longest first; an unknown open time last', () => {
    const rows = gateInboxRows(
      [
        input('todo_new', { updated_at: '2026-07-01T11:00:00Z' }),
        input('todo_unknown'),
        input('todo_old', { updated_at: '2026-06-30T12:00:00Z' }),
        input('todo_mid', {}, '2026-07-01T06:00:00Z'),
      ],
      NOW,
    );
    assert.deepEqual(
      rows.map((r) => [r.todo_id, r.blocked_ms === null ? null : r.blocked_ms / 3_600_000]),
      [
        ['todo_old', 24],
        ['todo_mid', 6],
        ['todo_new', 1],
        ['todo_unknown', null],
      ],
    );
  });

  it("prefers the todo_add event's time to updated_at (an edit moves updated_at, not the opening)", () => {
    const [row] = gateInboxRows([input('todo_g', { updated_at: '2026-07-01T11:00:00Z' }, '2026-07-01T02:00:00Z')], NOW);
    assert.equal(row?.blocked_since, '2026-07-01T02:00:00Z');
    assert.equal(row?.blocked_since_source, 'todo_add_event');
    assert.equal(row?.blocked_ms, 10 * 3_600_000);
  });

  it('agent time: the wait times the todos held (a lane or global gate counts one, an unscoped gate none)', () => {
    const rows = gateInboxRows(
      [
        input('todo_two', { updated_at: '2026-07-01T10:00:00Z', blocked_todo_ids: ['todo_a', 'todo_b'] }),
        input('todo_lane', { updated_at: '2026-07-01T10:00:00Z', blocks_agent: 'codex' }),
        input('todo_none', { updated_at: '2026-07-01T10:00:00Z' }),
      ],
      NOW,
    );
    const agentHours = Object.fromEntries(rows.map((r) => [r.todo_id, (r.agent_blocked_ms ?? 0) / 3_600_000]));
    assert.deepEqual(agentHours, { todo_two: 4, todo_lane: 2, todo_none: 0 });
  });

  it('overdue when the due time passed; on equal waits the overdue and earlier due come first', () => {
    const at = '2026-07-01T10:00:00Z';
    const rows = gateInboxRows(
      [
        input('todo_later', { updated_at: at, due_at: '2026-07-03T00:00:00Z' }),
        input('todo_none', { updated_at: at }),
        input('todo_over', { updated_at: at, due_at: '2026-07-01T11:59:00Z' }),
        input('todo_soon', { updated_at: at, due_at: '2026-07-02T00:00:00Z' }),
      ],
      NOW,
    );
    assert.deepEqual(
      rows.map((r) => [r.todo_id, r.overdue]),
      [
        ['todo_over', true],
        ['todo_soon', false],
        ['todo_later', false],
        ['todo_none', false],
      ],
    );
  });

  it("reads a gate's todo_add time from the rollout event log (first row wins; a missing log gives none)", async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-inbox-'));
    const file = rolloutEventLogPath(root, 'g');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const row = (todoId: string, at: string, kind: 'todo_add' | 'todo_update') =>
      JSON.stringify(buildRolloutEvent({ goalId: 'g', eventKind: kind, recordedAt: at, todoId }));
    fs.writeFileSync(
      file,
      [
        row('todo_g', '2026-07-01T01:00:00Z', 'todo_update'),
        row('todo_g', '2026-07-01T02:00:00Z', 'todo_add'),
        row('todo_g', '2026-07-01T03:00:00Z', 'todo_add'),
        row('todo_x', '2026-07-01T04:00:00Z', 'todo_add'),
        '',
      ].join('\n'),
    );
    assert.deepEqual([...(await todoAddedTimes(root, 'g', ['todo_g']))], [['todo_g', '2026-07-01T02:00:00Z']]);
    assert.deepEqual([...(await todoAddedTimes(root, 'other', ['todo_g']))], []);
  });

  it('durations for people', () => {
    assert.deepEqual([30_000, 12 * 60_000, 200 * 60_000, 180 * 60_000, 52 * 3_600_000].map(shortDuration), [
      '30s',
      '12m',
      '3h 20m',
      '3h',
      '2d 4h',
    ]);
  });
});
