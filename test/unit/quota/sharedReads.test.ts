import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quotaRefOfEntry } from '../../../src/core/quota/goal';
import { loadGoalRef } from '../../support/goalRef';
import { readQuotaLedger } from '../../../src/core/quota/ledger';
import { readQuotaView } from '../../../src/core/quota/quotaView';
import { registryProjectRoot } from '../../../src/core/registry/locate';
import { rawRegistryGoalsById, readRegistry } from '../../../src/core/registry/read';
import { readGoalRuns, type RunIndexRead } from '../../../src/core/runtime/runIndex';
import { statusGoalQuotaSummary } from '../../../src/core/status/statusQuota';
import { loadedQuotaSummary } from '../../support/quotaSummary';
import { addRun, clockAt, hoursBefore, loadGoal, makeWorkspace, NOW, readIndexRows } from './helpers';

describe('quota from what the caller already read', () => {
  it('the summary is the same through the goal loader and from the reads status holds (entry, run index)', async () => {
    const ws = makeWorkspace({ quota: { compute: 0.5, window_hours: 24, slot_minutes: 30 } });
    await addRun(ws, hoursBefore(1), { classification: 'quota_slot_spent' }, { slots: 2 });
    await addRun(ws, hoursBefore(2), { classification: 'state_refreshed' });
    const base = { registryPath: ws.registryPath, goalId: ws.goalId, clock: clockAt(), homeDir: ws.dir };
    const loaded = await loadedQuotaSummary(base);
    const registry = await readRegistry(ws.registryPath);
    const entry = rawRegistryGoalsById(registry).get(ws.goalId);
    assert.ok(entry !== undefined);
    const goal = quotaRefOfEntry(entry, {
      goalId: ws.goalId,
      registryPath: ws.registryPath,
      projectRoot: registryProjectRoot(ws.registryPath),
      runtimeRoot: ws.runtimeRoot,
      homeDir: ws.dir,
    });
    const ref = await loadGoalRef(base);
    assert.deepEqual(goal, {
      goalId: ref.goalId,
      registryPath: ref.registryPath,
      projectRoot: ref.projectRoot,
      runtimeRoot: ref.runtimeRoot,
      runtimeDir: ref.runtimeDir,
      statePath: ref.statePath,
      rawEntry: ref.rawEntry,
    });
    const runIndex = await readGoalRuns(ws.runtimeRoot, ws.goalId, { projectRoot: ws.dir });
    assert.deepEqual(await statusGoalQuotaSummary({ goal, index: { kind: 'unread' } }, base.clock), loaded);
    assert.deepEqual(
      await statusGoalQuotaSummary({ goal, index: { kind: 'rows', runIndex, stamp: null } }, base.clock),
      loaded,
    );
    assert.equal(loaded.spent_slots, 2);
    // The newest status run decides what the goal waits on (a quota spend is status-neutral).
    assert.equal(loaded.state, 'eligible');
  });

  it('uses the run index it is given instead of reading the file again', async () => {
    const ws = makeWorkspace();
    const goal = await loadGoal(ws);
    const given: RunIndexRead = {
      index_file: path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs', 'index.jsonl'),
      exists: true,
      raw_count: 1,
      skipped: [],
      rows: [
        { generated_at: NOW, classification: 'quota_slot_spent', slots: 3, json_exists: false, markdown_exists: false },
      ],
    };
    assert.equal((await readQuotaView(goal, clockAt(), { kind: 'rows', runIndex: given })).ledger.spent_slots, 3);
    assert.equal(
      (await readQuotaView(goal, clockAt(), { kind: 'rows', runIndex: null })).ledger.spent_slots,
      0,
      'null: the index does not exist',
    );
    const otherGoals = { ...given, index_file: path.join(ws.runtimeRoot, 'goals', 'other', 'runs', 'index.jsonl') };
    assert.equal(
      (await readQuotaView(goal, clockAt(), { kind: 'rows', runIndex: otherGoals })).ledger.spent_slots,
      0,
      "another goal's index is not used",
    );
  });

  it('a spend row that carries its slots is complete: its record is not read', async () => {
    const ws = makeWorkspace();
    await addRun(
      ws,
      hoursBefore(1),
      { classification: 'quota_slot_spent', quota_event: { slots: 5 }, usage: { tokens: 10, estimated: false } },
      { slots: 1 },
    );
    const row = readIndexRows(ws)[0];
    assert.equal(row?.['slots'], 1);
    // The record disagrees; a row with slots is ours and already says everything (we mirror usage when there is one).
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: ws.goalId,
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    assert.equal(ledger.spent_slots, 1);
    assert.deepEqual(ledger.usage, { tokens: 0, cost_usd: 0, minutes: 0, estimated: false });
  });

  it("a spend row without slots (the original's) is completed from its record, in the window only", async () => {
    const ws = makeWorkspace();
    await addRun(ws, hoursBefore(1), {
      classification: 'quota_slot_spent',
      quota_event: { slots: 4 },
      usage: { tokens: 7, estimated: true },
    });
    await addRun(ws, hoursBefore(30), { classification: 'quota_slot_spent', quota_event: { slots: 9 } });
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: ws.goalId,
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    assert.equal(ledger.spent_slots, 4);
    assert.equal(ledger.usage.tokens, 7);
    assert.equal(ledger.usage.estimated, true);
  });

  it('a spend row with its settlement identity needs no record for it; one without takes it from the record', async () => {
    const ws = makeWorkspace();
    const identity = {
      schema_version: 'quota_settlement_identity_v0',
      effect_id: 'g:agent-a:todo_parser:t1',
      goal_id: 'g',
      agent_id: 'agent-a',
      todo_id: 'todo_parser',
      turn_instance_id: 't1',
    };
    await addRun(ws, hoursBefore(40), { classification: 'quota_slot_spent', settlement_identity: identity });
    // Same identity, only in the record of an older-format row: a duplicate of the first.
    await addRun(ws, hoursBefore(1), { classification: 'quota_slot_spent', quota_event: { slots: 1 } });
    const rows = readIndexRows(ws);
    const second = rows[1];
    assert.ok(second !== undefined && second['settlement_identity'] === undefined);
    const recordPath = path.resolve(ws.dir, String(second['json_path']));
    fs.writeFileSync(
      recordPath,
      JSON.stringify({ ...(JSON.parse(fs.readFileSync(recordPath, 'utf8')) as object), settlement_identity: identity }),
    );
    const { ledger } = await readQuotaLedger({
      runtimeRoot: ws.runtimeRoot,
      goalId: ws.goalId,
      projectRoot: ws.dir,
      windowHours: 24,
      clock: clockAt(),
    });
    assert.equal(ledger.duplicate_spends, 1);
    assert.equal(ledger.spent_slots, 0);
    assert.ok(ledger.settled_effect_ids.has(identity.effect_id));
  });
});
