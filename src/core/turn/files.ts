import { OwnedDir, type DirAnswer, type DirOp } from '../fs/ownedDir';
import { runtimeRootOfGoalDir } from '../runtime/layout';

/**
 * The turn files store's one way to the disk: every journal, active marker, session binding, turn
 * lock and the turns folder of a goal (`<runtime>/goals/<goal>/turns`, `turn-sessions`) is read,
 * written or locked through `turnFileIo`, as an operation on the goal's runtime root
 * (`OwnedDir`: folders and plain writes checked inside the root, atomic writes, LoopX's file locks).
 */
export function turnFileIo<O extends DirOp>(goalRuntimeDir: string, op: O): DirAnswer<O> {
  return new OwnedDir(runtimeRootOfGoalDir(goalRuntimeDir)).run(op);
}
