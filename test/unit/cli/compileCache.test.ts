import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { compileCacheDir, compileCacheName, readTrustedCache, writeTrustedCache } from '../../../src/cli/compileCache';

const uid = process.getuid?.() ?? 0;
const DATA = Buffer.from('cached code');

/** A fresh private temp root with a cache folder made the way the launcher makes it. */
function setup(): { root: string; dir: string; name: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cc-'));
  const dir = compileCacheDir(root, uid);
  const name = compileCacheName('bundle bytes');
  assert.equal(writeTrustedCache(dir, name, uid, DATA), true);
  return { root, dir, name };
}

describe('CLI compile cache: only our own private, matching cache is loaded', () => {
  it('reads back the cache it wrote into a 0700 folder', () => {
    const { dir, name } = setup();
    assert.equal(fs.statSync(dir).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(dir, name)).mode & 0o777, 0o600);
    assert.deepEqual(readTrustedCache(dir, name, uid), DATA);
  });

  it('ignores a folder writable by others, and neither repairs nor writes into it', () => {
    const { dir, name } = setup();
    fs.chmodSync(dir, 0o777);
    assert.equal(readTrustedCache(dir, name, uid), undefined);
    assert.equal(writeTrustedCache(dir, compileCacheName('other'), uid, DATA), false);
    assert.equal(fs.statSync(dir).mode & 0o777, 0o777);
  });

  it('ignores a folder or a file owned by someone else', () => {
    const { dir, name } = setup();
    assert.equal(readTrustedCache(dir, name, uid + 1), undefined);
    // As root the owner can really be changed; the file alone then belongs to another user.
    if (uid === 0) {
      fs.chownSync(path.join(dir, name), 65534, 65534);
      assert.equal(readTrustedCache(dir, name, uid), undefined);
    }
  });

  it('ignores a cache file writable by others', () => {
    const { dir, name } = setup();
    fs.chmodSync(path.join(dir, name), 0o666);
    assert.equal(readTrustedCache(dir, name, uid), undefined);
  });

  it('ignores a symlinked folder and a symlinked file', () => {
    const { root, dir, name } = setup();
    const elsewhere = compileCacheDir(path.join(root, 'x'), uid);
    fs.mkdirSync(path.dirname(elsewhere));
    fs.renameSync(dir, elsewhere);
    fs.symlinkSync(elsewhere, dir);
    assert.equal(readTrustedCache(dir, name, uid), undefined);
    fs.unlinkSync(dir);
    fs.mkdirSync(dir, { mode: 0o700 });
    fs.symlinkSync(path.join(elsewhere, name), path.join(dir, name));
    assert.equal(readTrustedCache(dir, name, uid), undefined);
  });

  it('never offers the cache of another bundle: the name is a hash of the bytes', () => {
    const { dir } = setup();
    const other = compileCacheName('bundle bytes, one changed');
    assert.notEqual(other, compileCacheName('bundle bytes'));
    assert.equal(compileCacheName(Buffer.from('bundle bytes')), compileCacheName('bundle bytes'));
    assert.equal(readTrustedCache(dir, other, uid), undefined);
  });
});
