import * as path from 'node:path';
import { z } from 'zod';
import { agentTypeCatalogRows, agentTypeErrorPayload, resolveAgentType } from '../agents/agentTypes';
import { buildOnboardingPacket, type OnboardingPacket } from '../agents/onboarding';
import { LoopxError } from '../errors';
import { locateRegistry } from '../registry/locate';
import { defineOperation } from './operation';

/**
 * `agent-onboard` ("Onboard an Agent…"): the read-only onboarding packet for one agent type (how
 * the project is connected, which identity the agent may use, the exact next commands), or with
 * `listAgentTypes` the agent-type catalog. Writes nothing.
 */

export interface AgentTypeCatalogOutput {
  ok: true;
  schema_version: 'loopx_agent_type_catalog_v0';
  count: number;
  agent_types: ReturnType<typeof agentTypeCatalogRows>;
}

export type AgentOnboardOutput = OnboardingPacket | AgentTypeCatalogOutput;

export const agentOnboard = defineOperation({
  key: 'agentOnboard',
  args: z.strictObject({
    agentType: z
      .string()
      .optional()
      .meta({ placeholder: 'type' })
      .describe('the agent host, e.g. vscode-lm, command, claude-code, codex-cli (see --list-agent-types)'),
    listAgentTypes: z.boolean().default(false).describe('list the known agent types and their aliases'),
    project: z
      .string()
      .optional()
      .meta({ placeholder: 'dir' })
      .describe('the project directory (default: the current directory)'),
    goalId: z
      .string()
      .optional()
      .meta({ placeholder: 'id' })
      .describe('the goal (default: the project directory name plus -goal)'),
    agentId: z
      .string()
      .optional()
      .meta({ placeholder: 'id' })
      .describe('the agent id to use; without it a fresh identity is proposed'),
  }),
  run: async (args, env): Promise<AgentOnboardOutput> => {
    if (args.listAgentTypes) {
      const rows = agentTypeCatalogRows();
      return { ok: true, schema_version: 'loopx_agent_type_catalog_v0', count: rows.length, agent_types: rows };
    }
    const resolution = resolveAgentType(args.agentType);
    if (!resolution.ok) {
      const supported =
        resolution.reason_kind === 'required' ? `; supported: ${resolution.suggestions.join(', ')}` : '';
      throw new LoopxError('usage', `${resolution.reason}${supported}`, agentTypeErrorPayload(resolution));
    }
    const project = path.resolve(env.cwd, args.project ?? '.');
    // The project's own registry: onboarding never falls back to the global one.
    const registry = locateRegistry({
      flag: env.registryPath,
      env: env.env,
      cwd: project,
      homeDir: env.homeDir,
      globalFallback: false,
    });
    return buildOnboardingPacket({
      agentType: resolution.entry,
      project,
      registryPath: registry.path,
      goalId: args.goalId,
      agentId: args.agentId,
      homeDir: env.homeDir,
    });
  },
});
