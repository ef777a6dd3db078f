import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { statusStateFile } from '../../../src/core/status/goalStatus';
import { LiveStatusModel, type StatusDiff } from '../../../src/core/status/liveStatus';
import type { GoalRef } from '../../../src/core/registry/goalRef';
import type { StatusRefKeys } from '../../../src/core/status/goalStatusSchema';

const NOW = '2026-11-29T10:00:00Z';
const STATE = '# Goal\n\n## Agent Todo\n\n- [ ] first todo\n';
/** A status target with the state file status reads for it. */
const withStateFile = (target: Pick<GoalRef, StatusRefKeys>) => ({ ...target, stateFile: statusStateFile(target) });

/** A project with three goals, each with its own state file. */
function threeGoalProject(dir: string): string {
  const goals = ['alpha', 'beta', 'gamma'].map((id) => {
    const stateFile = path.join('.codex', 'goals', id, 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.join(dir, path.dirname(stateFile)), { recursive: true });
    fs.writeFileSync(path.join(dir, stateFile), STATE);
    return { id, domain: 'd', status: 'active', repo: dir, state_file: stateFile, adapter: { kind: 'fixture' } };
  });
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  fs.mkdirSync(path.dirname(registryPath), { recursive: true });
  fs.writeFileSync(
    registryPath,
    JSON.stringify({ schema_version: '0.1', common_runtime_root: '.loopx/runtime', goals }, null, 2),
  );
  return registryPath;
}

