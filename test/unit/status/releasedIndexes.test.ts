import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { runIndexPath } from '../../../src/core/runtime/layout';
import { fileSystemStatusReader, type StatusFileReader } from '../../../src/core/status/goalStatus';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

describe("a released goal's run index is kept for its next change", () => {
  let scratch = '';
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-released-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('a state-file edit rebuilds the item without reading the index; an appended run is read', async () => {
    const workspace = materializeDemoWorkspace(path.join(scratch, 'workspace'));
    const registryPath = path.join(workspace, '.loopx', 'registry.json');
    const indexReads: string[] = [];
    const reader: StatusFileReader = {
      ...fileSystemStatusReader,
      readRunIndex: (file, options) => {
        indexReads.push(file);
        return fileSystemStatusReader.readRunIndex(file, options);
      },
    };
    const model = new LiveStatusModel({
      registryPath,
      homeDir: os.homedir(),
      clock: fixedClock('2026-11-29T10:00:00Z'),
      watch: false,
      persistentCache: false,
      reader,
    });
    try {
      const first = await model.current();
      assert.ok(first.ok);
      const target = first.targets.find(
        (t) => t.stateFile !== null && fs.existsSync(runIndexPath(t.runtimeRoot, t.goalId)),
      );
      assert.ok(target?.stateFile, 'the demo has a goal with a state file and a run index');
      const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
      const runsBefore = first.items.get(target.goalId)?.unique_runs ?? 0;

      const text = fs.readFileSync(target.stateFile, 'utf8');
      fs.writeFileSync(target.stateFile, text.replace('## Next Action\n', '## Next Action\n- edited by the agent\n'));
      indexReads.length = 0;
      const edited = await model.refreshGoals([target.goalId]);
      assert.ok(edited.ok);
      assert.match(JSON.stringify(edited.items.get(target.goalId)), /edited by the agent/);
      assert.deepEqual(indexReads, [], 'the index is unchanged: its kept read served the rebuild');

      const row = {
        generated_at: '2026-11-29T09:59:00Z',
        goal_id: target.goalId,
        classification: 'progress',
        run_id: 'appended-run',
      };
      fs.appendFileSync(indexFile, `${JSON.stringify(row)}\n`);
      const appended = await model.refreshGoals([target.goalId]);
      assert.ok(appended.ok);
      assert.deepEqual(indexReads, [indexFile], 'a changed index is read again');
      assert.equal(appended.items.get(target.goalId)?.unique_runs, runsBefore + 1);
    } finally {
      model.close();
    }
  });
});
