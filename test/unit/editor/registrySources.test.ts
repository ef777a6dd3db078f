import assert from 'node:assert/strict';
import * as path from 'node:path';
import type { GoalSummary } from '../../../src/core/ops/goalRows';
import { goalsOfChangedFiles } from '../../../src/workspace/changedGoals';
import { goalsByFolder, registrySources, watchTargets } from '../../../src/workspace/registrySources';

const HOME = path.resolve('/home/user');
const A = path.resolve('/work/alpha');
const B = path.resolve('/work/beta');

function goal(goalId: string, fields: Partial<GoalSummary> = {}): GoalSummary {
  const root = fields.projectRoot ?? A;
  return {
    goalId,
    displayName: goalId,
    status: 'active',
    domain: null,
    registryPath: path.join(root, '.loopx', 'registry.json'),
    projectRoot: root,
    runtimeRoot: path.join(root, '.loopx', 'runtime'),
    stateFile: path.join(root, 'ACTIVE_GOAL_STATE.md'),
    agents: [],
    quota: {} as GoalSummary['quota'],
    ...fields,
  };
}

describe('multi-root: the registries of a window (issue 27)', () => {
  it("reads each folder's own loopx.registryPath, relative to that folder", () => {
    const sources = registrySources(
      [
        { name: 'alpha', path: A, registryPath: 'config/loopx.json' },
        { name: 'beta', path: B, registryPath: '' },
      ],
      'ignored-with-folders.json',
      HOME,
    );
    assert.deepEqual(sources, [
      { registryPath: path.join(A, '.loopx', 'registry.json'), folder: { name: 'alpha', path: A } },
      { registryPath: path.join(A, 'config', 'loopx.json'), folder: { name: 'alpha', path: A } },
      { registryPath: path.join(B, '.loopx', 'registry.json'), folder: { name: 'beta', path: B } },
    ]);
  });

  it('gives a registry two folders name to the first; without folders the setting is relative to the home folder', () => {
    const shared = path.resolve('/srv/shared/registry.json');
    const sources = registrySources(
      [
        { name: 'alpha', path: A, registryPath: shared },
        { name: 'beta', path: B, registryPath: shared },
      ],
      shared,
      HOME,
    );
    assert.deepEqual(
      sources.filter((s) => s.registryPath === shared),
      [{ registryPath: shared, folder: { name: 'alpha', path: A } }],
    );
    assert.deepEqual(registrySources([], ' my/registry.json ', HOME), [
      { registryPath: path.join(HOME, 'my', 'registry.json'), folder: undefined },
    ]);
    assert.deepEqual(registrySources([], '', HOME), []);
  });

  it('groups goals by the folder their registry came from, only when the window has several folders', () => {
    const folders = [
      { name: 'alpha', path: A },
      { name: 'beta', path: B },
      { name: 'gamma', path: path.resolve('/work/gamma') },
    ];
    const sources = registrySources(
      folders.map((f) => ({ ...f, registryPath: f.name === 'beta' ? path.join(A, 'other.json') : '' })),
      '',
      HOME,
    );
    const one = goal('one');
    const two = goal('two', { registryPath: path.join(A, 'other.json') });
    const three = goal('three', { projectRoot: B });
    const grouped = goalsByFolder(folders, sources, [one, two, three]);
    assert.deepEqual(
      grouped?.map((g) => [g.folder.name, g.goals.map((x) => x.goalId)]),
      [
        ['alpha', ['one']],
        ['beta', ['two', 'three']],
        ['gamma', []],
      ],
    );
    assert.equal(goalsByFolder(folders.slice(0, 1), sources, [one, two, three]), null);
    assert.equal(goalsByFolder([], sources, [one]), null);
  });
});

describe('live everywhere: which files need a watcher of their own (issue 27)', () => {
  it('none for the default layout: .loopx/runtime and ACTIVE_GOAL_STATE.md inside a folder', () => {
    assert.deepEqual(watchTargets([goal('one')], [A]), { runtimeRoots: [], stateFiles: [] });
  });

  it('a runtime root inside the folder but outside .loopx/ (./runtime)', () => {
    const runtime = path.join(A, 'runtime');
    assert.deepEqual(watchTargets([goal('one', { runtimeRoot: runtime })], [A]), {
      runtimeRoots: [runtime],
      stateFiles: [],
    });
  });

  it('a state file with another name, and one outside the folders', () => {
    const renamed = path.join(A, 'docs', 'GOAL.md');
    const outside = path.resolve('/elsewhere/notes/STATE.md');
    assert.deepEqual(
      watchTargets([goal('one', { stateFile: renamed }), goal('two', { stateFile: outside }), goal('three')], [A]),
      {
        runtimeRoots: [],
        stateFiles: [
          { dir: path.dirname(outside), name: 'STATE.md' },
          { dir: path.join(A, 'docs'), name: 'GOAL.md' },
        ].sort((x, y) => path.join(x.dir, x.name).localeCompare(path.join(y.dir, y.name))),
      },
    );
  });

  it('a runtime root outside the folders, once, and nothing under it again', () => {
    const outside = path.resolve('/var/loopx/runtime');
    const goals = [
      goal('one', { runtimeRoot: outside, stateFile: path.join(outside, 'goals', 'one', 'STATE.md') }),
      goal('two', { runtimeRoot: path.join(outside, 'nested') }),
    ];
    assert.deepEqual(watchTargets(goals, [A]), { runtimeRoots: [outside], stateFiles: [] });
  });

  it('the files those watchers report map to their goal (a one-goal reload), not to a full reload', () => {
    const runtime = path.join(A, 'runtime');
    const renamed = path.join(A, 'docs', 'GOAL.md');
    const goals = [goal('one', { runtimeRoot: runtime, stateFile: renamed }), goal('two', { runtimeRoot: runtime })];
    const ids = (found: 'all' | GoalSummary[]) => (found === 'all' ? 'all' : found.map((g) => g.goalId));
    assert.deepEqual(ids(goalsOfChangedFiles([path.join(runtime, 'goals', 'two', 'run_index.jsonl')], goals)), ['two']);
    assert.deepEqual(ids(goalsOfChangedFiles([renamed], goals)), ['one']);
  });
});
