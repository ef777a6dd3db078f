import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { Clock } from '../clock';
import { errorMessage, LoopxError } from '../errors';
import { resolveRuntimeRoot } from '../registry/locate';
import { findRegistryGoal, readRegistry } from '../registry/read';
import { defaultArchiveRoot, runtimeGoalsRoot, validateGoalId } from './layout';
import { compactUtcStamp } from './time';

/**
 * `archive-runtime`: moves `<rt>/goals/<id>` to `<archive root>/<id>-<UTC stamp>[-N]`. A dry run
 * unless `execute`. Unlike the original it fails closed: when the registry cannot be read, every
 * goal counts as possibly registered. It never deletes anything and never crosses filesystems.
 */

/**
 * The registry as `archive-runtime` reads it, once, before deciding (`readArchiveRegistry`): its runtime
 * root resolved, its document, or why it could not be read (then every goal counts as possibly registered).
 */
export interface ArchiveRegistry {
  registryPath: string;
  /** `--runtime-root`, else the registry's `common_runtime_root` (relative: anchored to its project), else the default. */
  runtimeRoot: string;
  document: Record<string, unknown>;
  /** Why membership cannot be checked, or null when the registry was read. */
  unreadableReason: string | null;
}

export interface ArchiveRuntimeOptions {
  goalId: string;
  /** Absolute; default `<runtime root>/archived-goals`. */
  archiveRoot?: string | undefined;
  /** Archive even a registered goal (or one whose membership cannot be checked). */
  allowRegistered?: boolean;
  execute?: boolean;
  clock: Clock;
}

export const ArchiveRuntimeResult = z.object({
  ok: z.literal(true),
  goal_id: z.string(),
  runtime_root: z.string(),
  /** Whether the registry lists the goal; null when the registry could not be read (and --allow-registered was given). */
  registry_member: z.boolean().nullable(),
  registry_readable: z.boolean(),
  source: z.string(),
  archive_path: z.string(),
  dry_run: z.boolean(),
  archived: z.boolean(),
  action: z.enum(['would-move', 'moved']),
  checks: z.array(z.string()),
});
export type ArchiveRuntimeResult = z.infer<typeof ArchiveRuntimeResult>;

/** Reads the registry at `registryPath` for `archive-runtime` (never throws: an unreadable one says why). */
export async function readArchiveRegistry(
  registryPath: string,
  place: { runtimeRootOverride?: string | undefined; homeDir: string },
): Promise<ArchiveRegistry> {
  const read = await readRegistryForArchive(registryPath);
  const runtimeRoot = resolveRuntimeRoot({
    registryPath,
    registry: read.document,
    override: place.runtimeRootOverride,
    homeDir: place.homeDir,
  });
  return { registryPath, runtimeRoot, ...read };
}

async function readRegistryForArchive(
  registryPath: string,
): Promise<Pick<ArchiveRegistry, 'document' | 'unreadableReason'>> {
  if (!fs.existsSync(registryPath)) return { document: {}, unreadableReason: `${registryPath} does not exist` };
  try {
    return { document: await readRegistry(registryPath), unreadableReason: null };
  } catch (error) {
    return { document: {}, unreadableReason: errorMessage(error) };
  }
}

function isInside(child: string, parent: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function realpathOrSelf(target: string): string {
  try {
    return fs.realpathSync(target);
  } catch {
    return path.resolve(target);
  }
}

/** The checked source folder: exists, is a directory, and really lives directly under `<rt>/goals`. */
function checkSource(runtimeRoot: string, goalId: string): string {
  const goalsRoot = runtimeGoalsRoot(runtimeRoot);
  const source = path.join(goalsRoot, goalId);
  let stat: fs.Stats;
  try {
    stat = fs.statSync(source);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new LoopxError('runtime_goal_missing', `runtime goal directory does not exist: ${source}`, {
        goal_id: goalId,
        source,
      });
    }
    throw error;
  }
  if (!stat.isDirectory()) {
    throw new LoopxError('runtime_goal_not_directory', `runtime goal path is not a directory: ${source}`, {
      goal_id: goalId,
      source,
    });
  }
  if (path.dirname(fs.realpathSync(source)) !== realpathOrSelf(goalsRoot)) {
    throw new LoopxError(
      'runtime_goal_outside_goals_root',
      `runtime goal directory resolved outside the goals root: ${source} points to ${fs.realpathSync(source)}; LoopX only archives folders that live in ${goalsRoot}.`,
      { goal_id: goalId, source },
    );
  }
  return source;
}

