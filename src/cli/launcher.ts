/**
 * `loopx` entry: loads the CLI bundle (cli-main.js) through a V8 code cache, so each run skips
 * compiling the 1.6 MB bundle (about 20 ms of every invocation; agents call the CLI every turn).
 * The cache is code, so it is used only from a folder and file this user owns that no one else can
 * write, keyed by a hash of the bundle's bytes (compileCache.ts; the hash is recorded with the
 * bundle's stamp, so most starts do not hash); any doubt just means a normal compile. Node 22's module.enableCompileCache does this natively; Node 20 has no such switch.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';
import {
  bundleStamp,
  compileCacheDir,
  compileCacheName,
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
let source: string;
let stamp: BundleStamp | undefined;
try {
  const before = bundleStamp(fs.fstatSync(fd));
  source = fs.readFileSync(fd, 'utf8');
  const after = bundleStamp(fs.fstatSync(fd));
  stamp = JSON.stringify(before) === JSON.stringify(after) ? after : undefined;
} finally {
  fs.closeSync(fd);
}
// Windows has no uid (-1): no cache there rather than one without an owner check.
const uid = typeof process.getuid === 'function' ? process.getuid() : -1;
const cacheDir = compileCacheDir(os.tmpdir(), uid);
const recorded = uid >= 0 && stamp !== undefined ? recordedCacheName(cacheDir, uid, bundle, stamp) : undefined;
const cacheName = recorded ?? compileCacheName(source);
const cachedData = uid >= 0 ? readTrustedCache(cacheDir, cacheName, uid) : undefined;
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
  writeTrustedCache(cacheDir, cacheName, uid, script.createCachedData());
}
// The bytes were hashed this time: record their name so the next start need not hash them.
if (uid >= 0 && recorded === undefined && stamp !== undefined) recordCacheName(cacheDir, uid, bundle, stamp, cacheName);
