import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runOnce } from '../../../src/core/turn/runOnce';
import { cleanTempDirs, runRows } from '../turn/helpers';
import { laneDemo, laneTurn, laneWorktree, sh } from './helpers';

// Root level: the temp dirs of every suite go at the end of the run (a root before() of another file keeps its build there).
after(cleanTempDirs);

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
});
