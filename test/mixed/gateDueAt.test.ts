import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { GOAL_STATE, mixedWorkspace, run, stopLeftovers, writeGoal, type RunResult } from './helpers';

/**
 * A gate's due time (`due_at`, docs/compatibility.md#gate-due-times) survives the original LoopX: we write it as
 * `next_due_at`, a key of the original's todo metadata schema, which its parser keeps when it rewrites the gate
 * (a key outside its schema, such as `due_at`, is dropped by its first edit of that todo: checked here too).
 */

function ok(result: RunResult, step: string): Record<string, unknown> {
  assert.equal(result.code, 0, `${step}: exit ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result.json;
}

interface InboxGate {
  todo_id: string;
  due_at: string | null;
  overdue: boolean;
}

describe('mixed team: a gate due time written by us, edited by the original', () => {
  it('the original reads the gate and keeps its due time through its own edit of that gate; we read it back', () => {
    const w = mixedWorkspace('gate-due');
    try {
      const statePath = writeGoal(w, 'due-goal', { compute: 1 }, []);
      const added = ok(
        run('ours', w, [
          'todo',
          'add',
          '--goal-id',
          'due-goal',
          '--role',
          'user',
          '--text',
          'Approve the release',
          '--unblocks-todo-id',
          'todo_aaaaaaaaaaaa',
          '--due-at',
          '2026-07-04T12:00:00Z',
        ]),
        'ours todo add --due-at',
      );
      const gateId = String(added['todo_id']);
      assert.match(fs.readFileSync(statePath, 'utf8'), / next_due_at=2026-07-04T12(:|%3A)00(:|%3A)00Z /);

      // The original reads the file: its todo list shows the gate with the due time.
      const listed = ok(
        run('original', w, ['todo', 'list', '--goal-id', 'due-goal', '--role', 'user']),
        'original list',
      );
      assert.match(JSON.stringify(listed), /2026-07-04T12:00:00Z/, 'the original reads next_due_at on the gate');

      // The original rewrites the gate's metadata line (a note), then our status and inbox still see the due time.
      ok(
        run('original', w, [
          'todo',
          'update',
          '--goal-id',
          'due-goal',
          '--role',
          'user',
          '--todo-id',
          gateId,
          '--note',
          'ask legal',
        ]),
        'original todo update',
      );
      const text = fs.readFileSync(statePath, 'utf8');
      assert.match(text, /note=ask(%20| )legal/, text);
      const inbox = ok(run('ours', w, ['gate', 'inbox']), 'ours gate inbox');
      const gates = inbox['gates'] as InboxGate[];
      assert.deepEqual(
        gates.map((g) => [g.todo_id, g.due_at]),
        [[gateId, '2026-07-04T12:00:00Z']],
      );
    } finally {
      stopLeftovers(w);
    }
  });

  it('control: a key outside the original schema (due_at) is dropped by the same edit', () => {
    const w = mixedWorkspace('gate-due-control');
    try {
      const state = GOAL_STATE.replace(
        '## User Todo / Owner Review Reading Queue\n',
        '## User Todo / Owner Review Reading Queue\n\n- [ ] Approve the release\n  <!-- loopx:todo todo_id=todo_gate_due status=open task_class=user_gate due_at=2026-07-04T12%3A00%3A00Z -->\n',
      );
      const statePath = writeGoal(w, 'due-goal', { compute: 1 }, [], state);
      ok(
        run('original', w, [
          'todo',
          'update',
          '--goal-id',
          'due-goal',
          '--role',
          'user',
          '--todo-id',
          'todo_gate_due',
          '--note',
          'x',
        ]),
        'original todo update',
      );
      assert.doesNotMatch(fs.readFileSync(statePath, 'utf8'), /due_at=/);
    } finally {
      stopLeftovers(w);
    }
  });
});
