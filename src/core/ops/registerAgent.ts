import { z } from 'zod';
import { registerAgent as registerAgentIds, type RegisterAgentResult } from '../agents/registration';
import { AGENT_ID_RULE, normalizeAgentId } from '../registry/agentIds';
import { goalIdArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `register-agent` ("Register Agent…"): previews, or with `execute` adds and reads back, agent ids
 * in a goal's registered agents. The write is one locked compare-and-swap of the registry.
 */

export const registerAgent = defineOperation({
  key: 'registerAgent',
  args: z.strictObject({
    goalId: goalIdArg('the goal to register the agent for'),
    agentId: z
      .array(z.string())
      .min(1)
      .meta({ placeholder: 'id' })
      .describe('the agent ids to register (commas allowed; lowercased, spaces become "-")'),
    requireNew: z
      .boolean()
      .default(false)
      .describe('refuse when the id is already registered (a fresh agent claiming its own identity)'),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  // An invalid id is a refused operation (exit 1, `agent_id_invalid`), never a silent drop.
  run: (args, env): Promise<RegisterAgentResult> =>
    registerAgentIds({
      registryPath: locateRegistryOf(env).path,
      goalId: args.goalId,
      agentIds: args.agentId,
      requireNew: args.requireNew,
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    }),
  errorFields: (input) => ({
    dry_run: input['execute'] !== true,
    execute: input['execute'] === true,
    changed: false,
    written: false,
  }),
});

/** Why a typed agent id cannot be registered, or null when it can (for prompts that check as people type). */
export function agentIdProblem(value: string): string | null {
  return normalizeAgentId(value) === null ? `Not a valid agent id. ${AGENT_ID_RULE}` : null;
}
