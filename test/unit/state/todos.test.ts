import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { deriveTodoId, parseStateDocument } from '../../../src/core/state/document';
import {
  addTodo,
  claimTodo,
  completeTodo,
  deferTodo,
  findTodo,
  listTodos,
  supersedeTodo,
  updateTodo,
  type OperationContext,
} from '../../../src/core/state/todos';
import { splitLines } from '../../../src/core/state/lines';

const CORPUS = path.join(__dirname, '../../fixtures/state/corpus');
const fixture = (name: string): string => fs.readFileSync(path.join(CORPUS, name), 'utf8');
const NOW = '2026-07-01T00:00:00Z';
// A goal whose roster holds the agents these tests use (a goal without one accepts no agent id).
const legacy: OperationContext = { now: NOW, goalId: 'g', roster: ['codex-main', 'codex-side'] };
const rostered: OperationContext = { now: NOW, goalId: 'g', roster: ['codex-main', 'codex-side'] };

function throwsCode(fn: () => unknown, code: string, message?: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isLoopxError(error), `expected a LoopxError, got ${String(error)}`);
    assert.equal(error.code, code, error.message);
    if (message) assert.match(error.message, message);
    return true;
  });
}

const STATE = fixture('spec-state-format.md');

describe('todo add', () => {
  it('appends after the last todo of the role with an explicit id derived as the original would', () => {
    const result = addTodo(STATE, { role: 'agent', text: 'Write   the docs.', priority: 'P2' }, legacy);
    const lines = result.text.split('\n');
    const at = lines.indexOf('- [ ] [P2] Write the docs.');
    assert.equal(
      lines[at - 1],
      '  <!-- loopx:todo todo_id=todo_primary status=open task_class=advancement_task claimed_by=codex-main -->',
    );
    const expectedId = deriveTodoId('agent', 'Agent Todo', 2, '[P2] Write the docs.');
    assert.equal(
      lines[at + 1],
      `  <!-- loopx:todo todo_id=${expectedId} status=open updated_at=${NOW} -->`,
      'as in the original, an add without --task-class writes none',
    );
    assert.equal(result.summary.todo_id, expectedId);
    assert.equal(result.summary.todo.priority, 'P2');
    assert.equal(result.summary.todo.index, 2);
    // The original leaves a blank line between the todo and the next heading (`insert_into_existing_section`).
    assert.equal(lines[at + 2], '');
    assert.equal(lines[at + 3], '## Next Action');
    // Nothing else moved but the front matter's updated_at (bumped, as the original does).
    assert.equal(
      result.text.replace(`${lines[at]}\n${lines[at + 1]}\n\n`, ''),
      STATE.replace(/^updated_at: .*$/m, `updated_at: ${NOW}`),
    );
  });

  it('re-adding the text of a blocked todo reopens it, of a deferred one adds a new todo, as the original does (kit seed 1 todo-022)', () => {
    const blockedState = [
      '## Agent Todo',
      '',
      '- [ ] [P0] Implement the parser fixture',
      '  <!-- loopx:todo todo_id=todo_parser status=blocked task_class=advancement_task claimed_by=codex-side -->',
      '- [-] [P1] Later work',
      '  <!-- loopx:todo todo_id=todo_later status=deferred task_class=advancement_task updated_at=2026-01-01T00:00:00Z -->',
      '',
    ].join('\n');
    const blocked = addTodo(blockedState, { role: 'agent', text: '[P0] Implement the parser fixture' }, legacy);
    assert.equal(blocked.added, false);
    assert.equal(blocked.summary.todo.status, 'open');
    assert.match(
      blocked.text,
      new RegExp(
        `- \\[ \\] \\[P0\\] Implement the parser fixture\n {2}<!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task claimed_by=codex-side updated_at=${NOW} -->`,
      ),
    );
    // A deferred todo is finished for an add (the original's terminal statuses): its text is added as a new todo,
    // the deferred one stays as it was (kit seeds 6 todo-012, 7 todo-022).
    const deferred = addTodo(blockedState, { role: 'agent', text: '[P1] Later work' }, legacy);
    assert.equal(deferred.added, true);
    assert.equal(deferred.summary.todo.status, 'open');
    assert.notEqual(deferred.summary.todo_id, 'todo_later');
    assert.match(deferred.text, /- \[-\] \[P1\] Later work\n {2}<!-- loopx:todo todo_id=todo_later status=deferred /);
  });

  it('binds user todos as the original does and refuses unscoped ones on multi-agent goals (kit seed 1 todo-001/-007/-010/-016)', () => {
    const solo: OperationContext = { now: NOW, goalId: 'g', roster: ['codex-main'] };
    const meta = (result: ReturnType<typeof addTodo>) =>
      result.text.split('\n').find((l) => l.includes(result.summary.todo_id));
    // One agent: the user todo is for it.
    assert.equal(
      meta(addTodo(STATE, { role: 'user', text: 'Read the packet.' }, solo))?.trim(),
      `<!-- loopx:todo todo_id=${addTodo(STATE, { role: 'user', text: 'Read the packet.' }, solo).summary.todo_id} status=open task_class=user_action bound_agent=codex-main updated_at=${NOW} -->`,
    );
    // A gate blocking one agent binds to it; a global gate is goal-bound.
    const scoped = addTodo(
      STATE,
      { role: 'user', text: 'Approve.', taskClass: 'user_gate', gate: { blocksAgent: 'codex-main' } },
      legacy,
    );
    assert.match(meta(scoped) ?? '', / bound_agent=codex-main blocks_agent=codex-main /);
    const global = addTodo(
      STATE,
      { role: 'user', text: 'Approve all.', taskClass: 'user_gate', gate: { globalGate: true } },
      legacy,
    );
    assert.match(meta(global) ?? '', / goal_bound=true global_gate=true /);
    // The authoring agent scopes and binds it.
    const authored = addTodo(
      STATE,
      { role: 'user', text: 'Approve it.', taskClass: 'user_gate' },
      { ...legacy, actorAgentId: 'codex-side' },
    );
    assert.match(meta(authored) ?? '', / bound_agent=codex-side blocks_agent=codex-side /);
    // Several agents and no scope: refused, before a todo of the same text is looked for.
    throwsCode(
      () =>
        addTodo(
          STATE,
          { role: 'user', text: '[P0] Approve the public release packet.', taskClass: 'user_gate' },
          legacy,
        ),
      'gate_scope_required',
      /^multi-agent user_gate requires an explicit scope/,
    );
    throwsCode(() => addTodo(STATE, { role: 'user', text: 'Read it.' }, legacy), 'todo_binding_required');
    assert.match(
      meta(addTodo(STATE, { role: 'user', text: 'Read it.', gate: { goalBound: true } }, legacy)) ?? '',
      / goal_bound=true /,
    );
    throwsCode(
      () =>
        addTodo(
          STATE,
          {
            role: 'user',
            text: 'x',
            taskClass: 'user_gate',
            gate: { blocksAgent: 'codex-main', boundAgent: 'codex-side' },
          },
          legacy,
        ),
      'todo_binding_conflict',
    );
    throwsCode(
      () => addTodo(STATE, { role: 'agent', text: 'x', gate: { boundAgent: 'codex-main' } }, legacy),
      'todo_binding_user_only',
    );
  });

  it('creates the role section when there is none, before Next Action', () => {
    const unrostered: OperationContext = { now: NOW, goalId: 'g', roster: null };
    const result = addTodo(fixture('p1-implicit-ids.md'), { role: 'user', text: 'Review the fixture.' }, unrostered);
    assert.match(
      result.text,
      /^## User Todo \/ Owner Review Reading Queue\n\n- \[ \] Review the fixture\.\n {2}<!-- loopx:todo todo_id=todo_[0-9a-f]{12} status=open task_class=user_action updated_at=\S+ -->\n\n## Agent Todo/,
      "the original's new section: a blank line after its heading and after its todo",
    );
    const appended = addTodo('Just prose', { role: 'agent', text: 'First.' }, legacy);
    assert.match(appended.text, /^Just prose\n\n## Agent Todo\n\n- \[ \] First\.\n {2}<!--[^\n]*-->\n$/);
  });

  it('adds a gate as a user_gate with its relations, and refuses relations it cannot check', () => {
    const gate = addTodo(
      STATE,
      {
        role: 'user',
        text: 'Approve the release.',
        gate: {
          blocksAgent: 'Codex-Main',
          unblocksTodoIds: ['todo_primary'],
          decisionScope: 'public_claim:project:release',
        },
      },
      rostered,
    );
    assert.deepEqual(
      {
        task_class: gate.summary.todo.task_class,
        blocks: gate.summary.todo.metadata['blocks_agent'],
        target: gate.summary.todo.metadata['unblocks_todo_id'],
      },
      { task_class: 'user_gate', blocks: 'codex-main', target: 'todo_primary' },
    );
    throwsCode(
      () =>
        addTodo(STATE, { role: 'user', text: 'x', gate: { globalGate: true, unblocksTodoIds: ['todo_nope'] } }, legacy),
      'todo_not_found',
    );
    throwsCode(
      () => addTodo(STATE, { role: 'user', text: 'x', gate: { globalGate: true, decisionScope: 'release' } }, legacy),
      'invalid_decision_scope',
    );
    throwsCode(
      () => addTodo(STATE, { role: 'agent', text: 'x', gate: { globalGate: true } }, legacy),
      'todo_gate_fields_need_user_gate',
    );
    throwsCode(
      () => addTodo(STATE, { role: 'user', text: 'x', gate: { blocksAgent: 'stranger' } }, rostered),
      'agent_not_registered',
    );
  });

  it('refuses empty text, conflicting priorities and classes of the other role', () => {
    throwsCode(() => addTodo(STATE, { role: 'agent', text: '  ' }, legacy), 'todo_text_required');
    throwsCode(
      () => addTodo(STATE, { role: 'agent', text: '[P1] x', priority: 'P3' }, legacy),
      'todo_priority_conflict',
    );
    throwsCode(
      () => addTodo(STATE, { role: 'agent', text: 'x', taskClass: 'user_gate' }, legacy),
      'task_class_role_mismatch',
    );
    throwsCode(() => addTodo(STATE, { role: 'agent', text: 'x', taskClass: 'chore' }, legacy), 'invalid_task_class');
  });

  it('never writes an id another todo already has', () => {
    // A text whose derived id at index 1 equals an existing explicit id forces the fallback.
    const id = deriveTodoId('agent', 'Agent Todo', 1, 'Same.');
    const text = `## Agent Todo\n## User Todo\n- [ ] Other.\n  <!-- loopx:todo todo_id=${id} -->\n`;
    const result = addTodo(text, { role: 'agent', text: 'Same.' }, legacy);
    assert.notEqual(result.summary.todo_id, id);
    assert.equal(parseStateDocument(result.text).todos.length, 2);
  });
});

describe('todo list', () => {
  it('lists active todos with the original field names, archive excluded', () => {
    const doc = parseStateDocument(fixture('spec-control-plane.md'));
    const items = listTodos(doc);
    assert.deepEqual(
      items.map((i) => [i.role, i.todo_id, i.status, i.claimed_by, i.task_class, i.line, i.section]),
      [
        ['agent', 'todo_ab12cd34ef56', 'open', 'codex-main', 'advancement_task', 5, 'Agent Todo'],
        ['user', 'todo_0011aabbccdd', 'open', null, 'user_gate', 8, 'User Todo'],
      ],
    );
    assert.deepEqual(Object.keys(items[0] ?? {}).slice(0, 9), [
      'index',
      'done',
      'text',
      'title',
      'todo_id',
      'todo_id_source',
      'priority',
      'status',
      'claimed_by',
    ]);
    const r2 = parseStateDocument(fixture('r2-fallback.md'));
    assert.equal(listTodos(r2).length, 3);
    assert.equal(listTodos(r2, { includeTerminal: true }).length, 5);
    assert.equal(listTodos(r2, { status: 'deferred' }).length, 1);
  });
});

describe('todo claim', () => {
  it('claims for a registered agent, normalizing the id', () => {
    const text = addTodo(STATE, { role: 'agent', text: 'Unclaimed.' }, legacy).text;
    const id = listTodos(parseStateDocument(text)).find((t) => t.text === 'Unclaimed.')?.todo_id ?? '';
    const result = claimTodo(text, { todoId: id, agentId: 'Codex Side' }, rostered);
    assert.equal(result.summary.todo.claimed_by, 'codex-side');
    assert.deepEqual(result.summary.changed_fields, ['claimed_by']);
    const again = claimTodo(result.text, { todoId: id, agentId: 'codex-side' }, rostered);
    assert.equal(again.changed, false);
    assert.equal(again.text, result.text);
  });

  it('uses the spec texts for agents off the roster and for invalid ids', () => {
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_primary', agentId: 'zz' }, { ...rostered, roster: ['a1', 'a2'] }),
      'agent_not_registered',
      /^claimed_by='zz' is not registered for goal 'g'; registered_agents=a1, a2$/,
    );
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_primary', agentId: '9' }, rostered),
      'agent_id_invalid',
      /claimed_by must be a public-safe registered agent id/,
    );
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_primary', agentId: 'a1' }, { ...rostered, roster: [] }),
      'agent_registry_roster_missing',
      /has no coordination\.registered_agents list.*--registered-agent a1 --execute/,
    );
    throwsCode(() => claimTodo(STATE, { todoId: 'todo_primary', agentId: '9' }, legacy), 'agent_id_invalid');
  });

  it("refuses to take another agent's claim without takeover, user todos, terminal and excluded todos", () => {
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_primary', agentId: 'codex-side' }, rostered),
      'todo_claimed_by_other_agent',
      /it is claimed_by='codex-main' \(pass --takeover/,
    );
    assert.equal(
      claimTodo(STATE, { todoId: 'todo_primary', agentId: 'codex-side', takeover: true }, rostered).summary.todo
        .claimed_by,
      'codex-side',
    );
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_user_gate', agentId: 'codex-main' }, rostered),
      'todo_claim_agent_only',
    );
    throwsCode(
      () => claimTodo(STATE, { todoId: 'todo_missing', agentId: 'codex-main' }, rostered),
      'todo_not_found',
      /loopx todo list/,
    );
    const excluded = STATE.replace('claimed_by=codex-main', 'excluded_agents=codex-main,codex-x');
    throwsCode(
      () => claimTodo(excluded, { todoId: 'todo_primary', agentId: 'codex-main' }, rostered),
      'todo_agent_excluded',
    );
    const deferred = deferTodo(STATE, { todoId: 'todo_primary', reason: 'later' }, legacy).text;
    throwsCode(() => claimTodo(deferred, { todoId: 'todo_primary', agentId: 'codex-main' }, rostered), 'todo_terminal');
  });

  it('refuses an ambiguous id, naming the lines to fix', () => {
    throwsCode(
      () => claimTodo(fixture('p2-duplicate-ids.md'), { todoId: 'todo_duplicate', agentId: 'codex-main' }, legacy),
      'todo_id_ambiguous',
      /lines 5, 7/,
    );
  });
});

