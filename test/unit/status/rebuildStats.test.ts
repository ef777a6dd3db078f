import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { LiveStatusModel } from '../../../src/core/status/liveStatus';
import { fileSystemGoalReader, type GoalFileReader } from '../../../src/core/goal/files';
import { RebuildStats } from '../../../src/core/status/rebuildStats';
import { statusTargets } from '../../../src/core/status/statusPayload';
import { statusStateFile } from '../../../src/core/status/goalStatus';
import { materializeDemoWorkspace } from '../../support/demoWorkspace';

describe('stats kept for one rebuild of the live model', () => {
  let scratch = '';
  beforeEach(() => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-rebuild-stats-'));
  });
  afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('answers a file stat once inside a rebuild, again after forget(), and always fresh outside', async () => {
    const file = path.join(scratch, 'a.txt');
    fs.writeFileSync(file, 'one');
    const stats = new RebuildStats();
    await stats.during(async () => {
      const first = await stats.stat(file);
      fs.writeFileSync(file, 'longer text');
      assert.deepEqual(await stats.stat(file), first, 'kept inside the rebuild');
      stats.forget();
      assert.equal((await stats.stat(file))?.size, 'longer text'.length, 'a change seen by a watcher is not hidden');
      // Nested rebuilds share what is kept; the outer one still holds it after the inner ends.
      await stats.during(async () => assert.equal((await stats.stat(file))?.size, 'longer text'.length));
      fs.writeFileSync(file, 'x');
      assert.equal((await stats.stat(file))?.size, 'longer text'.length);
    });
    assert.equal((await stats.stat(file))?.size, 1, 'outside a rebuild every stat is fresh');
    fs.rmSync(file);
    assert.equal(await stats.stat(file), null);
  });

  it("a goal changed again while its refresh runs shows in the next refreshGoals (not the running one's stamp)", async () => {
    const workspace = materializeDemoWorkspace(path.join(scratch, 'workspace'));
    const registryPath = path.join(workspace, '.loopx', 'registry.json');
    const marker = 'changed-while-refreshing';
    let onRead: (() => void) | undefined;
    // The reader changes the state file right after the running refresh has read it, then starts the next refresh.
    const reader: GoalFileReader = {
      ...fileSystemGoalReader,
      readState: async (file) => {
        const text = await fileSystemGoalReader.readState(file);
        const hook = onRead;
        onRead = undefined;
        hook?.();
        return text;
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
      const target = first.targets.find((t) => statusStateFile(t) !== null);
      const stateFile = target === undefined ? null : statusStateFile(target);
      assert.ok(target !== undefined && stateFile !== null);
      const text = fs.readFileSync(stateFile, 'utf8');
      assert.ok(text.includes('## Next Action\n'));
      fs.writeFileSync(stateFile, `${text}\n`); // a first change: the running refresh reads this one
      let second: ReturnType<LiveStatusModel['refreshGoals']> | undefined;
      onRead = () => {
        fs.writeFileSync(stateFile, text.replace('## Next Action\n', `## Next Action\n- ${marker}\n`));
        second = model.refreshGoals([target.goalId]);
      };
      const running = await model.refreshGoals([target.goalId]);
      assert.ok(running.ok);
      assert.ok(second, 'the state file was read by the first refresh');
      const after = await second;
      assert.ok(after.ok);
      assert.match(JSON.stringify(after.items.get(target.goalId)), new RegExp(marker));
    } finally {
      model.close();
    }
  });

  it('status targets are kept per registry document, never across home folders or runtime roots', () => {
    const registryPath = path.join(scratch, '.loopx', 'registry.json');
    const registry = { goals: [{ id: 'g', repo: '~/project', state_file: 'STATE.md' }] };
    const one = statusTargets(registry, registryPath, { homeDir: '/home/one' });
    assert.equal(statusTargets(registry, registryPath, { homeDir: '/home/one' })[0], one[0], 'the same target object');
    assert.equal(
      statusStateFile(statusTargets(registry, registryPath, { homeDir: '/home/two' })[0]!),
      '/home/two/project/STATE.md',
    );
    assert.equal(
      statusTargets(registry, registryPath, { homeDir: '/home/one', runtimeRootOverride: '/elsewhere' })[0]
        ?.runtimeRoot,
      '/elsewhere',
    );
    assert.equal(statusStateFile(one[0]!), '/home/one/project/STATE.md');
  });
});
