import { OwnedDir, type DirAnswer, type DirOp } from '../fs/ownedDir';

/**
 * quota/'s one way to the `fs/` helpers when it reads: the reservations file (in the goal's runtime folder)
 * and a run's record (in the project, where its index row points) are read through `quotaFileIo`, as
 * operations on the folder they lie in.
 */
export function quotaFileIo<O extends DirOp>(dir: string, op: O): DirAnswer<O> {
  return new OwnedDir(dir).run(op);
}