describe('todo update', () => {
  it('rewrites the text keeping the priority, and writes the derived id of an implicit todo explicitly', () => {
    const p1 = fixture('p1-implicit-ids.md');
    const result = updateTodo(
      p1,
      { todoId: 'todo_a5103e3d07e1', text: 'Implement the bigger parser fixture.' },
      legacy,
    );
    assert.match(
      result.text,
      /- \[ \] \[P0\] Implement the bigger parser fixture\.\n {2}<!-- loopx:todo todo_id=todo_a5103e3d07e1 updated_at=\S+ -->\n/,
    );
    assert.equal(result.summary.todo.todo_id_source, 'metadata');
    assert.equal(
      findTodo(parseStateDocument(result.text), 'todo_a5103e3d07e1').text,
      '[P0] Implement the bigger parser fixture.',
    );
  });

  it('changes priority, status, class, note and claim', () => {
    const result = updateTodo(
      STATE,
      { todoId: 'todo_primary', priority: 'P3', status: 'blocked', note: 'waits on CI', claimedBy: null },
      legacy,
    );
    const todo = result.summary.todo;
    assert.deepEqual(
      [todo.text, todo.status, todo.claimed_by, todo.metadata['note']],
      ['[P3] Validate the primary lane.', 'blocked', null, 'waits on CI'],
    );
    assert.deepEqual(result.summary.changed_fields, ['text', 'status', 'claimed_by', 'note']);
    const withMetaPriority = '## Agent Todo\n- [ ] Plain.\n  <!-- loopx:todo todo_id=todo_meta_prio priority=P2 -->\n';
    assert.equal(
      updateTodo(withMetaPriority, { todoId: 'todo_meta_prio', priority: 'P0' }, legacy).summary.todo.priority,
      'P0',
    );
    assert.match(
      updateTodo(withMetaPriority, { todoId: 'todo_meta_prio', priority: 'P0' }, legacy).text,
      // Keys the original does not know (it drops them) stay, after the ones it orders.
      /- \[ \] Plain\.\n {2}<!-- loopx:todo todo_id=todo_meta_prio updated_at=\S+ priority=P0 -->/,
    );
  });

  it('refuses a claim or update that leaves a continuous_monitor unbounded, as the original does (kit seed 5 todo-007)', () => {
    const monitor = (meta: string) =>
      [
        '## Agent Todo',
        '',
        '- [ ] Watch the deploy',
        `  <!-- loopx:todo todo_id=todo_watch status=open ${meta} -->`,
        '',
      ].join('\n');
    const unbounded = monitor('task_class=continuous_monitor');
    throwsCode(
      () => claimTodo(unbounded, { todoId: 'todo_watch', agentId: 'codex-main' }, rostered),
      'todo_monitor_unbounded',
    );
    throwsCode(
      () => updateTodo(unbounded, { todoId: 'todo_watch', note: 'still watching' }, legacy),
      'todo_monitor_unbounded',
    );
    // Bounded by an expiry, a resume condition or watch_only: the claim goes through.
    for (const bound of ['expires_at=2026-12-31T00:00:00Z', 'resume_when=todo_done:todo_other', 'watch_only=true'])
      assert.match(
        claimTodo(
          monitor(`task_class=continuous_monitor ${bound}`),
          { todoId: 'todo_watch', agentId: 'codex-main' },
          rostered,
        ).text,
        /claimed_by=codex-main/,
      );
    // Turning an advancement todo into an unbounded monitor is refused too; any other todo is not concerned.
    const plain = monitor('task_class=advancement_task');
    throwsCode(
      () => updateTodo(plain, { todoId: 'todo_watch', taskClass: 'continuous_monitor' }, legacy),
      'todo_monitor_unbounded',
    );
    assert.match(
      claimTodo(plain, { todoId: 'todo_watch', agentId: 'codex-main' }, rostered).text,
      /claimed_by=codex-main/,
    );
  });

  it('refuses done todos; a deferred todo must be resumed with status open', () => {
    const done = completeTodo(STATE, { todoId: 'todo_primary', evidence: 'ok', noFollowUp: true }, legacy).text;
    throwsCode(() => updateTodo(done, { todoId: 'todo_primary', note: 'x' }, legacy), 'todo_terminal');
    const deferred = deferTodo(STATE, { todoId: 'todo_primary', reason: 'later' }, legacy).text;
    throwsCode(
      () => updateTodo(deferred, { todoId: 'todo_primary', note: 'x' }, legacy),
      'todo_terminal',
      /--status open/,
    );
    const resumed = updateTodo(deferred, { todoId: 'todo_primary', status: 'open' }, legacy);
    assert.equal(resumed.summary.todo.status, 'open');
    assert.match(resumed.text, /- \[ \] \[P1\] Validate the primary lane\./);
  });
});

