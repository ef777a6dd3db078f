import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  recordTurnBase,
  recordTurnHead,
  snapshotBlob,
  snapshotChanges,
  turnBase,
} from '../../../src/core/snapshots/gitSnapshot';
import { applyTurnRevert, planTurnRevert } from '../../../src/core/snapshots/revert';
import { removeTempDirs, tempDir } from '../../support/tempDir';

/** Per-turn snapshots as git objects (docs/review.md#snapshots) and the three-way revert. */

after(() => {
  removeTempDirs();
});

const git = (root: string, ...args: string[]): string =>
  execFileSync('git', args, {
    cwd: root,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 't',
      GIT_AUTHOR_EMAIL: 't@e',
      GIT_COMMITTER_NAME: 't',
      GIT_COMMITTER_EMAIL: 't@e',
    },
  });

function write(root: string, rel: string, text: string): void {
  fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  fs.writeFileSync(path.join(root, rel), text);
}

/** A repository with one commit, a staged change and an unstaged one (a user mid-work). */
function repo(): string {
  const root = tempDir();
  git(root, 'init', '-q', '-b', 'main');
  write(root, 'a.txt', 'a\n');
  write(root, 'b.txt', 'b\n');
  write(root, '.gitignore', 'ignored/\n');
  git(root, 'add', '-A');
  git(root, 'commit', '-qm', 'init');
  write(root, 'a.txt', 'a staged\n');
  git(root, 'add', 'a.txt');
  write(root, 'b.txt', 'b unstaged\n');
  return root;
}

/** Everything of the user's git state a snapshot must not touch: index bytes, HEAD, branches, status. */
function userGitState(root: string): Record<string, string> {
  const gitDir = path.join(root, '.git');
  return {
    index: fs.readFileSync(path.join(gitDir, 'index')).toString('base64'),
    HEAD: fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
    branches: git(root, 'for-each-ref', 'refs/heads', 'refs/tags', 'refs/stash'),
    status: git(root, 'status', '--porcelain=v1', '-uall'),
    log: git(root, 'log', '--branches', '--tags', '--format=%H').replace(/\s+/g, ' '),
  };
}

describe('turn snapshots (git objects through a private index)', () => {
  it("leaves the user's index, HEAD, branches and status byte for byte as they were", async () => {
    const root = repo();
    const before = userGitState(root);
    const base = await recordTurnBase(root, 'g', 'turn-1');
    assert.ok(base !== null);
    write(root, 'c.txt', 'new by the agent\n');
    write(root, 'ignored/x.txt', 'ignored\n');
    const snap = await recordTurnHead(root, 'g', 'turn-1');
    assert.ok(snap !== null);
    assert.deepEqual(snap.changed, [{ path: 'c.txt', status: 'added' }]);
    fs.rmSync(path.join(root, 'c.txt'));
    fs.rmSync(path.join(root, 'ignored'), { recursive: true });
    assert.deepEqual(userGitState(root), before);
    // The snapshot holds the working tree as it was, unstaged edits included.
    assert.equal((await snapshotBlob(root, snap.base, 'b.txt'))?.toString(), 'b unstaged\n');
    // Kept from gc by refs under refs/loopx/.
    const kept = git(root, 'for-each-ref', '--format=%(objectname)', 'refs/loopx').split('\n');
    assert.ok(kept.includes(snap.base) && kept.includes(snap.head), kept.join(','));
  });

  it('keeps the base of a turn from its first start (a retried turn diffs the whole turn)', async () => {
    const root = repo();
    const first = await recordTurnBase(root, 'g', 'turn-r');
    write(root, 'a.txt', 'first attempt\n');
    assert.equal(await recordTurnBase(root, 'g', 'turn-r'), first);
    assert.equal(await turnBase(root, 'g', 'turn-r'), first);
    assert.equal(await turnBase(root, 'other-goal', 'turn-r'), null);
  });

  it('does not attribute a human edit between two turns to either turn', async () => {
    const root = repo();
    await recordTurnBase(root, 'g', 'turn-a');
    write(root, 'by-a.txt', 'a\n');
    const a = await recordTurnHead(root, 'g', 'turn-a');
    write(root, 'b.txt', 'the human edits between turns\n');
    await recordTurnBase(root, 'g', 'turn-b');
    write(root, 'by-b.txt', 'b\n');
    const b = await recordTurnHead(root, 'g', 'turn-b');
    assert.deepEqual(a?.changed, [{ path: 'by-a.txt', status: 'added' }]);
    assert.deepEqual(b?.changed, [{ path: 'by-b.txt', status: 'added' }]);
  });

  it("attributes parallel agents' turns separately, each by its own base and head (one worktree per lane)", async () => {
    const root = repo();
    git(root, 'commit', '-qam', 'user work');
    const laneA = path.join(tempDir(), 'lane-a');
    const laneB = path.join(tempDir(), 'lane-b');
    git(root, 'worktree', 'add', '-q', '-b', 'lane-a', laneA);
    git(root, 'worktree', 'add', '-q', '-b', 'lane-b', laneB);
    // Interleaved: both turns start, both agents write, both end.
    await recordTurnBase(laneA, 'g', 'turn-a');
    await recordTurnBase(laneB, 'g', 'turn-b');
    write(laneA, 'a.txt', 'agent a\n');
    write(laneB, 'new-b.txt', 'agent b\n');
    const b = await recordTurnHead(laneB, 'g', 'turn-b');
    const a = await recordTurnHead(laneA, 'g', 'turn-a');
    assert.deepEqual(a?.changed, [{ path: 'a.txt', status: 'modified' }]);
    assert.deepEqual(b?.changed, [{ path: 'new-b.txt', status: 'added' }]);
  });

  it('leaves LoopX files (.loopx/, the state file) out of the changes', async () => {
    const root = repo();
    await recordTurnBase(root, 'g', 't');
    write(root, '.loopx/runtime/x.json', '{}\n');
    write(root, 'state/ACTIVE_GOAL_STATE.md', '# written back\n');
    write(root, 'work.txt', 'w\n');
    const snap = await recordTurnHead(root, 'g', 't', [path.join(root, 'state/ACTIVE_GOAL_STATE.md')]);
    assert.deepEqual(snap?.changed, [{ path: 'work.txt', status: 'added' }]);
  });

  it('takes no snapshot and does not fail outside a git repository, or without git', async () => {
    const plain = tempDir();
    write(plain, 'a.txt', 'a\n');
    assert.equal(await recordTurnBase(plain, 'g', 't'), null);
    assert.equal(await recordTurnHead(plain, 'g', 't'), null);
    const root = repo();
    const savedPath = process.env['PATH'];
    process.env['PATH'] = tempDir(); // no git on it
    try {
      const inRepo = path.join(root, 'sub-without-cache');
      fs.mkdirSync(inRepo);
      assert.equal(await recordTurnBase(inRepo, 'g', 't'), null);
      assert.equal(await recordTurnHead(inRepo, 'g', 't'), null);
    } finally {
      process.env['PATH'] = savedPath;
    }
  });
});

