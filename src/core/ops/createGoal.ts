import * as path from 'node:path';
import { z } from 'zod';
import { syncGlobalRegistry } from '../globalRegistry/sync';
import { bootstrapGoal, type BootstrapAction, type BootstrapResult } from '../registry/bootstrap';
import { checkNewGoalId, slugify } from '../registry/goalId';
import { DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME, expandHome, GLOBAL_REGISTRY_FILE_NAME } from '../registry/locate';
import { isoSeconds } from '../clock';
import { applyGoalPlan } from '../state/goalPlan';
import { defineOperation, type OperationEnvironment } from './operation';

export { planPriority } from '../state/goalPlan';

/**
 * `bootstrap` ("Create Goal…"): creates or connects a project goal — the registry (created when
 * missing), the goal's entry and its ACTIVE_GOAL_STATE.md. The registry is the explicit one of the
 * environment, else `<project>/.loopx/registry.json` (never the global one). With `todo` (and
 * `gate`) items the state file is written with that plan in the same write ("Start a Goal…" uses
 * it), so a goal never exists without its reviewed todos: a refused item writes nothing at all.
 */

function isNewGoalId(value: string): boolean {
  try {
    checkNewGoalId(value);
    return true;
  } catch {
    return false;
  }
}

export const createGoal = defineOperation({
  key: 'createGoal',
  args: z.strictObject({
    project: z
      .string()
      .optional()
      .meta({ placeholder: 'dir' })
      .describe('the project folder (default: the current folder)'),
    goalId: z
      .string()
      .refine(isNewGoalId)
      .meta({ placeholder: 'id' })
      .describe(
        "a new goal id: a lowercase slug such as my-project-goal (a-z, 0-9, '.', '_', '-'; a letter or digit first; at most 80 characters)",
      ),
    objective: z.string().meta({ placeholder: 'text' }).describe('what the goal should achieve, in one sentence'),
    domain: z
      .string()
      .optional()
      .meta({ placeholder: 'domain' })
      .describe('the goal domain (default: the project folder name)'),
    todo: z
      .array(z.string().trim().min(1))
      .optional()
      .meta({ placeholder: 'text' })
      .describe(
        'a first agent todo, highest priority first (repeat the option); written with the goal in one state file write, and the planning todo is completed',
      ),
    gate: z
      .array(z.string().trim().min(1))
      .optional()
      .meta({ placeholder: 'text' })
      .describe('a human gate (a decision a person makes) written with the goal; needs at least one --todo'),
    force: z
      .boolean()
      .default(false)
      .describe('replace an existing goal entry and state file (the old state file is backed up)'),
  }),
  run: async (args, env): Promise<BootstrapResult> => {
    const anchor = (value: string): string => path.resolve(env.cwd, expandHome(value, env.homeDir));
    const result = await bootstrapGoal(
      { id: args.goalId, objective: args.objective, domain: args.domain },
      {
        projectDir: anchor(args.project ?? '.'),
        force: args.force,
        plan:
          args.todo === undefined && args.gate === undefined
            ? undefined
            : (fresh, { goalId, now, firstTodoId }) =>
                applyGoalPlan(fresh, { todos: args.todo ?? [], gates: args.gate ?? [] }, firstTodoId, {
                  now: isoSeconds(now),
                  goalId,
                  roster: null,
                  actorAgentId: null,
                }),
        registryPath: env.registryPath === undefined ? undefined : anchor(env.registryPath),
        homeDir: env.homeDir,
        clock: env.clock,
        env: env.env,
      },
    );
    result.actions.push(await syncBootstrappedGoal(result, env));
    return result;
  },
});

/** Why a goal id cannot be a new goal's id, or null when it can (for prompts that check as people type). */
export function newGoalIdProblem(value: string): string | null {
  try {
    checkNewGoalId(value);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** The goal id offered for a project folder: its name as a slug plus `-goal`. */
export function suggestedGoalId(folderName: string): string {
  return `${slugify(folderName) || 'project'}-goal`;
}

/**
 * The original's bootstrap also enters the goal in the machine's global registry (`~/.codex/loopx/registry.global.json`,
 * where its `register-agent`, `configure-goal` and global `status` look for it), every goal of the project each time:
 * so does ours. A route collision (another project owns the id there) is reported, not forced; the project's goal
 * stays written and `loopx sync-global --allow-route-replacement` settles it.
 */
async function syncBootstrappedGoal(result: BootstrapResult, env: OperationEnvironment): Promise<BootstrapAction> {
  const runtimeRoot = path.join(env.homeDir, DEFAULT_RUNTIME_ROOT_RELATIVE_TO_HOME);
  const globalRegistryPath = path.join(runtimeRoot, GLOBAL_REGISTRY_FILE_NAME);
  try {
    const synced = await syncGlobalRegistry({
      projectRegistryPath: result.registry,
      globalRegistryPath,
      goalIds: [result.goal_id],
      allowRouteReplacement: false,
      dryRun: false,
      clock: env.clock,
      runtimeRoot,
      lock: { env: env.env },
    });
    return synced.goals.some((g) => g.goal_id === result.goal_id)
      ? { action: 'synced_global_registry', path: globalRegistryPath }
      : { action: 'global_registry_not_synced', path: globalRegistryPath, reason: synced.actions.join('; ') };
  } catch (error) {
    return {
      action: 'global_registry_not_synced',
      path: globalRegistryPath,
      reason: error instanceof Error ? error.message : String(error),
    };
  }
}
