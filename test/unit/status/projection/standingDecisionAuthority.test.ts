import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStateDocument } from '../../../../src/core/state/document';
import { loadGoalStatus } from '../../../../src/core/status/goalStatus';
import { statusRef } from '../../../support/status';
import { standingDecisionAuthority } from '../../../../src/core/status/projection/standingDecisionAuthority';
import { tempDir } from '../../../support/tempDir';

/**
 * `standing_decision_authority` on the status item (the original's decision_scope.py
 * `build_standing_decision_authority`; the mixed tier compares it with the original's, test/mixed/status.test.ts).
 */

function gate(text: string, meta: string, marker = 'x'): string {
  return `- [${marker}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
}

function state(userTodos: string, archive = ''): string {
  return (
    '---\nstatus: active\n---\n## User Todo\n' +
    userTodos +
    '## Agent Todo\n- [ ] Work\n  <!-- loopx:todo todo_id=todo_work1 status=open task_class=advancement_task -->\n' +
    (archive === '' ? '' : `## Todo Archive\n${archive}`)
  );
}

const RECEIPT = 'standing_decision_receipt_v0';

describe('status item: standing_decision_authority', () => {
  it('one receipt per scope and owner, the later gate replacing the earlier in its place; active for approve only', () => {
    const doc = parseStateDocument(
      state(
        gate(
          'Approve the corpus',
          'todo_id=todo_corpus status=done task_class=user_gate global_gate=true decision_scope=private_read:project:corpus decision_outcome=approve completed_at=2026-01-02T00:00:00+00:00',
        ) +
          gate(
            'Deploy for b',
            'todo_id=todo_deploy1 status=done task_class=user_gate blocks_agent=codex-b decision_scope=production:goal:deploy decision_outcome=approve',
          ) +
          gate(
            'Deploy for a',
            'todo_id=todo_deploya status=done task_class=user_gate blocks_agent=codex-a decision_scope=production:goal:deploy decision_outcome=cancel updated_at=2026-01-03T00:00:00+00:00',
          ) +
          gate(
            'Deploy for b again',
            'todo_id=todo_deploy2 status=done task_class=user_gate blocks_agent=Codex-B decision_scope=Production:Goal:Deploy decision_outcome=reject',
          ),
      ),
    );
    assert.deepEqual(standingDecisionAuthority(doc.todos), {
      schema_version: 'standing_decision_authority_v0',
      active_count: 1,
      inactive_count: 2,
      entries: [
        {
          schema_version: RECEIPT,
          source_todo_id: 'todo_corpus',
          decision_scope: {
            schema_version: 'decision_scope_v0',
            kind: 'private_read',
            granularity: 'project',
            scope_key: 'corpus',
          },
          outcome: 'approve',
          active: true,
          global_gate: true,
          completed_at: '2026-01-02T00:00:00+00:00',
        },
        {
          schema_version: RECEIPT,
          source_todo_id: 'todo_deploy2',
          decision_scope: {
            schema_version: 'decision_scope_v0',
            kind: 'production',
            granularity: 'goal',
            scope_key: 'deploy',
          },
          outcome: 'reject',
          active: false,
          global_gate: false,
          blocks_agent: 'codex-b',
        },
        {
          schema_version: RECEIPT,
          source_todo_id: 'todo_deploya',
          decision_scope: {
            schema_version: 'decision_scope_v0',
            kind: 'production',
            granularity: 'goal',
            scope_key: 'deploy',
          },
          outcome: 'cancel',
          active: false,
          global_gate: false,
          blocks_agent: 'codex-a',
          updated_at: '2026-01-03T00:00:00+00:00',
        },
      ],
    });
  });

  it('none for an open gate, a linked gate, a narrow scope, no outcome, no owner, no todo_id, a non-gate or an archived gate', () => {
    const base = 'task_class=user_gate global_gate=true decision_scope=direction:goal:plan decision_outcome=approve';
    const cases = [
      gate('Open', `todo_id=todo_open1 status=open ${base}`, ' '),
      gate('Linked', `todo_id=todo_link1 status=done unblocks_todo_id=todo_work1 ${base}`),
      gate(
        'Narrow',
        'todo_id=todo_narrow status=done task_class=user_gate global_gate=true decision_scope=direction:lane:plan decision_outcome=approve',
      ),
      gate(
        'No outcome',
        'todo_id=todo_noout status=done task_class=user_gate global_gate=true decision_scope=direction:goal:plan',
      ),
      gate(
        'No owner',
        'todo_id=todo_noown status=done task_class=user_gate decision_scope=direction:goal:plan decision_outcome=approve',
      ),
      gate('No id', `status=done ${base}`),
      gate(
        'An action',
        'todo_id=todo_action status=done task_class=user_action global_gate=true decision_scope=direction:goal:plan decision_outcome=approve',
      ),
      gate(
        'Bad scope',
        'todo_id=todo_bad1 status=done task_class=user_gate global_gate=true decision_scope=direction:goal decision_outcome=approve',
      ),
    ];
    for (const todo of cases)
      assert.equal(standingDecisionAuthority(parseStateDocument(state(todo)).todos), null, todo);
    assert.equal(
      standingDecisionAuthority(
        parseStateDocument(state('', gate('Archived', `todo_id=todo_arch1 status=done ${base}`))).todos,
      ),
      null,
    );
  });

  it('a gate without a task class counts by its action kind, as the original reads it', () => {
    const doc = parseStateDocument(
      state(
        gate(
          'Sign off',
          'todo_id=todo_signoff status=done action_kind=owner_approval global_gate=true decision_scope=other:global:* decision_outcome=approve',
        ),
      ),
    );
    assert.deepEqual(
      standingDecisionAuthority(doc.todos)?.entries.map((entry) => [
        entry.source_todo_id,
        entry.decision_scope.scope_key,
      ]),
      [['todo_signoff', '*']],
    );
  });

  it('is on the goal status item when a receipt exists, and absent otherwise', async () => {
    const dir = tempDir('loopx-standing-');
    try {
      const stateFile = path.join(dir, 'ACTIVE_GOAL_STATE.md');
      const load = () =>
        loadGoalStatus(
          statusRef({
            goalId: 'g',
            projectRoot: dir,
            runtimeRoot: path.join(dir, 'runtime'),
            entry: { status: 'active', state_file: stateFile, adapter: { status: 'connected' } },
          }),
          { homeDir: dir },
        );
      fs.writeFileSync(
        stateFile,
        state(
          gate(
            'Approve',
            'todo_id=todo_appr1 status=done task_class=user_gate global_gate=true decision_scope=resource:project:gpu decision_outcome=approve',
          ),
        ),
      );
      assert.equal((await load()).standing_decision_authority?.entries[0]?.source_todo_id, 'todo_appr1');
      fs.writeFileSync(stateFile, state(''));
      assert.equal(Object.hasOwn(await load(), 'standing_decision_authority'), false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
