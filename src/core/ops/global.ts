import { z } from 'zod';
import type { CommandKey } from '../commands/catalog';
import { errorMessage } from '../errors';
import type { GlobalCommand, GlobalResponse, GlobalUnavailableResponse } from '../status/globalSchemas';
import { loadGlobalSnapshot } from '../status/globalSnapshot';
import { globalUnavailable, globalView, parseTimeRange, type GlobalViewOptions } from '../status/globalViews';
import { registryProjectRoot } from '../registry/locate';
import { agentIdArg, limitArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `global-summary | global-gates | global-todos | global-risks`: read-only views over every goal of
 * the registry. A registry that cannot be read is an answer (`ok:false`, "Global status source
 * unavailable.", the reason), not an error.
 */

const timeRange = z
  .string()
  .refine((value) => {
    try {
      parseTimeRange(value);
      return true;
    } catch {
      return false;
    }
  })
  .meta({ placeholder: 'range' })
  .describe(
    'a positive number followed by m, h or d (e.g. 24h, 7d, 90m): the window for run counts and stale checks (default 24h)',
  );

const globalArgs = z.strictObject({
  agentId: agentIdArg(
    'look at the goals as this agent: goals it is registered on, its own and unclaimed todos',
  ).optional(),
  limit: limitArg('rows listed per group (default 8; counts are always complete)').optional(),
  timeRange: timeRange.optional(),
});

export type GlobalViewOutput = GlobalResponse | GlobalUnavailableResponse;

function globalOperation<Key extends CommandKey & `global${string}`>(key: Key, command: GlobalCommand) {
  return defineOperation({
    key,
    args: globalArgs,
    run: async (args, env): Promise<GlobalViewOutput> => {
      const options: GlobalViewOptions = {};
      if (args.agentId !== undefined) options.agentId = args.agentId;
      if (args.limit !== undefined) options.limit = args.limit;
      if (args.timeRange !== undefined) options.timeRange = args.timeRange;
      const registryPath = locateRegistryOf(env).path;
      try {
        const snapshot = await loadGlobalSnapshot({
          registryPath,
          homeDir: env.homeDir,
          runtimeRootOverride: env.runtimeRootOverride ?? null,
          clock: env.clock,
        });
        return globalView(command, snapshot, options);
      } catch (error) {
        return globalUnavailable(
          command,
          errorMessage(error),
          {
            projectRoots: [registryProjectRoot(registryPath)],
            homeDir: env.homeDir,
            now: env.clock.now(),
            registryPath,
          },
          options,
        );
      }
    },
  });
}

export const globalSummary = globalOperation('globalSummary', 'global-summary');
export const globalGates = globalOperation('globalGates', 'global-gates');
export const globalTodos = globalOperation('globalTodos', 'global-todos');
export const globalRisks = globalOperation('globalRisks', 'global-risks');

// The global views' results as Markdown for people (the CLI's default output, the chat's replies, the
// editor's global-view documents): a surface renders them through this export, not from core/status.
export { globalMarkdown } from '../status/globalMarkdown';
