import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { GoalLoader } from '../../../src/core/goal/loader';
import { isLoopxError } from '../../../src/core/errors';
import { fixedClock } from '../../../src/core/clock';
import { decisionRuns } from '../../../src/core/scheduling/decisionQuota';
import { demo, goalOf } from '../turn/helpers';

/** The goal loader's reads for the turn driver: the registry entry as it is now, and a goal's run rows. */
describe('GoalLoader: reload and run rows', () => {
  it('reload gives the goal as the registry says it now, at the place the reference was resolved', async () => {
    const d = demo();
    const before = goalOf(d.registryPath);
    const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const entry = registry.goals[0] as Record<string, unknown>;
    entry['stop_condition'] = 'edited while the loop ran';
    entry['state_file'] = path.join(d.workspace, 'moved', 'ACTIVE_GOAL_STATE.md');
    fs.writeFileSync(d.registryPath, JSON.stringify(registry, null, 2));

    const { goal, document } = await new GoalLoader().reload(before);
    assert.equal(goal.rawEntry['stop_condition'], 'edited while the loop ran');
    assert.equal(goal.statePath, path.join(d.workspace, 'moved', 'ACTIVE_GOAL_STATE.md'), 'paths follow the entry');
    assert.equal(goal.runtimeRoot, before.runtimeRoot, 'the place stays as resolved');
    assert.equal(goal.runtimeDir, path.join(before.runtimeRoot, 'goals', 'tidy-notes'));
    assert.equal(goal.entry.id, 'tidy-notes');
    assert.equal((document['goals'] as unknown[])[0], goal.rawEntry, 'the entry is the document read');
  });

  it('load with reread decides on the entry as the registry says it now, and the snapshot carries its document', async () => {
    const d = demo();
    const before = goalOf(d.registryPath);
    const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const entry = registry.goals[0] as Record<string, unknown>;
    entry['stop_condition'] = 'edited between two turns';
    fs.writeFileSync(d.registryPath, JSON.stringify(registry, null, 2));
    const clock = fixedClock('2026-11-28T10:00:00Z');

    const plain = await new GoalLoader().load(before, { clock });
    assert.equal(plain.goal, before, 'without reread the reference is used as given');
    assert.equal(plain.registryDocument, undefined);
    const current = await new GoalLoader().load(before, { clock, reread: true });
    assert.equal(current.goal.rawEntry['stop_condition'], 'edited between two turns');
    assert.equal(current.goal.runtimeRoot, before.runtimeRoot, 'the place stays as resolved');
    assert.equal((current.registryDocument?.['goals'] as unknown[])[0], current.goal.rawEntry);
    assert.equal(current.state.kind, 'read', 'and the goal files are read with it');
  });

  it('load with reread refuses a goal removed from the registry before reading its files', async () => {
    const d = demo();
    const before = goalOf(d.registryPath);
    fs.writeFileSync(d.registryPath, JSON.stringify({ schema_version: 1, goals: [] }));
    await assert.rejects(
      new GoalLoader().load(before, { clock: fixedClock('2026-11-28T10:00:00Z'), reread: true }),
      (error: unknown) => isLoopxError(error, 'goal_not_found'),
    );
  });

  it('reload refuses a goal removed from the registry meanwhile (goal_not_found)', async () => {
    const d = demo();
    const before = goalOf(d.registryPath);
    fs.writeFileSync(d.registryPath, JSON.stringify({ schema_version: 1, goals: [] }));
    await assert.rejects(
      new GoalLoader().reload(before),
      (error: unknown) =>
        isLoopxError(error, 'goal_not_found') &&
        /is no longer in the registry .*; no new turn starts/.test(error.message),
    );
  });

  it('runRows reads every row of the run index now, newest first (nothing kept between calls)', async () => {
    const d = demo();
    const goal = goalOf(d.registryPath);
    const loader = new GoalLoader();
    const first = await loader.runRows(goal);
    assert.ok(first.length > 0, 'the demo has runs');
    const index = path.join(goal.runtimeDir, 'runs', 'index.jsonl');
    const row = {
      generated_at: '2099-01-01T00:00:00+00:00',
      classification: 'validated_progress',
      turn_instance_id: 't-new',
    };
    fs.appendFileSync(index, `${JSON.stringify(row)}\n`);
    const second = await loader.runRows(goal);
    assert.equal(second.length, first.length + 1);
    assert.equal((second[0] as Record<string, unknown>)['turn_instance_id'], 't-new');
  });

  it("keeps every lane's replan rows in the snapshot: the decision picks its agent's and reads nothing", async () => {
    const d = demo();
    const goal = goalOf(d.registryPath);
    const index = path.join(goal.runtimeDir, 'runs', 'index.jsonl');
    const row = (agentId: string, minute: number) => ({
      generated_at: `2026-11-28T09:${String(minute).padStart(2, '0')}:00+00:00`,
      goal_id: 'tidy-notes',
      classification: 'validated_progress',
      agent_id: agentId,
      json_path: `.loopx/runtime/goals/tidy-notes/runs/${agentId}-${minute}.json`,
      turn_instance_id: `${agentId}-${minute}`,
    });
    fs.appendFileSync(index, [row('other', 10), row('demo', 11)].map((r) => `${JSON.stringify(r)}\n`).join(''));
    const loaded = await new GoalLoader().load(goal, { clock: fixedClock('2026-11-28T10:00:00Z') });
    assert.equal(loaded.runs.kind, 'history');
    if (loaded.runs.kind !== 'history') return;
    const ids = (rows: readonly Record<string, unknown>[]) => rows.map((r) => r['turn_instance_id']);
    assert.deepEqual(ids(loaded.runs.replanRows.byAgent.get('other') ?? []), ['other-10']);
    assert.equal(ids(loaded.runs.replanRows.byAgent.get('demo') ?? [])[0], 'demo-11', 'newest first');
    assert.deepEqual(ids(loaded.runs.replanRows.all).slice(0, 2), ['demo-11', 'other-10']);

    // The run index gone: the decision's rows still come from the snapshot, flags included (lazy, as before).
    fs.rmSync(path.join(goal.runtimeDir, 'runs'), { recursive: true });
    assert.deepEqual(ids(decisionRuns(loaded, 'other').replanRows), ['other-10']);
    assert.deepEqual(ids(decisionRuns(loaded, 'nobody').replanRows), []);
    assert.deepEqual(ids(decisionRuns(loaded, null).replanRows), ids(loaded.runs.replanRows.all));
    assert.equal(decisionRuns(loaded, 'other').replanRows[0]?.json_exists, false, "the artifact is stat'ed now: gone");
  });
});
