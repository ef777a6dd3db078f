import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { statusTodoContractDiagnostics as todoContractDiagnostics } from '../../../src/core/todo/contract';

/**
 * Status's reading of the per-todo contract rules (`statusTodoContractDiagnostics`, src/core/todo/contract.ts:
 * LoopX's contract check inside `loopx status`): one case per todo rule on fixtures of our own. The payload
 * around it (ok:false, exit 1, the `loopx-contract` item) is tested in test/unit/status/contractCheck.test.ts.
 */

function stateWith(userTodos: string, agentTodos = '', nextAction = 'Keep going.'): string {
  return `---\nstatus: active\nupdated_at: 2026-05-01T00:00:00+00:00\n---\n\n# State\n\n## User Todo\n\n${userTodos}\n## Agent Todo\n\n${agentTodos}\n## Next Action\n\n- ${nextAction}\n`;
}

const todo = (text: string, meta: string, mark = ' '): string => `- [${mark}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;

function codes(userTodos: string, agentTodos = '', agents: string[] = ['codex-main']): string[] {
  return todoContractDiagnostics(parseStateDocument(stateWith(userTodos, agentTodos)), {
    goalId: 'g',
    registeredAgents: agents,
    stateFileLabel: '<project>/state.md',
  }).map((d) => d.code);
}

describe('contract check: todo rules (LoopX contract.py)', () => {
  it('an open user todo needs task_class=user_gate or user_action; a done one does not', () => {
    assert.deepEqual(codes(todo('Review', 'todo_id=todo_u001 status=open')), ['user_todo_task_class_missing']);
    assert.deepEqual(codes(todo('Review', 'todo_id=todo_u001 status=open task_class=advancement_task')), [
      'user_todo_task_class_missing',
    ]);
    assert.deepEqual(codes(todo('Review', 'todo_id=todo_u001 status=done', 'x')), []);
    assert.deepEqual(codes(todo('Review', 'todo_id=todo_u001 status=open task_class=user_action')), []);
    assert.deepEqual(codes(todo('Review', 'todo_id=todo_u001 status=open task_class=user_gate')), []);
  });

  it('a user action cannot block; a gate cannot be both agent-scoped and global', () => {
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action blocks_agent=codex-main')), [
      'user_action_blocking_scope_invalid',
    ]);
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action global_gate=true')), [
      'user_action_blocking_scope_invalid',
    ]);
    assert.deepEqual(
      codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate blocks_agent=codex-main global_gate=true')),
      ['user_gate_scope_conflict'],
    );
  });

  it('response scope: bound_agent vs goal_bound, and the gate bindings', () => {
    assert.deepEqual(
      codes(todo('Do', 'todo_id=todo_u001 task_class=user_action bound_agent=codex-main goal_bound=true')),
      ['user_todo_response_scope_conflict'],
    );
    assert.deepEqual(
      codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate global_gate=true bound_agent=codex-main')),
      ['goal_user_gate_agent_binding_invalid'],
    );
    assert.deepEqual(
      codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate blocks_agent=codex-main goal_bound=yes')),
      ['agent_user_gate_goal_binding_invalid'],
    );
    assert.deepEqual(
      codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate blocks_agent=codex-main bound_agent=codex-side'), '', [
        'codex-main',
        'codex-side',
      ]),
      ['agent_user_gate_response_binding_mismatch'],
    );
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action bound_agent=codex-other')), [
      'user_todo_bound_agent_unregistered',
    ]);
    assert.deepEqual(codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate blocks_agent=codex-other')), [
      'user_gate_blocks_unregistered_agent',
    ]);
  });

  it('in a multi-agent goal a user todo names who answers, and a gate whom it holds', () => {
    const two = ['codex-main', 'codex-side'];
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action'), '', two), [
      'multi_agent_user_todo_missing_response_scope',
    ]);
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action goal_bound=true'), '', two), []);
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action claimed_by=codex-side'), '', two), []);
    // A gate bound to an agent answers the response scope, but still needs blocks_agent or global_gate.
    assert.deepEqual(codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate bound_agent=codex-main'), '', two), [
      'multi_agent_user_gate_missing_scope',
    ]);
    assert.deepEqual(codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate blocks_agent=codex-main'), '', two), []);
    assert.deepEqual(codes(todo('Ok?', 'todo_id=todo_u001 task_class=user_gate global_gate=true'), '', two), []);
    // One agent: no scope needed.
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action')), []);
  });

  it('agent todos: removed blocks_agent and continuation policies, executor exclusions', () => {
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 status=open blocks_agent=codex-main')), [
      'agent_todo_blocks_agent_invalid',
    ]);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 continuation_policy=review_handoff')), [
      'agent_todo_removed_continuation_policy',
    ]);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 claimed_by=codex-main excluded_agents=codex-main')), [
      'todo_claimed_by_excluded_agent',
    ]);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 excluded_agents=codex-other')), [
      'todo_excludes_unregistered_agent',
    ]);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 excluded_agents=Bad%20Token%21')), [
      'todo_excluded_agents_invalid',
    ]);
    assert.deepEqual(codes(todo('Do', 'todo_id=todo_u001 task_class=user_action excluded_agents=codex-main')), [
      'todo_executor_exclusion_scope_invalid',
    ]);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 status=later')), ['todo_status_invalid']);
    assert.deepEqual(codes('', todo('Fix', 'todo_id=todo_a001 status=open task_class=advancement_task')), []);
  });

  it('names the todo by its id, or by its line, and the state file by its label', () => {
    const [diagnostic] = todoContractDiagnostics(parseStateDocument(stateWith('- [ ] Review\n')), {
      goalId: 'g',
      registeredAgents: [],
      stateFileLabel: '<project>/state.md',
    });
    assert.match(diagnostic?.message ?? '', /^g: open user todo line:10 requires task_class=user_gate/);
    assert.match(diagnostic?.message ?? '', /state_file=<project>\/state\.md, line=10, text=Review/);
  });
  it('a long roster (looked up through a Set) gives the same rules and the full roster in the message', () => {
    const roster = Array.from({ length: 5_000 }, (_, i) => `agent-${i}`);
    const diagnostics = todoContractDiagnostics(
      parseStateDocument(
        stateWith(
          todo('A', 'todo_id=todo_u001 task_class=user_action bound_agent=agent-4999') +
            todo('B', 'todo_id=todo_u002 task_class=user_action bound_agent=agent-5000') +
            todo('C', 'todo_id=todo_u003 task_class=user_gate blocks_agent=agent-0') +
            todo('D', 'todo_id=todo_u004 task_class=user_gate blocks_agent=stranger'),
          todo('E', 'todo_id=todo_a001 excluded_agents=agent-3,nobody'),
        ),
      ),
      { goalId: 'g', registeredAgents: roster, stateFileLabel: '<project>/state.md' },
    );
    assert.deepEqual(
      diagnostics.map((d) => d.code),
      ['user_todo_bound_agent_unregistered', 'user_gate_blocks_unregistered_agent', 'todo_excludes_unregistered_agent'],
    );
    const full = `(registered_agents=${roster.join(', ')}, `;
    assert.ok(diagnostics[0]?.message.includes(full));
    assert.ok(diagnostics[1]?.message.includes(full));
    assert.match(diagnostics[2]?.message ?? '', /excludes unregistered agents: nobody$/);
  });
});