describe('todo complete', () => {
  it('needs evidence and exactly one of a successor or no-follow-up for agent todos', () => {
    throwsCode(
      () => completeTodo(STATE, { todoId: 'todo_primary', evidence: ' ', noFollowUp: true, strict: true }, legacy),
      'todo_evidence_required',
    );
    throwsCode(
      () => completeTodo(STATE, { todoId: 'todo_primary', evidence: 'ok', strict: true }, legacy),
      'todo_completion_continuation_required',
      /--successor-text.*--no-follow-up/,
    );
    throwsCode(
      () =>
        completeTodo(
          STATE,
          { todoId: 'todo_primary', evidence: 'ok', noFollowUp: true, successor: { text: 'x' } },
          legacy,
        ),
      'todo_completion_continuation_conflict',
    );
  });

  it('without strict (the CLI, as in the original) neither evidence nor continuation is needed: the goal continues', () => {
    const result = completeTodo(STATE, { todoId: 'todo_primary' }, legacy);
    assert.equal(result.summary.todo.status, 'done');
    assert.equal(result.summary.todo.metadata['completion_continuation'], 'active_goal');
    assert.equal(result.summary.todo.metadata['evidence'], undefined);
    assert.match(result.text, /^updated_at: 2026-07-01T00:00:00Z$/m);
  });

  it('marks done with evidence and links a new successor', () => {
    const result = completeTodo(
      STATE,
      {
        todoId: 'todo_primary',
        evidence: 'tests pass (42/42)',
        successor: { text: 'Ship the lane.', priority: 'P1', claimedBy: 'codex-main' },
      },
      rostered,
    );
    const [successor] = result.summary.added_todos;
    assert.ok(successor);
    assert.equal(successor.text, '[P1] Ship the lane.');
    assert.equal(successor.claimed_by, 'codex-main');
    const done = result.summary.todo;
    assert.equal(done.status, 'done');
    assert.equal(done.done, true);
    assert.equal(done.metadata['evidence'], 'tests pass (42/42)');
    assert.equal(done.metadata['successor_todo_ids'], successor.todo_id);
    assert.equal(done.metadata['completion_continuation'], 'successor');
    assert.equal(done.metadata['completed_at'], NOW);
    // The successor links back to the todo it follows, as the original writes it (`unblocks_todo_id`).
    assert.equal(successor.metadata['unblocks_todo_id'], 'todo_primary');
    // Without a priority of its own it takes the completed todo's prefix (the original's inherit_todo_priority).
    const inherited = completeTodo(
      STATE,
      { todoId: 'todo_primary', evidence: 'ok', successor: { text: 'Follow up.' } },
      rostered,
    ).summary.added_todos[0];
    assert.equal(inherited?.text, '[P1] Follow up.');
    assert.equal(inherited?.todo_id, deriveTodoId('agent', 'Agent Todo', 2, '[P1] Follow up.'));
    assert.equal(
      completeTodo(
        STATE,
        { todoId: 'todo_primary', evidence: 'ok', successor: { text: '[P3] Own priority.' } },
        rostered,
      ).summary.added_todos[0]?.text,
      '[P3] Own priority.',
    );
    assert.match(
      result.text,
      /- \[x\] \[P1\] Validate the primary lane\.\n {2}<!-- loopx:todo todo_id=todo_primary status=done task_class=advancement_task claimed_by=codex-main successor_todo_ids=todo_[0-9a-f]{12} completion_continuation=successor evidence=tests%20pass%20%2842\/42%29 completed_at=\S+ updated_at=\S+ -->\n- \[ \] \[P1\] Ship the lane\.\n/,
    );
    assert.equal(
      completeTodo(STATE, { todoId: 'todo_primary', evidence: 'ok', noFollowUp: true }, legacy).summary.todo.metadata[
        'no_followup'
      ],
      'true',
    );
    // Completing a done todo again re-stamps it (the original's behavior), and a deferred one is completed
    // where it stands (kit seeds 1 todo-023, 2 todo-026).
    const again = completeTodo(result.text, { todoId: 'todo_primary', evidence: 'again', noFollowUp: true }, legacy);
    assert.equal(again.summary.todo.metadata['evidence'], 'again');
    const deferred = deferTodo(STATE, { todoId: 'todo_primary', reason: 'later' }, legacy).text;
    const fromDeferred = completeTodo(deferred, { todoId: 'todo_primary', evidence: 'done anyway' }, legacy);
    assert.equal(fromDeferred.summary.todo.status, 'done');
    assert.match(fromDeferred.text, /- \[x\] \[P1\] Validate the primary lane\./);
    assert.equal(fromDeferred.summary.todo.metadata['completion_continuation'], 'active_goal');
  });

  it('resolves a gate only with a decision outcome', () => {
    throwsCode(
      () => completeTodo(STATE, { todoId: 'todo_user_gate', evidence: 'ok' }, legacy),
      'gate_decision_outcome_required',
      /approve\|reject\|cancel/,
    );
    throwsCode(
      () =>
        completeTodo(
          STATE,
          { todoId: 'todo_primary', evidence: 'ok', noFollowUp: true, decisionOutcome: 'approve' },
          legacy,
        ),
      'gate_decision_outcome_not_a_gate',
    );
    const resolved = completeTodo(
      STATE,
      { todoId: 'todo_user_gate', evidence: 'owner said yes', decisionOutcome: 'approve' },
      legacy,
    );
    assert.equal(resolved.summary.todo.metadata['decision_outcome'], 'approve');
  });
});

