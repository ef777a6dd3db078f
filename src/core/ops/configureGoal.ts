import { z } from 'zod';
import {
  configureGoal as configureGoalEntry,
  parseGoalConfigChanges,
  type ConfigureGoalResult,
  type GoalConfigInput,
} from '../agents/goalConfig';
import { goalIdArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';
import { argumentsAsUsage } from './registerAgent';

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
      .describe('register an agent id (commas allowed); never removes one'),
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
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ConfigureGoalResult> => {
    const changes = await argumentsAsUsage(async () => parseGoalConfigChanges(configInput(args)));
    return configureGoalEntry({
      registryPath: locateRegistryOf(env).path,
      goalId: args.goalId,
      changes,
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    });
  },
});

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
    writeScope: args.writeScope,
    spawnAllowed: switchValue(args.spawnAllowed, args.noSpawnAllowed),
    maxChildren: args.maxChildren,
    exploreHarness: switchValue(args.exploreHarness, args.noExploreHarness),
    exploreHarnessProfile: args.exploreHarnessProfile,
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
    const plain = message.replace(/^--[a-z-]+ /, '');
    return plain.charAt(0).toUpperCase() + plain.slice(1);
  }
}
