import assert from 'node:assert/strict';
import { structuredTodo } from '../../../../src/core/status/projection/compactTodoItem';
import { todoLists, type ListedTodo } from '../../../../src/core/status/projection/todoLists';
import { nextActionTodoIds, todoSuccession } from '../../../../src/core/status/projection/todoSuccession';

/**
 * The original's closure and succession reports on a status summary (todo_summary.py `compact_todo_group`,
 * handoff_gate.py): source and terminal closure proofs, closure intent, recent completed advancement todos, succession
 * gaps and their warning, handoff gates, watch-only counts and the todos the Next Action names. The mixed tier compares
 * them with the original's on its closure scenario.
 */

let nextIndex = 1;
function todo(over: Partial<ListedTodo> & { metadata?: Record<string, string> }): ListedTodo {
  const index = over.index ?? nextIndex++;
  return {
    index,
    status: 'open',
    text: `Implement step ${index}`,
    todo_id: `todo_item${index}`,
    priority: null,
    title: `Implement step ${index}`,
    claimed_by: null,
    task_class: 'advancement_task',
    resumeHolds: true,
    hasResumeWhen: false,
    metadata: {},
    ...over,
    // Structured again for the summary's section (summarize() below).
    structured: structuredTodo(
      { index, status: 'open', text: '', todo_id: '', priority: null, title: '', metadata: {} },
      'agent',
      null,
    ),
  };
}

/** The todo as its summary lists it: the class and claim in its metadata, structured for the section. */
function listed(t: ListedTodo, section: string | null): ListedTodo {
  const metadata = {
    ...(t.task_class !== null ? { task_class: t.task_class } : {}),
    ...(t.claimed_by !== null ? { claimed_by: t.claimed_by } : {}),
    ...t.metadata,
  };
  return { ...t, metadata, structured: structuredTodo({ ...t, metadata }, 'agent', section) };
}

type Summary = ReturnType<typeof summarize>;
function summarize(given: readonly ListedTodo[], options: { section?: string | null; next?: string[] } = {}) {
  const section = options.section === undefined ? 'Agent Todo' : options.section;
  const todos = given.map((t) => listed(t, section));
  return todoLists(todos, (compact) =>
    todoSuccession(todos, {
      role: 'agent',
      sourceSection: section,
      nextActionIds: nextActionTodoIds(options.next ?? []),
      compact,
    }),
  );
}
const ids = (items: readonly Record<string, unknown>[] | undefined): unknown[] =>
  (items ?? []).map((item) => item['todo_id']);

