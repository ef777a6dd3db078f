import * as fs from 'node:fs';
import { LoopxError } from '../errors';

/**
 * The one way core code reads a project or runtime file. Anyone who can write the project can put
 * a FIFO, a device or a directory where a file should be (`mkfifo registry.json`, a run row whose
 * `json_path` names `/dev/zero`); a plain readFile would then block the CLI or the status server
 * forever, or read without end. So: refuse anything that is not a regular file before opening it,
 * open without blocking, check the opened handle again (the path may have been swapped in
 * between), and never read more than a size cap.
 *
 * A missing file still throws Node's own ENOENT error (callers treat "missing" as a normal case);
 * every other problem is a LoopxError that names the file and the fix.
 */

/** Larger than any registry, state file or run index LoopX writes (the XL benchmark index is ~10 MB). */
export const DEFAULT_MAX_READ_BYTES = 256 * 1024 * 1024;

export interface SafeReadOptions {
  /** Refuse a file larger than this many bytes (default {@link DEFAULT_MAX_READ_BYTES}). */
  maxBytes?: number;
  /** Refuse a symbolic link as the last path component (O_NOFOLLOW), for files only LoopX writes. */
  noFollow?: boolean;
}

// O_NONBLOCK makes opening a FIFO with no writer return at once; neither flag exists on Windows.
const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0);
const NO_FOLLOW = fs.constants.O_NOFOLLOW ?? 0;

function flagsFor(options: SafeReadOptions): number {
  return OPEN_FLAGS | (options.noFollow === true ? NO_FOLLOW : 0);
}

