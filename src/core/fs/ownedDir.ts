import * as fs from 'node:fs';
import { writeJsonAtomic } from './atomicWrite';
import { assertInside, mkdirInside } from './contain';
import { tryWithFileLock, withFileLock, type LockOptions } from './fileLock';
import { readJsonFile } from './jsonFile';
import { readFileSafe, readFileSafeSync, type SafeReadOptions } from './safeRead';

/**
 * A folder LoopX owns (a runtime root), as one I/O port: a store describes each file operation as a
 * `DirOp` and hands it to `run` (or `runSync` for the few synchronous reads), the only way that store
 * reaches the disk. What each operation does is what the store did with the `fs/` helpers before:
 * reads are safe reads (`readFileSafe`: a regular file only, bounded, `noFollow` refusing a symlink
 * as the last component), writes are atomic (`writeJsonAtomic`) and land inside the operation's `within` (by default the
 * target's own folder) once every symlink is resolved, folders are made inside the root
 * (`mkdirInside`), a plain write is checked with `assertInside`, and locks are LoopX's file locks,
 * held around the work the operation carries (read-modify-write stays under one lock).
 */
export type DirOp<T = unknown> =
  | { kind: 'readText'; file: string; read?: SafeReadOptions }
  | { kind: 'readJson'; file: string }
  | { kind: 'writeJson'; file: string; value: unknown; within?: string }
  | { kind: 'writeText'; file: string; data: string }
  | { kind: 'mkdir'; dir: string }
  | { kind: 'remove'; file: string }
  | { kind: 'exists'; file: string }
  | { kind: 'list'; dir: string }
  | { kind: 'mtimeMs'; file: string }
  | { kind: 'lock'; file: string; lock: LockOptions; work: () => Promise<T> | T }
  | { kind: 'tryLock'; file: string; lock: LockOptions; work: () => Promise<T> | T };

/** What `run` answers for an operation. */
export type DirResult<O> = O extends { kind: 'readText' }
  ? string
  : O extends { kind: 'readJson' }
    ? unknown
    : O extends { kind: 'exists' }
      ? boolean
      : O extends { kind: 'list' }
        ? string[]
        : O extends { kind: 'mtimeMs' }
          ? number
          : O extends { kind: 'lock'; work: () => infer R }
            ? Awaited<R>
            : O extends { kind: 'tryLock'; work: () => infer R }
              ? { value: Awaited<R> } | null
              : void;

export class OwnedDir {
  constructor(readonly root: string) {}

  async run<O extends DirOp>(op: O): Promise<DirResult<O>> {
    return (await this.perform(op)) as DirResult<O>;
  }

  /** The synchronous reads (`readText` only): for readers that cannot wait. */
  runSync(op: Extract<DirOp, { kind: 'readText' }>): string {
    return readFileSafeSync(op.file, op.read);
  }

  private async perform(op: DirOp): Promise<unknown> {
    switch (op.kind) {
      case 'readText':
        return readFileSafe(op.file, op.read);
      case 'readJson':
        return readJsonFile(op.file);
      case 'writeJson':
        return writeJsonAtomic(op.file, op.value, op.within === undefined ? {} : { within: op.within });
      case 'writeText':
        return fs.promises.writeFile(assertInside(this.root, op.file), op.data);
      case 'mkdir':
        return mkdirInside(this.root, op.dir);
      case 'remove':
        return fs.promises.rm(op.file, { force: true });
      case 'exists':
        return fs.existsSync(op.file);
      case 'list':
        return fs.promises.readdir(op.dir);
      case 'mtimeMs':
        return (await fs.promises.stat(op.file)).mtimeMs;
      case 'lock':
        return withFileLock(op.file, op.lock, op.work);
      case 'tryLock':
        return tryWithFileLock(op.file, op.lock, op.work);
    }
  }
}
