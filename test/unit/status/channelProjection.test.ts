import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  compactChannelValue,
  goalChannelProjection,
  hardLeaseEntries,
  rawMaterialKeys,
} from '../../../src/core/status/channelProjection';
import { readHardLeases } from '../../../src/core/status/hardLeaseReads';
import { tempDir } from '../../support/tempDir';
import type { GoalStatusItem } from '../../../src/core/status/goalStatusSchema';
import type { RegistryGoal } from '../../../src/core/registry/schema';
import { pythonStr, STRINGIFIED_VALUE_PATHS, differences } from '../../mixed/statusDiff';

/**
 * `goal_channel_projection` by the original's rules (control_plane/goals/goal_channel_projection.py; the mixed status
 * tier compares it key by key with the original's on seven workspaces). Each rule pinned on fixtures of our own.
 */

type Todo = Record<string, unknown>;

function todo(id: string, extra: Todo = {}): Todo {
  return {
    index: 1,
    done: false,
    text: `[P1] Title of ${id}`,
    schema_version: 'todo_item_v0',
    todo_id: id,
    role: 'agent',
    status: 'open',
    priority: 'P1',
    title: `Title of ${id}`,
    archive_state: 'active',
    source_section: 'Agent Todo',
    task_class: 'advancement_task',
    ...extra,
  };
}

function summary(open: Todo[], executable: Todo[] = []): Record<string, unknown> {
  return {
    schema_version: 'todo_summary_v0',
    open_count: open.length,
    first_open_items: open,
    first_executable_items: executable,
    backlog_items: open,
    executable_backlog_items: executable,
  };
}

function run(at: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    generated_at: at,
    goal_id: 'g',
    classification: 'validated_progress',
    agent_id: 'codex-a',
    recommended_action: 'Do the next step.',
    health_check: null,
    json_exists: true,
    markdown_exists: true,
    ...extra,
  };
}

function item(overrides: Record<string, unknown> = {}): GoalStatusItem {
  return {
    goal_id: 'g',
    display_name: 'A friendly goal name',
    status: 'active_state_agent_todo',
    waiting_on: 'codex',
    recommended_action: 'Do the next step.',
    active_state_next_action: null,
    quota: { compute: 1, window_hours: 24, slot_minutes: 30, allowed_slots: 48, spent_slots: 2, state: 'eligible' },
    user_todos: summary([]),
    agent_todos: summary([]),
    latest_runs: [],
    raw_index_records: 0,
    ...overrides,
  } as unknown as GoalStatusItem;
}

