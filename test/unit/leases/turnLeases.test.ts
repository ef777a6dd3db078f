import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { acquireLease } from '../../../src/core/leases/verbs';
import type { GoalRef } from '../../../src/core/registry/goalRef';
import { runOnce } from '../../../src/core/turn/runOnce';
import { AGENT, removeTempDirs, clock, demo, fixtureRun, newSpends, reservations, type Demo } from '../turn/helpers';

const STEAL = path.join(__dirname, 'fixtures', 'stealLease.js');

after(removeTempDirs);

function leaseGoal(d: Demo): Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'> {
  return {
    goalId: 'tidy-notes',
    runtimeRoot: path.join(d.workspace, '.loopx', 'runtime'),
    statePath: d.statePath,
    rawEntry: { coordination: { registered_agents: ['demo', 'codex-main'] } },
  };
}

function leaseOf(d: Demo, todoId: string): Record<string, unknown> | null {
  const file = path.join(d.runtimeGoalDir, 'task-leases', `${todoId}.json`);
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>) : null;
}

describe('the turn driver honors task leases', () => {
  it('never selects a todo leased to another agent', async () => {
    const d = demo();
    const first = await runOnce({ ...fixtureRun(d, 'complete'), execute: false });
    const todoId = first.todo_id;
    assert.ok(todoId !== null && todoId !== undefined, 'the preview selects a todo');
    await acquireLease(leaseGoal(d), { todoId, owner: 'codex-main', idempotencyKey: 'elsewhere' }, clock);
    const again = await runOnce({ ...fixtureRun(d, 'complete'), execute: false });
    assert.notEqual(again.todo_id, todoId);
    const skipped = again.plan?.skipped_todos.find((s) => s.todo_id === todoId);
    assert.equal(skipped?.reason, 'leased_to_other_agent');
    assert.match(String(skipped?.detail), /leased to codex-main until /);
  });

  it('hard_lease: admission acquires the lease for the turn, and the completing writeback releases it', async () => {
    const d = demo((goal) => {
      goal['handoff_mode'] = 'hard_lease';
    });
    const result = await runOnce({ ...fixtureRun(d, 'complete'), turnInstanceId: 'turn-lease' });
    assert.equal(result.status, 'committed', result.message);
    const todoId = String(result.todo_id);
    const lease = leaseOf(d, todoId);
    assert.ok(lease !== null, 'the turn acquired a lease');
    assert.equal(lease['owner'], 'demo');
    assert.match(String(lease['idempotency_key']), /^turn:/);
    assert.deepEqual([lease['version'], lease['lease_epoch'], lease['status']], [1, 1, 'released']);
  });

  it('hard_lease: a todo whose lease another agent holds is left to it; the turn takes other work', async () => {
    const d = demo((goal) => {
      goal['handoff_mode'] = 'hard_lease';
    });
    const preview = await runOnce({ ...fixtureRun(d, 'complete'), execute: false });
    const todoId = String(preview.todo_id);
    // Another process holds the lease from the start: the turn must not take the todo.
    await acquireLease(leaseGoal(d), { todoId, owner: 'codex-main', idempotencyKey: 'other-host' }, clock);
    const result = await runOnce({ ...fixtureRun(d, 'complete'), turnInstanceId: 'turn-blocked' });
    assert.notEqual(result.todo_id, todoId);
    assert.equal(leaseOf(d, todoId)?.['owner'], 'codex-main');
    assert.match(fs.readFileSync(d.statePath, 'utf8'), new RegExp(`- \\[ \\].*\\n.*todo_id=${todoId}`));
  });

  it('hard_lease: a writeback whose lease was taken over mid-turn is refused; the todo stays open, nothing is spent', async () => {
    const d = demo((goal) => {
      goal['handoff_mode'] = 'hard_lease';
    });
    const leaseDir = path.join(d.runtimeGoalDir, 'task-leases');
    const result = await runOnce({
      ...fixtureRun(d, 'complete'),
      turnInstanceId: 'turn-stolen',
      hostAdapterCommand: [process.execPath, STEAL, leaseDir, AGENT],
    });
    assert.equal(result.status, 'failed', result.message);
    assert.match(String(result.message), /durable_writeback \((lease_cas_mismatch|handoff_mode_requires_lease)\)/);
    const todoId = String(result.todo_id);
    assert.match(fs.readFileSync(d.statePath, 'utf8'), new RegExp(`- \\[ \\].*\\n.*todo_id=${todoId}`));
    assert.equal(leaseOf(d, todoId)?.['owner'], 'codex-main', 'the new holder keeps its lease');
    assert.deepEqual(await newSpends(d), []);
    // Issue 34, defect 10: no retry of this turn can write back, so its slot is released at once,
    // not held until the reservation expires an hour later.
    const held = reservations(d).filter((r) => JSON.stringify(r).includes('turn-stolen'));
    assert.deepEqual(held, [], 'the failed turn still holds its slot');
  });
});