function candidate(archiveRoot: string, baseName: string, n: number): string {
  return path.join(archiveRoot, n === 1 ? baseName : `${baseName}-${n}`);
}

function exists(target: string): boolean {
  try {
    fs.lstatSync(target);
    return true;
  } catch {
    return false;
  }
}

/** Moves `source` to the first free `<base>[-N]`, reserving the name with an exclusive mkdir first. */
function moveToUniqueDestination(source: string, archiveRoot: string, baseName: string): string {
  fs.mkdirSync(archiveRoot, { recursive: true });
  for (let n = 1; ; n++) {
    const destination = candidate(archiveRoot, baseName, n);
    try {
      fs.mkdirSync(destination);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') continue;
      throw error;
    }
    try {
      // POSIX rename replaces our empty reservation atomically; Windows refuses, so free it first.
      if (process.platform === 'win32') fs.rmdirSync(destination);
      fs.renameSync(source, destination);
      return destination;
    } catch (error) {
      if (exists(destination) && fs.readdirSync(destination).length === 0) fs.rmdirSync(destination);
      if ((error as NodeJS.ErrnoException).code === 'EXDEV') {
        throw new LoopxError(
          'archive_cross_device',
          `cannot move ${source} to ${archiveRoot}: they are on different filesystems, and LoopX moves (never copies and deletes). Choose an --archive-root on the runtime root's filesystem.`,
          { source, archive_root: archiveRoot },
        );
      }
      throw error;
    }
  }
}

/** Archives `goalId`'s runtime folder under the registry as read (`readArchiveRegistry`): see the file's comment. */
export async function archiveRuntimeGoal(
  registry: ArchiveRegistry,
  options: ArchiveRuntimeOptions,
): Promise<ArchiveRuntimeResult> {
  const runtimeRoot = registry.runtimeRoot;
  const goalId = validateGoalId(options.goalId);
  const checks = ['goal_id_single_segment'];
  const allowRegistered = options.allowRegistered === true;

  let registryMember: boolean | null = null;
  if (registry.unreadableReason !== null) {
    if (!allowRegistered) {
      throw new LoopxError(
        'registry_unreadable',
        `the registry could not be read (${registry.unreadableReason}), so LoopX cannot tell whether goal ${goalId} is registered; ` +
          'refusing to archive. Fix or point --registry at the registry, or pass --allow-registered only after confirming the goal is obsolete.',
        { goal_id: goalId, registry: registry.registryPath, reason: registry.unreadableReason },
      );
    }
    checks.push('registry_unreadable_allowed_by_flag');
  } else {
    registryMember = findRegistryGoal(registry.document, goalId) !== undefined;
    if (registryMember && !allowRegistered) {
      throw new LoopxError(
        'goal_registered',
        'goal exists in registry; pass --allow-registered only after confirming it is obsolete',
        { goal_id: goalId, registry: registry.registryPath },
      );
    }
    checks.push(registryMember ? 'registered_goal_allowed_by_flag' : 'goal_not_in_registry');
  }

  const source = checkSource(runtimeRoot, goalId);
  checks.push('source_is_directory', 'source_inside_goals_root');

  const archiveRoot = path.resolve(options.archiveRoot ?? defaultArchiveRoot(runtimeRoot));
  if (isInside(realpathOrSelf(archiveRoot), fs.realpathSync(source))) {
    throw new LoopxError(
      'archive_root_inside_source',
      `the archive root ${archiveRoot} lies inside the folder being archived (${source}); choose another --archive-root.`,
      { goal_id: goalId },
    );
  }
  const baseName = `${goalId}-${compactUtcStamp(options.clock.now())}`;
  const execute = options.execute === true;
  let archivePath: string;
  if (execute) {
    archivePath = moveToUniqueDestination(source, archiveRoot, baseName);
  } else {
    let n = 1;
    while (exists(candidate(archiveRoot, baseName, n))) n++;
    archivePath = candidate(archiveRoot, baseName, n);
  }
  checks.push('destination_unique');

  return ArchiveRuntimeResult.parse({
    ok: true,
    goal_id: goalId,
    runtime_root: runtimeRoot,
    registry_member: registryMember,
    registry_readable: registry.unreadableReason === null,
    source,
    archive_path: archivePath,
    dry_run: !execute,
    archived: execute,
    action: execute ? 'moved' : 'would-move',
    checks,
  });
}
