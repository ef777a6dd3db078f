import * as fs from 'node:fs';
import { writeJsonAtomic } from './atomicWrite';
import { assertInside, mkdirInside } from './contain';
import { reclaimAbandonedLock, tryWithFileLock, withFileLock, type LockOptions } from './fileLock';
import { readJsonFile, readJsonFileSync } from './jsonFile';
import { readFileSafe, readFileSafeSync, type SafeReadOptions } from './safeRead';

/**
 * A folder LoopX owns (a runtime root, a project), as one I/O port: a store describes each file operation
 * as a `DirOp` and hands it to `run`, the only way that store reaches the disk. The few synchronous
 * operations (for readers that cannot wait: `readTextSync`, `readJsonSync`, `listSync`, `reclaimLock`)
 * answer at once, the others a promise. Each operation does what the store did with the `fs/` helpers
 * before, with the same helpers: reads are safe reads (`readFileSafe`: a regular file only, bounded,
 * `noFollow` refusing a symlink as the last component), JSON writes are atomic (`writeJsonAtomic`) and land
 * inside the operation's `within` (by default the target's own folder) once every symlink is resolved,
 * folders are made inside the root (`mkdirInside`), a plain write is checked inside it (`assertInside`),
 * and locks are LoopX's file locks, held around the work the operation carries (a read-modify-write stays
 * under one lock). Nothing here follows a symlink out of the root on a write.
 */
export type DirOp<T = unknown> = AsyncDirOp<T> | SyncDirOp;

/** Operations `run` answers synchronously. */
export type SyncDirOp =
  | { kind: 'readTextSync'; file: string; read?: SafeReadOptions }
  | { kind: 'readJsonSync'; file: string }
  | { kind: 'listSync'; dir: string }
  /** A lock file whose holder is gone (`reclaimAbandonedLock`): true when it was removed. */
  | { kind: 'reclaimLock'; file: string };

export type AsyncDirOp<T = unknown> =
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

/** What `run` answers for an operation: a promise of `DirResult`, or the value itself for a `SyncDirOp`. */
export type DirAnswer<O> = O extends SyncDirOp ? DirResult<O> : Promise<DirResult<O>>;

/** What an operation gives. */
export type DirResult<O> = O extends { kind: 'readText' | 'readTextSync' }
  ? string
  : O extends { kind: 'readJson' | 'readJsonSync' }
    ? unknown
    : O extends { kind: 'exists' | 'reclaimLock' }
      ? boolean
      : O extends { kind: 'list' | 'listSync' }
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

  run<O extends DirOp>(op: O): DirAnswer<O> {
    switch (op.kind) {
      case 'readTextSync':
        return readFileSafeSync(op.file, op.read) as DirAnswer<O>;
      case 'readJsonSync':
        return readJsonFileSync(op.file) as DirAnswer<O>;
      case 'reclaimLock':
        return reclaimAbandonedLock(op.file) as DirAnswer<O>;
      case 'listSync':
        return fs.readdirSync(op.dir) as DirAnswer<O>;
      default:
        return this.perform(op as AsyncDirOp) as DirAnswer<O>;
    }
  }

  private async perform(op: AsyncDirOp): Promise<unknown> {
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
