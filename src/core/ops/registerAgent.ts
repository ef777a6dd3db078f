import { z } from 'zod';
import { registerAgent as registerAgentIds, type RegisterAgentResult } from '../agents/registration';
import { isLoopxError, LoopxError } from '../errors';
import { AGENT_ID_RULE, normalizeAgentId } from '../registry/agentIds';
import { goalIdArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `register-agent` ("Register Agent…"): previews, or with `execute` adds and reads back, agent ids
 * in a goal's registered agents. The write is one locked compare-and-swap of the registry.
 */

/** The core's argument refusals as usage errors (exit 2), details unchanged. */
export async function argumentsAsUsage<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw isLoopxError(error) && (error.code === 'invalid_argument' || error.code === 'invalid_goal_id')
      ? new LoopxError('usage', error.message, error.details)
      : error;
  }
}

export const registerAgent = defineOperation({
  key: 'registerAgent',
  args: z.strictObject({
    goalId: goalIdArg('the goal to register the agent for'),
    agentId: z
      .array(z.string())
      .min(1)
      .meta({ placeholder: 'id' })
      .describe('the agent ids to register (lowercased, spaces become "-")'),
    requireNew: z
      .boolean()
      .default(false)
      .describe('refuse when the id is already registered (a fresh agent claiming its own identity)'),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: (args, env): Promise<RegisterAgentResult> =>
    argumentsAsUsage(() =>
      registerAgentIds({
        registryPath: locateRegistryOf(env).path,
        goalId: args.goalId,
        agentIds: args.agentId,
        requireNew: args.requireNew,
        execute: args.execute,
        clock: env.clock,
        env: env.env,
      }),
    ),
});

/** Why a typed agent id cannot be registered, or null when it can (for prompts that check as people type). */
export function agentIdProblem(value: string): string | null {
  return normalizeAgentId(value) === null ? `Not a valid agent id. ${AGENT_ID_RULE}` : null;
}
