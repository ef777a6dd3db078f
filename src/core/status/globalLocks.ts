import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LOCK_FILE_SUFFIX, LockHolder } from '../fs/fileLock';
import { readFileSafe, SMALL_FILE_BYTES } from '../fs/safeRead';

/**
 * Lock files (`X.loopx-lock`, see src/core/fs/fileLock.ts) whose holder is gone: a process of
 * this host that no longer runs, or a record nobody could read for a while. The next writer
 * reclaims such a lock by itself; until then every write of X waits for its timeout, so the
 * risks view names them. Read-only: nothing is deleted here.
 */

export interface DeadLockFinding {
  /** The lock file (absolute; outward-facing views scrub it to a label). */
  lock_file: string;
  /** The file the lock guards. */
  target: string;
  reason: 'holder_process_gone' | 'holder_record_unreadable';
  pid: number | null;
  agent_id: string | null;
  operation: string | null;
  acquired_at: string | null;
}

export interface DeadLockScanOptions {
  /** Whether a pid runs on this host; default a signal-0 probe. */
  isProcessAlive?: (pid: number) => boolean;
  hostname?: string;
  /** Milliseconds since the epoch, for the age of unreadable records. */
  nowMs: number;
}

/** An unreadable record younger than this may be a lock being created right now. */
const UNREADABLE_GRACE_MS = 10_000;

export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function lockFilesIn(dir: string): Promise<string[]> {
  try {
    const names = await fs.promises.readdir(dir);
    return names.filter((name) => name.endsWith(LOCK_FILE_SUFFIX)).map((name) => path.join(dir, name));
  } catch {
    return [];
  }
}

async function inspect(lockFile: string, options: DeadLockScanOptions): Promise<DeadLockFinding | null> {
  const target = lockFile.slice(0, -LOCK_FILE_SUFFIX.length);
  let text: string;
  let mtimeMs: number;
  try {
    [text, mtimeMs] = await Promise.all([
      readFileSafe(lockFile, { maxBytes: SMALL_FILE_BYTES }),
      fs.promises.stat(lockFile).then((s) => s.mtimeMs),
    ]);
  } catch {
    return null; // Released meanwhile.
  }
  let holder: LockHolder | null = null;
  try {
    const parsed = LockHolder.safeParse(JSON.parse(text));
    holder = parsed.success ? parsed.data : null;
  } catch {
    holder = null;
  }
  if (holder === null) {
    if (options.nowMs - mtimeMs < UNREADABLE_GRACE_MS) return null;
    return {
      lock_file: lockFile,
      target,
      reason: 'holder_record_unreadable',
      pid: null,
      agent_id: null,
      operation: null,
      acquired_at: null,
    };
  }
  const hostname = options.hostname ?? os.hostname();
  // A holder on another host cannot be probed from here: it is not reported as dead.
  if (holder.hostname !== undefined && holder.hostname !== hostname) return null;
  if ((options.isProcessAlive ?? processAlive)(holder.pid)) return null;
  return {
    lock_file: lockFile,
    target,
    reason: 'holder_process_gone',
    pid: holder.pid,
    agent_id: holder.agent_id,
    operation: holder.operation,
    acquired_at: holder.acquired_at,
  };
}

/** Dead locks among the `*.loopx-lock` files directly inside `dirs` (missing folders are skipped), sorted by file. */
export async function findDeadLocks(dirs: readonly string[], options: DeadLockScanOptions): Promise<DeadLockFinding[]> {
  const files = (await Promise.all([...new Set(dirs)].map(lockFilesIn))).flat();
  const findings = await Promise.all([...new Set(files)].map((file) => inspect(file, options)));
  return findings
    .filter((finding): finding is DeadLockFinding => finding !== null)
    .sort((a, b) => a.lock_file.localeCompare(b.lock_file));
}
