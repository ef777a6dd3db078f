import { OwnedDir, type DirAnswer, type DirOp } from '../fs/ownedDir';

/**
 * quota/'s one way to the `fs/` helpers: the reservations file (in the goal's runtime folder: read, written
 * atomically, and its lock around every read-modify-write) and a run's record (in the project, where its index
 * row points: read) go through `quotaFileIo`, as operations on the folder they lie in.
 */
export function quotaFileIo<O extends DirOp>(dir: string, op: O): DirAnswer<O> {
  return new OwnedDir(dir).run(op);
}
