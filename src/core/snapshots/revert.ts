import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { writeFileAtomic } from '../fs/atomicWrite';
import { snapshotBlob, type SnapshotChange } from './gitSnapshot';

/**
 * "Revert this turn" with a three-way check: a file is put back to the turn's base only while it
 * still holds what the turn left (its head). A file edited since (by a person or a later turn) is a
 * conflict: the revert refuses as a whole and writes nothing, and the conflict (head vs now) is
 * returned so a surface can show it.
 */

export type RevertAction = 'restore' | 'delete' | 'unchanged';

export interface RevertFilePlan {
  path: string;
  /** What the turn did to the file. */
  status: SnapshotChange['status'];
  /** What the revert does: restore the base bytes, delete a file the turn added, or nothing (already as in base). */
  action: RevertAction;
  /** The file no longer holds the turn's head: the revert refuses. */
  conflict: boolean;
  /** Why, in words, when `conflict`. */
  conflict_reason: string | null;
}

export interface RevertPlan {
  files: RevertFilePlan[];
  conflicts: number;
}

async function currentBytes(target: string): Promise<Buffer | null> {
  try {
    const stat = await fs.lstat(target);
    if (stat.isSymbolicLink())
      throw new LoopxError(
        'review_revert_refused',
        `${target} is a symbolic link; LoopX does not revert through links`,
      );
    return await fs.readFile(target);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

function sameBytes(a: Buffer | null, b: Buffer | null): boolean {
  return a === null || b === null ? a === b : a.equals(b);
}

/** The target inside the project, its nearest existing folder resolved inside the project too; else a refusal. */
async function containedTarget(projectRoot: string, relativePath: string): Promise<string> {
  const root = path.resolve(projectRoot);
  const target = path.resolve(root, relativePath);
  const inside = (p: string, base: string): boolean => {
    const rel = path.relative(base, p);
    return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  };
  let existing = path.dirname(target);
  while (
    existing !== root &&
    !(await fs.stat(existing).then(
      () => true,
      () => false,
    ))
  )
    existing = path.dirname(existing);
  const realRoot = await fs.realpath(root);
  const realParent = await fs.realpath(existing);
  if (!inside(target, root) || !inside(path.join(realParent, 'x'), realRoot))
    throw new LoopxError(
      'review_revert_refused',
      `"${relativePath}" leads out of the project; LoopX never writes there. Nothing was reverted`,
      { path: relativePath },
    );
  return target;
}

/** Checks every file against the turn's head; writes nothing. */
export async function planTurnRevert(
  projectRoot: string,
  snapshot: { base: string; head: string },
  changes: readonly SnapshotChange[],
): Promise<RevertPlan> {
  const files: RevertFilePlan[] = [];
  for (const change of changes) {
    const target = await containedTarget(projectRoot, change.path);
    const [now, head, base] = await Promise.all([
      currentBytes(target),
      snapshotBlob(projectRoot, snapshot.head, change.path),
      snapshotBlob(projectRoot, snapshot.base, change.path),
    ]);
    const conflict = !sameBytes(now, head);
    files.push({
      path: change.path,
      status: change.status,
      action: sameBytes(now, base) ? 'unchanged' : base === null ? 'delete' : 'restore',
      conflict,
      conflict_reason: conflict
        ? now === null
          ? 'the file was deleted after the turn'
          : head === null
            ? 'the file was created again after the turn deleted it'
            : 'the file was edited after the turn'
        : null,
    });
  }
  return { files, conflicts: files.filter((f) => f.conflict).length };
}

/** Applies a plan without conflicts: base bytes back, added files deleted. Refuses (writing nothing) otherwise. */
export async function applyTurnRevert(
  projectRoot: string,
  snapshot: { base: string; head: string },
  plan: RevertPlan,
): Promise<void> {
  if (plan.conflicts > 0)
    throw new LoopxError(
      'review_revert_conflict',
      `${plan.conflicts} file(s) changed after the turn (${plan.files
        .filter((f) => f.conflict)
        .map((f) => f.path)
        .slice(0, 5)
        .join(', ')}); nothing was reverted`,
    );
  // Every base blob is read before the first write, so a read failure writes nothing.
  const bases = new Map<string, Buffer | null>();
  for (const file of plan.files)
    if (file.action === 'restore') bases.set(file.path, await snapshotBlob(projectRoot, snapshot.base, file.path));
  for (const file of plan.files) {
    const target = await containedTarget(projectRoot, file.path);
    if (file.action === 'delete') await fs.rm(target, { force: true });
    else if (file.action === 'restore') {
      const bytes = bases.get(file.path);
      if (bytes === null || bytes === undefined) continue;
      await fs.mkdir(path.dirname(target), { recursive: true });
      await writeFileAtomic(target, bytes);
    }
  }
}
