import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import { runOnce } from '../../../src/core/turn/runOnce';
import { removeTempDirs, NOW } from '../turn/helpers';
import { runLoopx } from '../cli/run';
import { laneDemo, laneTurn, laneWorktree, sh } from './helpers';

async function loopx(workspace: string, args: string[]) {
  return runLoopx(['--format', 'json', ...args], {
    cwd: workspace,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '' },
    now: NOW,
  });
}

function branches(repo: string): string[] {
  return sh(repo, 'branch', '--format=%(refname:short)').split('\n');
}

after(removeTempDirs);

describe('lanes: clean-up with the goal archive and agent removal', function () {
  this.timeout(60_000);

  it('archive-runtime refuses while a lane has unmerged commits, then with --force removes the worktree and keeps the branch', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'notes.txt', 'one'));
    const worktree = laneWorktree(d, 'demo');
    assert.ok(fs.existsSync(worktree));
    const archive = ['archive-runtime', '--goal-id', 'tidy-notes', '--allow-registered', '--execute'];

    const refused = (await loopx(d.workspace, archive)).json();
    assert.equal(refused['ok'], false);
    assert.equal(refused['error_code'], 'lane_unmerged_commits');
    assert.match(String(refused['error']), /loopx\/tidy-notes\/demo \(1\)/);
    assert.ok(fs.existsSync(worktree), 'a refused archive removes no lane');
    assert.ok(fs.existsSync(d.runtimeGoalDir), 'a refused archive moves nothing');

    const dry = (await loopx(d.workspace, [...archive.slice(0, -1), '--force'])).json();
    assert.equal(dry['ok'], true);
    assert.deepEqual(
      (dry['lanes'] as Array<Record<string, unknown>>).map((l) => [l['agent_id'], l['worktree_removed']]),
      [['demo', false]],
    );
    assert.ok(fs.existsSync(worktree), 'a dry run removes nothing');

    const forced = (await loopx(d.workspace, [...archive, '--force'])).json();
    assert.equal(forced['ok'], true);
    assert.ok((forced['checks'] as string[]).includes('unmerged_lanes_allowed_by_flag'));
    const lane = (forced['lanes'] as Array<Record<string, unknown>>)[0];
    assert.equal(lane?.['worktree_removed'], true);
    assert.equal(lane?.['branch_deleted'], false);
    assert.equal(lane?.['unmerged_commits'], 1);
    assert.equal(fs.existsSync(worktree), false);
    assert.equal(fs.existsSync(d.runtimeGoalDir), false);
    assert.ok(branches(d.workspace).includes('loopx/tidy-notes/demo'), 'the branch is kept by default');
    assert.doesNotMatch(sh(d.workspace, 'worktree', 'list'), /lanes/, 'the worktree is pruned');
  });

  it('agent remove takes a merged lane with it, refuses an unmerged one, and deletes its branch when asked', async () => {
    const d = laneDemo(['demo', 'codex-main']);
    await runOnce(laneTurn(d, 'demo', 'a.txt', 'one'));
    await runOnce(laneTurn(d, 'codex-main', 'b.txt', 'two'));
    const merged = (
      await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(merged['ok'], true, JSON.stringify(merged));

    const removed = (
      await loopx(d.workspace, ['agent', 'remove', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(removed['ok'], true, JSON.stringify(removed));
    assert.equal((removed['lanes'] as Array<Record<string, unknown>>)[0]?.['worktree_removed'], true);
    assert.equal(fs.existsSync(laneWorktree(d, 'demo')), false);
    assert.ok(branches(d.workspace).includes('loopx/tidy-notes/demo'));

    const registryBefore = fs.readFileSync(d.registryPath, 'utf8');
    const refused = await loopx(d.workspace, [
      'agent',
      'remove',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'codex-main',
      '--delete-lane-branch',
      '--execute',
    ]);
    assert.equal(refused.error().code, 'lane_unmerged_commits');
    assert.equal(fs.readFileSync(d.registryPath, 'utf8'), registryBefore, 'a refused removal writes nothing');
    assert.ok(fs.existsSync(laneWorktree(d, 'codex-main')));

    const forced = (
      await loopx(d.workspace, [
        'agent',
        'remove',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'codex-main',
        '--delete-lane-branch',
        '--force',
        '--execute',
      ])
    ).json();
    assert.equal(forced['ok'], true, JSON.stringify(forced));
    assert.equal((forced['lanes'] as Array<Record<string, unknown>>)[0]?.['branch_deleted'], true);
    assert.equal(fs.existsSync(laneWorktree(d, 'codex-main')), false);
    assert.equal(branches(d.workspace).includes('loopx/tidy-notes/codex-main'), false);
  });
});
