import { activeLeaseHolders } from '../leases/store';
import { z } from 'zod';
import { requireRegisteredAgent } from '../registry/agentIds';
import { heartbeatSteps } from '../protocol/heartbeat';
import { LoopxError } from '../errors';
import { DEFAULT_TIMEOUT_MINUTES, readAgentExecutorConfig } from '../executors/config';
import { quotaConfigOf } from '../quota/goal';
import { computeLedger } from '../quota/ledger';
import { selectTodo } from '../todo/runnable';
import { readGoalRunIndex, readGoalStateFile } from '../goal/reads';
import { budgetBrief, buildTurnBrief, PROMPT_SIZES, renderTurnPrompt, type PromptSize } from '../protocol/prompt';
import type { TurnBrief } from '../protocol/contract';
import { goalIdArg } from './common';
import { requireStatePath, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `heartbeat-prompt`: the task body of one bounded turn (docs/executors.md#from-a-terminal) for an agent driven from a
 * terminal. Reads the registry, the state file and the run index; writes nothing.
 */

export interface HeartbeatPromptOutput {
  ok: true;
  schema_version: 'loopx_heartbeat_prompt_v1';
  goal_id: string;
  agent_id: string;
  size: PromptSize;
  selected_todo_id: string | null;
  prompt: string;
  brief: TurnBrief;
}

export const heartbeatPrompt = defineOperation({
  key: 'heartbeatPrompt',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: z.string().meta({ placeholder: 'agent' }).describe('the registered agent the prompt is for'),
    thin: z.boolean().default(false).describe('the essentials (default)'),
    brief: z.boolean().default(false).describe('plus the recorded next action, recent evidence and the validator'),
    compact: z.boolean().default(false).describe('plus user feedback, gate decisions and the full field rules'),
    full: z.boolean().default(false).describe('everything, as LoopX gives agents it runs itself'),
  }),
  run: async (args, env): Promise<HeartbeatPromptOutput> => {
    const chosen = PROMPT_SIZES.filter((size) => args[size]);
    if (chosen.length > 1)
      throw new LoopxError('usage', `choose one prompt size, not ${chosen.map((s) => `--${s}`).join(' and ')}`);
    const size: PromptSize = chosen[0] ?? 'thin';
    const goal = await resolveGoal(env, args.goalId);
    const goalId = goal.goalId;
    const agentId = requireRegisteredAgent(goal.rawEntry, args.agentId, { field: 'agent_id' });
    const state = await readGoalStateFile(requireStatePath(goal));
    const runs = (
      await readGoalRunIndex(goal.runtimeRoot, goalId, { projectRoot: goal.projectRoot, artifactChecks: 0 })
    ).rows;
    const selection = selectTodo({
      doc: state.document,
      agentId,
      availableCapabilities: [],
      now: env.clock.now().getTime(),
      leaseHolders: activeLeaseHolders(goal, env.clock.now()),
    });
    const quota = quotaConfigOf(goal);
    const ledger = computeLedger({
      rows: runs,
      projectRoot: goal.projectRoot,
      windowHours: quota.slots.window_hours,
      clock: env.clock,
    });
    const executor = readAgentExecutorConfig(goal.rawEntry, agentId);
    const turnTimeoutMinutes =
      executor === null ? null : (executor.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES[executor.preset]);
    const brief = buildTurnBrief({
      goal: goal.rawEntry,
      agentId,
      doc: state.document,
      runs,
      selectedTodoId: selection.selected?.todo_id ?? null,
      budget: budgetBrief(quota, ledger, { turnTimeoutMinutes }),
    });
    const prompt = renderTurnPrompt(brief, {
      size,
      mode: 'heartbeat',
      heartbeatSteps: heartbeatSteps({ goalId, agentId, todoId: brief.selected_todo?.todo_id ?? null }),
    });
    return {
      ok: true,
      schema_version: 'loopx_heartbeat_prompt_v1',
      goal_id: goalId,
      agent_id: agentId,
      size,
      selected_todo_id: brief.selected_todo?.todo_id ?? null,
      prompt,
      brief,
    };
  },
});
