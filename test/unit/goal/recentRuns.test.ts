import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { readRunIndex, type RunIndexRow } from '../../../src/core/runtime/runIndex';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { keptRecentRunRows, recentRunRows, RECENT_RUNS_KEPT } from '../../../src/core/goal/recentRuns';
import { statusCachePath } from '../../../src/core/goal/persistentCache';
import { ageFiles, materializeDemoWorkspace } from '../../support/demoWorkspace';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');
const HOUR_AGO = new Date(Date.now() - 3_600_000);

describe("a goal's recent runs kept with its run-index digest (the editor's Recent runs)", () => {
  it('lists the newest runs without bookkeeping rows, each with the summed spend of its turn', () => {
    const rows = [
      { classification: 'quota_slot_spent', turn_instance_id: 't2', slots: 2, usage: { cost_usd: 0.25, tokens: 900 } },
      { classification: 'quota_slot_spent', turn_instance_id: 't2', usage: {} },
      {
        classification: 'advancement',
        agent_id: 'demo',
        turn_instance_id: 't2',
        generated_at: '2026-01-02T00:00:00Z',
        markdown_path: 'runs/b.md',
      },
      { classification: 'quota_monitor_poll' },
      { classification: 'status_snapshot', generated_at: '2026-01-01T00:00:00Z', todo_id: 'todo_a' },
    ] as RunIndexRow[];
    const runs = recentRunRows(rows);
    assert.deepEqual(
      runs.map((r) => [r.classification, r.spent_slots, r.cost_usd, r.tokens, r.markdown_path, r.todo_id]),
      [
        ['advancement', 3, 0.25, 900, 'runs/b.md', null],
        ['status_snapshot', null, null, null, null, 'todo_a'],
      ],
    );
    assert.equal(recentRunRows(rows, 1).length, 1);
  });

  it('takes back from the cache only well-formed rows (anything else: the index is read)', () => {
    const good = recentRunRows([
      { classification: 'advancement', generated_at: '2026-01-01T00:00:00Z' } as RunIndexRow,
    ]);
    assert.deepEqual(keptRecentRunRows(good), good);
    assert.deepEqual(keptRecentRunRows([]), []);
    assert.equal(keptRecentRunRows(undefined), undefined);
    assert.equal(keptRecentRunRows({}), undefined);
    assert.equal(keptRecentRunRows([null]), undefined);
    assert.equal(keptRecentRunRows([{ ...good[0], classification: 7 }]), undefined);
    assert.equal(keptRecentRunRows([{ ...good[0], spent_slots: 'one' }]), undefined);
    assert.equal(keptRecentRunRows([{ ...good[0], tokens: Number.NaN }]), undefined);
    assert.equal(keptRecentRunRows(Array.from({ length: RECENT_RUNS_KEPT + 1 }, () => good[0])), undefined);
  });

  describe('through the live model and the persistent cache', () => {
    let dir = '';
    let registryPath = '';
    let indexFile = '';
    let indexReads = 0;
    const reader: GoalFileReader = {
      ...fileSystemGoalReader,
      readRunIndex: async (file, options) => {
        indexReads++;
        return fileSystemGoalReader.readRunIndex(file, options);
      },
    };
    const snapshotOf = async () => {
      const model = new LiveStatusModel({ registryPath, homeDir: dir, clock: CLOCK, watch: false, reader });
      try {
        indexReads = 0;
        const snapshot = await model.current();
        assert.ok(snapshot.ok);
        // The deferred cache save runs on close.
        return snapshot;
      } finally {
        model.close();
      }
    };
    const fromIndex = async () =>
      recentRunRows((await readRunIndex(indexFile, { projectRoot: dir, artifactChecks: 0 })).rows);

    beforeEach(() => {
      dir = materializeDemoWorkspace(
        path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-recent-runs-'))), 'demo'),
      );
      registryPath = path.join(dir, '.loopx', 'registry.json');
      indexFile = path.join(dir, '.loopx', 'runtime', 'goals', 'tidy-notes', 'runs', 'index.jsonl');
      ageFiles(dir, HOUR_AGO);
    });
    // The model's close() starts its last cache save; removing the folder may race it: retried.
    afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }));

    it('a warm start has them from the cache, without reading the run index, equal to a fresh read', async () => {
      const cold = await snapshotOf();
      const expected = await fromIndex();
      assert.ok(expected.length > 0, 'the demo has runs');
      assert.deepEqual(cold.recentRuns.get('tidy-notes'), expected);
      await waitForFile(statusCachePath(path.join(dir, '.loopx', 'runtime')));
      const warm = await snapshotOf();
      assert.equal(indexReads, 0, 'the warm start read no run index');
      assert.deepEqual(warm.recentRuns.get('tidy-notes'), expected);
    });

    it('a run appended since is listed first (the index stamp changed, the rows are computed again)', async () => {
      await snapshotOf();
      await waitForFile(statusCachePath(path.join(dir, '.loopx', 'runtime')));
      const row = {
        generated_at: '2026-11-28T11:30:00+00:00',
        goal_id: 'tidy-notes',
        classification: 'advancement',
        agent_id: 'demo',
        recommended_action: 'appended since the cache was written',
      };
      fs.appendFileSync(indexFile, `${JSON.stringify(row)}\n`);
      const warm = await snapshotOf();
      assert.equal(warm.recentRuns.get('tidy-notes')?.[0]?.recommended_action, row.recommended_action);
      assert.deepEqual(warm.recentRuns.get('tidy-notes'), await fromIndex());
    });

    it('with the persistent cache off, none are kept (the editor reads the index)', async () => {
      const model = new LiveStatusModel({
        registryPath,
        homeDir: dir,
        clock: CLOCK,
        watch: false,
        reader,
        persistentCache: false,
      });
      try {
        const snapshot = await model.current();
        assert.ok(snapshot.ok);
        assert.equal(snapshot.recentRuns.has('tidy-notes'), false);
      } finally {
        model.close();
      }
    });
  });
});

async function waitForFile(file: string): Promise<void> {
  for (let i = 0; i < 200 && !fs.existsSync(file); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.ok(fs.existsSync(file), `${file} was written`);
}
