import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock, type Clock } from '../../../src/core/clock';
import { PersistentCache, statusCachePath } from '../../../src/core/goal/persistentCache';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { goalItems, type StatusPayload, type StatusPayloadItem } from '../../../src/core/status/statusPayload';
import { statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { redactCredentialsShared } from '../../../src/core/privacy/scrub';
import { ageFiles, materializeDemoWorkspace } from '../../support/demoWorkspace';
import { loadStatusAt } from '../../support/status';

/**
 * What status derives from each goal's item when answering (its dashboard blocks without their time-dependent
 * parts, its agent-management rows) is kept with the item, in memory and in the persistent cache
 * (statusPayload.ts `goalParts`, goalStatus.ts `itemParts`). The time-dependent parts are never kept: the quota (a
 * rolling window) and what its state decides, and the hard task leases (active until they expire), are put in when
 * answering. These tests move the clock (and wait for a lease to expire) through warm calls that take the kept parts,
 * and compare each answer with the uncached path's at the same time.
 */

const GOAL = 'tidy-notes';

interface Demo {
  dir: string;
  registryPath: string;
  runtimeRoot: string;
  cacheFile: string;
}

function demo(): Demo {
  const dir = materializeDemoWorkspace(
    path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-kept-parts-'))), 'demo'),
  );
  const runtimeRoot = path.join(dir, '.loopx', 'runtime');
  const d = { dir, registryPath: path.join(dir, '.loopx', 'registry.json'), runtimeRoot, cacheFile: '' };
  d.cacheFile = statusCachePath(runtimeRoot);
  // Nothing racy: every file last modified an hour ago, so the kept entries are trusted by their stamps.
  ageFiles(dir, new Date(Date.now() - 3_600_000), d.cacheFile);
  return d;
}

/** One `loopx status` as a fresh process makes it (a new in-memory cache), redacted as the CLI's. */
async function status(d: Demo, persistentCache: boolean, clock: Clock): Promise<StatusPayload> {
  const payload = await loadStatusAt({
    registryPath: d.registryPath,
    homeDir: d.dir,
    cache: new GoalStatusCache(),
    persistentCache,
    redact: true,
    clock,
    quotaSummary: statusQuotaSummaries({ registryPath: d.registryPath, clock, homeDir: d.dir }),
  });
  return redactCredentialsShared(payload);
}

function goal(payload: StatusPayload): StatusPayloadItem {
  const item = goalItems(payload).find((candidate) => candidate.goal_id === GOAL);
  assert.ok(item, `${GOAL} is listed`);
  return item;
}

/** Counts the parts a warm call took from the persistent cache (rather than built again). */
function countKeptParts(): { hits: () => number; restore: () => void } {
  const original = PersistentCache.prototype.itemParts;
  let hits = 0;
  PersistentCache.prototype.itemParts = function (this: PersistentCache, ...args: Parameters<typeof original>) {
    const kept = original.apply(this, args);
    if (kept !== undefined) hits++;
    return kept;
  } as typeof original;
  return { hits: () => hits, restore: () => (PersistentCache.prototype.itemParts = original) };
}

/** The parts kept in the cache file for the goal (its body line's `parts.value`). */
function keptParts(d: Demo): Record<string, unknown> {
  const body = JSON.parse(fs.readFileSync(d.cacheFile, 'utf8').split('\n')[1] as string) as {
    items: Record<string, { parts?: { value: Record<string, unknown> } }>;
  };
  const parts = body.items[GOAL]?.parts?.value;
  assert.ok(parts, 'the goal has its parts kept with its item');
  return parts;
}

describe('status: the parts kept with each item move with the clock', () => {
  it("the kept dashboard blocks hold no quota: each later process answers with its own time's quota", async () => {
    const d = demo();
    // The demo's spends are on 2026-11-28: in the window that day, out of it two days later.
    const times = ['2026-11-28T12:00:00Z', '2026-11-30T12:00:00Z', '2026-11-28T12:00:00Z'];
    await status(d, true, fixedClock(times[0] as string));
    const parts = keptParts(d) as {
      dashboard: { project_asset: Record<string, unknown>; goal_channel: { projection: Record<string, unknown> } };
    };
    assert.equal(parts.dashboard.project_asset['quota'], null, 'kept without its quota');
    assert.equal(parts.dashboard.project_asset['long_task_cadence_hint'], null, 'kept without its cadence hint');
    assert.deepEqual(parts.dashboard.goal_channel.projection['quota'], {}, 'the channel kept without its quota');
    const counter = countKeptParts();
    const quotas: unknown[] = [];
    try {
      for (const at of times) {
        const clock = fixedClock(at);
        const hitsBefore = counter.hits();
        const warm = await status(d, true, clock);
        assert.ok(counter.hits() > hitsBefore, `${at}: the warm call took the kept parts`);
        const uncached = await status(d, false, clock);
        assert.equal(JSON.stringify(warm), JSON.stringify(uncached), `${at}: the warm answer is the uncached one`);
        const item = goal(warm);
        assert.deepEqual(item.project_asset.quota?.spent_slots, item.quota?.spent_slots);
        assert.deepEqual(item.goal_channel_projection.quota['spent_slots'], item.quota?.spent_slots);
        quotas.push([item.project_asset.quota, item.goal_channel_projection.quota]);
      }
    } finally {
      counter.restore();
    }
    assert.notDeepEqual(quotas[0], quotas[1], 'two days later the spends left the window: the blocks show it');
    assert.deepEqual(quotas[0], quotas[2], 'back at the first time, the first quota again');
  });

  it('a hard task lease leaves the channel projection when it expires, though the blocks are kept', async () => {
    const d = demo();
    const clock = fixedClock('2026-11-28T12:00:00Z');
    // The status answer reads the leases at the time of the answer (the system clock).
    const expiresAt = new Date(Date.now() + 1_500);
    const leases = path.join(d.runtimeRoot, 'goals', GOAL, 'task-leases');
    fs.mkdirSync(leases, { recursive: true });
    fs.writeFileSync(
      path.join(leases, 'todo_lease_probe.json'),
      JSON.stringify({
        schema_version: 'task_lease_v0',
        goal_id: GOAL,
        todo_id: 'todo_lease_probe',
        owner: 'codex-a',
        version: 1,
        status: 'active',
        expires_at: expiresAt.toISOString(),
      }),
    );
    const hardLeases = (payload: StatusPayload): unknown[] =>
      goal(payload).goal_channel_projection.active_leases.filter((lease) => lease.status === 'hard_lease');
    await status(d, true, clock);
    const counter = countKeptParts();
    try {
      const before = await status(d, true, clock);
      assert.equal(counter.hits(), 1, 'the warm call took the kept parts');
      assert.deepEqual(
        hardLeases(before).map((lease) => (lease as { todo_id: string }).todo_id),
        ['todo_lease_probe'],
        'active before it expires',
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt.getTime() - Date.now()) + 100));
      const after = await status(d, true, clock);
      assert.equal(counter.hits(), 2, 'the warm call after the expiry took the kept parts too');
      assert.deepEqual(hardLeases(after), [], 'expired: no longer listed');
      assert.equal(JSON.stringify(after), JSON.stringify(await status(d, false, clock)));
    } finally {
      counter.restore();
    }
  });

  it('a changed registry entry (what the blocks read of it) builds the parts again', async () => {
    const d = demo();
    const clock = fixedClock('2026-11-28T12:00:00Z');
    await status(d, true, clock);
    const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const entry = registry.goals.find((candidate) => candidate['id'] === GOAL);
    assert.ok(entry);
    entry['execution_profile'] = { cadence: 'long_running_segment' };
    fs.writeFileSync(d.registryPath, JSON.stringify(registry));
    const counter = countKeptParts();
    try {
      const warm = await status(d, true, clock);
      assert.equal(counter.hits(), 0, 'not taken from the cache: built for the new entry');
      assert.equal(JSON.stringify(warm), JSON.stringify(await status(d, false, clock)));
      assert.equal(goal(warm).project_asset.execution_profile['cadence'], 'long_running_segment');
    } finally {
      counter.restore();
    }
  });

  it("one goal changed: only its parts are built again, the other goals' are taken as kept", async () => {
    const d = demo();
    // A second goal beside the demo's, with a state file of its own.
    const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    const first = registry.goals[0] as Record<string, unknown>;
    const stateFile = path.join(d.dir, '.codex', 'goals', 'second', 'ACTIVE_GOAL_STATE.md');
    fs.mkdirSync(path.dirname(stateFile), { recursive: true });
    fs.copyFileSync(path.join(d.dir, first['state_file'] as string), stateFile);
    registry.goals.push({ ...first, id: 'second', state_file: '.codex/goals/second/ACTIVE_GOAL_STATE.md' });
    fs.writeFileSync(d.registryPath, JSON.stringify(registry));
    ageFiles(d.dir, new Date(Date.now() - 3_600_000), d.cacheFile);
    const clock = fixedClock('2026-11-28T12:00:00Z');
    await status(d, true, clock);
    const counter = countKeptParts();
    try {
      await status(d, true, clock);
      assert.equal(counter.hits(), 2, 'warm: both goals take their kept parts');
      fs.appendFileSync(stateFile, '\n<!-- an edit -->\n');
      const changed = await status(d, true, clock);
      assert.equal(counter.hits(), 3, "one goal changed: the other goal's parts are kept, its own built again");
      assert.equal(JSON.stringify(changed), JSON.stringify(await status(d, false, clock)));
      await status(d, true, clock);
      assert.equal(counter.hits(), 5, 'and kept again for the next call');
    } finally {
      counter.restore();
    }
  });
});
