import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadStatusAt } from '../../../support/status';
import {
  registryGoal,
  stateFileText,
  todoLines,
  writeRegistry,
  writeStateFile,
  type TodoFixture,
} from '../../../support/fixtureBuilders';
import { tempDir } from '../../../support/tempDir';
import { goalTodoIndex, todoIndex, rolloutEventsOfLog } from '../../../../src/core/status/reports/todoIndex';
import { parseStateDocument } from '../../../../src/core/state/document';
import { projectStateDocument } from '../../../../src/core/state/structured';
import { todoRecords } from '../../../../src/core/status/goalStatus';

/**
 * The status payload's `todo_index` (the original's todo_index.py `build_todo_index`; the mixed tier compares it with
 * the original's on seven workspaces, test/mixed/status.test.ts). Each rule pinned on a fixture of ours.
 */

/** The goal's structured todos as status builds them (their resume conditions read against the rollout log given). */
function todosOf(user: TodoFixture[], agent: TodoFixture[], archive: TodoFixture[] = [], log: string | null = null) {
  const text = stateFileText({ userTodos: user, agentTodos: agent });
  const doc = parseStateDocument(`${text}## Agent Todo Archive\n${archive.flatMap(todoLines).join('\n')}\n`);
  const records = todoRecords(
    doc,
    projectStateDocument(doc, { goalId: 'g', nextActionLimit: 3 }),
    { roots: [], homeDir: '/', exists: () => false },
    (log === null ? [] : rolloutEventsOfLog(log)) as unknown as readonly Record<string, unknown>[],
  );
  return { user: [...records.user.values()], agent: [...records.agent.values()] };
}

function event(fields: Record<string, unknown>): string {
  return JSON.stringify({ schema_version: 'loopx_rollout_event_v0', goal_id: 'g', ...fields });
}

