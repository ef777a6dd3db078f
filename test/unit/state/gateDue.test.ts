import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { analyzeGates, GATE_DUE_META_KEY, parseDuration } from '../../../src/core/state/gates';
import { addTodo, completeTodo, updateTodo, type OperationContext } from '../../../src/core/state/todos';
import { dueInstantOf } from '../../../src/core/ops/todoFields';

const context: OperationContext = { now: '2026-07-01T00:00:00Z', goalId: 'g', roster: null };

const STATE = [
  '---',
  'status: active',
  '---',
  '## User Todo',
  '## Agent Todo',
  '- [ ] Publish the package.',
  '  <!-- loopx:todo todo_id=todo_publish task_class=advancement_task -->',
  '## Next Action',
  '- Publish the package.',
  '',
].join('\n');

function gateOf(text: string) {
  const gate = analyzeGates(parseStateDocument(text)).open_gates[0];
  assert.ok(gate, text);
  return gate;
}

describe("a gate's due time (due_at, written as next_due_at)", () => {
  it('is written on gate creation as next_due_at and read back as due_at', () => {
    const added = addTodo(
      STATE,
      {
        role: 'user',
        text: 'Approve publishing.',
        gate: { unblocksTodoIds: ['todo_publish'], dueAt: '2026-07-02T09:00:00Z' },
      },
      context,
    );
    assert.match(added.text, / next_due_at=2026-07-02T09:00:00Z /);
    assert.doesNotMatch(added.text, / due_at=/);
    const gate = gateOf(added.text);
    assert.equal(gate.due_at, '2026-07-02T09:00:00Z');
    assert.equal(gate.updated_at, '2026-07-01T00:00:00Z');
    assert.deepEqual(gate.blocked_todo_ids, ['todo_publish']);
  });

  it('a due time alone makes a user todo a gate; an agent todo cannot have one', () => {
    const added = addTodo(STATE, { role: 'user', text: 'Decide.', gate: { dueAt: '2026-07-02T09:00:00Z' } }, context);
    assert.match(added.text, /task_class=user_gate/);
    assert.throws(
      () => addTodo(STATE, { role: 'agent', text: 'Work.', gate: { dueAt: '2026-07-02T09:00:00Z' } }, context),
      /user_gate/,
    );
  });

  it('refuses a due time that is not an ISO-8601 instant, naming the field and the form', () => {
    for (const bad of ['tomorrow', '2026-07-02', '2026-07-02T09:00:00', '2026-02-31T09:00:00Z'])
      assert.throws(
        () => addTodo(STATE, { role: 'user', text: 'Decide.', gate: { dueAt: bad } }, context),
        /due time must be an ISO-8601 instant such as 2026-01-31T12:00:00Z/,
        bad,
      );
  });

  it('is changed and cleared by an update, and kept by other edits of the gate', () => {
    const added = addTodo(STATE, { role: 'user', text: 'Decide.', gate: { dueAt: '2026-07-02T09:00:00Z' } }, context);
    const id = gateOf(added.text).todo_id;
    const moved = updateTodo(added.text, { todoId: id, gate: { dueAt: '2026-07-03T10:30:00+02:00' } }, context);
    assert.equal(gateOf(moved.text).due_at, '2026-07-03T10:30:00+02:00');
    const noted = updateTodo(moved.text, { todoId: id, note: 'ask legal' }, context);
    assert.equal(gateOf(noted.text).due_at, '2026-07-03T10:30:00+02:00');
    const cleared = updateTodo(noted.text, { todoId: id, gate: { dueAt: null } }, context);
    assert.equal(gateOf(cleared.text).due_at, null);
    assert.equal(
      parseStateDocument(cleared.text).todos.find((t) => t.todoId === id)?.meta[GATE_DUE_META_KEY],
      undefined,
    );
  });

  it('a gate resolved past its due time is no longer open', () => {
    const added = addTodo(STATE, { role: 'user', text: 'Decide.', gate: { dueAt: '2026-06-02T09:00:00Z' } }, context);
    const id = gateOf(added.text).todo_id;
    const done = completeTodo(
      added.text,
      { todoId: id, evidence: 'ok', decisionOutcome: 'approve', noFollowUp: true },
      context,
    );
    assert.deepEqual(analyzeGates(parseStateDocument(done.text)).open_gates, []);
  });

  it('--due-in counts from the clock; --due-at is taken as given; both at once is refused', () => {
    const now = new Date('2026-07-01T00:00:00Z');
    assert.equal(dueInstantOf({ dueIn: '90m' }, now), '2026-07-01T01:30:00Z');
    assert.equal(dueInstantOf({ dueIn: '2d' }, now), '2026-07-03T00:00:00Z');
    assert.equal(dueInstantOf({ dueAt: '2026-08-01T00:00:00Z' }, now), '2026-08-01T00:00:00Z');
    assert.equal(dueInstantOf({}, now), undefined);
    assert.throws(() => dueInstantOf({ dueIn: 'soon' }, now), /--due-in "soon" must be a duration/);
    assert.throws(() => dueInstantOf({ dueIn: '1h', dueAt: '2026-08-01T00:00:00Z' }, now), /give only one/);
    assert.equal(parseDuration('1w'), 7 * 86_400_000);
    assert.equal(parseDuration('45 s'), 45_000);
    assert.equal(parseDuration('0h'), null);
  });
});