describe('todo supersede and defer', () => {
  it("supersedes an agent todo as the original's --next-agent-todo: priority and gate link inherited, both linked", () => {
    const linked = STATE.replace(
      'claimed_by=codex-main -->',
      'claimed_by=codex-main unblocks_todo_id=todo_user_gate -->',
    );
    const result = supersedeTodo(
      linked,
      { todoId: 'todo_primary', reason: 'scope changed', replacement: { text: 'Validate the narrower lane.' } },
      legacy,
    );
    const [replacement] = result.summary.added_todos;
    assert.ok(replacement);
    assert.equal(replacement.text, '[P1] Validate the narrower lane.', 'the priority prefix is inherited');
    assert.equal(replacement.claimed_by, null, 'the claim is not (the original releases it)');
    assert.equal(replacement.task_class, 'advancement_task');
    assert.equal(replacement.metadata['unblocks_todo_id'], 'todo_user_gate');
    const old = result.summary.todo.metadata;
    assert.equal(result.summary.todo.status, 'done');
    assert.deepEqual(
      [old['superseded_by'], old['successor_todo_ids'], old['note'], old['reason']],
      [replacement.todo_id, replacement.todo_id, 'superseded', 'scope changed'],
    );
    assert.deepEqual([old['completed_at'], old['completion_continuation']], [NOW, 'active_goal']);
    // The original's key order: schema keys first, superseded_by (not in its schema) after updated_at.
    assert.match(
      result.text,
      new RegExp(
        `todo_id=todo_primary status=done task_class=advancement_task claimed_by=codex-main unblocks_todo_id=todo_user_gate successor_todo_ids=${replacement.todo_id} completion_continuation=active_goal note=superseded reason=scope%20changed completed_at=\\S+ updated_at=\\S+ superseded_by=${replacement.todo_id} -->`,
      ),
    );
  });

  it('supersedes by an existing todo of the same role and refuses to guess', () => {
    const text = addTodo(STATE, { role: 'agent', text: 'New plan.' }, legacy).text;
    const newId = listTodos(parseStateDocument(text)).find((t) => t.text === 'New plan.')?.todo_id ?? '';
    assert.equal(
      supersedeTodo(text, { todoId: 'todo_primary', supersededBy: newId }, legacy).summary.todo.metadata[
        'superseded_by'
      ],
      newId,
    );
    throwsCode(() => supersedeTodo(text, { todoId: 'todo_primary' }, legacy), 'todo_supersede_target_required');
    throwsCode(
      () => supersedeTodo(text, { todoId: 'todo_primary', supersededBy: 'todo_user_gate' }, legacy),
      'todo_supersede_role_mismatch',
    );
    throwsCode(
      () => supersedeTodo(text, { todoId: 'todo_primary', supersededBy: 'todo_primary' }, legacy),
      'todo_supersede_self',
    );
  });

  it('defers with a reason and a checked resume condition; gates are not deferred', () => {
    const result = deferTodo(
      STATE,
      { todoId: 'todo_primary', reason: 'needs capacity', resumeWhen: 'capacity_available:gpu' },
      legacy,
    );
    assert.deepEqual(
      [result.summary.todo.status, result.summary.todo.metadata['resume_when']],
      ['deferred', 'capacity_available:gpu'],
    );
    // The original's supported conditions (issue 30): a bare capacity_available names no capability, so it
    // refuses it (and would never resume the todo); pr_merged may name a repository.
    throwsCode(
      () => deferTodo(STATE, { todoId: 'todo_primary', reason: 'x', resumeWhen: 'capacity_available' }, legacy),
      'invalid_resume_condition',
    );
    assert.equal(
      deferTodo(STATE, { todoId: 'todo_primary', reason: 'x', resumeWhen: 'pr_merged:acme/app#12' }, legacy).summary
        .todo.metadata['resume_when'],
      'pr_merged:acme/app#12',
    );
    assert.match(result.text, /- \[-\] \[P1\] Validate the primary lane\./);
    throwsCode(
      () => deferTodo(STATE, { todoId: 'todo_primary', reason: 'x', resumeWhen: 'tomorrow' }, legacy),
      'invalid_resume_condition',
    );
    throwsCode(() => deferTodo(STATE, { todoId: 'todo_primary', reason: ' ' }, legacy), 'todo_defer_reason_required');
    throwsCode(
      () => deferTodo(STATE, { todoId: 'todo_user_gate', reason: 'later' }, legacy),
      'gate_cannot_be_deferred',
    );
  });

  it('a CLI deferral names its resume condition (the original refuses one without), normalized as it writes it', () => {
    throwsCode(
      () => deferTodo(STATE, { todoId: 'todo_primary', reason: 'later', requireResumeWhen: true }, legacy),
      'todo_defer_resume_when_required',
      /transition to deferred requires --resume-when with a supported condition/,
    );
    const deferred = deferTodo(
      STATE,
      { todoId: 'todo_primary', reason: 'later', resumeWhen: ' TODO_DONE:todo_user_gate ', requireResumeWhen: true },
      legacy,
    );
    assert.equal(deferred.summary.todo.metadata['resume_when'], 'todo_done:todo_user_gate');
  });

  it("update: a blocked todo keeps its reason; --status deferred is the original's defer (a resume condition needed)", () => {
    const blocked = updateTodo(STATE, { todoId: 'todo_primary', status: 'blocked', reason: 'waits  for CI' }, legacy);
    assert.deepEqual(
      [blocked.summary.todo.status, blocked.summary.todo.metadata['reason']],
      ['blocked', 'waits for CI'],
    );
    throwsCode(
      () => updateTodo(STATE, { todoId: 'todo_primary', status: 'deferred', reason: 'x' }, legacy),
      'todo_defer_resume_when_required',
    );
    throwsCode(
      () => updateTodo(STATE, { todoId: 'todo_primary', status: 'deferred', resumeWhen: 'capacity_available' }, legacy),
      'invalid_resume_condition',
    );
    const deferred = updateTodo(
      STATE,
      { todoId: 'todo_primary', status: 'deferred', reason: 'x', resumeWhen: 'capacity_available:gpu' },
      legacy,
    );
    assert.match(deferred.text, /- \[-\] \[P1\] Validate the primary lane\./);
    // Resumed, then deferred again: the condition on the todo is enough.
    const resumed = updateTodo(deferred.text, { todoId: 'todo_primary', status: 'open' }, legacy).text;
    const again = updateTodo(resumed, { todoId: 'todo_primary', status: 'deferred' }, legacy);
    assert.equal(again.summary.todo.metadata['resume_when'], 'capacity_available:gpu');
    throwsCode(
      () => updateTodo(STATE, { todoId: 'todo_user_gate', status: 'deferred', resumeWhen: 'pr_merged:#1' }, legacy),
      'gate_cannot_be_deferred',
    );
  });

  it('every edit touches only the edited todo plus the lines it adds', () => {
    const before = splitLines(STATE).map((l) => l.content);
    const after = splitLines(
      deferTodo(STATE, { todoId: 'todo_user_gate'.replace('user_gate', 'primary'), reason: 'r' }, legacy).text,
    ).map((l) => l.content);
    assert.equal(after.length, before.length);
    const changed = before.map((line, i) => (line === after[i] ? -1 : i + 1)).filter((n) => n > 0);
    assert.deepEqual(changed, [4, 10, 11], 'the todo and the front matter updated_at');
    assert.equal(after[3], `updated_at: ${NOW}`);
  });
});