describe('status: todo_index', () => {
  it('lists the 12 budgeted todos of each role: open by priority then position, deferred, then done in file order', () => {
    const agent: TodoFixture[] = [
      { id: 'todo_done1', text: 'Done first', done: true, meta: { task_class: 'advancement_task' } },
      ...Array.from({ length: 12 }, (_, i) => ({
        id: `todo_open${String(i).padStart(2, '0')}`,
        text: `Open ${i}`,
        priority: i === 11 ? 'P0' : 'P2',
        meta: { task_class: 'advancement_task' },
      })),
      { id: 'todo_later', text: 'Later', meta: { status: 'deferred', resume_when: 'todo_done:todo_open00' } },
    ];
    const part = goalTodoIndex('g', todosOf([], agent), null);
    const ids = part.rows.map((row) => row['todo_id']);
    assert.equal(part.current_count, 12);
    assert.deepEqual(part.budget, [], 'the agent view keeps claimed todos only');
    const claimed = goalTodoIndex(
      'g',
      todosOf([], [{ id: 'todo_mine1', text: 'Mine', meta: { claimed_by: 'codex-a' } }]),
      null,
    );
    assert.deepEqual(
      claimed.budget.map((row) => row['todo_id']),
      ['todo_mine1'],
    );
    assert.equal(ids[0], 'todo_open11', 'P0 first');
    assert.ok(!ids.includes('todo_done1') && !ids.includes('todo_later'), 'beyond the 12 of the role');
    const row = part.rows[0]!;
    assert.deepEqual(
      [row['schema_version'], row['goal_id'], row['source'], row['text'], row['title']],
      ['todo_index_item_v0', 'g', 'attention_queue', 'Open 11', 'Open 11'],
    );
  });

  it("each row is the summary's structured todo compacted: every key normalized once, the resume condition, key order", () => {
    // The original's rows on this fixture (status --format json, its todo_index), field by field.
    const part = goalTodoIndex(
      'g',
      todosOf(
        [],
        [
          {
            id: 'todo_fields',
            text: 'Ship the fields',
            priority: 'P1',
            meta: {
              task_class: 'advancement_task',
              task_domain: 'Web.ui',
              task_repository: 'https://github.com/o/r.git',
              capability_binding_ref: 'cap:thing.x',
              continuation_policy: 'independent_handoff',
              decision_scope_outcomes: 'approve|write_scope:goal:docs|todo_gate1',
              required_write_scopes: 'src,/abs,../up',
              required_capabilities: 'Web-Search,bad!cap',
              resume_when: 'pr_merged:#12',
              excluded_agents: 'codex-b',
              evidence: 'ci-green',
              no_followup: 'no_followup',
              created_by: 'someone',
            },
          },
          {
            id: 'todo_prev1',
            text: 'Done before',
            done: true,
            meta: { claimed_by: 'codex-a', successor_todo_ids: 'todo_after', task_class: 'advancement_task' },
          },
          {
            id: 'todo_after',
            text: 'After the archive',
            meta: { status: 'deferred', resume_when: 'todo_done:todo_archived', claimed_by: 'codex-a' },
          },
        ],
        [{ id: 'todo_archived', text: 'Old work', done: true, meta: { task_class: 'advancement_task' } }],
      ),
      null,
    );
    const byId = new Map(part.rows.map((row) => [row['todo_id'], row]));
    const fields = byId.get('todo_fields')!;
    assert.deepEqual(Object.keys(fields), [
      'index',
      'done',
      'text',
      'schema_version',
      'todo_id',
      'role',
      'status',
      'priority',
      'title',
      'archive_state',
      'source_section',
      'task_class',
      'task_domain',
      'capability_binding_ref',
      'task_repository',
      'continuation_policy',
      'required_write_scopes',
      'required_capabilities',
      'decision_scope_outcomes',
      'excluded_agents',
      'resume_when',
      'resume_condition',
      'resume_ready',
      'no_followup',
      'evidence',
      'handoff_note',
      'goal_id',
      'source',
    ]);
    assert.deepEqual(
      [
        fields['task_domain'],
        fields['capability_binding_ref'],
        fields['task_repository'],
        fields['continuation_policy'],
        fields['required_write_scopes'],
        fields['required_capabilities'],
        fields['no_followup'],
      ],
      ['web.ui', 'cap:thing.x', 'git:github.com/o/r', 'independent_handoff', ['src'], ['web_search'], true],
    );
    assert.deepEqual(fields['decision_scope_outcomes'], [
      {
        schema_version: 'todo_decision_scope_outcome_v0',
        outcome: 'approve',
        decision_scope: {
          schema_version: 'decision_scope_v0',
          kind: 'write_scope',
          granularity: 'goal',
          scope_key: 'docs',
        },
        source_todo_id: 'todo_gate1',
      },
    ]);
    assert.deepEqual(fields['resume_condition'], {
      schema_version: 'todo_resume_condition_v0',
      resume_when: 'pr_merged:#12',
      satisfied: false,
      kind: 'pr_merged',
      target: '#12',
      pr_number: 12,
      pr_repo: 'o/r',
      source: 'rollout_event_log',
      repository_binding_source: 'task_repository',
    });
    // The compact note, read as the raw handoff by the index's own note: its evidence ref is listed twice, as the original's.
    assert.deepEqual((fields['handoff_note'] as Record<string, unknown>)['evidence_refs'], [
      'todo:todo_fields:evidence',
      'todo:todo_fields:evidence',
    ]);
    const after = byId.get('todo_after')!;
    assert.deepEqual(
      [after['resume_ready'], after['resume_condition']],
      [
        true,
        {
          schema_version: 'todo_resume_condition_v0',
          resume_when: 'todo_done:todo_archived',
          satisfied: true,
          kind: 'todo_done',
          target: 'todo_archived',
          target_todo_id: 'todo_archived',
          target_status: 'done',
          target_archive_state: 'archive',
          target_source_section: 'Agent Todo Archive',
          target_task_class: 'advancement_task',
        },
      ],
    );
    // The agent view's budgeted todos are the summary's items as they are: structured, no handoff note.
    assert.deepEqual(
      part.budget.map((row) => [row['todo_id'], row['schema_version'], 'handoff_note' in row]),
      [
        ['todo_after', 'todo_item_v0', false],
        ['todo_prev1', 'todo_item_v0', false],
      ],
    );
  });

  it('a todo event updates its row; one of another todo becomes its own row; only todo_ events count', () => {
    const part = goalTodoIndex(
      'g',
      todosOf([], [{ id: 'todo_work1', text: 'Work', meta: { task_class: 'advancement_task' } }]),
      [
        event({
          event_kind: 'todo_claim',
          todo_id: 'todo_work1',
          agent_id: 'codex-a',
          recorded_at: '2026-01-01T00:00:00Z',
        }),
        event({ event_kind: 'todo_complete', todo_id: 'todo_work1', recorded_at: '2026-01-02T00:00:00Z' }),
        event({ event_kind: 'todo_supersede', todo_id: 'todo_gone1', summary: 'Gone' }),
        event({ event_kind: 'quota_slot_spent', todo_id: 'todo_work1' }),
        '{"schema_version":"other","event_kind":"todo_add","goal_id":"g","todo_id":"todo_x"}',
        '',
      ].join('\n'),
    );
    assert.equal(part.rollout_event_count, 3);
    const work = part.rows.find((row) => row['todo_id'] === 'todo_work1')!;
    assert.deepEqual(
      [
        work['event_count'],
        work['event_kinds'],
        work['latest_event_kind'],
        work['status'],
        work['done'],
        work['agent_id'],
      ],
      [2, ['todo_claim', 'todo_complete'], 'todo_complete', 'done', true, 'codex-a'],
    );
    const gone = part.rows.find((row) => row['todo_id'] === 'todo_gone1')!;
    assert.deepEqual(
      [gone['source'], gone['status'], gone['done'], gone['text'], gone['index'], gone['latest_event_at']],
      ['rollout_event_log', 'deferred', true, 'Gone', 0, null],
    );
  });

  it("a todo waiting on a merged PR: its row's resume condition read against the same log", () => {
    const log = [
      event({
        event_id: 'evt_m',
        event_kind: 'pr_merged',
        pr_ref: 'acme/app#12',
        recorded_at: '2026-01-03T00:00:00Z',
      }),
    ].join('\n');
    const part = goalTodoIndex(
      'g',
      todosOf(
        [],
        [
          { id: 'todo_waits1', text: 'After 12', meta: { status: 'deferred', resume_when: 'pr_merged:acme/app#12' } },
          { id: 'todo_waits2', text: 'After 13', meta: { status: 'deferred', resume_when: 'pr_merged:acme/app#13' } },
        ],
        [],
        log,
      ),
      log,
    );
    const row = (id: string) => part.rows.find((r) => r['todo_id'] === id)!;
    assert.deepEqual(
      [
        row('todo_waits1')['resume_ready'],
        (row('todo_waits1')['resume_condition'] as Record<string, unknown>)['matched_event_id'],
      ],
      [true, 'evt_m'],
    );
    assert.equal(row('todo_waits2')['resume_ready'], false);
    assert.equal((row('todo_waits2')['resume_condition'] as Record<string, unknown>)['pr_number'], 13);
  });

  it('reads only the last 500 lines of the log (blank ones counted)', () => {
    const lines = [event({ event_kind: 'todo_add', todo_id: 'todo_first' }), ...Array(500).fill('')];
    assert.equal(rolloutEventsOfLog(`${lines.join('\n')}\n`).length, 0);
    assert.equal(rolloutEventsOfLog(`${lines.slice(0, 500).join('\n')}\n`).length, 1);
  });

  it('sorts open rows first, then by goal and todo id; cuts at the limit; total_count counts all', () => {
    const a = goalTodoIndex('b-goal', todosOf([], [{ id: 'todo_bbb', text: 'B' }]), null);
    const b = goalTodoIndex(
      'a-goal',
      todosOf(
        [],
        [
          { id: 'todo_zzz', text: 'Z' },
          { id: 'todo_aaa', text: 'A', done: true },
        ],
      ),
      null,
    );
    const index = todoIndex([a, b], { limit: 2 });
    assert.deepEqual(
      index.items.map((row) => row['todo_id']),
      ['todo_zzz', 'todo_bbb'],
    );
    assert.deepEqual([index.total_count, index.current_projected_count, index.item_limit], [3, 3, 2]);
    const lane = todoIndex([a, b], { agentLane: true });
    assert.deepEqual(
      [lane.items, (lane.payload_compaction as { omitted_item_count: number }).omitted_item_count],
      [[], 3],
    );
  });

  it('a gate linked to a todo carries a handoff note for its goal and source', () => {
    const part = goalTodoIndex(
      'g',
      todosOf(
        [
          {
            id: 'todo_gate1',
            text: 'Approve it',
            priority: 'P0',
            meta: { task_class: 'user_gate', unblocks_todo_id: 'todo_work1' },
          },
        ],
        [{ id: 'todo_work1', text: 'Work' }],
      ),
      null,
    );
    assert.deepEqual(part.rows[0]!['handoff_note'], {
      schema_version: 'handoff_note_v0',
      handoff_id: 'handoff_gate1',
      todo_id: 'todo_gate1',
      goal_id: 'g',
      intent: 'user_gate',
      summary: 'Approve it',
      blocked_on: 'todo:todo_work1',
      suggested_next_action: 'Approve it',
      source: 'attention_queue',
      unblocks_todo_id: 'todo_work1',
    });
    assert.equal(part.rows[1]!['handoff_note'], undefined);
  });

  it('status: the payload carries the index (the log read with the goal, cached with its item), not the items', async () => {
    const dir = tempDir('loopx-todo-index-');
    const registryPath = writeRegistry(dir, [registryGoal(dir, 'g')]);
    writeStateFile(dir, 'g', stateFileText({ agentTodos: [{ id: 'todo_work1', text: 'Work' }] }));
    const log = path.join(dir, '.loopx', 'runtime', 'goals', 'g', 'rollout-event-log.jsonl');
    fs.mkdirSync(path.dirname(log), { recursive: true });
    fs.writeFileSync(log, `${event({ event_kind: 'todo_claim', todo_id: 'todo_work1', agent_id: 'codex-a' })}\n`);
    const first = await loadStatusAt({ registryPath, homeDir: dir });
    assert.deepEqual([first.todo_index.rollout_event_count, first.todo_index.items[0]?.['event_count']], [1, 1]);
    assert.equal('todo_index' in (first.attention_queue.items[0] as object), false);
    fs.appendFileSync(log, `${event({ event_kind: 'todo_complete', todo_id: 'todo_work1' })}\n`);
    const second = await loadStatusAt({ registryPath, homeDir: dir });
    assert.deepEqual([second.todo_index.rollout_event_count, second.todo_index.items[0]?.['status']], [2, 'done']);
  });
});
