import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError } from '../../../src/core/errors';
import { OwnedDir } from '../../../src/core/fs/ownedDir';
import { systemClock } from '../../../src/core/clock';
import { tempDir } from '../../support/tempDir';

/** `<base>/runtime` (the owned folder) and `<base>/outside`, with a link `runtime/out` -> `outside`. */
function layout(): { root: string; outside: string } {
  const base = tempDir();
  const root = path.join(base, 'runtime');
  const outside = path.join(base, 'outside');
  fs.mkdirSync(root);
  fs.mkdirSync(outside);
  fs.symlinkSync(outside, path.join(root, 'out'));
  return { root, outside };
}

const refused = (error: unknown): boolean => isLoopxError(error, 'path_outside_root');

describe('OwnedDir (one I/O port over a folder LoopX owns)', () => {
  it('makes folders and plain writes inside its root, and refuses them through a symlink that leaves it', async () => {
    const { root, outside } = layout();
    const dir = new OwnedDir(root);
    await dir.run({ kind: 'mkdir', dir: path.join(root, 'turns', 'active') });
    await dir.run({ kind: 'writeText', file: path.join(root, 'turns', 'active', 'm'), data: 'hint\n' });
    assert.equal(fs.readFileSync(path.join(root, 'turns', 'active', 'm'), 'utf8'), 'hint\n');
    await assert.rejects(dir.run({ kind: 'mkdir', dir: path.join(root, 'out', 'turns') }), refused);
    await assert.rejects(dir.run({ kind: 'writeText', file: path.join(root, 'out', 'm'), data: 'x' }), refused);
    assert.deepEqual(fs.readdirSync(outside), []);
  });

  it('writes JSON atomically within the given folder only, and reads it back (async and sync)', async () => {
    const { root } = layout();
    const dir = new OwnedDir(root);
    const file = path.join(root, 'a.json');
    await dir.run({ kind: 'writeJson', file, value: { n: 1 }, within: root });
    assert.deepEqual(await dir.run({ kind: 'readJson', file }), { n: 1 });
    assert.deepEqual(dir.run({ kind: 'readJsonSync', file }), { n: 1 });
    assert.equal(dir.run({ kind: 'readTextSync', file }), await dir.run({ kind: 'readText', file }));
    await assert.rejects(
      dir.run({ kind: 'writeJson', file: path.join(root, 'out', 'b.json'), value: {}, within: root }),
      refused,
    );
    // No temp file is left behind by the atomic write.
    assert.deepEqual(fs.readdirSync(root).sort(), ['a.json', 'out']);
  });

  it('answers the synchronous operations at once and the others with a promise', () => {
    const { root } = layout();
    const dir = new OwnedDir(root);
    fs.writeFileSync(path.join(root, 't'), 'text');
    assert.equal(dir.run({ kind: 'readTextSync', file: path.join(root, 't') }), 'text');
    assert.equal(dir.run({ kind: 'reclaimLock', file: path.join(root, 'none.loopx-lock') }), false);
    assert.deepEqual(dir.run({ kind: 'listSync', dir: root }).sort(), ['out', 't']);
    const pending = dir.run({ kind: 'exists', file: path.join(root, 't') });
    assert.ok(pending instanceof Promise);
    return pending.then((exists) => assert.equal(exists, true));
  });

  it('refuses a symlink as the last component when the read asks for noFollow', async () => {
    const { root, outside } = layout();
    fs.writeFileSync(path.join(outside, 'lease.json'), '{}');
    fs.symlinkSync(path.join(outside, 'lease.json'), path.join(root, 'lease.json'));
    const dir = new OwnedDir(root);
    await assert.rejects(dir.run({ kind: 'readText', file: path.join(root, 'lease.json'), read: { noFollow: true } }));
    assert.equal(await dir.run({ kind: 'readText', file: path.join(root, 'lease.json') }), '{}');
  });

  it('holds its lock around the work: a try while it is held gets nothing, after it the lock is free', async () => {
    const { root } = layout();
    const dir = new OwnedDir(root);
    const file = path.join(root, '.admission');
    const lock = { operation: 'test', clock: systemClock };
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inLock = new Promise<void>((resolve) => (entered = resolve));
    const holder = dir.run({
      kind: 'lock',
      file,
      lock,
      work: async () => {
        entered();
        await gate;
        return 'held';
      },
    });
    await inLock;
    assert.equal(await dir.run({ kind: 'tryLock', file, lock, work: () => 'second' }), null);
    release();
    assert.equal(await holder, 'held');
    assert.deepEqual(await dir.run({ kind: 'tryLock', file, lock, work: () => 'after' }), { value: 'after' });
  });

  it('lists a folder, gives a file its mtime and removes it (a missing one quietly)', async () => {
    const { root } = layout();
    const dir = new OwnedDir(root);
    const file = path.join(root, 'marker');
    fs.writeFileSync(file, '');
    assert.ok((await dir.run({ kind: 'list', dir: root })).includes('marker'));
    assert.equal(await dir.run({ kind: 'mtimeMs', file }), fs.statSync(file).mtimeMs);
    await dir.run({ kind: 'remove', file });
    await dir.run({ kind: 'remove', file });
    assert.equal(await dir.run({ kind: 'exists', file }), false);
  });
});
