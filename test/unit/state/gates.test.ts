import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { analyzeGates, parseDecisionScope, scopeCovers } from '../../../src/core/state/gates';
import { deepFreeze } from '../../../src/core/state/freeze';
import { completeTodo, supersedeTodo, type OperationContext } from '../../../src/core/state/todos';

const context: OperationContext = {
  now: '2026-07-01T00:00:00Z',
  goalId: 'g',
  roster: ['codex-main', 'codex-side', 'codex-prop'],
};

const STATE = [
  '---',
  'status: active',
  '---',
  '## User Todo',
  '- [ ] Approve publishing the package.',
  '  <!-- loopx:todo todo_id=todo_gate_publish task_class=user_gate blocks_agent=codex-main unblocks_todo_id=todo_publish -->',
  '- [ ] Approve public claims about the release.',
  '  <!-- loopx:todo todo_id=todo_gate_claims task_class=user_gate decision_scope=public_claim:project:release -->',
  '- [ ] Read the publishing package notes.',
  '  <!-- loopx:todo todo_id=todo_user_read task_class=user_action -->',
  '## Agent Todo',
  '- [ ] Publish the package.',
  '  <!-- loopx:todo todo_id=todo_publish status=blocked task_class=advancement_task -->',
  '- [ ] Announce the release publicly.',
  '  <!-- loopx:todo todo_id=todo_announce task_class=advancement_task required_decision_scopes=public_claim:action:release -->',
  '- [ ] Write the publishing package changelog.',
  '  <!-- loopx:todo todo_id=todo_changelog task_class=advancement_task -->',
  '## Next Action',
  '- Publish the package.',
  '',
].join('\n');

function blockers(text: string): Record<string, string[]> {
  return Object.fromEntries(
    analyzeGates(parseStateDocument(text)).agent_todos.map((t) => [
      t.todo_id,
      t.blocked_by.map((b) => `${b.gate_todo_id}:${b.relation}:${b.gate_state}`),
    ]),
  );
}

