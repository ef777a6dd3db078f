import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';

/** The system's realpath (one call; node's JS one lstats every component). Windows keeps node's: its native one differs on some drives. */
export const realpathNative: (target: string) => string =
  process.platform === 'win32' ? (target) => fs.realpathSync(target) : (target) => fs.realpathSync.native(target);

/**
 * Containment for writers: before LoopX writes, appends, creates a folder or deletes, the place the
 * operation would really touch (every symlink on the way resolved, including a dangling last one)
 * must lie inside an allowed root. A symlink inside the project that leads out of it is refused.
 */

/** Symlink hops followed before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

function lstatOrNull(target: string): fs.Stats | null {
  try {
    return fs.lstatSync(target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/**
 * Where `target` really is: the realpath of its deepest existing ancestor joined with the missing
 * rest. A dangling symlink is followed through its text, so a link to a file that does not exist
 * yet still resolves to where a write would create it.
 */
export function resolveReal(target: string): string {
  let current = path.resolve(target);
  for (let hops = 0; hops <= MAX_LINK_HOPS; hops++) {
    try {
      return realpathNative(current);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const stat = lstatOrNull(current);
    if (stat?.isSymbolicLink()) {
      current = path.resolve(path.dirname(current), fs.readlinkSync(current));
      continue;
    }
    const parent = path.dirname(current);
    if (parent === current) return current;
    return path.join(resolveReal(parent), path.basename(current));
  }
  throw new LoopxError('symlink_loop', `too many symlinks while resolving ${target}`, { path: target });
}

/** Whether `child` is `parent` or below it (both already resolved). */
export function isInsideDir(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith(`..${path.sep}`) && relative !== '..' && !path.isAbsolute(relative));
}

/**
 * Resolves `target` and returns its real path when it lies inside one of `roots` (each resolved
 * the same way, so a root that is itself a symlink counts as where it points). Otherwise throws
 * `path_outside_root`, naming the path, where it leads, and the allowed roots.
 */
export function assertInside(roots: string | readonly string[], target: string, what = 'write'): string {
  const list = typeof roots === 'string' ? [roots] : roots;
  const resolved = resolveReal(target);
  const realRoots = list.map((root) => resolveReal(root));
  if (realRoots.some((root) => isInsideDir(resolved, root))) return resolved;
  const leads = resolved === path.resolve(target) ? 'lies' : `leads through a symlink to ${resolved}, which lies`;
  throw new LoopxError(
    'path_outside_root',
    `refusing to ${what} ${target}: it ${leads} outside ${list.join(' and ')}. ` +
      'LoopX never writes through a symlink that leaves the folder it owns; point the link inside that folder or replace it with a real file or folder.',
    { path: target, resolved, roots: [...list] },
  );
}

/** `mkdir -p` after checking that the folder (and so every folder created) stays inside `roots`. */
export async function mkdirInside(roots: string | readonly string[], dir: string): Promise<void> {
  await fs.promises.mkdir(assertInside(roots, dir, 'create the folder'), { recursive: true });
}
