import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { spawnSync } from 'node:child_process';
import { builtFile } from '../../support/builtCli';
import {
  bundleStamp,
  commandProfile,
  compileCacheDir,
  compileCacheName,
  MAX_CACHED_BUNDLES,
  MAX_PROFILE_CACHES,
  makeRoomForProfileCache,
  nameRecordFile,
  profileCacheName,
  RACY_MS,
  readTrustedCache,
  recordCacheName,
  recordedCacheName,
  writeTrustedCache,
} from '../../../src/cli/compileCache';

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

describe('CLI compile cache: the name record (no hash when the bundle is unchanged)', () => {
  const LONG_AGO = new Date(Date.now() - 3_600_000);

  /** A bundle file last changed well before now (settled), with its name recorded. */
  function recorded(): { dir: string; bundle: string; name: string } {
    const { root, dir } = setup();
    const bundle = path.join(root, 'cli-main.js');
    fs.writeFileSync(bundle, 'bundle bytes');
    const name = compileCacheName(fs.readFileSync(bundle));
    // A record written as if an hour after the bundle's last change (ctime cannot be set back).
    const stamp = bundleStamp(fs.statSync(bundle));
    assert.equal(
      recordCacheName(dir, uid, bundle, stamp, name, Math.max(stamp.mtimeMs, stamp.ctimeMs) + 3_600_000),
      true,
    );
    return { dir, bundle, name };
  }

  const lookup = (dir: string, bundle: string) => recordedCacheName(dir, uid, bundle, bundleStamp(fs.statSync(bundle)));

  it('gives back the recorded name while the stamp is the same', () => {
    const { dir, bundle, name } = recorded();
    assert.equal(lookup(dir, bundle), name);
    assert.equal(fs.statSync(path.join(dir, nameRecordFile(bundle))).mode & 0o777, 0o600);
  });

  it('a same-size rewrite with the mtime put back is not trusted (the ctime moved)', () => {
    const { dir, bundle } = recorded();
    fs.writeFileSync(bundle, 'bundle bytez');
    fs.utimesSync(bundle, LONG_AGO, fs.statSync(bundle).mtime);
    assert.equal(lookup(dir, bundle), undefined);
  });

  it('truncation, replacement by rename and a chmod are not trusted', () => {
    for (const change of [
      (bundle: string) => fs.truncateSync(bundle, 3),
      (bundle: string) => {
        fs.writeFileSync(`${bundle}.new`, 'bundle bytes');
        fs.renameSync(`${bundle}.new`, bundle);
      },
      (bundle: string) => fs.chmodSync(bundle, 0o600),
    ]) {
      const { dir, bundle } = recorded();
      change(bundle);
      assert.equal(lookup(dir, bundle), undefined, change.toString());
    }
  });

  it('a bundle changed within RACY_MS of the record (or after it: clock skew) is not recorded and not trusted', () => {
    const { root, dir } = setup();
    const bundle = path.join(root, 'cli-main.js');
    fs.writeFileSync(bundle, 'bundle bytes');
    const stamp = bundleStamp(fs.statSync(bundle));
    const changed = Math.max(stamp.mtimeMs, stamp.ctimeMs);
    assert.equal(
      recordCacheName(dir, uid, bundle, stamp, compileCacheName('bundle bytes'), changed + RACY_MS - 1),
      false,
    );
    assert.equal(lookup(dir, bundle), undefined);
    // A record someone wrote anyway (same folder, same owner) for a racy stamp is still refused.
    const record = { path: bundle, stamp, recorded_at: changed + 10, name: compileCacheName('bundle bytes') };
    writeTrustedCache(dir, nameRecordFile(bundle), uid, Buffer.from(JSON.stringify(record)));
    assert.equal(lookup(dir, bundle), undefined);
  });

  it('a record of another path, a malformed record, or one in a folder others can write is not used', () => {
    const { dir, bundle, name } = recorded();
    const file = path.join(dir, nameRecordFile(bundle));
    const record = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    fs.writeFileSync(file, JSON.stringify({ ...record, path: `${bundle}.other` }));
    assert.equal(lookup(dir, bundle), undefined);
    fs.writeFileSync(file, JSON.stringify({ ...record, name: '../../elsewhere.bin' }));
    assert.equal(lookup(dir, bundle), undefined);
    fs.writeFileSync(file, '{torn');
    assert.equal(lookup(dir, bundle), undefined);
    fs.writeFileSync(file, JSON.stringify(record));
    assert.equal(lookup(dir, bundle), name);
    fs.chmodSync(dir, 0o777);
    assert.equal(lookup(dir, bundle), undefined);
  });

  it('the launcher (real processes): records the name, reuses it, and runs the new bytes after a same-size rewrite', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cc-launch-'));
    const tmp = path.join(root, 'tmp');
    fs.mkdirSync(tmp);
    const launcher = builtFile('cli.js');
    fs.copyFileSync(launcher, path.join(root, 'cli.js'));
    const bundle = path.join(root, 'cli-main.js');
    const write = (text: string) => {
      fs.writeFileSync(bundle, `process.stdout.write(${JSON.stringify(text)});`);
      // Back-date the bundle's ctime is impossible; instead the record is checked against it.
    };
    write('one');
    const run = () =>
      spawnSync(process.execPath, [path.join(root, 'cli.js')], {
        env: { ...process.env, TMPDIR: tmp },
        encoding: 'utf8',
      });
    assert.equal(run().stdout, 'one');
    const dir = compileCacheDir(tmp, uid);
    const recordFile = path.join(dir, nameRecordFile(bundle));
    // Just written: racy, so no record yet; made settled by writing it as an hour later would.
    assert.equal(fs.existsSync(recordFile), false);
    const stamp = bundleStamp(fs.statSync(bundle));
    recordCacheName(
      dir,
      uid,
      bundle,
      stamp,
      compileCacheName(fs.readFileSync(bundle, 'utf8')),
      Math.max(stamp.mtimeMs, stamp.ctimeMs) + 3_600_000,
    );
    assert.equal(run().stdout, 'one', 'the recorded name serves');
    // Same size, mtime put back: the ctime moved, so the launcher hashes again and runs the new bytes.
    const mtime = fs.statSync(bundle).mtime;
    write('two');
    fs.utimesSync(bundle, mtime, mtime);
    assert.equal(run().stdout, 'two');
    assert.equal(run().stdout, 'two');
  });
});

