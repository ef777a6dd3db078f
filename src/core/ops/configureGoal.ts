import { z } from 'zod';
import {
  configureGoal as configureGoalEntry,
  parseGoalConfigChanges,
  type ConfigureGoalResult,
  type GoalConfigInput,
} from '../agents/goalConfig';
import { goalIdArg } from './common';
import { resolveGoalToWrite } from './goalHandle';
import { defineOperation } from './operation';
import { isLoopxError, LoopxError } from '../errors';
import * as path from 'node:path';
import { syncGlobalRegistry } from '../globalRegistry/sync';
import { GLOBAL_REGISTRY_FILE_NAME, resolveRuntimeRoot } from '../registry/locate';

/** The sync of a written change into the global registry (the original's `global_sync`, in short). */
export interface GlobalSyncOutcome {
  enabled: boolean;
  wrote: boolean;
  global_registry: string | null;
}

/**
 * `configure-goal` ("Configure Goal…"): previews, or with `execute` writes and reads back, a goal's
 * quota, registered agents, write scope, spawn policy and explore harness. The ranges are checked
 * by the core with the original's messages; nothing is written when one is off.
 */

export const configureGoal = defineOperation({
  key: 'configureGoal',
  args: z.strictObject({
    goalId: goalIdArg('the goal to configure'),
    quotaCompute: z
      .number()
      .optional()
      .meta({ placeholder: 'fraction' })
      .describe('share of each quota window the goal may use, 0 to 1 (0 pauses it)'),
    quotaWindowHours: z
      .number()
      .optional()
      .meta({ placeholder: 'hours' })
      .describe('length of the rolling quota window in whole hours (> 0)'),
    registeredAgent: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'id' })
      .describe('set the registered agents to these ids (commas allowed; an id left out is removed)'),
    clearRegisteredAgents: z
      .boolean()
      .optional()
      .describe('remove the registered agents, with the agent model and per-agent settings'),
    writeScope: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'glob' })
      .describe('a path glob the goal may write, relative to its repo; replaces the list'),
    spawnAllowed: z.boolean().optional().describe('allow the goal to run several agents at once'),
    noSpawnAllowed: z
      .boolean()
      .optional()
      .meta({ flag: '--no-spawn-allowed' })
      .describe('run one agent turn at a time (spawnAllowed false)'),
    maxChildren: z
      .number()
      .int()
      .optional()
      .meta({ placeholder: 'n' })
      .describe('how many agent turns may run at once when spawning is allowed'),
    exploreHarness: z.boolean().optional().describe('opt the goal in to the explore harness'),
    noExploreHarness: z
      .boolean()
      .optional()
      .meta({ flag: '--no-explore-harness' })
      .describe('opt the goal out of the explore harness (exploreHarness false)'),
    exploreHarnessProfile: z
      .string()
      .optional()
      .meta({ placeholder: 'profile' })
      .describe('generic, adaptive-resilient or moe-router'),
    agentProfileJson: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'json' })
      .describe(
        "an agent profile as a JSON object naming a registered agent (agent_id; the original's agent_profile_v1 fields and executor); replaces its stored profile (repeatable)",
      ),
    clearAgentProfile: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'id' })
      .describe("remove this agent's profile (repeatable)"),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ConfigureGoalResult & { global_sync?: GlobalSyncOutcome }> => {
    const changes = refuseAsConfig(() => parseGoalConfigChanges(configInput(args)));
    try {
      const goal = await resolveGoalToWrite(env, args.goalId);
      const registryPath = goal.registryPath;
      const result = await configureGoalEntry(goal, {
        changes,
        execute: args.execute,
        clock: env.clock,
        env: env.env,
      });
      if (!result.written) return result;
      // As the original's configure-goal (`configure_goal_with_global_sync`): a written change is synced into the
      // global registry whose entry for the goal comes from this registry, so the original reads the new quota
      // there (and its status reports no stale_source_registry).
      const globalRegistryPath = path.join(
        resolveRuntimeRoot({ override: env.runtimeRootOverride, homeDir: env.homeDir, cwd: env.cwd }),
        GLOBAL_REGISTRY_FILE_NAME,
      );
      const sync = await syncGlobalRegistry({
        projectRegistryPath: registryPath,
        globalRegistryPath,
        goalIds: [args.goalId],
        allowRouteReplacement: false,
        dryRun: false,
        clock: env.clock,
        runtimeRoot: path.dirname(path.resolve(globalRegistryPath)),
        lock: { env: env.env },
        onlyWhereSourced: true,
      });
      return {
        ...result,
        global_sync:
          sync.goals.length === 0
            ? { enabled: false, wrote: false, global_registry: null }
            : { enabled: true, wrote: sync.written, global_registry: globalRegistryPath },
      };
    } catch (error) {
      // The original's words first (scripts match on them), then ours with the goals there are.
      if (isLoopxError(error, 'goal_not_found'))
        throw new LoopxError('goal_not_found', `goal_id not found in registry: ${args.goalId}; ${error.message}`, {
          ...error.details,
        });
      throw error;
    }
  },
  errorFields: (input) => ({
    dry_run: input['execute'] !== true,
    execute: input['execute'] === true,
    changed: false,
    written: false,
  }),
});

/**
 * A setting that breaks its rule is a refused operation (exit 1, `invalid_goal_config`), as in the
 * original, not a usage error: the command line itself was well formed.
 */
function refuseAsConfig<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    if (isLoopxError(error, 'invalid_argument'))
      throw new LoopxError('invalid_goal_config', error.message, error.details);
    throw error;
  }
}

type ConfigureArgs = z.output<typeof configureGoal.args>;

/** A pair of switches (`--x` / `--no-x`) as one optional boolean; the last one given wins, as the CLI parses it. */
function switchValue(on: boolean | undefined, off: boolean | undefined): boolean | undefined {
  return off === true ? false : on;
}

function configInput(args: Omit<ConfigureArgs, 'goalId' | 'execute'>): GoalConfigInput {
  return {
    quotaCompute: args.quotaCompute,
    quotaWindowHours: args.quotaWindowHours,
    registeredAgents: args.registeredAgent,
    clearRegisteredAgents: args.clearRegisteredAgents,
    writeScope: args.writeScope,
    spawnAllowed: switchValue(args.spawnAllowed, args.noSpawnAllowed),
    maxChildren: args.maxChildren,
    exploreHarness: switchValue(args.exploreHarness, args.noExploreHarness),
    exploreHarnessProfile: args.exploreHarnessProfile,
    agentProfileJsons: args.agentProfileJson,
    clearAgentProfiles: args.clearAgentProfile,
  };
}

/**
 * Why typed settings would be refused, or null when they are fine (for prompts that check as
 * people type). Numbers may be given as the text typed; the message names no CLI option.
 */
export function goalConfigProblem(input: GoalConfigInput): string | null {
  try {
    parseGoalConfigChanges(input);
    return null;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // The CLI's option names (`--quota-compute`, also as a `(--quota-compute)` aside) mean nothing in a prompt.
    const plain = message.replace(/ \(--[a-z-]+\)/g, '').replace(/^(--[a-z-]+|quota_[a-z_]+) /, '');
    return plain.charAt(0).toUpperCase() + plain.slice(1);
  }
}
