import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Clock } from '../../../src/core/clock';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { statusCachePath } from '../../../src/core/goal/persistentCache';
import { GoalStatusCache } from '../../../src/core/status/goalStatus';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { goalItems, type StatusPayload } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { tempDir } from '../../support/tempDir';

/**
 * The monitor-due fields depend on the time of the read and are never frozen in a cache: the item cache (memory and
 * the persistent cache) keeps the listed monitors' schedules, and each answer derives the due counts for its own
 * clock; the live status model rebuilds once a monitor's due instant passes, without any file change.
 */

const DUE = '2026-07-01T10:00:00Z';
const BEFORE = new Date('2026-07-01T09:59:59Z');
const AFTER = new Date('2026-07-01T10:00:00Z');

const STATE = `---\nstatus: active\nupdated_at: 2026-07-01T00:00:00+00:00\n---\n## Agent Todo\n- [ ] Watch the nightly build\n  <!-- loopx:todo todo_id=todo_nightly status=open task_class=continuous_monitor next_due_at=${DUE} -->\n- [ ] Implement the parser\n  <!-- loopx:todo todo_id=todo_parser status=open task_class=advancement_task -->\n## Next Action\n- Implement the parser.\n`;

function workspace(): { dir: string; registryPath: string } {
  const dir = tempDir('loopx-monitor-due-');
  const state = path.join(dir, '.codex', 'goals', 'watch', 'ACTIVE_GOAL_STATE.md');
  fs.mkdirSync(path.dirname(state), { recursive: true });
  fs.writeFileSync(state, STATE);
  // Settled: a state file modified within the cache's racy window is read again on every call.
  const past = new Date(Date.now() - 60_000);
  fs.utimesSync(state, past, past);
  fs.mkdirSync(path.join(dir, '.loopx', 'runtime'), { recursive: true });
  const registryPath = path.join(dir, '.loopx', 'registry.json');
  const goal = { id: 'watch', repo: dir, state_file: '.codex/goals/watch/ACTIVE_GOAL_STATE.md', status: 'active' };
  fs.writeFileSync(registryPath, JSON.stringify({ common_runtime_root: '.loopx/runtime', goals: [goal] }));
  return { dir, registryPath };
}

function dueCount(payload: StatusPayload): unknown {
  return (goalItems(payload)[0]?.agent_todos as { monitor_due_count?: number } | null)?.monitor_due_count;
}

function stateReads(): { reader: GoalFileReader; count: () => number } {
  let reads = 0;
  return {
    reader: {
      ...fileSystemGoalReader,
      readState: (file) => {
        reads++;
        return fileSystemGoalReader.readState(file);
      },
    },
    count: () => reads,
  };
}

describe('status: monitor-due fields move with the clock through the caches', () => {
  it('one item cache answers before and after the due instant, without projecting the goal again', async () => {
    const { dir, registryPath } = workspace();
    const reads = stateReads();
    const cache = new GoalStatusCache(reads.reader);
    const at = (now: Date) => loadStatusAt({ registryPath, homeDir: dir, cache, clock: { now: () => now } });
    assert.equal(dueCount(await at(BEFORE)), 0);
    const readsAfterFirst = reads.count();
    assert.equal(dueCount(await at(AFTER)), 1);
    assert.equal(dueCount(await at(BEFORE)), 0);
    assert.equal(reads.count(), readsAfterFirst, 'the state file was not read again');
  });

  it('the persistent cache keeps no due count: a later process answers for its own time', async () => {
    const { dir, registryPath } = workspace();
    const first = await loadStatusAt({
      registryPath,
      homeDir: dir,
      persistentCache: true,
      clock: { now: () => BEFORE },
    });
    assert.equal(dueCount(first), 0);
    const saved = fs.readFileSync(statusCachePath(path.join(dir, '.loopx', 'runtime')), 'utf8');
    assert.ok(saved.includes('todo_nightly') && saved.includes(DUE), 'the monitor and its schedule are kept');
    assert.equal(saved.includes('monitor_due_count'), false, 'no due count is kept');
    const reads = stateReads();
    const later = await loadStatusAt({
      registryPath,
      homeDir: dir,
      persistentCache: true,
      cache: new GoalStatusCache(reads.reader),
      clock: { now: () => AFTER },
    });
    assert.equal(dueCount(later), 1);
    assert.equal(reads.count(), 0, 'answered from the persistent cache');
  });

  it('the live model rebuilds once the due instant passes, though no file changed', async () => {
    const { dir, registryPath } = workspace();
    let now = BEFORE;
    const clock: Clock = { now: () => now };
    const model = new LiveStatusModel({ registryPath, homeDir: dir, clock, watch: false, persistentCache: false });
    try {
      const first = await model.current();
      assert.ok(first.ok);
      assert.equal(dueCount(first.payload), 0);
      assert.equal((await model.refresh()).version, first.version, 'nothing changed: the snapshot is kept');
      now = AFTER;
      const second = await model.refresh();
      assert.ok(second.ok);
      assert.notEqual(second.version, first.version);
      assert.equal(dueCount(second.payload), 1);
      assert.equal((await model.refresh()).version, second.version, 'no later instant: kept again');
    } finally {
      model.close();
    }
  });
});
