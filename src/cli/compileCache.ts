/**
 * The launcher's V8 code cache, kept where only this user can have written it. V8 code-cache data
 * is code: whoever can write a cache file LoopX loads runs code as every user who starts `loopx`.
 * The shared temp folder is writable by everyone, so a cache there is trusted only when its folder
 * is a real directory (not a symlink) owned by us with no access for others, and the file itself is
 * a regular file owned by us, not writable by others, and named after a hash of the exact bundle
 * bytes it was made from (a cache of another bundle, or of the bundle before an update, is never
 * offered to V8). Anything else is ignored, and LoopX compiles normally.
 *
 * Hashing the 1.8 MB bundle (and loading node:crypto for it) on every start is avoided by a name
 * record in the same private folder: the name found for the bundle at a path together with the
 * bundle's stamp (size, mtime, ctime, inode, device) when it was hashed. It is used instead of a
 * hash only when the stamp is identical now and the bundle had not changed for RACY_MS before the
 * record was written: any later write, rename or chmod sets the ctime to a later instant (ctime
 * cannot be set back by `utimes`), so a record can only name the bytes it was made from.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A code cache of the 1.6 MB bundle is about 2 MB; far larger files are not ours. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

export function compileCacheDir(tmpDir: string, uid: number): string {
  return path.join(tmpDir, `loopx-compile-cache-${uid}`);
}

/** The cache file name: node version, architecture and a hash of the bundle's bytes. */
export function compileCacheName(source: string | Buffer): string {
  // Loaded here, not at start: with a name record most starts never hash.
  const { createHash } = process.getBuiltinModule('node:crypto');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 32);
  return `cli-${process.version}-${process.arch}-${hash}.bin`;
}

/**
 * The command a cache is made for: the first one or two command-like words of the argument list
 * (`status`, `quota-should-run`), or `main` when there are none. A code cache holds the functions
 * compiled when it was made, so each command keeps its own: one made by `--version` would leave
 * everything `status` runs to be compiled again at every start. Only a cache key: any value is
 * safe (the bundle's hash in the name decides which bytes a cache may serve).
 */
export function commandProfile(argv: readonly string[]): string {
  const words: string[] = [];
  for (const arg of argv) {
    const word = /^[a-z][a-z-]{0,31}$/.test(arg);
    if (word) words.push(arg);
    if ((!word && words.length > 0) || words.length === 2) break;
  }
  return words.length === 0 ? 'main' : words.join('-');
}

/** The cache of `profile` beside a bundle's cache name (`cli-…-<hash>.bin` → `cli-…-<hash>-<profile>.bin`). */
export function profileCacheName(cacheName: string, profile: string): string {
  return cacheName.replace(/\.bin$/, `-${profile}.bin`);
}

/** At most this many command caches of one bundle are kept (a cache is 1–2 MB; typos make new profiles). */
export const MAX_PROFILE_CACHES = 16;
/**
 * At most this many bundles keep caches: the extension's CLI, an npm-installed one and a few updates. Every
 * update (or build) is a new bundle whose caches would otherwise stay in the temp folder for good.
 */
export const MAX_CACHED_BUNDLES = 4;

/** The bundle part of a command cache's name (`cli-<node>-<arch>-<hash>`), or null for other files. */
function bundleOfCacheFile(file: string): string | null {
  return /^(cli-v[^-]+-[^-]+-[0-9a-f]{32})-[a-z0-9-]+\.bin$/.exec(file)?.[1] ?? null;
}

/**
 * Makes room for one more command cache of the bundle named `cacheName` in `dir`: at the limit, the oldest
 * caches of the bundle are removed (a command whose cache goes makes it again on its next start). Refusing
 * instead would leave a command first run after the limit (say `status` after every command's `--help`)
 * compiling everything at every start. The caches of all but the `MAX_CACHED_BUNDLES` bundles written to
 * most recently (this one among them) are removed too. False when no room could be made.
 */
export function makeRoomForProfileCache(dir: string, cacheName: string): boolean {
  const bundle = cacheName.replace(/\.bin$/, '');
  let files: { file: string; bundle: string; mtimeMs: number }[];
  try {
    files = fs.readdirSync(dir).flatMap((file) => {
      const of = bundleOfCacheFile(file);
      return of === null ? [] : [{ file, bundle: of, mtimeMs: fs.lstatSync(path.join(dir, file)).mtimeMs }];
    });
  } catch {
    return true; // no folder yet: the write makes (and checks) it
  }
  const newestWrite = new Map<string, number>([[bundle, Infinity]]);
  for (const { bundle: of, mtimeMs } of files) newestWrite.set(of, Math.max(newestWrite.get(of) ?? 0, mtimeMs));
  const kept = new Set(
    [...newestWrite.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, MAX_CACHED_BUNDLES)
      .map(([of]) => of),
  );
  const ours = files.filter((entry) => entry.bundle === bundle).sort((a, b) => a.mtimeMs - b.mtimeMs);
  const removed = [
    ...files.filter((entry) => !kept.has(entry.bundle)),
    ...ours.slice(0, Math.max(0, ours.length - MAX_PROFILE_CACHES + 1)),
  ];
  try {
    for (const { file } of removed) fs.unlinkSync(path.join(dir, file));
    return true;
  } catch {
    return false;
  }
}

