import * as path from 'node:path';
import { z } from 'zod';
import { isLoopxError } from '../errors';
import { expandHome } from '../registry/locate';
import { checkLanesForCleanup, cleanUpLanes, lanesOnDisk, type LaneCleanup } from '../lanes/cleanup';
import { archiveRuntimeGoal, readArchiveRegistry, type ArchiveRuntimeResult } from '../runtime/archive';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `archive-runtime`: moves a goal's runtime folder (runs, journals) to the archive root; a dry run
 * unless `execute`. Refuses a goal the registry lists unless `allowRegistered`. As in LoopX, a
 * refused archive is a failed operation with a JSON answer (`ok: false`), not an error. The goal's
 * lanes (docs/lanes.md) go with it: their worktrees are removed (branches kept unless
 * `deleteLaneBranches`), and a lane with commits main lacks refuses the archive unless `force`.
 */

export interface ArchiveRuntimeRefusal {
  ok: false;
  /** As in LoopX, a refusal still says whether it was a dry run (`--execute` absent). */
  dry_run: boolean;
  archived: false;
  goal_id: string;
  error: string;
  error_code: string;
}

/** `lanes` is present only when the goal has lanes (the answer is LoopX's otherwise). */
export type ArchiveRuntimeOutput = (ArchiveRuntimeResult & { lanes?: LaneCleanup[] }) | ArchiveRuntimeRefusal;

export const archiveRuntime = defineOperation({
  key: 'archiveRuntime',
  args: z.strictObject({
    goalId: z.string().meta({ placeholder: 'id' }).describe('the runtime goal folder to archive'),
    archiveRoot: z
      .string()
      .optional()
      .meta({ placeholder: 'path' })
      .describe('where archived folders go (default: <runtime root>/archived-goals)'),
    allowRegistered: z
      .boolean()
      .default(false)
      .describe(
        'archive even a goal the registry lists (or when the registry cannot be read); only after confirming it is obsolete',
      ),
    deleteLaneBranches: z
      .boolean()
      .default(false)
      .describe("delete the goal's lane branches too (default: only their worktrees are removed)"),
    force: z.boolean().default(false).describe('remove lanes even when they have commits main lacks'),
    execute: z.boolean().default(false).describe('move the folder; without it, only show what would happen'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ArchiveRuntimeOutput> => {
    try {
      // The registry read once: the preview and the move decide on the same reading.
      const registry = await readArchiveRegistry(locateRegistryOf(env).path, env);
      const archive = (execute: boolean) =>
        archiveRuntimeGoal(registry, {
          goalId: args.goalId,
          archiveRoot:
            args.archiveRoot === undefined
              ? undefined
              : path.resolve(env.cwd, expandHome(args.archiveRoot, env.homeDir)),
          allowRegistered: args.allowRegistered,
          execute,
          clock: env.clock,
        });
      // Every check (the archive's, then the lanes') before anything moves.
      const preview = await archive(false);
      const lanes = lanesOnDisk(preview.runtime_root, preview.goal_id);
      if (lanes.length === 0) return args.execute ? await archive(true) : preview;
      const statuses = await checkLanesForCleanup(lanes, args, `archiving goal ${preview.goal_id}`, env.env);
      const result = args.execute ? await archive(true) : preview;
      const cleaned = await cleanUpLanes(
        lanes,
        statuses,
        { deleteBranches: args.deleteLaneBranches, force: args.force, execute: args.execute },
        env.env,
      );
      const check = statuses.some((status) => status.ahead > 0) ? 'unmerged_lanes_allowed_by_flag' : 'lanes_merged';
      return { ...result, checks: [...result.checks, check], lanes: cleaned };
    } catch (error) {
      if (!isLoopxError(error) || error.code === 'usage') throw error;
      return {
        ok: false,
        dry_run: !args.execute,
        archived: false,
        goal_id: args.goalId.trim(),
        error: error.message,
        error_code: error.code,
      };
    }
  },
});
