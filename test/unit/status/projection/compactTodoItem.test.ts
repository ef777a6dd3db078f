import assert from 'node:assert/strict';
import {
  applyResumeConditions,
  budgetedItems,
  compactTodoItem,
  structuredTodo,
  type SourceTodo,
  type TodoRecord,
} from '../../../../src/core/status/projection/compactTodoItem';

/**
 * One todo as the original's status shows it (todo_summary.py `structured_todo_item`, `compact_todo_item`,
 * `apply_resume_conditions`, handoff_note.py): each rule pinned on a fixture of ours. The mixed tier compares the same
 * fields with the original's own on its scenarios.
 */

let nextIndex = 1;
function source(over: Partial<SourceTodo> = {}): SourceTodo {
  const index = over.index ?? nextIndex++;
  return {
    index,
    status: 'open',
    text: `Implement step ${index}`,
    todo_id: `todo_step${index}`,
    priority: null,
    title: `Implement step ${index}`,
    metadata: {},
    ...over,
  };
}

const agent = (over: Partial<SourceTodo> = {}): TodoRecord => structuredTodo(source(over), 'agent', 'Agent Todo');

describe('status todo items: the original structured todo and its compact_todo_item', () => {
  beforeEach(() => {
    nextIndex = 1;
  });

  it('items: open by priority then position, then deferred likewise, then done in file order; 12 at most', () => {
    const todos = [
      agent({ status: 'done' }),
      agent({ status: 'deferred' }),
      agent({}),
      agent({ priority: 'P2', title: 'x', text: '[P2] x' }),
      agent({ status: 'deferred', priority: 'P0', title: 'y', text: '[P0] y' }),
      agent({ status: 'blocked', priority: 'P1', title: 'z', text: '[P1] z' }),
      agent({ status: 'done', priority: 'P0', title: 'w', text: '[P0] w' }),
    ];
    assert.deepEqual(
      budgetedItems(todos).map((t) => t['todo_id']),
      ['todo_step6', 'todo_step4', 'todo_step3', 'todo_step5', 'todo_step2', 'todo_step1', 'todo_step7'],
    );
    const many = Array.from({ length: 15 }, () => agent({}));
    assert.deepEqual(
      budgetedItems(many).map((t) => t['index']),
      Array.from({ length: 12 }, (_, i) => i + 8),
    );
  });

  it("normalizes each metadata key of the original's schema as its parser does, and drops the others", () => {
    const item = agent({
      metadata: {
        action_kind: 'Implement',
        task_domain: 'Docs.Notes',
        capability_binding_ref: 'MCP:search.web',
        task_repository: 'git@github.com:Acme/Notes.git',
        continuation_policy: 'primary_review',
        required_write_scopes: 'notes/,/etc,../x;notes/|a b',
        required_capabilities: 'Web-Search,bad!,web_search',
        target_capabilities: 'gpu',
        explore_result_node_refs: 'n1,n2,n1,9bad',
        decision_outcome: ' Approve ',
        decision_scope_outcomes:
          'approve|public_claim:goal:wiki|todo_gate_one,reject|public_claim:goal:wiki|todo_gate_two,bogus',
        excluded_agents: 'codex-b,Codex A,codex-b,!!',
        goal_bound: 'no',
        global_gate: 'maybe',
        no_followup: 'false',
        successor_todo_ids: 'todo_next_one then TODO_NEXT_TWO',
        completion_continuation: 'Successor',
        completion_recovery: 'same_turn_terminal_closeout',
        replan_obligation_id: 'replan-0123456789abcdef',
        resume_when: 'Weather-Clear',
        watch_only: 'true',
        consecutive_no_change: '2',
        note: 'in  progress',
        superseded_by: 'TODO_newer',
        created_by: 'someone',
        last_actor_agent_id: 'codex-a',
        validation_command: 'npm%20test',
        validation_label: 'tests',
      },
    });
    const { index, done, status, text, todo_id, ...fields } = item;
    assert.deepEqual([index, done, status, text, todo_id], [1, false, 'open', 'Implement step 1', 'todo_step1']);
    assert.deepEqual(fields, {
      archive_state: 'active',
      source_section: 'Agent Todo',
      role: 'agent',
      schema_version: 'todo_item_v0',
      task_class: 'advancement_task',
      action_kind: 'implement',
      task_domain: 'docs.notes',
      capability_binding_ref: 'mcp:search.web',
      task_repository: 'git:github.com/Acme/Notes',
      removed_continuation_policy: 'primary_review',
      required_write_scopes: ['notes/'],
      required_capabilities: ['web_search'],
      target_capabilities: ['gpu'],
      explore_result_node_refs: ['n1', 'n2'],
      decision_outcome: 'approve',
      decision_scope_outcomes: [
        {
          schema_version: 'todo_decision_scope_outcome_v0',
          outcome: 'reject',
          decision_scope: {
            schema_version: 'decision_scope_v0',
            kind: 'public_claim',
            granularity: 'goal',
            scope_key: 'wiki',
          },
          source_todo_id: 'todo_gate_two',
        },
      ],
      goal_bound: false,
      excluded_agents: ['codex-a', 'codex-b'],
      // `todo_` tokens are matched lower-case only (its `\btodo_…` pattern), then the whole value.
      successor_todo_ids: ['todo_next_one'],
      completion_continuation: 'successor',
      completion_recovery: 'same_turn_terminal_closeout',
      replan_obligation_id: 'replan-0123456789abcdef',
      resume_when: 'weather-clear',
      no_followup: false,
      watch_only: 'true',
      consecutive_no_change: '2',
      note: 'in progress',
      superseded_by: 'todo_newer',
      completion_validation_required: true,
    });
  });

  it('gives each resume_when its condition: todo_done (either role, the archive), pr_merged, capacity, unsupported', () => {
    const done = agent({ status: 'done', todo_id: 'todo_first', metadata: { claimed_by: 'codex-a' } });
    const archived = structuredTodo(source({ status: 'done', todo_id: 'todo_archived' }), null, 'Archive', 'archive');
    const waiting = [
      agent({ status: 'deferred', metadata: { resume_when: 'todo_done:todo_first' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'todo_done:todo_archived' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'todo_done:todo_nowhere' } }),
      agent({ metadata: { resume_when: 'todo_done:todo_open_one' } }),
      agent({ todo_id: 'todo_open_one' }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:acme/notes#7' } }),
      agent({
        status: 'deferred',
        metadata: { resume_when: 'pr_merged:#532', task_repository: 'https://github.com/Acme/Notes.git' },
      }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:#9', task_repository: 'git@gitlab.com:a/b' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:#9' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:532' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'capacity_available:gpu' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'capacity_available' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'weather_clear' } }),
    ];
    applyResumeConditions([done, ...waiting], [archived]);
    const base = { schema_version: 'todo_resume_condition_v0', satisfied: false };
    const [
      first,
      fromArchive,
      missing,
      open,
      ,
      qualified,
      byRepository,
      notGithub,
      noRepository,
      invalid,
      capacity,
      bare,
      unknown,
    ] = waiting;
    assert.deepEqual(first?.['resume_condition'], {
      ...base,
      resume_when: 'todo_done:todo_first',
      kind: 'todo_done',
      target: 'todo_first',
      target_todo_id: 'todo_first',
      target_status: 'done',
      target_archive_state: 'active',
      target_source_section: 'Agent Todo',
      target_task_class: 'advancement_task',
      target_claimed_by: 'codex-a',
      satisfied: true,
    });
    assert.equal(first?.['resume_ready'], true);
    assert.equal(fromArchive?.['resume_ready'], true);
    assert.equal((fromArchive?.['resume_condition'] as TodoRecord)['target_archive_state'], 'archive');
    assert.deepEqual(missing?.['resume_condition'], {
      ...base,
      resume_when: 'todo_done:todo_nowhere',
      kind: 'todo_done',
      target: 'todo_nowhere',
      target_todo_id: 'todo_nowhere',
      target_status: null,
    });
    assert.equal(open?.['resume_ready'], false);
    assert.equal((open?.['resume_condition'] as TodoRecord)['target_status'], 'open');
    const pr = { ...base, kind: 'pr_merged', source: 'rollout_event_log' };
    assert.deepEqual(qualified?.['resume_condition'], {
      ...pr,
      resume_when: 'pr_merged:acme/notes#7',
      target: 'acme/notes#7',
      pr_number: 7,
      pr_repo: 'acme/notes',
      repository_binding_source: 'qualified_resume_when',
    });
    assert.deepEqual(byRepository?.['resume_condition'], {
      ...pr,
      resume_when: 'pr_merged:#532',
      target: '#532',
      pr_number: 532,
      pr_repo: 'acme/notes',
      repository_binding_source: 'task_repository',
    });
    const ambiguous = { ...pr, resume_when: 'pr_merged:#9', target: '#9', pr_number: 9, pr_repo: null };
    assert.deepEqual(notGithub?.['resume_condition'], {
      ...ambiguous,
      repository_binding_state: 'ambiguous',
      repository_binding_reason: 'task_repository_not_github',
      candidate_pr_refs: [],
    });
    assert.equal(
      (noRepository?.['resume_condition'] as TodoRecord)['repository_binding_reason'],
      'task_repository_missing',
    );
    assert.deepEqual(invalid?.['resume_condition'], {
      ...pr,
      resume_when: 'pr_merged:532',
      target: '532',
      pr_number: null,
      pr_repo: null,
      invalid_target: true,
    });
    assert.deepEqual(capacity?.['resume_condition'], {
      ...base,
      resume_when: 'capacity_available:gpu',
      kind: 'capacity_available',
      target: 'gpu',
      provider: 'runtime_available_capabilities',
      provider_required: true,
      capability: 'gpu',
    });
    assert.deepEqual(bare?.['resume_condition'], {
      ...base,
      resume_when: 'capacity_available',
      kind: 'capacity_available',
      unsupported: true,
    });
    assert.equal((unknown?.['resume_condition'] as TodoRecord)['unsupported'], true);
    assert.equal(unknown?.['resume_ready'], false);
    assert.equal(done['resume_condition'], undefined, 'no resume_when, no condition');
  });

  it('satisfies pr_merged from the rollout event log: a merge event of that PR and repository, the first one', () => {
    const event = (id: string, kind: string, extra: TodoRecord): TodoRecord => ({
      event_id: id,
      event_kind: kind,
      recorded_at: `2026-07-0${id.slice(-1)}T00:00:00+00:00`,
      ...extra,
    });
    const events = [
      event('evt_1', 'todo_complete', { pr_ref: 'acme/notes#7' }),
      event('evt_2', 'pr_merged', { pr_ref: 'other/notes#7' }),
      event('evt_3', 'PR_Merged', { pr_ref: 'Acme/Notes#7' }),
      event('evt_4', 'pull_request_merged', { code_refs: { pr_ref: 'https://github.com/acme/notes/pull/532' } }),
      event('evt_5', 'pr_merge', {
        source_refs: [
          { kind: 'PR', ref: 'zeta/repo#9' },
          { kind: 'issue', ref: 'x/y#9' },
        ],
      }),
      event('evt_6', 'pull_request_merge', { source_refs: [{ kind: 'pull_request', ref: 'alpha/repo#9' }] }),
      event('evt_7', 'pr_merged', { pr_ref: 'acme/notes#7' }),
    ];
    const [qualified, byRepository, wrongRepository, ambiguous] = [
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:acme/notes#7' } }),
      agent({
        status: 'deferred',
        metadata: { resume_when: 'pr_merged:#532', task_repository: 'https://github.com/Acme/Notes.git' },
      }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:acme/other#7' } }),
      agent({ status: 'deferred', metadata: { resume_when: 'pr_merged:#9' } }),
    ] as [TodoRecord, TodoRecord, TodoRecord, TodoRecord];
    applyResumeConditions([qualified, byRepository, wrongRepository, ambiguous], [], events);
    const pr = { schema_version: 'todo_resume_condition_v0', kind: 'pr_merged', source: 'rollout_event_log' };
    // The first merge event naming the PR in that repository (case aside): not a todo event, not another repository.
    assert.deepEqual(qualified['resume_condition'], {
      ...pr,
      resume_when: 'pr_merged:acme/notes#7',
      target: 'acme/notes#7',
      satisfied: true,
      pr_number: 7,
      pr_repo: 'acme/notes',
      repository_binding_source: 'qualified_resume_when',
      matched_event_id: 'evt_3',
      matched_event_kind: 'PR_Merged',
      matched_pr_ref: 'acme/notes#7',
      matched_event_at: '2026-07-03T00:00:00+00:00',
    });
    assert.equal(qualified['resume_ready'], true);
    assert.equal((byRepository['resume_condition'] as TodoRecord)['matched_event_id'], 'evt_4');
    assert.equal((byRepository['resume_condition'] as TodoRecord)['matched_pr_ref'], 'acme/notes#532');
    assert.equal(byRepository['resume_ready'], true);
    assert.equal(wrongRepository['resume_ready'], false);
    assert.equal((wrongRepository['resume_condition'] as TodoRecord)['matched_event_id'], undefined);
    // Without a repository: never satisfied, the merged PRs of that number listed (sorted; pull-request refs only).
    assert.deepEqual(ambiguous['resume_condition'], {
      ...pr,
      resume_when: 'pr_merged:#9',
      target: '#9',
      satisfied: false,
      pr_number: 9,
      pr_repo: null,
      repository_binding_state: 'ambiguous',
      repository_binding_reason: 'task_repository_missing',
      candidate_pr_refs: ['alpha/repo#9', 'zeta/repo#9'],
    });
    assert.equal(ambiguous['resume_ready'], false);
  });

  it('compacts a todo: its keys in order, and a handoff note only when it hands off', () => {
    const plain = compactTodoItem(agent({ metadata: { claimed_by: 'codex-a', note: 'half way' } }));
    assert.deepEqual(plain, {
      index: 1,
      done: false,
      text: 'Implement step 1',
      schema_version: 'todo_item_v0',
      todo_id: 'todo_step1',
      role: 'agent',
      status: 'open',
      archive_state: 'active',
      source_section: 'Agent Todo',
      task_class: 'advancement_task',
      claimed_by: 'codex-a',
      note: 'half way',
    });
    const handing = compactTodoItem(
      agent({
        priority: 'P1',
        title: 'Ship it',
        text: '[P1] Ship it',
        metadata: {
          claimed_by: 'codex-a',
          action_kind: 'implement',
          excluded_agents: 'codex-b',
          successor_todo_ids: 'todo_after',
          resume_when: 'todo_done:todo_before',
          evidence: 'tests pass',
          note: 'token=abc123',
          reason: 'waiting on review',
          decision_scope: 'public_claim:goal:wiki',
        },
      }),
    );
    assert.deepEqual(handing['handoff_note'], {
      schema_version: 'handoff_note_v0',
      handoff_id: 'handoff_step2',
      todo_id: 'todo_step2',
      to_agent: 'codex-a',
      intent: 'implement',
      // The note looks like a credential: the summary takes the reason.
      summary: 'waiting on review',
      evidence_refs: ['todo:todo_step2:evidence', 'todo:todo_step2:note'],
      unresolved_decisions: [
        { schema_version: 'decision_scope_v0', kind: 'public_claim', granularity: 'goal', scope_key: 'wiki' },
      ],
      blocked_on: 'todo_done:todo_before',
      suggested_next_action: 'Ship it',
      successor_todo_ids: ['todo_after'],
      excluded_agents: ['codex-b'],
    });
    const excludedOnly = compactTodoItem(agent({ metadata: { excluded_agents: 'codex-b' } }));
    assert.deepEqual(
      (excludedOnly['handoff_note'] as TodoRecord)['excluded_agents'],
      ['codex-b'],
      'excluding is a signal',
    );
    const superseded = compactTodoItem(agent({ status: 'done', metadata: { superseded_by: 'todo_newer' } }));
    assert.deepEqual(
      [superseded['done'], (superseded['handoff_note'] as TodoRecord)['blocked_on']],
      [true, 'todo:todo_newer'],
    );
    assert.equal((superseded['handoff_note'] as TodoRecord)['intent'], 'advancement_task', 'no action kind: the class');
    const long = 'word '.repeat(80).trim();
    const cut = compactTodoItem(agent({ text: long, metadata: { unblocks_todo_id: 'todo_held' } }));
    const summary = (cut['handoff_note'] as TodoRecord)['summary'] as string;
    // 279 characters (the cut falls after a whole word) and `...`.
    assert.equal(summary.length, 279 + 3);
    assert.ok(summary.endsWith('word...'), summary);
  });
});
