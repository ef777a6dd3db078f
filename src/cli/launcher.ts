/**
 * `loopx` entry: loads the CLI bundle (cli-main.js) through a V8 code cache, so each run skips
 * compiling the 1.6 MB bundle (about 25 ms of every invocation; agents call the CLI every turn).
 * The cache lives in the OS temp folder, keyed by the bundle's size and mtime; any problem with
 * it just falls back to a normal compile. Node 22's module.enableCompileCache does this natively;
 * Node 20 has no such switch.
 */
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vm from 'node:vm';

const bundle = path.join(__dirname, 'cli-main.js');
const source = fs.readFileSync(bundle, 'utf8');
const stat = fs.statSync(bundle);
const cacheDir = path.join(os.tmpdir(), `loopx-compile-cache-${os.userInfo().uid}`);
const cacheFile = path.join(cacheDir, `cli-${process.version}-${stat.size}-${Math.trunc(stat.mtimeMs)}.bin`);

let cachedData: Buffer | undefined;
try {
  cachedData = fs.readFileSync(cacheFile);
} catch {
  cachedData = undefined;
}
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

if (cachedData === undefined || script.cachedDataRejected === true) {
  try {
    fs.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const temp = `${cacheFile}.${process.pid}.tmp`;
    fs.writeFileSync(temp, script.createCachedData(), { mode: 0o600 });
    fs.renameSync(temp, cacheFile);
  } catch {
    // The cache is an optimization only.
  }
}