describe('status todo summary: closure and succession reports', () => {
  beforeEach(() => {
    nextIndex = 1;
  });

  it('a completed advancement todo the original tracks, without successor or no-follow-up, is a succession gap', () => {
    const s: Summary = summarize([
      todo({ status: 'done', metadata: { completed_at: '2026-07-01T00:00:00Z', note: 'private' } }),
      // Untracked: no lifecycle key.
      todo({ status: 'done' }),
      // Tracked by its claim, successors of every kind:
      todo({
        status: 'done',
        claimed_by: 'codex-a',
        metadata: { claimed_by: 'codex-a', successor_todo_ids: 'todo_item9' },
      }),
      todo({ status: 'done', metadata: { updated_at: '2026-07-02T00:00:00Z', superseded_by: 'todo_item9' } }),
      todo({ status: 'done', metadata: { action_kind: 'implement' } }),
      todo({ metadata: { unblocks_todo_id: 'todo_item5' } }),
      todo({ status: 'done', metadata: { completed_at: '2026-07-03T00:00:00Z' } }),
      todo({ status: 'deferred', hasResumeWhen: true, metadata: { resume_when: 'todo_done:todo_item7' } }),
      todo({ status: 'done', metadata: { completed_at: '2026-06-01T00:00:00Z', no_followup: 'yes' } }),
      // A monitor's completion is not tracked; nor is a deferred todo.
      todo({ status: 'done', task_class: 'continuous_monitor', metadata: { completed_at: '2026-07-01T00:00:00Z' } }),
    ]);
    // The deferred todo 8 is an advancement todo resuming on 7: 7 has a successor.
    assert.equal(s.completed_without_successor_count, 1);
    assert.deepEqual(ids(s.completed_without_successor_items), ['todo_item1']);
    const gap = s.completed_without_successor_items?.[0] ?? {};
    assert.deepEqual(
      [gap['succession_tracked'], gap['recommended_action'], 'note' in gap],
      [true, 'record no_followup=true or add/link a successor todo', false],
    );
    assert.deepEqual(s.todo_succession_warning?.['reason_code'], 'completed_advancement_without_successor');
    assert.deepEqual(ids(s.todo_succession_warning?.['items'] as Record<string, unknown>[]), ['todo_item1']);
    assert.deepEqual(s.closure_intent, {
      schema_version: 'todo_closure_intent_v0',
      kind: 'no_followup',
      derived: true,
      count: 1,
    });
  });

  it('lists at most 5 gaps, newest first (updated_at, else completed_at, then position)', () => {
    const s = summarize(
      ['2026-07-03', '2026-07-01', '2026-07-05', '2026-07-02', '2026-07-04', '2026-07-06', '2026-07-01'].map((day) =>
        todo({ status: 'done', metadata: { completed_at: `${day}T00:00:00Z` } }),
      ),
    );
    assert.equal(s.completed_without_successor_count, 7);
    assert.deepEqual(ids(s.completed_without_successor_items), [
      'todo_item6',
      'todo_item3',
      'todo_item5',
      'todo_item1',
      'todo_item4',
    ]);
    assert.deepEqual(ids(s.recent_completed_advancement_items), [
      'todo_item6',
      'todo_item3',
      'todo_item5',
      'todo_item1',
      'todo_item4',
      'todo_item7',
      'todo_item2',
    ]);
  });

  it('recent completed advancement todos: done (not deferred) with a completed_at, without note/evidence/reason', () => {
    const s = summarize([
      todo({ status: 'done', metadata: { completed_at: '2026-07-01T00:00:00Z', evidence: 'x', no_followup: 'true' } }),
      todo({ status: 'deferred', metadata: { completed_at: '2026-07-02T00:00:00Z' } }),
      todo({ status: 'done' }),
    ]);
    assert.deepEqual(ids(s.recent_completed_advancement_items), ['todo_item1']);
    assert.equal('evidence' in (s.recent_completed_advancement_items?.[0] ?? {}), false);
    assert.equal(summarize([todo({})]).recent_completed_advancement_items, undefined);
    const many = Array.from({ length: 17 }, () => todo({ status: 'done', metadata: { completed_at: '2026-07-01' } }));
    assert.equal(summarize(many).recent_completed_advancement_items?.length, 16);
  });

  it('terminal closure: every todo done, no gap; a source proof whenever nothing open or deferred is left', () => {
    const closed = summarize([
      todo({ status: 'done', metadata: { no_followup: 'true', completed_at: '2026-07-01T00:00:00Z' } }),
      todo({ status: 'done' }),
    ]);
    assert.deepEqual(closed.source_proof, {
      schema_version: 'todo_source_proof_v0',
      role: 'agent',
      item_count: 2,
      derived: true,
    });
    assert.deepEqual(closed.terminal_closure_proof, {
      schema_version: 'todo_terminal_closure_proof_v0',
      role: 'agent',
      source_section: 'Agent Todo',
      item_count: 2,
      all_todos_done: true,
      monitor_open_count: 0,
      successor_gap_count: 0,
      route_replan_count: 0,
      no_followup_count: 1,
      derived: true,
    });
    // An empty section: both proofs, over no todo; without a heading, the source proof is not derived, no closure.
    assert.equal(summarize([]).terminal_closure_proof?.['item_count'], 0);
    const headless = summarize([todo({ status: 'done' })], { section: null });
    assert.equal(headless.source_proof?.derived, false);
    assert.equal(headless.terminal_closure_proof, undefined);
    // A gap, an open or a deferred todo: no terminal closure (and no source proof for the open or deferred one).
    const gap = summarize([todo({ status: 'done', metadata: { completed_at: '2026-07-01T00:00:00Z' } })]);
    assert.deepEqual([gap.source_proof !== undefined, gap.terminal_closure_proof], [true, undefined]);
    const open = summarize([todo({ status: 'done' }), todo({ status: 'blocked' })]);
    assert.deepEqual([open.source_proof, open.terminal_closure_proof], [undefined, undefined]);
    const deferred = summarize([todo({ status: 'done' }), todo({ status: 'deferred' })]);
    assert.deepEqual([deferred.source_proof, deferred.terminal_closure_proof], [undefined, undefined]);
  });

  it('a watch-only monitor left open: watch-only and convergence counts, closure of the convergent todos', () => {
    const watch = (over: Partial<ListedTodo> = {}): ListedTodo =>
      todo({ task_class: 'continuous_monitor', metadata: { watch_only: 'true', cadence: '2h' }, ...over });
    const s = summarize([todo({ status: 'done' }), watch()]);
    assert.deepEqual([s.watch_only_monitor_count, s.convergence_open_count], [1, 0]);
    assert.equal(s.source_proof?.item_count, 2);
    assert.deepEqual(
      [
        s.terminal_closure_proof?.['all_todos_done'],
        s.terminal_closure_proof?.['all_convergent_todos_done'],
        s.terminal_closure_proof?.['monitor_open_count'],
        s.terminal_closure_proof?.['watch_only_monitor_count'],
      ],
      [false, true, 1, 1],
    );
    // Beside an open todo: counted, no proof. A watch-only monitor that is not actionable is convergent work.
    const busy = summarize([todo({}), watch(), watch({ hasResumeWhen: true, resumeHolds: false })]);
    assert.deepEqual([busy.watch_only_monitor_count, busy.convergence_open_count], [1, 2]);
    assert.equal(busy.source_proof, undefined);
    assert.equal(summarize([todo({})]).watch_only_monitor_count, undefined);
  });

  it('handoff gates: todos excluding an agent until they unblock one, each in its state, by position', () => {
    const gate = (status: ListedTodo['status'], metadata: Record<string, string>, over: Partial<ListedTodo> = {}) =>
      todo({
        status,
        metadata: { excluded_agents: 'codex-b, Codex-A,codex-b', unblocks_todo_id: 'todo_item99', ...metadata },
        ...over,
      });
    const s = summarize([
      gate('open', {}),
      gate('done', {}),
      gate('done', { no_followup: 'true' }),
      gate('done', {}),
      todo({ metadata: { unblocks_todo_id: 'todo_item4' } }),
      gate('deferred', {}),
      gate('open', { superseded_by: 'todo_item5' }),
      gate('open', {}, { text: 'Stale handoff closeout for codex-b' }),
      todo({ metadata: { excluded_agents: 'codex-b' } }),
    ]);
    const gates = s.handoff_gates ?? [];
    assert.deepEqual(
      gates.map((g) => [g['todo_id'], g['gate_state'], g['successor_count']]),
      [
        ['todo_item1', 'blocking', 0],
        ['todo_item2', 'cleared_without_successor', 0],
        ['todo_item3', 'cleared_no_followup', 0],
        ['todo_item4', 'cleared_with_successor', 1],
        ['todo_item6', 'deferred', 0],
        ['todo_item7', 'superseded', 1],
        ['todo_item8', 'blocking', 0],
      ],
    );
    assert.deepEqual(gates[0], {
      schema_version: 'todo_handoff_gate_v1',
      gate_state: 'blocking',
      index: 1,
      done: false,
      status: 'open',
      text: 'Implement step 1',
      excluded_agents: ['codex-a', 'codex-b'],
      successor_count: 0,
      todo_id: 'todo_item1',
      role: 'agent',
      task_class: 'advancement_task',
      unblocks_todo_id: 'todo_item99',
    });
    assert.deepEqual(gates[3]?.['successor_todo_ids'], ['todo_item5']);
    assert.equal(gates[6]?.['route_continuation_replan_required'], true);
    // A gate owing a route replan (an open stale handoff closeout, here a watch-only monitor) holds the closure back.
    const monitorGate = (text: string) =>
      gate('open', { watch_only: 'true', cadence: '1h' }, { task_class: 'continuous_monitor', text });
    const quiet = summarize([todo({ status: 'done' }), monitorGate('Watch the handoff')]);
    const replan = summarize([todo({ status: 'done' }), monitorGate('Watch the stale handoff closeout')]);
    assert.deepEqual([quiet.terminal_closure_proof !== undefined, replan.terminal_closure_proof], [true, undefined]);
  });

  it('the todos the Next Action names: open ones, and the executable among them, without the completion fields', () => {
    const s = summarize(
      [
        todo({ metadata: { note: 'n', updated_at: '2026-07-01T00:00:00Z' } }),
        todo({ task_class: 'continuous_monitor' }),
        todo({ status: 'done' }),
        todo({ priority: 'P0', title: 'First', text: '[P0] First' }),
      ],
      { next: ['Continue todo_item1, todo_item2 and todo_item3.', 'Then todo_item4'] },
    );
    assert.deepEqual(ids(s.active_next_action_items), ['todo_item4', 'todo_item1', 'todo_item2']);
    assert.deepEqual(ids(s.active_next_action_executable_items), ['todo_item4', 'todo_item1']);
    const first = s.active_next_action_items?.[1] ?? {};
    assert.deepEqual(['note' in first, 'updated_at' in first], [false, false]);
    assert.equal(summarize([todo({})]).active_next_action_items, undefined);
    assert.deepEqual(
      [...nextActionTodoIds(['todo_ab and todo_abc-1; todo_X12, TODO_Y12'])],
      ['todo_abc-1', 'todo_x12'],
    );
  });
});
