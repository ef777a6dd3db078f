import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { LiveStatusModel, type LiveSnapshot } from '../../../src/core/status/liveStatus';
import { ageFiles, materializeDemoWorkspace } from '../../support/demoWorkspace';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');
const HOUR_AGO = new Date(Date.now() - 3_600_000);
const GOAL = 'tidy-notes';

/**
 * The live model keeps run-index reads across builds: a read stays with the stamp it was taken at
 * (what is derived from it is keyed by that stamp), and the read of a goal just rebuilt is reused
 * after a state-file-only change only while its artifact flags still hold.
 */
describe('run-index reads kept by the live model', () => {
  let dir = '';
  let registryPath = '';
  let indexFile = '';
  let stateFile = '';
  let indexReads = 0;
  let afterIndexRead: (() => void) | undefined;
  const reader: GoalFileReader = {
    ...fileSystemGoalReader,
    readRunIndex: async (file, options) => {
      indexReads++;
      const read = await fileSystemGoalReader.readRunIndex(file, options);
      const hook = afterIndexRead;
      afterIndexRead = undefined;
      hook?.();
      return read;
    },
  };
  const newModel = (): LiveStatusModel =>
    new LiveStatusModel({ registryPath, homeDir: dir, clock: CLOCK, watch: false, reader });
  /** Runs `use` with a new model, closed after. */
  const withModel = async <T>(use: (model: LiveStatusModel) => Promise<T>): Promise<T> => {
    const model = newModel();
    try {
      return await use(model);
    } finally {
      model.close();
      await model.saved(); // the close's cache save, before afterEach removes the folder
    }
  };
  /** What a model that never saw the goal before reads now. */
  const freshSnapshot = (): Promise<Extract<LiveSnapshot, { ok: true }>> =>
    withModel(async (model) => ready(await model.current()));
  const ready = (snapshot: LiveSnapshot): Extract<LiveSnapshot, { ok: true }> => {
    assert.ok(snapshot.ok, snapshot.ok ? '' : snapshot.error);
    return snapshot;
  };
  const appendRows = (...rows: object[]): void =>
    fs.appendFileSync(indexFile, rows.map((row) => `${JSON.stringify(row)}\n`).join(''));

  beforeEach(() => {
    dir = materializeDemoWorkspace(
      path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-kept-reads-'))), 'demo'),
    );
    registryPath = path.join(dir, '.loopx', 'registry.json');
    indexFile = path.join(dir, '.loopx', 'runtime', 'goals', GOAL, 'runs', 'index.jsonl');
    stateFile = path.join(dir, '.codex', 'goals', GOAL, 'ACTIVE_GOAL_STATE.md');
    ageFiles(dir, HOUR_AGO);
    afterIndexRead = undefined;
  });
  afterEach(() => fs.rmSync(path.dirname(dir), { recursive: true, force: true, maxRetries: 10, retryDelay: 20 }));

  it('rows appended while a build runs are not hidden behind the newer stamp (recent runs, quota)', () =>
    withModel(async (model) => {
      // A turn appends its run and its spend right after the build read the index, and the watcher
      // sees it (invalidate) before the build takes the index's digest and quota.
      afterIndexRead = () => {
        appendRows(
          {
            generated_at: '2026-11-28T11:30:00+00:00',
            goal_id: GOAL,
            classification: 'advancement',
            agent_id: 'demo',
            turn_instance_id: 'turn-mid-build',
            recommended_action: 'appended while the build ran',
          },
          {
            generated_at: '2026-11-28T11:30:01+00:00',
            goal_id: GOAL,
            classification: 'quota_slot_spent',
            turn_instance_id: 'turn-mid-build',
            slots: 1,
          },
        );
        model.invalidate();
      };
      ready(await model.current());
      assert.equal(afterIndexRead, undefined, 'the build read the index');
      const after = ready(await model.current());
      assert.equal(
        after.items.get(GOAL)?.latest_runs.find((r) => r.classification === 'advancement')?.recommended_action,
        'appended while the build ran',
      );
      assert.equal(after.recentRuns.get(GOAL)?.[0]?.recommended_action, 'appended while the build ran');
      const expected = await freshSnapshot();
      assert.deepEqual(after.recentRuns.get(GOAL), expected.recentRuns.get(GOAL));
      assert.deepEqual(after.quota.get(GOAL), expected.quota.get(GOAL));
    }));

  it('a state-file edit rebuilds the goal without parsing its unchanged index again (after a one-goal rebuild)', () =>
    withModel(async (model) => {
      ready(await model.current());
      // A full build keeps no index read (it would hold every goal's); a one-goal rebuild keeps its goal's.
      fs.appendFileSync(stateFile, '\n');
      indexReads = 0;
      ready(await model.refreshGoals([GOAL]));
      assert.equal(indexReads, 1, 'the first one-goal rebuild after a full build reads the index');
      const text = fs.readFileSync(stateFile, 'utf8');
      fs.writeFileSync(stateFile, text.replace('## Next Action\n', '## Next Action\n- kept-reads marker\n'));
      indexReads = 0;
      const after = ready(await model.refreshGoals([GOAL]));
      assert.equal(indexReads, 0, 'the run index was not read again');
      assert.ok(JSON.stringify(after.items.get(GOAL)).includes('kept-reads marker'), 'the edit is shown');
      assert.deepEqual(after.items.get(GOAL), (await freshSnapshot()).items.get(GOAL));
    }));

  it("a run record removed while the index stayed as it was is seen: the kept read's flags no longer hold", () =>
    withModel(async (model) => {
      ready(await model.current());
      fs.appendFileSync(stateFile, '\n');
      const before = ready(await model.refreshGoals([GOAL]));
      const run = before.items.get(GOAL)?.latest_runs.find((r) => r.classification === 'validated_progress');
      assert.equal(run?.markdown_exists, true);
      fs.rmSync(path.join(dir, '.loopx', 'runtime', 'goals', GOAL, 'runs', '2026-11-28T08-55-00-00-00.md'));
      fs.appendFileSync(stateFile, '\n- after the record went\n');
      indexReads = 0;
      const after = ready(await model.refreshGoals([GOAL]));
      assert.equal(indexReads, 1, 'the index was read again');
      const seen = after.items.get(GOAL)?.latest_runs.find((r) => r.classification === 'validated_progress');
      assert.equal(seen?.markdown_exists, false);
    }));
});
