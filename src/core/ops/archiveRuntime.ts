import * as path from 'node:path';
import { z } from 'zod';
import { isLoopxError } from '../errors';
import { expandHome } from '../registry/locate';
import { archiveRuntimeGoal, type ArchiveRuntimeResult } from '../runtime/archive';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `archive-runtime`: moves a goal's runtime folder (runs, journals) to the archive root; a dry run
 * unless `execute`. Refuses a goal the registry lists unless `allowRegistered`. As in LoopX, a
 * refused archive is a failed operation with a JSON answer (`ok: false`), not an error.
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

export type ArchiveRuntimeOutput = ArchiveRuntimeResult | ArchiveRuntimeRefusal;

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
    execute: z.boolean().default(false).describe('move the folder; without it, only show what would happen'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ArchiveRuntimeOutput> => {
    try {
      return await archiveRuntimeGoal({
        registryPath: locateRegistryOf(env).path,
        runtimeRootOverride: env.runtimeRootOverride,
        goalId: args.goalId,
        archiveRoot:
          args.archiveRoot === undefined ? undefined : path.resolve(env.cwd, expandHome(args.archiveRoot, env.homeDir)),
        allowRegistered: args.allowRegistered,
        execute: args.execute,
        clock: env.clock,
        homeDir: env.homeDir,
      });
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
