import * as path from 'node:path';
import { LoopxError } from '../errors';
import { LOCK_FILE_SUFFIX, reclaimAbandonedLock, withFileLock, type LockOptions } from '../fs/fileLock';
import { resolveWriteTarget, writeFileAtomic } from '../fs/atomicWrite';
import { parseStateDocument, type StateDocument } from './document';
import { readFileBytesSafeSync } from '../fs/safeRead';

/**
 * Reading and writing a goal's ACTIVE_GOAL_STATE.md. A write is a compare-and-swap: the edit is
 * computed from the text that was read, and under the file's cross-process lock the file must
 * still hold exactly that text, else nothing is written (`state_changed_concurrently`). So an
 * edit made meanwhile by another process, an agent or a person in the editor is never lost.
 */
export interface StateFileSnapshot {
  path: string;
  text: string;
  document: StateDocument;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file's text, exactly (a BOM is kept); refuses a missing or non-UTF-8 file. */
export async function readStateText(filePath: string): Promise<string> {
  let bytes: Buffer;
  try {
    // Sync: one small file; the promise API costs more than the read itself (status reads hundreds).
    bytes = readFileBytesSafeSync(filePath);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new LoopxError(
        'state_file_missing',
        `state file does not exist: ${filePath}; create it (loopx bootstrap) or fix the goal's state_file in the registry`,
        { path: filePath },
      );
    throw new LoopxError('state_file_unreadable', `cannot read state file ${filePath}: ${(error as Error).message}`, {
      path: filePath,
      errno: code ?? null,
      ...(error instanceof LoopxError ? { reason: error.code } : {}),
    });
  }
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw new LoopxError(
      'state_file_not_utf8',
      `state file ${filePath} is not valid UTF-8; LoopX leaves it untouched. Re-save it as UTF-8, then retry`,
      { path: filePath },
    );
  }
}

export async function readStateFile(filePath: string): Promise<StateFileSnapshot> {
  const text = await readStateText(filePath);
  return { path: filePath, text, document: parseStateDocument(text) };
}

export interface StateEditOutcome {
  text: string;
  changed: boolean;
}

export interface ApplyStateEditOptions {
  /** What the edit is, for the lock record and the conflict message ("todo add"). */
  operation: string;
  /** The text the edit must apply to (e.g. what an editor showed); default: read the file now. */
  expectedText?: string;
  lock?: Omit<LockOptions, 'operation'>;
  /**
   * Where a symlinked state file may lead: default the folder the registry names for it; callers
   * that know the goal's repo pass it too.
   */
  within?: readonly string[];
}

/**
 * Computes `edit` from the file's text (or `expectedText`) and writes the result atomically under
 * the file's lock, only if the file still holds the text the edit was computed from. An edit that
 * changes nothing writes nothing. Errors from `edit` propagate before anything is locked.
 */
export async function applyStateEdit<R extends StateEditOutcome>(
  filePath: string,
  edit: (text: string) => R,
  options: ApplyStateEditOptions,
): Promise<R & { written: boolean }> {
  // A writer killed while holding the lock left it behind. The next writer would reclaim it, but an
  // edit that turns out to be a no-op or a refusal never takes the lock: sweep it here, so running
  // the interrupted command again always leaves the workspace clean.
  reclaimAbandonedLock(`${filePath}${LOCK_FILE_SUFFIX}`);
  const base = options.expectedText ?? (await readStateText(filePath));
  const result = edit(base);
  if (!result.changed || result.text === base) return { ...result, written: false };
  const within = options.within ?? [path.dirname(path.resolve(filePath))];
  resolveWriteTarget(filePath, { within });
  await withFileLock(filePath, { ...options.lock, operation: options.operation }, async () => {
    const current = await readStateText(filePath);
    if (current !== base) {
      throw new LoopxError(
        'state_changed_concurrently',
        `${filePath} changed while ${options.operation} was being applied; nothing was written. Retry from the current state`,
        {
          path: filePath,
          operation: options.operation,
        },
      );
    }
    await writeFileAtomic(filePath, result.text, { within });
  });
  return { ...result, written: true };
}
