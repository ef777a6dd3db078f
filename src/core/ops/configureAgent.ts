import { z } from 'zod';
import {
  AGENT_PRESETS,
  configureAgentExecutor,
  ISOLATION_CHOICES,
  removeAgentFromGoal,
  RESUME_POLICIES,
  type ConfigureAgentResult,
  type RemoveAgentResult,
} from '../agents/agentExecutor';
import { ENV_NAME_PATTERN } from '../executors/process';
import { agentIdArg, goalIdArg, nothingWrittenFields } from './common';
import { checkLanesForCleanup, cleanUpLanes, lanesOnDisk, type LaneCleanup } from '../lanes/cleanup';
import { goalToWrite, resolveGoalToWrite, resolveRegistry } from './goalHandle';
import { defineOperation } from './operation';

export {
  AGENT_PRESETS,
  ISOLATION_CHOICES,
  PERMISSION_MODES,
  RESUME_POLICIES,
  buildAgentExecutor,
} from '../agents/agentExecutor';
export type { AgentPreset, ConfigureAgentResult, IsolationChoice, RemoveAgentResult } from '../agents/agentExecutor';

/**
 * `agent configure` ("Configure Agent…"): how one agent of a goal runs (its executor), in one step:
 * previews the executor before/after, or with `execute` writes it under the registry's lock and reads
 * it back. An agent not yet registered on the goal is registered with it.
 */
export const configureAgent = defineOperation({
  key: 'configureAgent',
  args: z.strictObject({
    goalId: goalIdArg('the goal the agent works on'),
    agentId: agentIdArg('the agent to configure'),
    preset: z.enum(AGENT_PRESETS).describe('how the agent runs'),
    command: z
      .array(z.string().min(1))
      .optional()
      .meta({ placeholder: 'path' })
      .describe("the program to start (a path or a name on PATH; repeat for its own arguments); default the preset's"),
    model: z
      .string()
      .optional()
      .meta({ placeholder: 'name' })
      .describe('the model (passed as --model; for vscode-lm "vendor/family" or a family)'),
    permissionMode: z
      .string()
      .optional()
      .meta({ placeholder: 'mode' })
      .describe(
        "Claude Code's --permission-mode (acceptEdits, bypassPermissions, default, dontAsk, plan) or Codex's --sandbox (read-only, workspace-write, danger-full-access)",
      ),
    timeoutMinutes: z
      .number()
      .positive()
      .max(24 * 60)
      .optional()
      .meta({ placeholder: 'minutes' })
      .describe('how long one turn may run, in minutes'),
    envAllowlist: z
      .array(z.string().regex(ENV_NAME_PATTERN))
      .optional()
      .meta({ placeholder: 'NAME', split: true })
      .describe("environment variable names passed to the agent besides the preset's (commas allowed; names only)"),
    resume: z.enum(RESUME_POLICIES).optional().describe('whether a turn on an in-progress todo resumes its session'),
    arg: z
      .array(z.string())
      .optional()
      .meta({ placeholder: 'arg' })
      .describe("a further argument after the preset's own (repeatable)"),
    isolation: z
      .enum(ISOLATION_CHOICES)
      .optional()
      .describe(
        "where the agent's turns run: worktree (a git worktree and branch of its own, docs/lanes.md) or shared",
      ),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<ConfigureAgentResult> =>
    configureAgentExecutor(await resolveGoalToWrite(env, args.goalId), {
      agentId: args.agentId,
      choices: {
        preset: args.preset,
        command: args.command,
        model: args.model,
        permissionMode: args.permissionMode,
        timeoutMinutes: args.timeoutMinutes,
        envAllowlist: args.envAllowlist,
        resume: args.resume,
        args: args.arg,
        isolation: args.isolation,
      },
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    }),
  errorFields: nothingWrittenFields,
});

/**
 * `agent remove` ("Remove Agent…"): takes an agent off a goal (its registered id, its profile with
 * the executor, its work mode): preview, then `execute`. Its lane (docs/lanes.md) goes too: the
 * worktree is removed (the branch kept unless `deleteLaneBranch`); a lane with commits main lacks
 * refuses the removal, before anything is written, unless `force`.
 */
export const removeAgent = defineOperation({
  key: 'removeAgent',
  args: z.strictObject({
    goalId: goalIdArg('the goal to take the agent off'),
    agentId: agentIdArg('the agent to remove'),
    deleteLaneBranch: z
      .boolean()
      .default(false)
      .describe("delete the agent's lane branch too (default: only its worktree is removed)"),
    force: z.boolean().default(false).describe("remove the agent's lane even when it has commits main lacks"),
    execute: z.boolean().default(false).describe('write the registry (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<RemoveAgentResult & { lanes?: LaneCleanup[] }> => {
    const registry = await resolveRegistry(env);
    const lanes = lanesOnDisk(registry.runtimeRoot, args.goalId.trim()).filter((lane) => lane.agentId === args.agentId);
    const statuses = await checkLanesForCleanup(lanes, args, `removing agent ${args.agentId}`, env.env);
    const result = await removeAgentFromGoal(goalToWrite(registry, args.goalId), {
      agentId: args.agentId,
      execute: args.execute,
      clock: env.clock,
      env: env.env,
    });
    if (lanes.length === 0 || !result.ok) return result;
    const cleaned = await cleanUpLanes(
      lanes,
      statuses,
      { deleteBranches: args.deleteLaneBranch, force: args.force, execute: args.execute },
      env.env,
    );
    return { ...result, lanes: cleaned };
  },
  errorFields: nothingWrittenFields,
});
