/**
 * `loopx` entry: loads the CLI bundle (cli-main.js) through a V8 code cache, so each run skips
 * compiling the 1.6 MB bundle (about 20 ms of every invocation; agents call the CLI every turn).
 * The cache is code, so it is used only from a folder and file this user owns that no one else can
 * write, keyed by a hash of the bundle's bytes (compileCache.ts; the hash is recorded with the
 * bundle's stamp, so most starts do not hash) and by the command (each command's cache is made at
 * its first exit and holds what it compiled); any doubt just means a normal compile. Node 22's module.enableCompileCache does this natively; Node 20 has no such switch.
 */
import { isAscii } from 'node:buffer';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import {
  bundleStamp,
  commandProfile,
  compileCacheDir,
  compileCacheName,
  makeRoomForProfileCache,
  profileCacheName,
  readTrustedCache,
  recordCacheName,
  recordedCacheName,
  writeTrustedCache,
  type BundleStamp,
} from './compileCache';

const bundle = path.join(__dirname, 'cli-main.js');
// The stamp is taken of the file the bytes were read from, before and after the read: a bundle
// that changed meanwhile gets no stamp (it is hashed, and no name is recorded for it).
const fd = fs.openSync(bundle, 'r');
let bytes: Buffer;
let stamp: BundleStamp | undefined;
try {
  const before = bundleStamp(fs.fstatSync(fd));
  bytes = fs.readFileSync(fd);
  const after = bundleStamp(fs.fstatSync(fd));
  stamp = JSON.stringify(before) === JSON.stringify(after) ? after : undefined;
} finally {
  fs.closeSync(fd);
}
// The build writes the bundle in ASCII (scripts/build.mjs): read as Latin-1 it is the same text, copied
// (0.5 ms) instead of decoded as UTF-8 (4–6 ms). Any other bundle is decoded as UTF-8.
const source = typeof isAscii === 'function' && isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
// Windows has no uid (-1): no cache there rather than one without an owner check.
const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
const cacheDir = compileCacheDir(os.tmpdir(), uid);
const recorded = uid >= 0 && stamp !== undefined ? recordedCacheName(cacheDir, uid, bundle, stamp) : undefined;
const cacheName = recorded ?? compileCacheName(bytes);
// One cache per command (compileCache.ts, commandProfile): made when the command is done, it holds
// every function the command ran, so the next start of the same command compiles none of them.
const profileName = profileCacheName(cacheName, commandProfile(process.argv.slice(2)));
const cachedData = uid >= 0 ? readTrustedCache(cacheDir, profileName, uid) : undefined;
const wrapper = `(function (exports, require, module, __filename, __dirname) {${source}\n})`;
const script = new vm.Script(wrapper, { filename: bundle, ...(cachedData ? { cachedData } : {}) });
const bundleModule = { exports: {} };
const run = script.runInThisContext() as (
  exports: object,
  require: NodeJS.Require,
  module: object,
  filename: string,
  dirname: string,
) => void;
run(bundleModule.exports, createRequire(bundle), bundleModule, bundle, __dirname);

if (uid >= 0 && (cachedData === undefined || script.cachedDataRejected === true)) {
  // At exit, with what the command compiled (a cache made here would hold the top level only).
  process.once('exit', () => {
    if (cachedData !== undefined || makeRoomForProfileCache(cacheDir, cacheName))
      writeTrustedCache(cacheDir, profileName, uid, script.createCachedData());
  });
}
// The bytes were hashed this time: record their name so the next start need not hash them.
if (uid >= 0 && recorded === undefined && stamp !== undefined) recordCacheName(cacheDir, uid, bundle, stamp, cacheName);
