import * as fs from 'node:fs';
import { isoSeconds } from '../clock';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { withFileLock, type LockOptions } from '../fs/fileLock';
import { readRegistry } from './read';

/**
 * The global registry's store (`<runtime root>/registry.global.json`, shared by every project and agent on
 * the machine): sync-global's reads of the project registry and of the global one, and its locked
 * read-merge-write. The merge itself is the caller's (globalRegistry/sync.ts).
 */

/** Where sync-global reads from and writes to. */
export interface GlobalSyncFiles {
  projectRegistryPath: string;
  globalRegistryPath: string;
}

/** One sync-global pass over the two registries as read (both under the global lock when it writes). */
export interface GlobalRegistryUpdate<I, T> {
  /**
   * What the project registry brings (null: there is no file), or the refusal it throws; runs before the
   * global registry is read, so a refused project registry is reported whatever the global one holds.
   */
  incoming: (project: Record<string, unknown> | null) => I;
  /** The answer from that and the global registry as read: with `write`, the document to write first. */
  decide: (incoming: I, current: Record<string, unknown>) => GlobalRegistryDecision<T>;
}

export type GlobalRegistryDecision<T> =
  | { write: null; value: T }
  | {
      write: Record<string, unknown>;
      /** Save the file as it was first (`registry.global.json.<label>-<stamp of now>[-N].bak`), or null. */
      backup: { label: string; now: Date } | null;
      value: (backupPath: string | null) => T;
    };

async function readBoth<I>(
  files: GlobalSyncFiles,
  incoming: (project: Record<string, unknown> | null) => I,
): Promise<{ incoming: I; current: Record<string, unknown> }> {
  const project = fs.existsSync(files.projectRegistryPath) ? await readRegistry(files.projectRegistryPath) : null;
  const brought = incoming(project);
  return { incoming: brought, current: await readRegistry(files.globalRegistryPath) };
}

/** A dry run: both registries read without the lock, nothing written (`decide` must not ask to write). */
export async function previewGlobalRegistryUpdate<I, T>(
  files: GlobalSyncFiles,
  update: GlobalRegistryUpdate<I, T>,
): Promise<T> {
  const read = await readBoth(files, update.incoming);
  const decision = update.decide(read.incoming, read.current);
  if (decision.write !== null) throw new Error('a global registry preview cannot write');
  return decision.value;
}

/**
 * The global registry's read-merge-write under one hold of its cross-process lock: the project registry
 * and the global one are both read inside it (whatever another process committed before stays, and the
 * project's goals are the newest), and the decided document is written atomically (mode 0600).
 */
export async function updateGlobalRegistry<I, T>(
  files: GlobalSyncFiles,
  lock: LockOptions,
  update: GlobalRegistryUpdate<I, T>,
): Promise<T> {
  return withFileLock(files.globalRegistryPath, lock, async () => {
    const read = await readBoth(files, update.incoming);
    const decision = update.decide(read.incoming, read.current);
    if (decision.write === null) return decision.value;
    const backupPath =
      decision.backup !== null && fs.existsSync(files.globalRegistryPath)
        ? writeBackup(files.globalRegistryPath, decision.backup.label, decision.backup.now)
        : null;
    await writeJsonAtomic(files.globalRegistryPath, decision.write, { mode: 0o600 });
    return decision.value(backupPath);
  });
}

/** `registry.global.json.<label>-<YYYYMMDDTHHMMSSZ>[-N].bak`, created exclusively so no backup is overwritten. */
function writeBackup(globalRegistryPath: string, label: string, now: Date): string {
  const stamp = isoSeconds(now).replace(/[-:]/g, '');
  for (let attempt = 1; ; attempt += 1) {
    const backup = `${globalRegistryPath}.${label}-${stamp}${attempt === 1 ? '' : `-${attempt}`}.bak`;
    try {
      fs.copyFileSync(globalRegistryPath, backup, fs.constants.COPYFILE_EXCL);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}
