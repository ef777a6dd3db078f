import { strict as assert } from 'node:assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runOnce } from '../../../src/core/turn/runOnce';
import { removeTempDirs, NOW } from '../turn/helpers';
import { runLoopx } from '../cli/run';
import { laneDemo, laneTurn, laneWorktree, sh } from './helpers';

/** Runs `loopx` as a person would, from the main checkout (or `cwd`), JSON out. */
async function loopx(workspace: string, args: string[], cwd = workspace, env: NodeJS.ProcessEnv = {}) {
  return runLoopx(['--format', 'json', ...args], {
    cwd,
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    now: NOW,
  });
}

function trailers(repo: string, range: string): string[] {
  return sh(repo, 'log', '--format=%(trailers:key=LoopX-Turn,valueonly)', range)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

// Root level: the temp dirs of every suite go at the end of the run (a root before() of another file keeps its build there).
after(removeTempDirs);

describe('lanes: merging back through the gate', function () {
  this.timeout(60_000);

  it('approve merges the lane into main (its commits keep their trailers) and closes the gate; a bare todo approve is refused', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'two'));
    const state = fs.readFileSync(d.statePath, 'utf8');
    const gateId = /- \[ \] \[P1\] Review and merge lane[^\n]*\n\s*<!-- loopx:todo todo_id=(\S+)/.exec(state)?.[1];
    assert.ok(gateId, state);
    const bare = await loopx(d.workspace, [
      'todo',
      'complete',
      '--goal-id',
      'tidy-notes',
      '--todo-id',
      gateId,
      '--decision-outcome',
      'approve',
      '--evidence',
      'ok',
      '--agent-id',
      'demo',
    ]);
    assert.equal(bare.error().code, 'merge_gate_needs_lane_merge');

    const preview = await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo']);
    const shown = preview.json();
    assert.equal(shown['status'], 'preview');
    assert.equal(shown['ahead'], 2);
    assert.match(String(shown['diff']), /\+one\n\+two/);
    assert.equal(fs.existsSync(path.join(d.workspace, 'shared.txt')), false, 'a preview merges nothing');

    const merged = (
      await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(merged['status'], 'merged', JSON.stringify(merged));
    assert.equal(merged['fast_forward'], true);
    assert.equal(fs.readFileSync(path.join(d.workspace, 'shared.txt'), 'utf8'), 'one\ntwo\n');
    assert.equal(trailers(d.workspace, 'HEAD~2..HEAD').length, 2);
    const after = fs.readFileSync(d.statePath, 'utf8');
    assert.match(after, new RegExp(`todo_id=${gateId} status=done[^\\n]*decision_outcome=approve`));
  });

  it('keeps recognising a merge gate whose metadata keys another writer dropped (the original LoopX does on a rewrite)', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    fs.writeFileSync(
      d.statePath,
      fs.readFileSync(d.statePath, 'utf8').replace(/ gate_kind=merge_lane lane_branch=\S+ lane_agent=demo/, ''),
    );
    assert.doesNotMatch(fs.readFileSync(d.statePath, 'utf8'), /gate_kind/);
    const gateId =
      /Review and merge lane[^\n]*\n\s*<!-- loopx:todo todo_id=(\S+)/.exec(fs.readFileSync(d.statePath, 'utf8'))?.[1] ??
      '';
    const bare = await loopx(d.workspace, [
      'todo',
      'complete',
      '--goal-id',
      'tidy-notes',
      '--todo-id',
      gateId,
      '--decision-outcome',
      'approve',
      '--evidence',
      'ok',
      '--agent-id',
      'demo',
    ]);
    assert.equal(bare.error().code, 'merge_gate_needs_lane_merge');
    const merged = (
      await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(merged['merge_gate_todo_id'], gateId);
    assert.match(fs.readFileSync(d.statePath, 'utf8'), new RegExp(`todo_id=${gateId} status=done`));
  });

  it('refuses merge and reject inside an agent turn or lane (a person decides)', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    const inTurn = await loopx(
      d.workspace,
      ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'],
      d.workspace,
      { LOOPX_TURN_KEY: 'sha256:x' },
    );
    assert.equal(inTurn.error().code, 'lane_human_only');
    const inLane = await loopx(
      d.workspace,
      ['lane', 'reject', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--note', 'no'],
      laneWorktree(d, 'demo'),
    );
    assert.equal(inLane.error().code, 'lane_human_only');
    assert.equal(sh(d.workspace, 'rev-list', '--count', 'HEAD'), '1', 'main unchanged');
  });

  it('loopx run inside a lane worktree finds the main checkout registry, not the stale copy the branch carries', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    const registry = JSON.parse(fs.readFileSync(d.registryPath, 'utf8')) as { goals: Record<string, unknown>[] };
    (registry.goals[0] as Record<string, unknown>)['display_name'] = 'Renamed in main only';
    fs.writeFileSync(d.registryPath, JSON.stringify(registry, null, 2));
    const wt = laneWorktree(d, 'demo');
    assert.ok(fs.existsSync(path.join(wt, '.loopx', 'registry.json')), 'the branch carries a copy');
    const listed = (await loopx(d.workspace, ['registry'], path.join(wt, 'notes'))).json();
    assert.equal(listed['registry'], d.registryPath);
    const todos = (await loopx(d.workspace, ['todo', 'list', '--goal-id', 'tidy-notes'], wt)).json();
    assert.match(JSON.stringify(todos), /Review and merge lane loopx\/tidy-notes\/demo/);
  });

  it('two lanes changing the same file: the first merges, the second gate shows the conflict, main is unchanged, and it can be handed to its agent', async () => {
    const d = laneDemo(['demo', 'codex-main']);
    assert.equal((await runOnce(laneTurn(d, 'demo', 'shared.txt', 'from demo'))).status, 'committed');
    const codex = await runOnce(laneTurn(d, 'codex-main', 'shared.txt', 'from codex'));
    assert.equal(codex.status, 'committed', JSON.stringify(codex).slice(0, 1500));
    const listed = (await loopx(d.workspace, ['lane', 'list', '--goal-id', 'tidy-notes'])).json();
    assert.deepEqual(listed['overlaps'], { 'shared.txt': ['codex-main', 'demo'] });
    const first = (
      await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(first['status'], 'merged');
    const mainHead = sh(d.workspace, 'rev-parse', 'HEAD');
    const preview = (
      await loopx(d.workspace, ['lane', 'merge', '--goal-id', 'tidy-notes', '--agent-id', 'codex-main'])
    ).json();
    assert.deepEqual(preview['conflicts'], ['shared.txt']);
    const second = await loopx(d.workspace, [
      'lane',
      'merge',
      '--goal-id',
      'tidy-notes',
      '--agent-id',
      'codex-main',
      '--execute',
    ]);
    assert.equal(second.json()['status'], 'conflict');
    assert.equal(sh(d.workspace, 'rev-parse', 'HEAD'), mainHead, 'aborted: main unchanged');
    assert.equal(sh(d.workspace, 'status', '--porcelain', '--', 'shared.txt'), '');
    assert.equal(fs.readFileSync(path.join(d.workspace, 'shared.txt'), 'utf8'), 'from demo\n');
    assert.match(fs.readFileSync(d.statePath, 'utf8'), /note=conflicts%20with%20main:%20shared.txt/);
    // Nothing lost: the second lane's commit is still on its branch.
    assert.equal(sh(d.workspace, 'show', 'loopx/tidy-notes/codex-main:shared.txt'), 'from codex');

    const handed = (
      await loopx(d.workspace, [
        'lane',
        'merge',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'codex-main',
        '--hand-to-agent',
        '--execute',
      ])
    ).json();
    assert.equal(handed['status'], 'handed_to_agent');
    assert.equal(sh(d.workspace, 'rev-parse', 'HEAD'), mainHead);
    const conflicted = fs.readFileSync(path.join(laneWorktree(d, 'codex-main'), 'shared.txt'), 'utf8');
    assert.match(conflicted, /<<<<<<< /);
    assert.match(
      fs.readFileSync(d.statePath, 'utf8'),
      /Resolve the merge conflict of lane loopx\/tidy-notes\/codex-main/,
    );
  });

  it('reject leaves the branch and gives the lane agent a todo with the note', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    const head = sh(d.workspace, 'rev-parse', 'loopx/tidy-notes/demo');
    const rejected = (
      await loopx(d.workspace, [
        'lane',
        'reject',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'demo',
        '--note',
        'use two spaces',
      ])
    ).json();
    assert.ok(rejected['agent_todo_id']);
    assert.equal(sh(d.workspace, 'rev-parse', 'loopx/tidy-notes/demo'), head);
    const state = fs.readFileSync(d.statePath, 'utf8');
    assert.match(state, /Rework lane loopx\/tidy-notes\/demo after review: use two spaces/);
    assert.match(state, /decision_outcome=reject/);
  });

  it('remove prunes the worktree, keeps the branch by default, and refuses to delete unmerged commits without --force', async () => {
    const d = laneDemo(['demo']);
    await runOnce(laneTurn(d, 'demo', 'shared.txt', 'one'));
    const refused = (
      await loopx(d.workspace, [
        'lane',
        'remove',
        '--goal-id',
        'tidy-notes',
        '--agent-id',
        'demo',
        '--delete-branch',
        '--execute',
      ])
    ).json();
    assert.equal(refused['ok'], false);
    const removed = (
      await loopx(d.workspace, ['lane', 'remove', '--goal-id', 'tidy-notes', '--agent-id', 'demo', '--execute'])
    ).json();
    assert.equal(removed['worktree_removed'], true);
    assert.equal(fs.existsSync(laneWorktree(d, 'demo')), false);
    assert.equal(sh(d.workspace, 'worktree', 'list').split('\n').length, 1);
    assert.equal(sh(d.workspace, 'rev-list', '--count', 'main..loopx/tidy-notes/demo'), '1');
  });
});
