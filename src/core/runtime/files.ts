import { OwnedDir, type DirAnswer, type DirOp } from '../fs/ownedDir';

/**
 * The runtime folder's one way to the `fs/` helpers: the run index's plain read and the sweep's lock
 * operations (a dead holder's lock reclaimed, the index lock around the orphan-spend sweep) go through
 * `runtimeFileIo`, as operations on the folder they concern.
 */
export function runtimeFileIo<O extends DirOp>(dir: string, op: O): DirAnswer<O> {
  return new OwnedDir(dir).run(op);
}