describe('CLI launcher: the bundle text', () => {
  it('runs a bundle with non-ASCII text as UTF-8, and an ASCII one the same as before', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cc-text-'));
    const tmp = path.join(root, 'tmp');
    fs.mkdirSync(tmp);
    const launcher = builtFile('cli.js');
    fs.copyFileSync(launcher, path.join(root, 'cli.js'));
    const bundle = path.join(root, 'cli-main.js');
    const run = () =>
      spawnSync(process.execPath, [path.join(root, 'cli.js')], {
        env: { ...process.env, TMPDIR: tmp },
        encoding: 'utf8',
      });
    // Raw UTF-8 in a string and in a regex literal: read as Latin-1 they would print mojibake.
    fs.writeFileSync(bundle, 'process.stdout.write("é…等待 " + /[，。]/u.test("。"));', 'utf8');
    assert.equal(run().stdout, 'é…等待 true');
    fs.writeFileSync(bundle, 'process.stdout.write("\\u00e9 plain");', 'utf8');
    assert.equal(run().stdout, 'é plain');
  });
});

describe('CLI compile cache: one cache per command, made at exit', () => {
  it('names the command by its first one or two words, skipping global options before it', () => {
    assert.equal(
      commandProfile(['--registry', '/r/registry.json', 'quota', 'should-run', '--goal-id', 'g1']),
      'quota-should-run',
    );
    assert.equal(commandProfile(['status', '--format', 'json']), 'status');
    assert.equal(commandProfile(['--version']), 'main');
    assert.equal(commandProfile([]), 'main');
    assert.equal(commandProfile(['todo', 'add', 'fix']), 'todo-add');
    assert.equal(commandProfile(['Status', '../x', 'a'.repeat(40)]), 'main');
    assert.equal(profileCacheName('cli-v20-x64-abc.bin', 'status'), 'cli-v20-x64-abc-status.bin');
  });

  it("keeps at most MAX_PROFILE_CACHES command caches of one bundle, the newest: a new command's cache takes the oldest's place", () => {
    const { dir, name } = setup();
    const cache = (profile: string): string => profileCacheName(name, profile);
    const age = (profile: string, secondsAgo: number): void => {
      const at = Date.now() / 1000 - secondsAgo;
      fs.utimesSync(path.join(dir, cache(profile)), at, at);
    };
    for (let i = 0; i < MAX_PROFILE_CACHES; i++) {
      writeTrustedCache(dir, cache(`c${i}`), uid, DATA);
      age(`c${i}`, 100 - i);
    }
    const other = profileCacheName(compileCacheName('another bundle'), 'x');
    writeTrustedCache(dir, other, uid, DATA);
    assert.equal(makeRoomForProfileCache(dir, name), true);
    writeTrustedCache(dir, cache('status'), uid, DATA);
    const left = fs.readdirSync(dir);
    assert.equal(left.filter((file) => file.startsWith(name.replace(/\.bin$/, '-'))).length, MAX_PROFILE_CACHES);
    assert.ok(!left.includes(cache('c0')), 'the oldest cache made room');
    assert.ok(left.includes(cache('c1')) && left.includes(cache('status')));
    assert.ok(left.includes(other), "another bundle's caches are not this bundle's to remove");
    assert.equal(makeRoomForProfileCache(dir, name), true, 'again at the limit: room again');
    assert.ok(!fs.readdirSync(dir).includes(cache('c1')));
  });

  it('keeps the caches of the MAX_CACHED_BUNDLES bundles written to most recently (this one among them), and nothing else is touched', () => {
    const { dir, name } = setup();
    const others = Array.from({ length: MAX_CACHED_BUNDLES + 1 }, (_, i) => compileCacheName(`bundle ${i}`));
    others.forEach((other, i) => {
      for (const profile of ['status', 'todo-add']) {
        const file = profileCacheName(other, profile);
        writeTrustedCache(dir, file, uid, DATA);
        const at = Date.now() / 1000 - 1000 + i * 10; // bundle i+1 written after bundle i
        fs.utimesSync(path.join(dir, file), at, at);
      }
    });
    fs.writeFileSync(path.join(dir, 'name-v20-x64-0000.json'), '{}');
    assert.equal(makeRoomForProfileCache(dir, name), true);
    const left = fs.readdirSync(dir);
    const keptOthers = others.filter((other) => left.includes(profileCacheName(other, 'status')));
    assert.deepEqual(keptOthers, others.slice(-(MAX_CACHED_BUNDLES - 1)), 'the newest others, beside this bundle');
    for (const other of keptOthers) assert.ok(left.includes(profileCacheName(other, 'todo-add')));
    assert.ok(left.includes('name-v20-x64-0000.json'), 'name records are not caches');
  });

  it("the launcher (real processes) writes the command's cache when the command is done, and reads it next time", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cc-exit-'));
    const tmp = path.join(root, 'tmp');
    fs.mkdirSync(tmp);
    const launcher = builtFile('cli.js');
    fs.copyFileSync(launcher, path.join(root, 'cli.js'));
    const bundle = path.join(root, 'cli-main.js');
    // A function compiled only after the top level ran (from a timer): a cache made at exit holds it.
    fs.writeFileSync(
      bundle,
      'function later() { return "done"; }\nsetTimeout(() => process.stdout.write(later() + ":" + process.argv.slice(2).join(" ")), 1);',
    );
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [path.join(root, 'cli.js'), ...args], {
        env: { ...process.env, TMPDIR: tmp },
        encoding: 'utf8',
      });
    assert.equal(run('quota', 'should-run').stdout, 'done:quota should-run');
    const dir = compileCacheDir(tmp, uid);
    const name = compileCacheName(fs.readFileSync(bundle));
    const made = path.join(dir, profileCacheName(name, 'quota-should-run'));
    assert.equal(fs.existsSync(made), true, "the command's cache is written");
    assert.equal(fs.existsSync(path.join(dir, profileCacheName(name, 'status'))), false);
    const stamp = fs.statSync(made);
    assert.equal(run('quota', 'should-run').stdout, 'done:quota should-run');
    assert.equal(fs.statSync(made).mtimeMs, stamp.mtimeMs, 'an accepted cache is not written again');
    assert.equal(run('status').stdout, 'done:status');
    assert.equal(fs.existsSync(path.join(dir, profileCacheName(name, 'status'))), true);
  });

  it('the cache made at exit holds the functions the command ran after the top level', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cc-held-'));
    const tmp = path.join(root, 'tmp');
    fs.mkdirSync(tmp);
    const launcher = builtFile('cli.js');
    fs.copyFileSync(launcher, path.join(root, 'cli.js'));
    const bundle = path.join(root, 'cli-main.js');
    const body = Array.from({ length: 200 }, (_, i) => `total += String(${i}).length * ${i};`).join('\n');
    fs.writeFileSync(
      bundle,
      `function later() { let total = 0;\n${body}\nreturn total; }\n` +
        'setTimeout(() => { if (process.argv[2] === "call") process.stdout.write(String(later())); }, 1);',
    );
    const run = (word: string) =>
      spawnSync(process.execPath, [path.join(root, 'cli.js'), word], {
        env: { ...process.env, TMPDIR: tmp },
        encoding: 'utf8',
      });
    run('call');
    run('skip');
    const dir = compileCacheDir(tmp, uid);
    const name = compileCacheName(fs.readFileSync(bundle));
    const size = (profile: string) => fs.statSync(path.join(dir, profileCacheName(name, profile))).size;
    assert.ok(size('call') > size('skip') + 1000, `call ${size('call')} bytes, skip ${size('skip')} bytes`);
  });
});