/** A bundle changed this recently (or later: clock skew) when its name was recorded is not trusted by stamp. */
export const RACY_MS = 3_000;

/** What identifies the bundle's bytes without reading them: any write, rename or chmod changes one of them. */
export interface BundleStamp {
  size: number;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  dev: number;
}

export function bundleStamp(stat: fs.Stats): BundleStamp {
  return { size: stat.size, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, ino: stat.ino, dev: stat.dev };
}

function sameStamp(a: BundleStamp, b: BundleStamp): boolean {
  return a.size === b.size && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.ino === b.ino && a.dev === b.dev;
}

/** The record file of the bundle at `bundlePath` (a short non-cryptographic hash of the path: the path is checked inside). */
export function nameRecordFile(bundlePath: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bundlePath.length; i++) hash = Math.imul(hash ^ bundlePath.charCodeAt(i), 0x01000193) >>> 0;
  return `name-${process.version}-${process.arch}-${hash.toString(16).padStart(8, '0')}.json`;
}

interface NameRecord {
  path: string;
  stamp: BundleStamp;
  recorded_at: number;
  name: string;
}

/**
 * The cache name recorded for the bundle at `bundlePath` with stamp `stamp`, or undefined: the record
 * must be ours (the same checks as a cache file), name this path and this exact stamp, and have been
 * written at least RACY_MS after the bundle's last change.
 */
export function recordedCacheName(
  dir: string,
  uid: number,
  bundlePath: string,
  stamp: BundleStamp,
): string | undefined {
  const data = readTrustedCache(dir, nameRecordFile(bundlePath), uid);
  if (data === undefined) return undefined;
  try {
    const record = JSON.parse(data.toString('utf8')) as Partial<NameRecord>;
    if (record.path !== bundlePath || typeof record.name !== 'string' || typeof record.recorded_at !== 'number')
      return undefined;
    if (typeof record.stamp !== 'object' || record.stamp === null || !sameStamp(record.stamp, stamp)) return undefined;
    if (!(Math.max(stamp.mtimeMs, stamp.ctimeMs) < record.recorded_at - RACY_MS)) return undefined;
    if (!/^cli-[\w.-]+\.bin$/.test(record.name)) return undefined;
    return record.name;
  } catch {
    return undefined;
  }
}

/**
 * Records `name` for the bundle at `bundlePath` with `stamp` (the stamp of the bytes just hashed),
 * only when the bundle has already been unchanged for RACY_MS (otherwise it would not be trusted).
 */
export function recordCacheName(
  dir: string,
  uid: number,
  bundlePath: string,
  stamp: BundleStamp,
  name: string,
  now = Date.now(),
): boolean {
  if (!(Math.max(stamp.mtimeMs, stamp.ctimeMs) < now - RACY_MS)) return false;
  const record: NameRecord = { path: bundlePath, stamp, recorded_at: now, name };
  return writeTrustedCache(dir, nameRecordFile(bundlePath), uid, Buffer.from(JSON.stringify(record), 'utf8'));
}

/** Whether `dir` is a real directory owned by `uid` that no one else may read, write or enter. */
export function isTrustedCacheDir(dir: string, uid: number): boolean {
  try {
    const stat = fs.lstatSync(dir);
    return stat.isDirectory() && stat.uid === uid && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/**
 * Creates `dir` with mode 0700 when missing; true when it is (now) a trusted cache folder. An
 * existing folder is never repaired (chmod): someone else may have planted it, so it is just not used.
 */
export function ensureTrustedCacheDir(dir: string, uid: number): boolean {
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return false;
  }
  return isTrustedCacheDir(dir, uid);
}

/** The cache data at `dir/name`, or undefined when it is missing or anything about it is not trusted. */
export function readTrustedCache(dir: string, name: string, uid: number): Buffer | undefined {
  if (!isTrustedCacheDir(dir, uid)) return undefined;
  let fd: number | undefined;
  try {
    fd = fs.openSync(
      path.join(dir, name),
      fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0),
    );
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.uid !== uid || (stat.mode & 0o022) !== 0 || stat.size > MAX_CACHE_BYTES)
      return undefined;
    const data = Buffer.allocUnsafe(stat.size);
    let length = 0;
    while (length < data.length) {
      const read = fs.readSync(fd, data, length, data.length - length, null);
      if (read === 0) break;
      length += read;
    }
    return length === stat.size ? data : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Writes the cache (mode 0600, atomically) only into a trusted folder; any failure is ignored. */
export function writeTrustedCache(dir: string, name: string, uid: number, data: Buffer): boolean {
  if (!ensureTrustedCacheDir(dir, uid)) return false;
  const target = path.join(dir, name);
  const temp = `${target}.${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, data, { mode: 0o600, flag: 'wx' });
    fs.renameSync(temp, target);
    return true;
  } catch {
    fs.rmSync(temp, { force: true });
    return false;
  }
}
