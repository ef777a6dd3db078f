import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { todoContractDiagnostics } from '../../../src/core/todo/contract';

/** The per-todo metadata contract (the original's `loopx contract` todo rules) that gates should-run. */

function doc(user: string[], agent: string[]) {
  const todos = (items: string[]) =>
    items
      .map((spec, i) => {
        const [key, ...meta] = spec.split(' ');
        return `- [ ] Item ${i}.\n  <!-- loopx:todo todo_id=todo_id_${key ?? ''} ${meta.join(' ')} -->`;
      })
      .join('\n');
  return parseStateDocument(
    `---\nstatus: active\n---\n\n## User Todo\n${todos(user)}\n\n## Agent Todo\n${todos(agent)}\n`,
  );
}
function codes(user: string[], agent: string[], roster: string[]): string[][] {
  return todoContractDiagnostics(doc(user, agent), roster).map((d) => [d.code, d.todo_id]);
}

describe('todo contract diagnostics', () => {
  const two = ['agent-a', 'agent-b'];

  it('accepts well-scoped todos', () => {
    assert.deepEqual(
      codes(
        [
          'ok1 task_class=user_gate blocks_agent=agent-a',
          'ok2 task_class=user_gate global_gate=true',
          'ok3 task_class=user_action goal_bound=true',
          'ok4 task_class=user_action bound_agent=agent-b',
          'ok5 status=done',
        ],
        ['ok6 excluded_agents=agent-b', 'ok7 claimed_by=agent-a'],
        two,
      ),
      [],
    );
  });

  it('user todos: the first failing rule of the chain, in document order', () => {
    assert.deepEqual(
      codes(
        [
          'a status=open',
          'b task_class=user_action blocks_agent=agent-a',
          'c task_class=user_gate blocks_agent=agent-a global_gate=true',
          'd task_class=user_action bound_agent=agent-a goal_bound=true',
          'e task_class=user_gate global_gate=true bound_agent=agent-a',
          'f task_class=user_gate blocks_agent=agent-a goal_bound=true',
          'g task_class=user_gate blocks_agent=agent-a bound_agent=agent-b',
          'h task_class=user_action bound_agent=agent-z',
          'i task_class=user_action',
          'j task_class=user_gate blocks_agent=agent-z',
          'k task_class=user_gate claimed_by=agent-a',
        ],
        [],
        two,
      ),
      [
        ['user_todo_task_class_missing', 'todo_id_a'],
        ['user_action_blocking_scope_invalid', 'todo_id_b'],
        ['user_gate_scope_conflict', 'todo_id_c'],
        ['user_todo_response_scope_conflict', 'todo_id_d'],
        ['goal_user_gate_agent_binding_invalid', 'todo_id_e'],
        ['agent_user_gate_goal_binding_invalid', 'todo_id_f'],
        ['agent_user_gate_response_binding_mismatch', 'todo_id_g'],
        ['user_todo_bound_agent_unregistered', 'todo_id_h'],
        ['multi_agent_user_todo_missing_response_scope', 'todo_id_i'],
        ['user_gate_blocks_unregistered_agent', 'todo_id_j'],
        ['multi_agent_user_gate_missing_scope', 'todo_id_k'],
      ],
    );
  });

  it('a single-agent goal needs no response scope; closed user todos are not checked', () => {
    assert.deepEqual(
      codes(['a task_class=user_gate', 'b task_class=user_action', 'c status=done'], [], ['agent-a']),
      [],
    );
  });

  it('agent todos: no blocks_agent routing, no excluded claimant, no unregistered exclusions; exclusions only on agent todos', () => {
    assert.deepEqual(
      codes(
        ['u task_class=user_action goal_bound=true excluded_agents=agent-a'],
        [
          'a blocks_agent=agent-a',
          'b claimed_by=agent-a excluded_agents=agent-a',
          'c excluded_agents=agent-z',
          'd continuation_policy=review_handoff',
        ],
        two,
      ),
      [
        ['todo_executor_exclusion_scope_invalid', 'todo_id_u'],
        ['agent_todo_blocks_agent_invalid', 'todo_id_a'],
        ['todo_claimed_by_excluded_agent', 'todo_id_b'],
        ['todo_excludes_unregistered_agent', 'todo_id_c'],
        ['agent_todo_removed_continuation_policy', 'todo_id_d'],
      ],
    );
  });
  it('a long roster (looked up through a Set) gives the same rules and the full roster in the message', () => {
    const roster = Array.from({ length: 5_000 }, (_, i) => `agent-${i}`);
    const diagnostics = todoContractDiagnostics(
      doc(
        [
          'ok1 task_class=user_action bound_agent=agent-4999',
          'bad1 task_class=user_action bound_agent=agent-5000',
          'ok2 task_class=user_gate blocks_agent=agent-0',
          'bad2 task_class=user_gate blocks_agent=stranger',
        ],
        ['ok3 claimed_by=agent-1 excluded_agents=agent-2,agent-4999', 'bad3 excluded_agents=agent-3,nobody'],
      ),
      roster,
    );
    assert.deepEqual(
      diagnostics.map((d) => [d.code, d.todo_id]),
      [
        ['user_todo_bound_agent_unregistered', 'todo_id_bad1'],
        ['user_gate_blocks_unregistered_agent', 'todo_id_bad2'],
        ['todo_excludes_unregistered_agent', 'todo_id_bad3'],
      ],
    );
    const full = `(registered_agents=${roster.join(', ')})`;
    assert.ok(diagnostics[0]?.message.includes(full));
    assert.ok(diagnostics[1]?.message.includes(full));
    assert.match(diagnostics[2]?.message ?? '', /excludes unregistered agents: nobody /);
  });
});
