import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { loadGoalStatus, statusEntryKey } from '../../../../src/core/status/goalStatus';
import { allowsSubAgents } from '../../../../src/core/status/projection/taskOrchestrationAuthority';
import { statusRef } from '../../../support/status';
import { tempDir } from '../../../support/tempDir';

/**
 * The todo summaries' `task_orchestration_authority` (the original's todo_summary.py `_task_orchestration_authority`,
 * switched on by active_state_todo_parser.py for a spawn policy that allows sub-agents); the mixed tier compares it
 * with the original's (test/mixed/status.test.ts, "a goal whose spawn policy allows sub-agents").
 */

function todo(text: string, meta: string, marker = ' '): string {
  return `- [${marker}] ${text}\n  <!-- loopx:todo ${meta} -->\n`;
}

const STATE =
  '---\nstatus: active\n---\n## User Todo\n' +
  todo('Approve the release', 'todo_id=todo_gate1 status=open task_class=user_gate unblocks_todo_id=todo_ship1') +
  todo('Answer a question', 'todo_id=todo_ask1 status=open task_class=user_gate') +
  todo('Old gate', 'todo_id=todo_gate0 status=done task_class=user_gate unblocks_todo_id=todo_ship1', 'x') +
  '## Agent Todo\n' +
  todo('[P2] Write the notes', 'todo_id=todo_notes1 status=open task_class=advancement_task') +
  todo('[P0] Ship it', 'todo_id=todo_ship1 status=blocked task_class=advancement_task claimed_by=codex-a') +
  todo('Watch the build', 'todo_id=todo_watch1 status=open task_class=continuous_monitor') +
  todo('Done step', 'todo_id=todo_done1 status=done task_class=advancement_task', 'x') +
  todo(
    'Later step',
    'todo_id=todo_later1 status=deferred task_class=advancement_task resume_when=todo_done:todo_ship1',
    'x',
  );

describe('status todo summaries: task_orchestration_authority', () => {
  it('is switched on by a spawn policy that allows sub-agents (the one project_asset.orchestration reads)', () => {
    assert.equal(allowsSubAgents({ spawn_policy: { allowed: true, max_children: 2 } }), true);
    assert.equal(allowsSubAgents({ spawn_policy: { spawn_allowed: true, max_children: '3' } }), true);
    assert.equal(allowsSubAgents({ spawn_policy: { allowed: true, max_children: 0 } }), false);
    assert.equal(allowsSubAgents({ spawn_policy: { allowed: false, max_children: 2 } }), false);
    assert.equal(allowsSubAgents({ spawn_policy: { allowed: true, max_children: 2, mode: 'default' } }), false);
    // Ours: spawning only by a boolean true (registry/orchestration.ts), in project_asset and here alike.
    assert.equal(allowsSubAgents({ spawn_policy: { allowed: 'true', max_children: 2 } }), false);
    assert.equal(allowsSubAgents({}), false);
    assert.equal(allowsSubAgents(undefined), false);
  });

  it('lists the open advancement todos (agent) and the open unblocking gates (user), cut to their fields', async () => {
    const dir = tempDir('loopx-orchestration-');
    try {
      const stateFile = path.join(dir, 'ACTIVE_GOAL_STATE.md');
      fs.writeFileSync(stateFile, STATE);
      const ref = (spawnPolicy?: Record<string, unknown>) =>
        statusRef({
          goalId: 'g',
          projectRoot: dir,
          runtimeRoot: path.join(dir, 'runtime'),
          entry: {
            status: 'active',
            state_file: stateFile,
            adapter: { status: 'connected' },
            ...(spawnPolicy ? { spawn_policy: spawnPolicy } : {}),
          },
        });
      const on = ref({ allowed: true, max_children: 2 });
      const item = await loadGoalStatus(on, { homeDir: dir });
      assert.deepEqual(item.agent_todos?.task_orchestration_authority, {
        schema_version: 'task_orchestration_authority_v0',
        role: 'agent',
        candidate_items: [
          {
            todo_id: 'todo_ship1',
            status: 'blocked',
            done: false,
            task_class: 'advancement_task',
            claimed_by: 'codex-a',
            title: 'Ship it',
            text: '[P0] Ship it',
          },
          {
            todo_id: 'todo_notes1',
            status: 'open',
            done: false,
            task_class: 'advancement_task',
            title: 'Write the notes',
            text: '[P2] Write the notes',
          },
        ],
        user_blocker_items: [],
      });
      assert.deepEqual(item.user_todos?.task_orchestration_authority, {
        schema_version: 'task_orchestration_authority_v0',
        role: 'user',
        candidate_items: [],
        user_blocker_items: [
          {
            todo_id: 'todo_gate1',
            status: 'open',
            done: false,
            task_class: 'user_gate',
            unblocks_todo_id: 'todo_ship1',
          },
        ],
      });

      // Without the policy: no authority, and the entry key (the item cache's) differs.
      const off = ref();
      const plain = await loadGoalStatus(off, { homeDir: dir });
      assert.equal(Object.hasOwn(plain.agent_todos ?? {}, 'task_orchestration_authority'), false);
      assert.equal(Object.hasOwn(plain.user_todos ?? {}, 'task_orchestration_authority'), false);
      assert.notEqual(statusEntryKey(on), statusEntryKey(off));
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