function kindOf(stat: fs.Stats): string {
  if (stat.isDirectory()) return 'a directory';
  if (stat.isFIFO()) return 'a FIFO (named pipe)';
  if (stat.isCharacterDevice()) return 'a character device';
  if (stat.isBlockDevice()) return 'a block device';
  if (stat.isSocket()) return 'a socket';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function notRegular(file: string, stat: fs.Stats): LoopxError {
  const kind = kindOf(stat);
  return new LoopxError(
    'file_not_regular',
    `${file} is ${kind}, not a regular file; LoopX reads only regular files and did not open it. ` +
      'Replace it with the file that belongs there, or fix the path that names it.',
    { path: file, kind },
  );
}

function tooLarge(file: string, size: number, maxBytes: number): LoopxError {
  return new LoopxError(
    'file_too_large',
    `${file} is larger than ${maxBytes} bytes (${size} or more); LoopX refuses to read it. ` +
      'Check that the path names the right file, or trim or archive the file, then retry.',
    { path: file, size, max_bytes: maxBytes },
  );
}

function unreadable(file: string, error: NodeJS.ErrnoException): LoopxError {
  if (error.code === 'ELOOP')
    return new LoopxError(
      'file_not_regular',
      `${file} is a symbolic link where LoopX expects a file it wrote itself; it did not follow it. Remove the link, then retry.`,
      { path: file, kind: 'a symbolic link' },
    );
  return new LoopxError(
    'file_unreadable',
    `cannot read ${file} (${error.code ?? 'error'}: ${error.message}); check the file's permissions, then retry.`,
    { path: file, errno: error.code ?? null },
  );
}

/** ENOENT passes through unchanged (callers read "missing" as a state); the rest becomes a LoopxError. */
function rethrow(file: string, error: unknown): never {
  if (error instanceof LoopxError) throw error;
  const errno = error as NodeJS.ErrnoException;
  if (errno.code === 'ENOENT') throw error;
  if (typeof errno.code === 'string') throw unreadable(file, errno);
  throw error;
}

/** Sees every file the safe readers open (tests count reads with it); null: nobody watches. */
export type ReadObserver = (file: string) => void;
let readObserver: ReadObserver | null = null;

/** Installs (or, with null, removes) the observer of safe reads; returns the one it replaced. */
export function observeSafeReads(observer: ReadObserver | null): ReadObserver | null {
  const previous = readObserver;
  readObserver = observer;
  return previous;
}

function checkStat(file: string, stat: fs.Stats, maxBytes: number): void {
  if (!stat.isFile()) throw notRegular(file, stat);
  if (stat.size > maxBytes) throw tooLarge(file, stat.size, maxBytes);
}

/**
 * Opens `file` for a synchronous read after the checks every reader makes (stat first, so a device is refused
 * without being opened: opening some devices has effects; the open file's fstat checked again), runs `use` on
 * it and closes it; errors are rethrown as the readers' LoopxErrors.
 */
function withCheckedFileSync<T>(
  file: string,
  options: SafeReadOptions,
  use: (fd: number, stat: fs.Stats, maxBytes: number) => T,
): T {
  readObserver?.(file);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  let fd: number | undefined;
  try {
    checkStat(file, options.noFollow === true ? fs.lstatSync(file) : fs.statSync(file), maxBytes);
    fd = fs.openSync(file, flagsFor(options));
    const stat = fs.fstatSync(fd);
    checkStat(file, stat, maxBytes);
    return use(fd, stat, maxBytes);
  } catch (error) {
    return rethrow(file, error);
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

/** Reads the whole regular file `file` as bytes; see the module comment for what is refused. */
export function readFileBytesSafeSync(file: string, options: SafeReadOptions = {}): Buffer {
  return withCheckedFileSync(file, options, (fd, stat, maxBytes) => {
    // One byte more than the size seen, to notice a file that grew since fstat (the read then fills the buffer).
    let buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw tooLarge(file, length, maxBytes);
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const wanted = buffer.length - length;
      const read = fs.readSync(fd, buffer, length, wanted, null);
      if (read === 0) break;
      length += read;
      // A short read that ends exactly at the size fstat saw is the end of the file: no read of 0 bytes to learn it.
      if (read < wanted && length === stat.size) break;
    }
    return buffer.subarray(0, length);
  });
}

/** What identifies the file a read was made of: any other file at the path (or this one rewritten) differs. */
export type FileIdentity = Pick<fs.Stats, 'dev' | 'ino' | 'size' | 'mtimeMs'>;

/**
 * Reads parts of a regular file: `use` gets the open file (its `fstat` and `readAt(position, length)`,
 * which returns fewer bytes only at the end of the file). Refuses what {@link readFileBytesSafeSync}
 * refuses (a device, a FIFO, a file over `maxBytes`), with its errors; `expected`: null, without reading,
 * unless the file is still the one it describes. For a file whose head says which parts a reader needs
 * (the persistent cache's header and body line, its segments only when asked for).
 */
export function readFilePartsSafeSync<T>(
  file: string,
  use: (stat: fs.Stats, readAt: (position: number, length: number) => Buffer) => T,
  options: SafeReadOptions & { expected?: FileIdentity } = {},
): T | null {
  return withCheckedFileSync(file, options, (fd, stat) => {
    const expected = options.expected;
    if (
      expected !== undefined &&
      (stat.dev !== expected.dev ||
        stat.ino !== expected.ino ||
        stat.size !== expected.size ||
        stat.mtimeMs !== expected.mtimeMs)
    )
      return null;
    return use(stat, (position, length) => {
      const buffer = Buffer.allocUnsafe(length);
      let done = 0;
      while (done < length) {
        const read = fs.readSync(fd, buffer, done, length - done, position + done);
        if (read === 0) break;
        done += read;
      }
      return done === length ? buffer : buffer.subarray(0, done);
    });
  });
}

export function readFileSafeSync(file: string, options: SafeReadOptions = {}): string {
  return readFileBytesSafeSync(file, options).toString('utf8');
}

/** Asynchronous {@link readFileBytesSafeSync}. */
export async function readFileBytesSafe(file: string, options: SafeReadOptions = {}): Promise<Buffer> {
  readObserver?.(file);
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_READ_BYTES;
  let handle: fs.promises.FileHandle | undefined;
  try {
    checkStat(file, await (options.noFollow === true ? fs.promises.lstat(file) : fs.promises.stat(file)), maxBytes);
    handle = await fs.promises.open(file, flagsFor(options));
    const stat = await handle.stat();
    checkStat(file, stat, maxBytes);
    let buffer = Buffer.allocUnsafe(Math.min(stat.size, maxBytes) + 1);
    let length = 0;
    for (;;) {
      if (length === buffer.length) {
        if (length > maxBytes) throw tooLarge(file, length, maxBytes);
        const grown = Buffer.allocUnsafe(Math.min(buffer.length * 2, maxBytes + 1));
        buffer.copy(grown, 0, 0, length);
        buffer = grown;
      }
      const wanted = buffer.length - length;
      const { bytesRead } = await handle.read(buffer, length, wanted, null);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (bytesRead < wanted && length === stat.size) break;
    }
    return buffer.subarray(0, length);
  } catch (error) {
    return rethrow(file, error);
  } finally {
    await handle?.close();
  }
}

export async function readFileSafe(file: string, options: SafeReadOptions = {}): Promise<string> {
  return (await readFileBytesSafe(file, options)).toString('utf8');
}

/** Cap for LoopX's own small records (lock holders, tickets, session bindings): a few hundred bytes each. */
export const SMALL_FILE_BYTES = 1024 * 1024;
