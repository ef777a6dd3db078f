import { z } from 'zod';
import * as path from 'node:path';
import {
  registerAgent as registerAgentIds,
  registerAgentViaGlobal,
  type RegisterAgentResult,
} from '../agents/registration';
import { AGENT_ID_RULE, normalizeAgentId } from '../registry/agentIds';
import { GLOBAL_REGISTRY_FILE_NAME, resolveRuntimeRoot } from '../registry/locate';
import { goalIdArg } from './common';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `register-agent` ("Register Agent…"): previews, or with `execute` adds and reads back, agent ids
 * in a goal's registered agents. The write is one locked compare-and-swap of the registry.
 *
 * As in the original, the goal is found in the global registry (`<runtime root>/registry.global.json`,
 * the runtime root being `--runtime-root` or `~/.codex/loopx`, never the project's), its
 * `source_registry` is written and the goal synced back. With `projectRegistry` (the editor's route)
 * the located registry is written instead, and the global entry synced when it comes from there.
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
    projectRegistry: z
      .boolean()
      .default(false)
      .describe(
        'write the located registry (--registry, LOOPX_REGISTRY or ./.loopx/registry.json) instead of the source registry the global registry names for the goal',
      ),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  // An invalid id is a refused operation (exit 1, `agent_id_invalid`), never a silent drop.
  run: (args, env): Promise<RegisterAgentResult> => {
    const request = {
      goalId: args.goalId,
      agentIds: args.agentId,
      requireNew: args.requireNew,
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    };
    // The original's global registry: under --runtime-root, else ~/.codex/loopx (never the project's root).
    const globalRegistryPath = path.join(
      resolveRuntimeRoot({ override: env.runtimeRootOverride, homeDir: env.homeDir, cwd: env.cwd }),
      GLOBAL_REGISTRY_FILE_NAME,
    );
    if (!args.projectRegistry) return registerAgentViaGlobal(request, { globalRegistryPath, homeDir: env.homeDir });
    return registerAgentIds(
      { ...request, registryPath: locateRegistryOf(env).path },
      { globalRegistryPath, homeDir: env.homeDir },
    );
  },
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