describe('the live status model re-reading one goal (issue 16)', function () {
  let scratch = '';
  let registryPath = '';
  let model: LiveStatusModel;
  const touched: string[] = [];
  /** One-shot holds: the next read of that state file waits until released. */
  const gates = new Map<string, { reached: () => void; released: Promise<void> }>();
  const reader: GoalFileReader = {
    ...fileSystemGoalReader,
    stat: (file) => {
      touched.push(`stat ${file}`);
      return fileSystemGoalReader.stat(file);
    },
    readState: async (file) => {
      touched.push(`read ${file}`);
      const gate = gates.get(file);
      if (gate !== undefined) {
        gates.delete(file);
        gate.reached();
        await gate.released;
      }
      return fileSystemGoalReader.readState(file);
    },
    readRunIndex: (file, options) => {
      touched.push(`index ${file}`);
      return fileSystemGoalReader.readRunIndex(file, options);
    },
  };

  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-live-goals-'));
    registryPath = threeGoalProject(fs.realpathSync(scratch));
    touched.length = 0;
    model = new LiveStatusModel({ registryPath, homeDir: os.homedir(), clock: fixedClock(NOW), watch: false, reader });
  });
  afterEach(() => {
    model.close();
    fs.rmSync(scratch, { recursive: true, force: true });
  });

  it("lists one goal's runs newest first through its file cache, and lets the read go (the editor's Recent runs)", async () => {
    const first = await model.current();
    assert.ok(first.ok);
    const beta = first.targets.find((target) => target.goalId === 'beta');
    assert.ok(beta !== undefined);
    const index = path.join(beta.runtimeRoot, 'goals', 'beta', 'runs', 'index.jsonl');
    fs.mkdirSync(path.dirname(index), { recursive: true });
    const row = (at: string): string =>
      JSON.stringify({ generated_at: at, goal_id: 'beta', classification: 'validated_progress' });
    fs.writeFileSync(index, `${row('2026-11-29T08:00:00Z')}\n${row('2026-11-29T09:00:00Z')}\n`);
    touched.length = 0;
    const runs = await model.goalRuns('beta');
    assert.deepEqual(
      runs.map((r) => r.generated_at),
      ['2026-11-29T09:00:00Z', '2026-11-29T08:00:00Z'],
    );
    assert.deepEqual(
      touched.filter((t) => t.startsWith('index ')),
      [`index ${index}`],
    );
    // Let go: asked again, the index is read again (a held read would answer from memory).
    await model.goalRuns('beta');
    assert.equal(touched.filter((t) => t === `index ${index}`).length, 2);
    assert.deepEqual(await model.goalRuns('no-such-goal'), []);
  });

  it("reads one goal's executors from the snapshot's registry entry and its leases from its lease files (the editor's trees)", async () => {
    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    registry.goals[1]!['coordination'] = {
      agent_profiles: { coder: { executor: { preset: 'demo' } }, broken: { executor: { preset: 'no-such-preset' } } },
    };
    fs.writeFileSync(registryPath, JSON.stringify(registry));
    const snapshot = await model.current();
    assert.ok(snapshot.ok);
    const configs = model.executorConfigs('beta', ['coder', 'broken', 'plain']);
    const coder = configs.get('coder');
    assert.equal(typeof coder === 'object' && coder !== null ? coder.preset : coder, 'demo');
    assert.equal(configs.get('broken'), 'invalid');
    assert.equal(configs.get('plain'), null);
    assert.equal(model.executorConfigs('no-such-goal', ['coder']).get('coder'), null);

    const beta = snapshot.targets.find((target) => target.goalId === 'beta');
    assert.ok(beta !== undefined);
    assert.deepEqual([...model.goalLeases('beta', new Date(NOW)).keys()], []);
    // A lease file written after the snapshot is seen (leases are read on each call); a corrupt one shows as such.
    const leases = path.join(beta.runtimeRoot, 'goals', 'beta', 'task-leases');
    fs.mkdirSync(leases, { recursive: true });
    fs.writeFileSync(path.join(leases, 'todo_1.json'), '{ not json');
    const held = model.goalLeases('beta', new Date(NOW));
    assert.equal(held.get('todo_1')?.owner, '(corrupt lease file)');
    assert.equal(model.goalLeases('no-such-goal', new Date(NOW)).size, 0);
  });

  it("neither reads nor stats another goal's state file, and reports the change of that goal only", async () => {
    const first = await model.current();
    assert.ok(first.ok);
    const withState = first.targets.map(withStateFile).filter((target) => target.stateFile !== null);
    assert.ok(withState.length >= 2, 'the project has goals with state files');
    const [changed, ...others] = withState;
    assert.ok(changed !== undefined && changed.stateFile !== null && changed.stateFile !== undefined);
    const text = fs.readFileSync(changed.stateFile, 'utf8');
    fs.writeFileSync(changed.stateFile, `${text}- [ ] a todo written by another process\n`);
    const diffs: StatusDiff[] = [];
    model.onDidChange((diff) => diffs.push(diff));
    touched.length = 0;

    const next = await model.refreshGoals([changed.goalId]);

    assert.ok(next.ok);
    assert.ok(touched.includes(`read ${changed.stateFile}`), 'the changed goal is re-read');
    for (const other of others)
      assert.deepEqual(
        touched.filter((entry) => entry.endsWith(` ${other.stateFile}`)),
        [],
        `${other.goalId}'s state file untouched`,
      );
    assert.notEqual(next.items.get(changed.goalId), first.items.get(changed.goalId));
    for (const other of others) assert.equal(next.items.get(other.goalId), first.items.get(other.goalId));
    assert.deepEqual(
      diffs.map((diff) => diff.changed),
      [[changed.goalId]],
    );
  });

  it('rebuilds everything when the registry itself changed', async () => {
    const first = await model.current();
    assert.ok(first.ok);
    const [one, two] = first.targets;
    assert.ok(one !== undefined && two !== undefined);
    const registry = JSON.parse(fs.readFileSync(registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const entry = registry.goals.find((goal) => goal['id'] === two.goalId);
    assert.ok(entry !== undefined);
    entry['display_name'] = 'Renamed by another process';
    fs.writeFileSync(registryPath, JSON.stringify(registry, null, 2));

    const next = await model.refreshGoals([one.goalId]);

    assert.ok(next.ok);
    assert.equal(next.items.get(two.goalId)?.display_name, 'Renamed by another process');
  });

  it('leaves the model stale, so the next current() re-checks every goal and rebuilds the aggregate payload', async () => {
    const first = await model.current();
    assert.ok(first.ok);
    const [changed] = first.targets.map(withStateFile).filter((target) => target.stateFile !== null);
    assert.ok(changed?.stateFile !== null && changed?.stateFile !== undefined);
    fs.appendFileSync(changed.stateFile, '\n- [ ] another todo\n');
    const partial = await model.refreshGoals([changed.goalId]);
    const full = await model.current();
    assert.ok(partial.ok && full.ok);
    assert.notEqual(full.payload, partial.payload, 'the payload was rebuilt from every goal');
    assert.notDeepEqual(partial.items.get(changed.goalId)?.agent_todos, first.items.get(changed.goalId)?.agent_todos);
    assert.deepEqual(full.items.get(changed.goalId)?.agent_todos, partial.items.get(changed.goalId)?.agent_todos);
  });
  it('a full refresh that finishes while one goal is re-read is not undone: the other goals keep its newer items', async () => {
    const first = await model.current();
    assert.ok(first.ok);
    const [alpha, beta] = first.targets.map(withStateFile).filter((target) => target.stateFile !== null);
    assert.ok(alpha?.stateFile && beta?.stateFile);
    fs.appendFileSync(alpha.stateFile, '\n- [ ] alpha todo\n');
    fs.appendFileSync(beta.stateFile, '\n- [ ] beta todo\n');
    let reached = (): void => undefined;
    let release = (): void => undefined;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    gates.set(alpha.stateFile, {
      reached: () => reached(),
      released: new Promise<void>((resolve) => (release = resolve)),
    });

    const partial = model.refreshGoals([alpha.goalId]);
    await atGate; // alpha is being re-read from the old snapshot
    model.invalidate();
    const full = await model.refresh(); // meanwhile a full refresh publishes beta's new item
    assert.ok(full.ok);
    assert.notDeepEqual(full.items.get(beta.goalId)?.agent_todos, first.items.get(beta.goalId)?.agent_todos);
    release();
    const after = await partial;

    assert.ok(after.ok);
    assert.deepEqual(after.items.get(beta.goalId)?.agent_todos, full.items.get(beta.goalId)?.agent_todos);
    assert.deepEqual(after.items.get(alpha.goalId)?.agent_todos, full.items.get(alpha.goalId)?.agent_todos);
  });
});
