import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { snapshotBlob } from '../../../src/core/snapshots/gitSnapshot';
import { runOnce } from '../../../src/core/turn/runOnce';
import { removeTempDirs, runRows } from '../turn/helpers';
import { laneDemo, laneTurn, laneWorktree, sh } from './helpers';

// Root level: the temp dirs of every suite go at the end of the run (a root before() of another file keeps its build there).
after(removeTempDirs);

describe('lanes: a turn in a worktree of its own', function () {
  this.timeout(60_000);

  it('creates the worktree on the first turn, commits the validated turn with its trailer, keeps main untouched, and opens a merge gate', async () => {
    const d = laneDemo(['demo']);
    const mainHead = sh(d.workspace, 'rev-parse', 'HEAD');
    const result = await runOnce(laneTurn(d, 'demo', 'shared.txt', 'first'));
    assert.equal(result.status, 'committed', JSON.stringify(result));
    const wt = laneWorktree(d, 'demo');
    assert.equal(sh(wt, 'symbolic-ref', '--short', 'HEAD'), 'loopx/tidy-notes/demo');
    assert.equal(fs.readFileSync(path.join(wt, 'shared.txt'), 'utf8'), 'first\n');
    assert.equal(fs.existsSync(path.join(d.workspace, 'shared.txt')), false, 'main checkout untouched');
    assert.equal(sh(d.workspace, 'rev-parse', 'HEAD'), mainHead);
    assert.equal(sh(d.workspace, 'status', '--porcelain', '--', 'notes'), '');
    const trailer = sh(wt, 'log', '-1', '--format=%(trailers:key=LoopX-Turn,valueonly)');
    const effect = (result as unknown as { settlement_identity?: { effect_id: string } }).settlement_identity
      ?.effect_id;
    assert.match(trailer, /^tidy-notes:demo:/);
    if (effect !== undefined) assert.equal(trailer, effect);
    assert.deepEqual(sh(wt, 'show', '--name-only', '--format=', 'HEAD').split('\n'), ['shared.txt']);
    const row = (await runRows(d)).find((r) => r.classification === 'validated_progress' && r.json_path);
    assert.ok(row?.json_path);
    const file = path.isAbsolute(row.json_path) ? row.json_path : path.join(d.workspace, row.json_path);
    const record = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    const lane = record['lane'] as Record<string, unknown>;
    assert.equal(lane['branch'], 'loopx/tidy-notes/demo');
    assert.equal(lane['commit'], sh(wt, 'rev-parse', 'HEAD'));
    const state = fs.readFileSync(d.statePath, 'utf8');
    assert.match(state, /Review and merge lane loopx\/tidy-notes\/demo/);
    // The gate's metadata (in the original's key order: bound_agent and updated_at come between).
    const gateLine = state.split('\n').find((line) => line.includes('gate_kind=merge_lane')) ?? '';
    for (const field of ['blocks_agent=demo', 'lane_branch=loopx/tidy-notes/demo', 'lane_agent=demo'])
      assert.ok(gateLine.includes(` ${field} `) || gateLine.endsWith(` ${field} -->`), `${field} in ${gateLine}`);

    // A second turn keeps the worktree and adds one commit; still one gate.
    const second = await runOnce(laneTurn(d, 'demo', 'shared.txt', 'second'));
    assert.equal(second.status, 'committed');
    assert.equal(sh(wt, 'rev-list', '--count', 'main..loopx/tidy-notes/demo'), '2');
    assert.equal(fs.readFileSync(d.statePath, 'utf8').match(/gate_kind=merge_lane/g)?.length, 1);
  });

  it('a failed turn leaves the lane branch as it was and the worktree clean', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'kept'));
    const wt = laneWorktree(d, 'demo');
    const head = sh(wt, 'rev-parse', 'HEAD');
    const failed = await runOnce(laneTurn(d, 'demo', 'shared.txt', 'lost', ['', 'fail']));
    assert.equal(failed.status, 'failed');
    assert.equal(sh(wt, 'rev-parse', 'HEAD'), head);
    assert.equal(sh(wt, 'status', '--porcelain'), '');
    assert.equal(fs.readFileSync(path.join(wt, 'shared.txt'), 'utf8'), 'kept\n');
  });

  it("a lane turn's review snapshot is taken in its worktree: it lists the file the turn changed, readable from the main checkout", async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'first'));
    assert.equal((await runOnce(laneTurn(d, 'demo', 'shared.txt', 'second'))).status, 'committed');
    const records = (await runRows(d))
      .flatMap((r) => (r.classification === 'validated_progress' && r.json_path ? [r.json_path] : []))
      .map((jsonPath) => {
        const file = path.isAbsolute(jsonPath) ? jsonPath : path.join(d.workspace, jsonPath);
        return JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
      });
    // One snapshot per turn (a turn's record may be indexed more than once).
    const byHead = new Map(
      records.filter((r) => r['snapshot'] !== undefined).map((r) => [JSON.stringify(r['snapshot']), r]),
    );
    assert.equal(byHead.size, 2, JSON.stringify([...byHead.keys()]));
    const snapshots = [...byHead.values()].map(
      (r) => r['snapshot'] as { base: string; head: string; changed: Array<{ path: string; status: string }> },
    );
    const changes = snapshots.map((s) => s.changed.map((c) => `${c.status} ${c.path}`).sort());
    assert.deepEqual(changes.sort(), [['added shared.txt'], ['modified shared.txt']]);
    const second = snapshots.find((s) => s.changed[0]?.status === 'modified');
    assert.ok(second);
    assert.equal((await snapshotBlob(d.workspace, second.base, 'shared.txt'))?.toString('utf8'), 'first\n');
    assert.equal((await snapshotBlob(d.workspace, second.head, 'shared.txt'))?.toString('utf8'), 'first\nsecond\n');
  });
});
