import assert from 'node:assert/strict';
import { claimedVisibility, todoLists, type ListedTodo } from '../../../../src/core/status/projection/todoLists';
import { structuredTodo } from '../../../../src/core/status/projection/compactTodoItem';

/**
 * The original's todo lists on a status summary (todo_summary.py `compact_todo_group`): which todos each list holds,
 * in which order, how many, when the optional ones appear, and each todo's `compact_todo_item` shape. The mixed tier
 * compares them with the original's own on its scenarios.
 */

let nextIndex = 1;
function todo(
  over: Partial<ListedTodo> & { metadata?: Record<string, string> },
  role: 'user' | 'agent' = 'agent',
  section = 'Agent Todo',
): ListedTodo {
  const index = over.index ?? nextIndex++;
  const base = {
    index,
    status: 'open',
    text: `Implement step ${index}`,
    todo_id: `todo_t${index}`,
    priority: null,
    title: `Implement step ${index}`,
    claimed_by: null,
    task_class: null,
    resumeHolds: true,
    hasResumeWhen: false,
    metadata: {},
    ...over,
  };
  const metadata = {
    ...(base.task_class !== null ? { task_class: base.task_class } : {}),
    ...(base.claimed_by !== null ? { claimed_by: base.claimed_by } : {}),
    ...base.metadata,
  };
  return { ...base, metadata, structured: structuredTodo({ ...base, metadata }, role, section) };
}

const ids = (items: readonly Record<string, unknown>[]): unknown[] => items.map((item) => item['todo_id']);