describe('goal_channel_projection (the original rules)', () => {
  it('names the goal by its id, refs the latest run, and says it is a read-only projection of the run history', () => {
    const channel = goalChannelProjection(
      item({ latest_runs: [run('2026-12-01T10:00:00Z'), run('2026-11-30T10:00:00Z')] }),
      undefined,
    );
    // The original's item carries no display name or domain: its goal id stands in (ours stays on items[].display_name).
    assert.equal(channel.display_name, 'g');
    assert.deepEqual(channel.source_refs, {
      status_generated_at: null,
      active_state_updated_at: null,
      latest_run_generated_at: '2026-12-01T10:00:00Z',
      review_packet_generated_at: null,
      event_ledger_source: 'run_history',
    });
    assert.equal(goalChannelProjection(item(), undefined).source_refs.latest_run_generated_at, null);
    assert.deepEqual(channel.artifacts, []);
    assert.deepEqual(channel.truth_contract, {
      event_ledger_is_source_of_truth: true,
      projection_is_writable: false,
      write_authority: 'none',
      recompute_rule:
        'refresh from LoopX status/quota/run history; do not edit the channel projection as project truth',
    });
    assert.deepEqual(
      [channel.latest_status, channel.waiting_on, channel.next_action],
      ['active_state_agent_todo', 'codex', 'Do the next step.'],
    );
  });

  it('quota: state, reason, spend policy, spent and allowed slots only, texts compacted, numbers kept as numbers', () => {
    const channel = goalChannelProjection(
      item({
        quota: {
          compute: 1,
          allowed_slots: 48,
          spent_slots: 0,
          state: 'operator_gate',
          reason: '  gate   holds\nthe goal ',
          budgets: { max_tokens: { used: 0 } },
        },
      }),
      undefined,
    );
    // The original's values are str(): "0", "48"; ours keep the type (docs/compatibility.md, the one deviation).
    assert.deepEqual(channel.quota, {
      state: 'operator_gate',
      reason: 'gate holds the goal',
      spent_slots: 0,
      allowed_slots: 48,
    });
  });

  it('todos: the first executable ones, else the first open ones, with the original per-todo fields', () => {
    const gated = todo('todo_gated', { status: 'blocked', claimed_by: 'codex-b' });
    const next = todo('todo_next', {
      claimed_by: 'codex-a',
      bound_agent: 'codex-a',
      goal_bound: false,
      action_kind: 'write',
    });
    const withExecutable = goalChannelProjection(item({ agent_todos: summary([gated, next], [next]) }), undefined);
    assert.deepEqual(withExecutable.agent_todos, [
      {
        title: 'Title of todo_next',
        status: 'open',
        todo_id: 'todo_next',
        priority: 'P1',
        claimed_by: 'codex-a',
        bound_agent: 'codex-a',
        goal_bound: false,
        task_class: 'advancement_task',
        action_kind: 'write',
      },
    ]);
    const onlyOpen = goalChannelProjection(item({ agent_todos: summary([gated]) }), undefined);
    assert.deepEqual(
      onlyOpen.agent_todos.map((t) => [t.todo_id, t.status]),
      [['todo_gated', 'blocked']],
    );
  });

  it('todo titles: cut to 220 characters ending in …, the text when there is no title, none when private', () => {
    const long = `Write ${'word '.repeat(60)}end`;
    const channel = goalChannelProjection(
      item({
        user_todos: summary([
          todo('todo_long', { title: long, task_class: 'user_action' }),
          todo('todo_untitled', {
            title: undefined,
            priority: undefined,
            text: 'Watch   the build',
            task_class: 'user_action',
          }),
          todo('todo_private', { title: 'Read /Users/alice/notes.md', text: 'Read /Users/alice/notes.md' }),
        ]),
      }),
      undefined,
    );
    assert.deepEqual(
      channel.user_todos.map((t) => [t.todo_id, t.title]),
      [
        ['todo_long', `${long.slice(0, 219).trimEnd()}…`],
        ['todo_untitled', 'Watch the build'],
      ],
    );
    assert.equal(channel.user_todos[0]?.title.length, 220);
    assert.equal(channel.user_todos[1]?.priority, undefined);
  });

  it('gates: one entry for the open user gates among the projection todos; a user action alone is no gate', () => {
    const gate = todo('todo_gate', { task_class: 'user_gate', role: 'user', priority: 'P0' });
    const action = todo('todo_look', { task_class: 'user_action', role: 'user' });
    const gated = goalChannelProjection(item({ user_todos: summary([gate, action]) }), undefined);
    assert.deepEqual(gated.open_gates, [
      { gate_id: 'project_asset_user_gate_todos', kind: 'user_todo', status: 'action_required', blocks: ['todo_gate'] },
    ]);
    assert.deepEqual(gated.decision_frame, {
      user_action_required: true,
      agent_action_required: false,
      quiet_noop_allowed: false,
    });
    const ungated = goalChannelProjection(item({ user_todos: summary([action]) }), undefined);
    assert.deepEqual(ungated.open_gates, []);
    assert.equal(ungated.decision_frame.user_action_required, false);
    const closed = goalChannelProjection(item({ user_todos: summary([{ ...gate, status: 'resolved' }]) }), undefined);
    assert.deepEqual(closed.open_gates, []);
  });

  it('active leases: a soft claim for each claimed projection todo', () => {
    const channel = goalChannelProjection(
      item({ agent_todos: summary([todo('todo_a'), todo('todo_b', { claimed_by: 'codex-b' })]) }),
      undefined,
    );
    assert.deepEqual(channel.active_leases, [{ todo_id: 'todo_b', owner_agent: 'codex-b', status: 'soft_claim' }]);
  });

  it('hard task leases: each active one after the soft claims, an unreadable file, an owner at odds with the claim', () => {
    const root = tempDir('loopx-channel-leases-');
    const dir = path.join(root, 'goals', 'g', 'task-leases');
    fs.mkdirSync(dir, { recursive: true });
    const lease = (todoId: string, extra: Record<string, unknown> = {}): string =>
      JSON.stringify({
        schema_version: 'task_lease_v0',
        goal_id: 'g',
        todo_id: todoId,
        owner: 'codex-a',
        version: 2,
        status: 'active',
        expires_at: '2026-12-01T12:00:00Z',
        ...extra,
      });
    fs.writeFileSync(path.join(dir, 'todo_a.json'), lease('todo_a'));
    fs.writeFileSync(path.join(dir, 'todo_b.json'), lease('todo_b', { lease_epoch: 3 }));
    fs.writeFileSync(path.join(dir, 'todo_c.json'), lease('todo_c', { expires_at: '2026-12-01T09:00:00Z' }));
    fs.writeFileSync(path.join(dir, 'todo_d.json'), lease('todo_d', { status: 'released' }));
    fs.writeFileSync(path.join(dir, 'todo_e.json'), '{ not json');
    fs.writeFileSync(path.join(dir, 'other.json'), lease('todo_x'));
    const reads = readHardLeases({ runtimeRoot: root, goalId: 'g' });
    const now = new Date('2026-12-01T10:00:00Z');
    const channel = goalChannelProjection(
      item({ agent_todos: summary([todo('todo_b', { claimed_by: 'codex-b' })]) }),
      undefined,
      {
        reads,
        now,
      },
    );
    assert.deepEqual(channel.active_leases, [
      { todo_id: 'todo_b', owner_agent: 'codex-b', status: 'soft_claim' },
      {
        todo_id: 'todo_a',
        status: 'hard_lease',
        owner_agent: 'codex-a',
        lease_version: 2,
        lease_epoch: 1,
        expires_at: '2026-12-01T12:00:00Z',
      },
      {
        todo_id: 'todo_b',
        status: 'hard_lease',
        owner_agent: 'codex-a',
        lease_version: 2,
        lease_epoch: 3,
        expires_at: '2026-12-01T12:00:00Z',
        reason: 'owner_conflicts_with_claim',
        claimed_by: 'codex-b',
      },
      { todo_id: 'todo_e', status: 'hard_lease_unreadable', reason: 'corrupt_lease' },
    ]);
    // Two hours later every lease has expired: only the unreadable file is left.
    assert.deepEqual(
      hardLeaseEntries(reads, [], new Date('2026-12-01T12:00:01Z')).map((e) => e.status),
      ['hard_lease_unreadable'],
    );
    assert.deepEqual(readHardLeases({ runtimeRoot: root, goalId: 'none' }), []);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('recent events: the first five runs, the health check before the recommended action as the summary', () => {
    const runs = [
      run('2026-12-06T00:00:00Z', { health_check: 'validation passed' }),
      run('2026-12-05T00:00:00Z', { classification: null }),
      run('2026-12-04T00:00:00Z'),
      run('2026-12-03T00:00:00Z'),
      run('2026-12-02T00:00:00Z'),
      run('2026-12-01T00:00:00Z'),
    ];
    const events = goalChannelProjection(item({ latest_runs: runs }), undefined).recent_events;
    assert.equal(events.length, 5);
    assert.deepEqual(events[0], {
      generated_at: '2026-12-06T00:00:00Z',
      classification: 'validated_progress',
      summary: 'validation passed',
    });
    assert.deepEqual(events[1], { generated_at: '2026-12-05T00:00:00Z', summary: 'Do the next step.' });
  });

  it('source warnings: every key named like raw material or holding a private value, sorted, in one warning', () => {
    const goal = {
      id: 'g',
      coordination: { log_dir: 'x' },
      next_probe: 'see /Users/alice/x',
    } as unknown as RegistryGoal;
    const channel = goalChannelProjection(item(), goal);
    assert.deepEqual(channel.source_warnings, [
      {
        kind: 'raw_or_private_material_omitted',
        key_names: ['backlog_items', 'executable_backlog_items', 'log_dir', 'next_probe', 'raw_index_records'],
        message:
          'raw/private-looking fields were omitted; inspect the compact source references instead of copying raw material into the frontstage channel projection',
      },
    ]);
    // The quota's budgets (ours only: `max_tokens`) are not the original's and not scanned.
    const budgeted = item({ quota: { state: 'eligible', budgets: { max_tokens: { used: 0, limit: null } } } });
    assert.deepEqual(goalChannelProjection(budgeted, undefined).source_warnings[0]?.key_names, [
      'backlog_items',
      'executable_backlog_items',
      'raw_index_records',
    ]);
    // The raw run rows' key names (the item keeps them as projected: a run's usage tokens) are scanned too; the
    // fields of ours only (the todo index part, those names) are not.
    const used = item({ latest_run_raw_keys: ['input_tokens', 'output_tokens'], todo_index: { items: [] } } as never);
    assert.deepEqual(goalChannelProjection(used, undefined).source_warnings[0]?.key_names, [
      'backlog_items',
      'executable_backlog_items',
      'input_tokens',
      'output_tokens',
      'raw_index_records',
    ]);
    // A private value names every key above it.
    assert.deepEqual(rawMaterialKeys({ a: { b: ['/private/tmp/x'] }, c: 1 }), ['a', 'b']);
    assert.deepEqual(rawMaterialKeys({ Stdout: 1, catalogue: 2, drawer: 3 }), ['Stdout', 'catalogue', 'drawer']);
    assert.deepEqual(rawMaterialKeys({ plain: 'text' }), []);
  });

  it('compact values: whitespace collapsed, cut ending in ..., none when empty or private; numbers and booleans kept', () => {
    assert.equal(compactChannelValue('a   b\n c', 10), 'a b c');
    assert.equal(compactChannelValue('abcdefghij-k', 10), 'abcdefghi...');
    assert.equal(compactChannelValue('   ', 10), null);
    assert.equal(compactChannelValue('see /users/bob', 80), null);
    assert.equal(compactChannelValue(0, 10), 0);
    assert.equal(compactChannelValue(true, 10), true);
  });
});

describe('status tier: the one accepted value difference of goal_channel_projection', () => {
  it("accepts the original's str() of our number or boolean there, and nothing else", () => {
    assert.deepEqual(
      [pythonStr(true), pythonStr(false), pythonStr(0), pythonStr(0.5), pythonStr(1e-7)],
      ['True', 'False', '0', '0.5', '1e-07'],
    );
    const theirs = { goal_channel_projection: { quota: { spent_slots: '0' }, user_todos: [{ goal_bound: 'True' }] } };
    assert.deepEqual(
      [
        ...differences(theirs, {
          goal_channel_projection: { quota: { spent_slots: 0 }, user_todos: [{ goal_bound: true }] },
        }),
      ],
      [],
    );
    assert.deepEqual(
      [
        ...differences(theirs, {
          goal_channel_projection: { quota: { spent_slots: 1 }, user_todos: [{ goal_bound: false }] },
        }),
      ],
      ['value goal_channel_projection.quota.spent_slots', 'value goal_channel_projection.user_todos[].goal_bound'],
    );
    // Elsewhere a string is never equal to a number.
    assert.deepEqual(
      [...differences({ quota: { spent_slots: '0' } }, { quota: { spent_slots: 0 } })],
      ['value quota.spent_slots'],
    );
    assert.ok(!STRINGIFIED_VALUE_PATHS.test('goal_channel_projection.recent_events[].summary'));
  });
});
