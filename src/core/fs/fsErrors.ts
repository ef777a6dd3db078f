import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';

/**
 * File-system failures as users read them: a Node errno error (`ELOOP: too many symbolic links
 * encountered, stat '/…'`) becomes one `file_system_error` naming the path, the problem and the fix.
 * Applied once, where every operation returns to its surface (`defineOperation`), so the CLI, the
 * palette, the chat and the library all say the same thing. Errors already a `LoopxError`, and errno
 * codes not listed here (ENOENT is each reader's own business), pass through unchanged.
 */

const PROBLEMS: Readonly<Record<string, { problem: string; fix: string }>> = {
  ELOOP: {
    problem: 'leads into a loop of symbolic links',
    fix: 'replace the looping symbolic link with the file or folder it should name',
  },
  EISDIR: {
    problem: 'is a folder where LoopX needs a file',
    fix: 'move the folder out of the way (LoopX creates the file), or point LoopX at the right path',
  },
  ENOTDIR: {
    problem: 'goes through a file where LoopX needs a folder',
    fix: 'move the file that stands where a folder of this path belongs out of the way, or point LoopX at the right path',
  },
  EEXIST: {
    problem: 'already exists as something LoopX cannot use here (a file where it needs a folder, or the reverse)',
    fix: 'move it out of the way so LoopX can create what belongs there',
  },
  EACCES: {
    problem: 'is not accessible: permission denied',
    fix: 'give the user running LoopX access to it, or point LoopX at another path',
  },
  EPERM: {
    problem: 'cannot be changed: operation not permitted',
    fix: 'give the user running LoopX access to it, or point LoopX at another path',
  },
  EROFS: { problem: 'is on a read-only file system', fix: 'point LoopX at a writable path' },
  ENOSPC: { problem: 'cannot be written: the disk is full', fix: 'free some space and try again' },
  ENAMETOOLONG: { problem: 'is too long a path for this file system', fix: 'use a shorter path' },
};

/** `error` as a `LoopxError` when it is a file-system failure listed above; otherwise `error` itself. */
export function fileSystemErrorOf(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof LoopxError) return error;
  const errno = error as NodeJS.ErrnoException & { dest?: string };
  const known = errno.code === undefined ? undefined : PROBLEMS[errno.code];
  if (known === undefined || errno.code === undefined) return error;
  const where = errno.path ?? errno.dest;
  const subject = where === undefined ? 'a path LoopX uses' : where;
  const blocker = errno.code === 'ENOTDIR' && where !== undefined ? fileInTheWay(where) : null;
  const fix = blocker === null ? known.fix : `${known.fix} (the file in the way: ${blocker})`;
  return new LoopxError('file_system_error', `${subject} ${known.problem}; ${fix}`, {
    errno: errno.code,
    ...(blocker !== null ? { file_in_the_way: blocker } : {}),
    ...(errno.syscall !== undefined ? { syscall: errno.syscall } : {}),
    ...(where !== undefined ? { path: where } : {}),
    ...(errno.dest !== undefined && errno.dest !== where ? { dest: errno.dest } : {}),
  });
}

/** The nearest ancestor of `target` that exists and is not a folder (what ENOTDIR stumbled on), or null. */
function fileInTheWay(target: string): string | null {
  for (let dir = path.dirname(target); dir !== path.dirname(dir); dir = path.dirname(dir)) {
    try {
      if (!fs.statSync(dir).isDirectory()) return dir;
    } catch {
      // Missing or unreadable: look further up.
    }
  }
  return null;
}