describe('status todo summary: the original lists (first_open_items, backlog_items, claimed_*, deferred_*, …)', () => {
  beforeEach(() => {
    nextIndex = 1;
  });

  it('orders open todos by priority then position, and cuts each list at its own length', () => {
    const todos = [
      ...Array.from({ length: 10 }, () => todo({})),
      todo({ priority: 'P1', title: 'Urgent', text: '[P1] Urgent' }),
      todo({ priority: 'P0', title: 'First', text: '[P0] First' }),
      todo({ status: 'done' }),
    ];
    const lists = todoLists(todos);
    assert.deepEqual(ids(lists.first_open_items), ['todo_t12', 'todo_t11', 'todo_t1']);
    assert.deepEqual(ids(lists.first_executable_items), ['todo_t12', 'todo_t11', 'todo_t1']);
    assert.equal(lists.backlog_items.length, 8);
    assert.equal(lists.executable_backlog_items.length, 8);
    assert.equal(lists.unclaimed_priority_open_items.length, 8);
    assert.deepEqual(ids(lists.backlog_items).slice(0, 3), ['todo_t12', 'todo_t11', 'todo_t1']);
    assert.deepEqual(lists.deferred_items, []);
    assert.equal(lists.blocker_items, undefined);
    assert.equal(lists.resume_blocked_items, undefined);
  });

  it('splits executable, monitor, claimed and blocker lanes by class, claim and resume condition', () => {
    const todos = [
      todo({ text: 'Watch the nightly build', title: 'Watch the nightly build' }),
      todo({ claimed_by: 'Codex A' }),
      todo({ claimed_by: 'codex-a', task_class: 'continuous_monitor' }),
      todo({ status: 'blocked', task_class: 'blocker', claimed_by: 'codex-b' }),
      todo({ hasResumeWhen: true, resumeHolds: false }),
      todo({ status: 'deferred', hasResumeWhen: true, resumeHolds: true }),
      todo({ status: 'deferred', hasResumeWhen: true, resumeHolds: false }),
      todo({ status: 'deferred' }),
    ];
    const lists = todoLists(todos);
    assert.deepEqual(ids(lists.first_executable_items), ['todo_t2']);
    assert.deepEqual(ids(lists.monitor_open_items), ['todo_t1', 'todo_t3']);
    assert.deepEqual(ids(lists.claimed_open_items), ['todo_t2', 'todo_t3', 'todo_t4']);
    assert.deepEqual(ids(lists.claimed_advancement_open_items), ['todo_t2']);
    assert.deepEqual(ids(lists.claimed_monitor_open_items), ['todo_t3']);
    assert.deepEqual(ids(lists.unclaimed_priority_open_items), ['todo_t1', 'todo_t5']);
    assert.equal(lists.blocker_open_count, 1);
    assert.deepEqual(ids(lists.blocker_items ?? []), ['todo_t4']);
    assert.equal(lists.resume_blocked_count, 1);
    assert.deepEqual(ids(lists.resume_blocked_items ?? []), ['todo_t5']);
    assert.deepEqual(ids(lists.deferred_items), ['todo_t6', 'todo_t7', 'todo_t8']);
    assert.deepEqual(ids(lists.deferred_resume_candidates), ['todo_t6']);
  });

  it("shapes each todo as the original's compact_todo_item (title only with a priority, fields only when read)", () => {
    const [gate, plain] = todoLists([
      todo(
        {
          priority: 'P0',
          title: 'Approve the release',
          text: '[P0] Approve the release',
          task_class: 'user_gate',
          metadata: {
            blocks_agent: 'Codex Main',
            global_gate: 'yes',
            unblocks_todo_id: 'TODO_publish',
            updated_at: '2026-12-04T20:58:30Z',
            goal_bound: 'maybe',
            decision_scope: 'Public_Claim:goal:wiki',
            required_decision_scopes: 'write_scope:goal:main;bogus|write_scope:goal:main,production:goal:deploy',
          },
        },
        'user',
        'User Todo',
      ),
      todo(
        { text: 'Read the summary', title: 'Read the summary', metadata: { goal_bound: 'true' } },
        'user',
        'User Todo',
      ),
    ]).first_open_items;
    assert.deepEqual(gate, {
      index: 1,
      done: false,
      text: '[P0] Approve the release',
      schema_version: 'todo_item_v0',
      todo_id: 'todo_t1',
      role: 'user',
      status: 'open',
      priority: 'P0',
      title: 'Approve the release',
      archive_state: 'active',
      source_section: 'User Todo',
      task_class: 'user_gate',
      decision_scope: {
        schema_version: 'decision_scope_v0',
        kind: 'public_claim',
        granularity: 'goal',
        scope_key: 'wiki',
      },
      required_decision_scopes: [
        { schema_version: 'decision_scope_v0', kind: 'write_scope', granularity: 'goal', scope_key: 'main' },
        { schema_version: 'decision_scope_v0', kind: 'production', granularity: 'goal', scope_key: 'deploy' },
      ],
      blocks_agent: 'codex-main',
      global_gate: true,
      unblocks_todo_id: 'todo_publish',
      updated_at: '2026-12-04T20:58:30Z',
      handoff_note: {
        schema_version: 'handoff_note_v0',
        // todo_t1 is no valid todo id (3 to 64 characters after todo_): the id is a digest of (goal, role, index, text).
        handoff_id: 'handoff_cd4db0103140',
        intent: 'user_gate',
        summary: 'Approve the release',
        unresolved_decisions: [
          { schema_version: 'decision_scope_v0', kind: 'write_scope', granularity: 'goal', scope_key: 'main' },
          { schema_version: 'decision_scope_v0', kind: 'production', granularity: 'goal', scope_key: 'deploy' },
          { schema_version: 'decision_scope_v0', kind: 'public_claim', granularity: 'goal', scope_key: 'wiki' },
        ],
        blocked_on: 'todo:todo_publish',
        suggested_next_action: 'Approve the release',
        unblocks_todo_id: 'todo_publish',
      },
    });
    assert.equal(plain?.['title'], undefined);
    assert.equal(plain?.['goal_bound'], true);
    assert.equal(plain?.['task_class'], 'advancement_task');
    assert.equal(plain?.['decision_scope'], undefined);
    assert.equal(plain?.['required_decision_scopes'], undefined);
  });

  it('the claimed lists share their 16 places between claimants, then fill in list order', () => {
    const many = [
      ...Array.from({ length: 20 }, () => todo({ claimed_by: 'codex-a' })),
      ...Array.from({ length: 3 }, () => todo({ claimed_by: 'codex-b' })),
    ];
    const shown = claimedVisibility(many, 16);
    assert.equal(shown.length, 16);
    assert.deepEqual(
      shown.filter((t) => t.claimed_by === 'codex-b').map((t) => t.index),
      [21, 22, 23],
    );
    assert.deepEqual(
      shown.filter((t) => t.claimed_by === 'codex-a').map((t) => t.index),
      Array.from({ length: 13 }, (_, i) => i + 1),
    );
  });
});
