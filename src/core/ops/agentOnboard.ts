import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import {
  agentTypeCatalogRows,
  agentTypeErrorPayload,
  ambiguousAgentTypeInputs,
  originalAgentTypeRows,
  resolveAgentType,
} from '../agents/agentTypes';
import { buildOnboardingPacket, type OnboardingPacket, type ProjectRegistryRead } from '../agents/onboarding';
import { locateRegistry } from '../registry/locate';
import { resolveRegistry } from './goalHandle';
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
  /** Every type this product knows: the original's 17 plus its own `vscode-lm` and `command`. */
  agent_types: ReturnType<typeof agentTypeCatalogRows>;
  /** The original's contract: its 17 types, in its order, with the names each accepts. */
  canonical_agent_types: ReturnType<typeof originalAgentTypeRows>;
  ambiguous_inputs: ReturnType<typeof ambiguousAgentTypeInputs>;
}

/**
 * The original's answer to a type that does not resolve (`loopx_agent_type_error_v0`): `ok: false`
 * with `error_kind`, `reason` and `suggestions` and no `error` text. The CLI exits 2 with it, as the
 * original's argument check does.
 */
export interface AgentTypeErrorOutput {
  ok: false;
  schema_version: 'loopx_agent_type_error_v0';
  error_kind: 'ambiguous_or_unsupported_agent_type';
  agent_type: string;
  reason: string;
  suggestions: string[];
  agent_type_catalog: ReturnType<typeof agentTypeCatalogRows>;
}

export type AgentOnboardOutput = OnboardingPacket | AgentTypeCatalogOutput | AgentTypeErrorOutput;

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
      return {
        ok: true,
        schema_version: 'loopx_agent_type_catalog_v0',
        count: rows.length,
        agent_types: rows,
        canonical_agent_types: originalAgentTypeRows(),
        ambiguous_inputs: ambiguousAgentTypeInputs(),
      };
    }
    const resolution = resolveAgentType(args.agentType);
    if (!resolution.ok) return agentTypeErrorPayload(resolution);
    const project = path.resolve(env.cwd, args.project ?? '.');
    // The project's own registry: onboarding never falls back to the global one.
    const registry = locateRegistry({
      flag: env.registryPath,
      env: env.env,
      cwd: project,
      homeDir: env.homeDir,
      globalFallback: false,
    });
    // Read once; a registry that cannot be read is what onboarding reports (registry_invalid), not an error.
    const read: ProjectRegistryRead = !fs.existsSync(registry.path)
      ? { path: registry.path, exists: false }
      : await resolveRegistry({ ...env, registryPath: registry.path }).then(
          (resolved) => ({ path: registry.path, exists: true, document: resolved.document }),
          (error: unknown) => ({ path: registry.path, exists: true, error }),
        );
    return buildOnboardingPacket({
      agentType: resolution.entry,
      project,
      registry: read,
      goalId: args.goalId,
      agentId: args.agentId,
      homeDir: env.homeDir,
    });
  },
});
