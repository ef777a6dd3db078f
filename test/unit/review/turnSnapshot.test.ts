import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { revertChange, takeTurnSnapshot } from '../../../src/review/turnSnapshot';

/** The pre-turn snapshot behind "Review Changes" and "Revert", in a plain folder and in a git repository. */

function project(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-review-'));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write('notes/a.md', '# A\n');
  write('notes/b.md', '# B\n');
  write('scripts/check.js', 'ok\n');
  write('.loopx/registry.json', '{}\n');
  write('.codex/goals/g/ACTIVE_GOAL_STATE.md', '# state\n');
  return root;
}

/** What a turn does: edits one note, adds one, deletes one, and LoopX writes its own files. */
function turn(root: string): void {
  fs.writeFileSync(path.join(root, 'notes/a.md'), '# A\n\n## Related\n');
  fs.writeFileSync(path.join(root, 'notes/new.md'), '# New\n');
  fs.rmSync(path.join(root, 'notes/b.md'));
  fs.writeFileSync(path.join(root, '.loopx/registry.json'), '{"changed":true}\n');
  fs.writeFileSync(path.join(root, '.codex/goals/g/ACTIVE_GOAL_STATE.md'), '# state, written back\n');
}

const git = (root: string, ...args: string[]) =>
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

const EXPECTED = [
  { path: 'notes/a.md', status: 'modified' },
  { path: 'notes/b.md', status: 'deleted' },
  { path: 'notes/new.md', status: 'added' },
];

for (const kind of ['files', 'git'] as const) {
  describe(`turn snapshot (${kind})`, () => {
    let root: string;
    const options = () => ({
      projectRoot: root,
      writeScope: [] as string[],
      excluded: ['.codex/goals/g/ACTIVE_GOAL_STATE.md'],
      forceFiles: kind === 'files',
    });
    beforeEach(() => {
      root = project();
      if (kind === 'git') {
        git(root, 'init', '-q');
        git(root, 'add', 'notes/a.md', 'notes/b.md');
        git(root, 'commit', '-qm', 'base');
      }
    });
    afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

    it('lists what the turn changed, never LoopX files; the originals are the pre-turn bytes', async () => {
      const snapshot = await takeTurnSnapshot(options());
      assert.equal(snapshot.kind, kind);
      assert.deepEqual(await snapshot.changes(), []);
      turn(root);
      assert.deepEqual(await snapshot.changes(), EXPECTED);
      assert.equal((await snapshot.original('notes/a.md'))?.toString(), '# A\n');
      assert.equal((await snapshot.original('notes/b.md'))?.toString(), '# B\n');
      assert.equal(await snapshot.original('notes/new.md'), null);
    });

    it('reverts one rejected file to its bytes (a deleted one back, an added one away), and only changed files', async () => {
      const snapshot = await takeTurnSnapshot(options());
      turn(root);
      assert.equal(await revertChange(snapshot, 'notes/a.md'), 'restored');
      assert.equal(fs.readFileSync(path.join(root, 'notes/a.md'), 'utf8'), '# A\n');
      assert.equal(await revertChange(snapshot, 'notes/b.md'), 'restored');
      assert.equal(fs.readFileSync(path.join(root, 'notes/b.md'), 'utf8'), '# B\n');
      assert.equal(await revertChange(snapshot, 'notes/new.md'), 'deleted');
      assert.equal(fs.existsSync(path.join(root, 'notes/new.md')), false);
      assert.deepEqual(await snapshot.changes(), []);
      await assert.rejects(revertChange(snapshot, 'scripts/check.js'), /not a file this turn changed/);
      await assert.rejects(revertChange(snapshot, '.loopx/registry.json'), /not a file this turn changed/);
      assert.equal(fs.readFileSync(path.join(root, '.loopx/registry.json'), 'utf8'), '{"changed":true}\n');
    });

    it('refuses to revert through a symbolic link leading out of the project; nothing is written there', async () => {
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-outside-'));
      fs.writeFileSync(path.join(outside, 'a.md'), 'outside\n');
      const snapshot = await takeTurnSnapshot(options());
      turn(root);
      fs.rmSync(path.join(root, 'notes'), { recursive: true });
      fs.symlinkSync(outside, path.join(root, 'notes'));
      await assert.rejects(revertChange(snapshot, 'notes/b.md'), /out of the project/);
      assert.deepEqual(fs.readdirSync(outside), ['a.md']);
      assert.equal(fs.readFileSync(path.join(outside, 'a.md'), 'utf8'), 'outside\n');
      fs.rmSync(outside, { recursive: true, force: true });
    });
  });
}

describe("turn snapshot: scope and the user's git state", () => {
  it('a file snapshot covers only the write scope', async () => {
    const root = project();
    const snapshot = await takeTurnSnapshot({ projectRoot: root, writeScope: ['notes/a.md'], forceFiles: true });
    turn(root);
    fs.writeFileSync(path.join(root, 'scripts/check.js'), 'changed\n');
    assert.deepEqual(await snapshot.changes(), [{ path: 'notes/a.md', status: 'modified' }]);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("a git snapshot leaves the user's index, stash and history as they were", async () => {
    const root = project();
    git(root, 'init', '-q');
    git(root, 'add', 'notes/a.md');
    git(root, 'commit', '-qm', 'base');
    fs.writeFileSync(path.join(root, 'notes/a.md'), '# A staged\n');
    git(root, 'add', 'notes/a.md');
    const before = { status: git(root, 'status', '--porcelain'), head: git(root, 'rev-parse', 'HEAD') };
    const index = fs.readFileSync(path.join(root, '.git', 'index'));
    const snapshot = await takeTurnSnapshot({ projectRoot: root, writeScope: [] });
    turn(root);
    await snapshot.changes();
    assert.equal(git(root, 'rev-parse', 'HEAD'), before.head);
    assert.equal(git(root, 'stash', 'list'), '');
    assert.ok(fs.readFileSync(path.join(root, '.git', 'index')).equals(index), 'the index was written');
    assert.equal((await snapshot.original('notes/a.md'))?.toString(), '# A staged\n');
    fs.rmSync(root, { recursive: true, force: true });
  });
});
