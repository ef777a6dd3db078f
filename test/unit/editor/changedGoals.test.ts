import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { GoalSummary } from '../../../src/core/ops/goalRows';
import { goalsOfChangedFiles, PendingChanges } from '../../../src/workspace/changedGoals';

const ROOT = path.resolve('/work/project');
const RUNTIME = path.join(ROOT, '.loopx', 'runtime');
const REGISTRY = path.join(ROOT, '.loopx', 'registry.json');

function goal(goalId: string): GoalSummary {
  return {
    goalId,
    displayName: goalId,
    status: 'active',
    domain: null,
    registryPath: REGISTRY,
    projectRoot: ROOT,
    runtimeRoot: RUNTIME,
    stateFile: path.join(ROOT, '.codex', 'goals', goalId, 'ACTIVE_GOAL_STATE.md'),
    agents: [],
    quota: {} as GoalSummary['quota'],
  };
}

describe('which goals a changed file belongs to (issue 16)', () => {
  const goals = [goal('alpha'), goal('beta')];
  const ids = (found: 'all' | GoalSummary[]) => (found === 'all' ? 'all' : found.map((g) => g.goalId));

  it("maps a goal's state file, and a temporary file renamed over it, to that goal", () => {
    const state = goals[1]?.stateFile ?? '';
    assert.deepEqual(ids(goalsOfChangedFiles([state], goals)), ['beta']);
    assert.deepEqual(ids(goalsOfChangedFiles([`${state}.bench-tmp`], goals)), ['beta']);
    assert.deepEqual(
      ids(
        goalsOfChangedFiles(
          [path.join(path.dirname(state), '.ACTIVE_GOAL_STATE.md.ab12cd34-7.0123456789ab.tmp')],
          goals,
        ),
      ),
      ['beta'],
    );
  });

  it('maps run indexes and task leases under <runtime>/goals/<id>/ to that goal', () => {
    const files = [
      path.join(RUNTIME, 'goals', 'alpha', 'runs', 'index.jsonl'),
      path.join(RUNTIME, 'goals', 'alpha', 'task-leases', 'todo-1.json'),
    ];
    assert.deepEqual(ids(goalsOfChangedFiles(files, goals)), ['alpha']);
    assert.deepEqual(ids(goalsOfChangedFiles([path.join(RUNTIME, 'goals', 'beta', 'task-leases')], goals)), ['beta']);
  });

  it('asks for a full reload for the registry, an unknown goal folder or any other file', () => {
    assert.equal(goalsOfChangedFiles([goals[0]?.stateFile ?? '', REGISTRY], goals), 'all');
    assert.equal(goalsOfChangedFiles([path.join(RUNTIME, 'goals', 'new-goal', 'runs', 'index.jsonl')], goals), 'all');
    assert.equal(goalsOfChangedFiles([path.join(ROOT, '.loopx', 'other.json')], goals), 'all');
    assert.equal(goalsOfChangedFiles([path.join(RUNTIME, 'goals', 'alpha-2', 'x')], goals), 'all');
  });

  it('ignores the status cache LoopX writes itself (else every one-goal reload would trigger a full one)', () => {
    assert.deepEqual(ids(goalsOfChangedFiles([path.join(RUNTIME, 'cache', 'status-cache.json')], goals)), []);
  });

  it("the first change seen after the first load is one goal's, like every later one (not a full reload)", () => {
    const pending = new PendingChanges();
    const state = goals[0]?.stateFile ?? '';
    pending.add(state);
    const first = pending.take();
    assert.deepEqual(first === 'all' ? 'all' : [...first], [state]);
    assert.deepEqual(ids(goalsOfChangedFiles(first === 'all' ? [] : first, goals)), ['alpha']);
    // A request for everything wins over files until it is taken; then it starts again empty.
    pending.add(state);
    pending.add(undefined);
    pending.add(goals[1]?.stateFile ?? undefined);
    assert.equal(pending.take(), 'all');
    assert.deepEqual([...(pending.take() as Set<string>)], []);
  });
});
