/**
 * The launcher's V8 code cache, kept where only this user can have written it. V8 code-cache data
 * is code: whoever can write a cache file LoopX loads runs code as every user who starts `loopx`.
 * The shared temp folder is writable by everyone, so a cache there is trusted only when its folder
 * is a real directory (not a symlink) owned by us with no access for others, and the file itself is
 * a regular file owned by us, not writable by others, and named after a hash of the exact bundle
 * bytes it was made from (a cache of another bundle, or of the bundle before an update, is never
 * offered to V8). Anything else is ignored, and LoopX compiles normally.
 */
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A code cache of the 1.6 MB bundle is about 2 MB; far larger files are not ours. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;

export function compileCacheDir(tmpDir: string, uid: number): string {
  return path.join(tmpDir, `loopx-compile-cache-${uid}`);
}

/** The cache file name: node version, architecture and a hash of the bundle's bytes. */
export function compileCacheName(source: string | Buffer): string {
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 32);
  return `cli-${process.version}-${process.arch}-${hash}.bin`;
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
