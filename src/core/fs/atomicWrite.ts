import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { assertInside } from './contain';

export interface AtomicWriteOptions {
  /** Permission bits for a NEW file (an existing file keeps its own bits). Default: 0o666 minus the umask. */
  mode?: number;
  /**
   * Whether to fsync the folder after the rename (default true). A caller that writes several
   * files into one folder passes false and calls {@link fsyncDirectory} once after the last.
   */
  syncDirectory?: boolean;
  /**
   * The folders the write may land in once every symlink is resolved (the project root for
   * project files, the runtime root for runtime files). Default: the target's own folder, so a
   * symlinked file is written through only when its target sits next to it.
   */
  within?: string | readonly string[];
}

/**
 * The real file a write replaces: a symlinked target is written through (the link stays a link and
 * its target gets the new content) after checking that the target stays inside the allowed roots.
 */
export function resolveWriteTarget(target: string, options: AtomicWriteOptions = {}): string {
  return assertInside(options.within ?? path.dirname(path.resolve(target)), target);
}

/** The JSON text LoopX writes: 2-space indent, key order as given, non-ASCII kept, trailing newline. */
export function formatJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  if (text === undefined) throw new TypeError('value is not representable as JSON');
  return `${text}\n`;
}

/** A short, stable tag of this host (never the name itself), so a sweep judges only its own host's pids. */
export const TEMP_HOST_TAG = createHash('sha256').update(os.hostname()).digest('hex').slice(0, 8);

/**
 * `.<name>.<host tag>-<pid>.<random>.tmp` next to the target, so the final rename never crosses a
 * filesystem, and a leftover of a killed writer can be told from a live writer's by its pid.
 */
function tempPathFor(target: string): string {
  return path.join(
    path.dirname(target),
    `.${path.basename(target)}.${TEMP_HOST_TAG}-${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
}

const TEMP_NAME = /^\.(.+)\.([0-9a-f]{8})-([0-9]+)\.[0-9a-f]{12}\.tmp$/;

/**
 * Creates `target` with `data` only if no file of that name exists, and never leaves it empty or
 * half-written: the data is written and fsynced under a temp name first, then hard-linked to the
 * name (which fails if the name exists). Returns false when the name was taken. Where the
 * filesystem has no hard links, falls back to an exclusive create and a plain write.
 */
export function createFileExclusiveSync(target: string, data: string): boolean {
  const temp = tempPathFor(target);
  const fd = fs.openSync(temp, 'wx', 0o644);
  try {
    fs.writeFileSync(fd, data, 'utf8');
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.linkSync(temp, target);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    try {
      fs.writeFileSync(target, data, { encoding: 'utf8', flag: 'wx', mode: 0o644 });
      return true;
    } catch (fallback) {
      if ((fallback as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw fallback;
    }
  } finally {
    fs.rmSync(temp, { force: true });
  }
}

/** The target name, host tag and writer pid of one of our temp files, or null for any other name. */
export function parseTempName(name: string): { target: string; hostTag: string; pid: number } | null {
  const m = TEMP_NAME.exec(name);
  if (m === null) return null;
  return { target: m[1] as string, hostTag: m[2] as string, pid: Number(m[3]) };
}

function toBuffer(data: string | Uint8Array): Uint8Array {
  return typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
}

/** Writes every chunk in order with one gathered write (no joined copy of a large file). */
async function writeChunks(handle: fs.promises.FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  const expected = chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0);
  const { bytesWritten } = await handle.writev(chunks as Uint8Array[]);
  // libuv loops until every buffer is written or fails; a short count would be a torn file.
  if (bytesWritten !== expected) throw new Error(`short write: ${bytesWritten} of ${expected} bytes`);
}

function existingMode(target: string): number | undefined {
  try {
    return fs.statSync(target).mode & 0o7777;
  } catch {
    return undefined;
  }
}

/** Makes the renames into `dir` durable. Directories cannot be opened for fsync on Windows: best effort. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = fs.openSync(dir, 'r');
    fs.fsyncSync(fd);
  } catch {
    // Not supported on this platform/filesystem; the file itself was fsynced.
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/**
 * Replaces `target` with `data` (a text, bytes, or chunks of bytes written in order) so that readers (and a crash at any point) see either the complete
 * old content or the complete new content: write a temp file in the same folder, fsync, rename.
 * The temp file is removed whatever happens. A symlinked target is written through (see
 * {@link resolveWriteTarget}); the temp file goes next to the real file so the rename stays atomic.
 */
export async function writeFileAtomic(
  target: string,
  data: string | Uint8Array | readonly Uint8Array[],
  options: AtomicWriteOptions = {},
): Promise<void> {
  target = resolveWriteTarget(target, options);
  const dir = path.dirname(target);
  await fs.promises.mkdir(dir, { recursive: true });
  const mode = existingMode(target) ?? options.mode;
  const temp = tempPathFor(target);
  let renamed = false;
  try {
    const handle = await fs.promises.open(temp, 'wx', mode ?? 0o666);
    try {
      if (Array.isArray(data)) await writeChunks(handle, data);
      else await handle.writeFile(toBuffer(data as string | Uint8Array));
      if (mode !== undefined) await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.promises.rename(temp, target);
    renamed = true;
    if (options.syncDirectory !== false) fsyncDirectory(dir);
  } finally {
    if (!renamed) await fs.promises.rm(temp, { force: true });
  }
}

/** Synchronous twin of {@link writeFileAtomic}, for code that cannot await (e.g. process exit hooks). */
export function writeFileAtomicSync(target: string, data: string | Uint8Array, options: AtomicWriteOptions = {}): void {
  target = resolveWriteTarget(target, options);
  fs.mkdirSync(path.dirname(target), { recursive: true });
  replaceResolvedFileSync(target, data, existingMode(target) ?? options.mode, options.syncDirectory !== false);
}

/**
 * Writes a file that does not exist yet, atomically, into a folder the caller has already resolved
 * and checked (the run-index writer, under its lock, with a name it reserved): the temp file is
 * created exclusively and renamed over the plain name, so no symlink is followed and no path is
 * resolved again per file. The folder is not fsynced; the caller does it once for all its files.
 */
export function writeNewFileInResolvedDirSync(resolvedDir: string, name: string, data: string | Uint8Array): void {
  if (name !== path.basename(name) || name === '.' || name === '..')
    throw new TypeError(`not a plain file name: ${JSON.stringify(name)}`);
  replaceResolvedFileSync(path.join(resolvedDir, name), data, undefined, false);
}

function replaceResolvedFileSync(
  target: string,
  data: string | Uint8Array,
  mode: number | undefined,
  syncDirectory: boolean,
): void {
  const temp = tempPathFor(target);
  let renamed = false;
  try {
    const fd = fs.openSync(temp, 'wx', mode ?? 0o666);
    try {
      fs.writeFileSync(fd, toBuffer(data));
      if (mode !== undefined) fs.fchmodSync(fd, mode);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(temp, target);
    renamed = true;
    if (syncDirectory) fsyncDirectory(path.dirname(target));
  } finally {
    if (!renamed) fs.rmSync(temp, { force: true });
  }
}

export async function writeJsonAtomic(target: string, value: unknown, options: AtomicWriteOptions = {}): Promise<void> {
  await writeFileAtomic(target, formatJson(value), options);
}