describe('gates', () => {
  it('decision scopes cover same kind, same key or *, at least as wide a granularity', () => {
    const gate = parseDecisionScope('public_claim:project:release');
    const need = (s: string): NonNullable<ReturnType<typeof parseDecisionScope>> =>
      parseDecisionScope(s) as NonNullable<ReturnType<typeof parseDecisionScope>>;
    assert.ok(gate);
    assert.equal(scopeCovers(gate, need('public_claim:action:release')), true);
    assert.equal(scopeCovers(gate, need('public_claim:global:release')), false);
    assert.equal(scopeCovers(gate, need('public_claim:goal:other')), false);
    assert.equal(scopeCovers(gate, need('production:goal:release')), false);
    assert.equal(scopeCovers(need('resource:lane:*'), need('resource:action:gpu')), true);
    assert.equal(parseDecisionScope('public_claim:forever:x'), null);
    assert.equal(parseDecisionScope('nonsense'), null);
  });

  it('blocks agent todos only through explicit relations, never shared words', () => {
    assert.deepEqual(blockers(STATE), {
      todo_publish: ['todo_gate_publish:gate_targets_todo:open'],
      todo_announce: ['todo_gate_claims:gate_covers_action:open'],
      todo_changelog: [],
    });
    const analysis = analyzeGates(parseStateDocument(STATE));
    assert.deepEqual(
      analysis.open_gates.map((g) => [g.todo_id, g.blocked_todo_ids]),
      [
        ['todo_gate_publish', ['todo_publish']],
        ['todo_gate_claims', ['todo_announce']],
      ],
    );
    assert.deepEqual(analysis.lane_gates_by_agent, { 'codex-main': ['todo_gate_publish'] });
    assert.equal(
      analysis.open_gates.some((g) => g.todo_id === 'todo_user_read'),
      false,
      'user_action todos never block',
    );
  });

  it('a global gate blocks every agent todo; a scope that covers a todo another gate field names is a repair case', () => {
    const global = STATE.replace('decision_scope=public_claim:project:release', 'global_gate=true');
    assert.deepEqual(
      Object.values(blockers(global)).map((b) => b.some((x) => x.startsWith('todo_gate_claims:global_gate'))),
      [true, true, true],
    );
    const disagreeing = STATE.replace(
      'decision_scope=public_claim:project:release',
      'decision_scope=public_claim:project:release unblocks_todo_id=todo_changelog',
    );
    assert.deepEqual(blockers(disagreeing)['todo_announce'], ['todo_gate_claims:projection_repair_required:open']);
    assert.deepEqual(blockers(disagreeing)['todo_changelog'], ['todo_gate_claims:gate_targets_todo:open']);
    const unscoped = analyzeGates(
      parseStateDocument(
        '## User Todo\n- [ ] Decide.\n  <!-- loopx:todo todo_id=todo_decide task_class=user_gate -->\n',
      ),
    );
    assert.equal(unscoped.open_gates[0]?.unscoped, true);
  });

  it('approve releases the blocked work and reopens a todo parked as blocked for the gate', () => {
    const approved = completeTodo(
      STATE,
      { todoId: 'todo_gate_publish', evidence: 'owner approved in chat', decisionOutcome: 'approve' },
      context,
    );
    assert.deepEqual(approved.summary.released_todo_ids, ['todo_publish']);
    assert.deepEqual(blockers(approved.text)['todo_publish'], []);
    assert.match(
      approved.text,
      /- \[ \] Publish the package\.\n {2}<!-- loopx:todo todo_id=todo_publish status=open task_class=advancement_task updated_at=\S+ -->/,
    );
  });

  it('reject and cancel keep the work blocked until the gate is superseded', () => {
    for (const outcome of ['reject', 'cancel'] as const) {
      const resolved = completeTodo(
        STATE,
        { todoId: 'todo_gate_claims', evidence: 'owner declined', decisionOutcome: outcome },
        context,
      );
      assert.deepEqual(resolved.summary.released_todo_ids, []);
      const state = outcome === 'reject' ? 'rejected' : 'cancelled';
      assert.deepEqual(blockers(resolved.text)['todo_announce'], [`todo_gate_claims:gate_covers_action:${state}`]);
      const analysis = analyzeGates(parseStateDocument(resolved.text));
      assert.deepEqual(
        analysis.holding_gates.map((g) => g.todo_id),
        ['todo_gate_claims'],
      );
      assert.deepEqual(
        analysis.open_gates.map((g) => g.todo_id),
        ['todo_gate_publish'],
      );

      const replaced = supersedeTodo(
        resolved.text,
        {
          todoId: 'todo_gate_claims',
          reason: 'asking a narrower question',
          replacement: { text: 'Approve an internal-only announcement.' },
        },
        context,
      );
      const [newGate] = replaced.summary.added_todos;
      assert.equal(newGate?.task_class, 'user_gate');
      assert.equal(
        newGate?.metadata['decision_scope'],
        'public_claim:project:release',
        'the replacement gate keeps the relations',
      );
      assert.deepEqual(blockers(replaced.text)['todo_announce'], [`${newGate?.todo_id}:gate_covers_action:open`]);
      assert.equal(replaced.summary.todo.metadata['decision_outcome'], outcome, 'the old decision stays on record');
    }
  });
});

describe('gate analyses of shared documents', () => {
  const text =
    '# Goal\n\n## User Todos\n\n- [ ] approve the release <!-- loopx: task_class=user_gate -->\n\n## Agent Todos\n\n- [ ] ship it\n';

  it('a frozen document (readStateFileShared) is analysed once; its analysis is frozen too', () => {
    const doc = deepFreeze(parseStateDocument(text));
    const first = analyzeGates(doc);
    assert.equal(analyzeGates(doc), first);
    assert.ok(Object.isFrozen(first.open_gates));
    assert.deepEqual(first, analyzeGates(parseStateDocument(text)));
  });

  it('a document that is not frozen is analysed on every call (it could have changed)', () => {
    const doc = parseStateDocument(text);
    assert.notEqual(analyzeGates(doc), analyzeGates(doc));
  });
});
