import { z } from 'zod';
import { archiveRuntimeGoal as archiveGoalFolder, type ArchiveRuntimeResult } from '../runtime/archive';
import { parseArguments } from '../ops/arguments';
import {
  clockOf,
  flagArgument,
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  nowArgument,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from '../ops/libraryArguments';

const ArchiveRuntimeGoalArguments = z.strictObject({
  registryPath: registryPathArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  goalId: goalIdArgument,
  archiveRoot: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((value) => value ?? undefined)
    .describe('the folder archived goals go to, or null/undefined for <runtime root>/archived-goals'),
  allowRegistered: flagArgument,
  execute: flagArgument,
  now: nowArgument,
  homeDir: homeDirArgument,
});
export type ArchiveRuntimeGoalOptions = z.input<typeof ArchiveRuntimeGoalArguments>;

/**
 * Moves a finished goal's runtime folder `<runtime root>/goals/<goalId>` to
 * `<archiveRoot>/<goalId>-<UTC stamp>[-N]` (the original's `archive_runtime_goal`). Without
 * `execute: true` it is a dry run: `dry_run: true`, `action: "would-move"`, nothing moves.
 *
 * It refuses (LoopxError) a goal the registry still lists (`goal_registered`, unless
 * `allowRegistered`), a registry it cannot read (`registry_unreadable`), a missing folder
 * (`runtime_goal_missing`), a folder outside the goals root, and an archive root on another
 * filesystem (`archive_cross_device`). It never deletes and never copies.
 */
export async function archiveRuntimeGoal(options: ArchiveRuntimeGoalOptions): Promise<ArchiveRuntimeResult> {
  const args = parseArguments(ArchiveRuntimeGoalArguments, options, {
    functionName: 'archiveRuntimeGoal',
    root: 'options',
  });
  return archiveGoalFolder({
    registryPath: resolvedPath(args.registryPath),
    runtimeRootOverride: args.runtimeRootOverride,
    goalId: args.goalId,
    archiveRoot: args.archiveRoot === undefined ? undefined : resolvedPath(args.archiveRoot),
    allowRegistered: args.allowRegistered === true,
    execute: args.execute === true,
    clock: clockOf(args.now),
    homeDir: homeDirOf(args.homeDir),
  });
}