describe('revert of a turn (three-way)', () => {
  async function turnIn(root: string) {
    await recordTurnBase(root, 'g', 'rv');
    write(root, 'a.txt', 'agent edit\n');
    write(root, 'added.txt', 'agent added\n');
    fs.rmSync(path.join(root, 'b.txt'));
    const snap = await recordTurnHead(root, 'g', 'rv');
    assert.ok(snap !== null);
    return snap;
  }

  it('restores the base bytes, deletes what the turn added, recreates what it deleted', async () => {
    const root = repo();
    const snap = await turnIn(root);
    const plan = await planTurnRevert(root, snap, await snapshotChanges(root, snap.base, snap.head));
    assert.equal(plan.conflicts, 0);
    await applyTurnRevert(root, snap, plan);
    assert.equal(fs.readFileSync(path.join(root, 'a.txt'), 'utf8'), 'a staged\n');
    assert.equal(fs.readFileSync(path.join(root, 'b.txt'), 'utf8'), 'b unstaged\n');
    assert.equal(fs.existsSync(path.join(root, 'added.txt')), false);
  });

  it('refuses over a later edit: shows the conflict and writes nothing (not even the other files)', async () => {
    const root = repo();
    const snap = await turnIn(root);
    write(root, 'added.txt', 'the human edited it after the turn\n');
    const before = {
      a: fs.readFileSync(path.join(root, 'a.txt'), 'utf8'),
      added: fs.readFileSync(path.join(root, 'added.txt'), 'utf8'),
      b: fs.existsSync(path.join(root, 'b.txt')),
    };
    const plan = await planTurnRevert(root, snap, await snapshotChanges(root, snap.base, snap.head));
    assert.equal(plan.conflicts, 1);
    assert.deepEqual(
      plan.files.filter((f) => f.conflict).map((f) => [f.path, f.conflict_reason]),
      [['added.txt', 'the file was edited after the turn']],
    );
    await assert.rejects(applyTurnRevert(root, snap, plan), /review_revert_conflict|changed after the turn/);
    assert.deepEqual(
      {
        a: fs.readFileSync(path.join(root, 'a.txt'), 'utf8'),
        added: fs.readFileSync(path.join(root, 'added.txt'), 'utf8'),
        b: fs.existsSync(path.join(root, 'b.txt')),
      },
      before,
    );
  });

  it('refuses a path that leads out of the project', async () => {
    const root = repo();
    const snap = await turnIn(root);
    await assert.rejects(
      planTurnRevert(root, snap, [{ path: '../outside.txt', status: 'modified' }]),
      /leads out of the project/,
    );
  });
});
