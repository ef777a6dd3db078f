import { z } from 'zod';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  normalizeRequestedAgentIds,
  registerAgent as registerAgentIds,
  type RegisterAgentResult,
} from '../agents/registration';
import { LoopxError } from '../errors';
import { AGENT_ID_RULE, normalizeAgentId } from '../registry/agentIds';
import type { RegistryPlace } from '../registry/goalRef';
import { expandHome, GLOBAL_REGISTRY_FILE_NAME, registryProjectRoot, resolveRuntimeRoot } from '../registry/locate';
import { findRawRegistryGoal } from '../registry/read';
import { goalIdArg } from './common';
import { resolveGoalToWrite, resolveRegistry } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';

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
  run: async (args, env): Promise<RegisterAgentResult> => {
    const request = {
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
    const global: RegistryPlace = {
      registryPath: globalRegistryPath,
      source: 'global',
      projectRoot: registryProjectRoot(globalRegistryPath),
      runtimeRoot: path.dirname(path.resolve(globalRegistryPath)),
      homeDir: env.homeDir,
    };
    // As before the goal was resolved here: the route through the global registry is checked first, then
    // the ids (an invalid one refused before the registry written is read), then the goal in that registry.
    const sourcePath = args.projectRegistry
      ? null
      : await sourceRegistryViaGlobal(env, args.goalId, globalRegistryPath);
    normalizeRequestedAgentIds(args.agentId);
    if (sourcePath === null) return registerAgentIds(await resolveGoalToWrite(env, args.goalId), request, { global });
    const goal = await resolveGoalToWrite(env, args.goalId, { path: sourcePath, source: 'global' });
    return registerAgentIds(goal, request, { global, always: true });
  },
  errorFields: (input) => ({
    dry_run: input['execute'] !== true,
    execute: input['execute'] === true,
    changed: false,
    written: false,
  }),
});

/**
 * The original's route: the goal must be in the global registry with a `source_registry`, the registry
 * written (the goal is resolved there). The error texts are the original's.
 */
async function sourceRegistryViaGlobal(env: OperationEnvironment, goalId: string, globalPath: string): Promise<string> {
  // The command that writes THIS global registry: plain sync-global writes the one under the project's
  // own runtime root (common_runtime_root), which this route never reads.
  const fixArgv = ['sync-global', '--runtime-root', path.dirname(globalPath), '--goal-id', goalId];
  const fix = `loopx ${fixArgv.map(shellWord).join(' ')}`;
  if (!fs.existsSync(globalPath)) {
    throw new LoopxError(
      'global_registry_not_found',
      `global registry does not exist: ${globalPath}. Create it by running ${fix} in the goal's project folder, or register in the project's own registry with --project-registry.`,
      { file: globalPath, fix_argv: fixArgv },
    );
  }
  const globalRegistry = await resolveRegistry({ ...env, registryPath: globalPath });
  const globalGoal = findRawRegistryGoal(globalRegistry.document, goalId);
  if (globalGoal === undefined) {
    throw new LoopxError(
      'goal_not_found',
      `goal_id not found in global registry: ${goalId} (${globalPath}). Add it by running ${fix} in the goal's project folder, or use --project-registry.`,
      { file: globalPath, goal_id: goalId, fix_argv: fixArgv },
    );
  }
  const source = globalGoal['source_registry'];
  if (typeof source !== 'string' || source.trim() === '') {
    throw new LoopxError(
      'source_registry_missing',
      `${goalId}: global registry entry has no source_registry; use configure-goal with an explicit --registry instead of connect`,
      { file: globalPath, goal_id: goalId, field: 'source_registry' },
    );
  }
  return path.resolve(path.dirname(globalPath), expandHome(source.trim(), env.homeDir));
}

/** A command-line word as a POSIX shell reads it: quoted only when it has to be. */
function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** Why a typed agent id cannot be registered, or null when it can (for prompts that check as people type). */
export function agentIdProblem(value: string): string | null {
  return normalizeAgentId(value) === null ? `Not a valid agent id. ${AGENT_ID_RULE}` : null;
}
