import * as fs from 'node:fs';
import * as path from 'node:path';
import { isoSeconds, type Clock } from '../clock';
import { resolveWriteTarget, writeJsonAtomic } from '../fs/atomicWrite';
import { withFileLock, type LockOptions } from '../fs/fileLock';
import { readRegistry } from './read';
import { REGISTRY_SCHEMA_VERSION } from './schema';

export interface RegistryUpdateOptions {
  /** Recorded in the lock holder record, so a waiter can tell who holds the registry. */
  agentId?: string | null;
  /** What this write does (`bootstrap`, `register-agent`, …), for the lock holder record. */
  operation: string;
  /** Stamps `updated_at` and the lock record. */
  clock: Clock;
  /** Source of `LOOPX_AGENT_ID` when no `agentId` is given. */
  env?: NodeJS.ProcessEnv;
  /** Overrides of the `mutation` lock policy (deadline, poll). */
  lock?: Pick<LockOptions, 'timeoutMs' | 'pollMs'>;
}

export interface RegistryMutationContext {
  /** False when the registry file did not exist: `registry` then starts as `{}`. */
  existed: boolean;
}

export interface RegistryUpdateResult<T> {
  /** Whether the file was written. */
  changed: boolean;
  /** Whether this update created the file. */
  created: boolean;
  /** The document as it is on disk afterwards. */
  registry: Record<string, unknown>;
  /** What `mutate` returned. */
  value: T;
}

/**
 * The registry's read-modify-write. Under the registry's cross-process lock it re-reads the file
 * (a missing one reads as `{}`; one it cannot parse is refused and left untouched), lets `mutate`
 * edit the raw document in place, and, if the document changed, refreshes `updated_at` (and sets
 * `schema_version` when absent) and writes it atomically. Every field `mutate` does not touch is
 * written back as it was read, unknown ones included.
 *
 * `mutate` runs while the lock is held, so side effects that must stay consistent with the
 * registry (creating a goal's state file, for instance) belong inside it.
 */
/**
 * Where a registry may be written once symlinks are resolved: its project (the parent of a
 * `.loopx` folder), else its own folder. Taken from the path as given, not as resolved, so a
 * registry symlinked out of the project is refused rather than followed.
 */
export function registryWriteRoot(registryPath: string): string {
  const folder = path.dirname(path.resolve(registryPath));
  return path.basename(folder) === '.loopx' ? path.dirname(folder) : folder;
}

export async function updateRegistry<T>(
  registryPath: string,
  mutate: (registry: Record<string, unknown>, context: RegistryMutationContext) => T | Promise<T>,
  options: RegistryUpdateOptions,
): Promise<RegistryUpdateResult<T>> {
  const lockOptions: LockOptions = {
    policy: 'mutation',
    operation: options.operation,
    clock: options.clock,
    ...options.lock,
  };
  if (options.agentId !== undefined) lockOptions.agentId = options.agentId;
  if (options.env !== undefined) lockOptions.env = options.env;
  const within = registryWriteRoot(registryPath);
  // Refused before the lock, so a registry symlinked out of the project gets no lock file beside its target either.
  resolveWriteTarget(registryPath, { within });
  return withFileLock(registryPath, lockOptions, async () => {
    const existed = fs.existsSync(registryPath);
    const registry = await readRegistry(registryPath);
    const before = JSON.stringify(registry);
    const value = await mutate(registry, { existed });
    if (JSON.stringify(registry) === before) return { changed: false, created: false, registry, value };
    if (registry['schema_version'] === undefined) registry['schema_version'] = REGISTRY_SCHEMA_VERSION;
    registry['updated_at'] = isoSeconds(options.clock.now());
    await writeJsonAtomic(registryPath, registry, { within });
    return { changed: true, created: !existed, registry, value };
  });
}
