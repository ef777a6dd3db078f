import { z } from 'zod';
import { loadTurnGoal, planGoalTurn } from '../turn/context';
import { inspectJournal, type JournalInspection } from '../turn/inspect';
import { RECOVERY_KINDS, type RecoveryKind } from '../turn/journal';
import { runLoop, type LoopResult } from '../turn/loop';
import { runOnce, type TurnRunResult } from '../turn/runOnce';
import type { TurnPlan } from '../turn/plan';
import { goalIdArg, turnInstanceIdArg } from './common';
import { resolveGoal } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';

/**
 * The LoopX-driven turn: `turn plan` shows what one turn would do and `turn inspect-journal` lists
 * (or shows) the goal's turn journals (both only read); `turn run-once` previews one journaled turn
 * or, with `execute`, runs it; `turn loop` runs turns until the goal waits, needs a person, runs out
 * of budget, is done or fails. Progress goes to the environment's `onEvent`, cancellation comes from
 * its `signal`.
 */

function blankless(value: string | undefined): string | undefined {
  const text = value?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** The options that say how a turn is executed (shared by plan, run-once and loop). */
export const turnExecutionArgs = {
  hostAdapterCommand: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .meta({ flag: '--host-adapter-command-json', placeholder: 'argv', textForm: 'jsonArgv' })
    .describe('run this command (JSON argv) as the agent instead of the registry executor'),
  validationCommand: z
    .array(z.string().min(1))
    .min(1)
    .optional()
    .meta({ flag: '--validation-command-json', placeholder: 'argv', textForm: 'jsonArgv' })
    .describe("run this validator (JSON argv) instead of the goal's validation_command"),
  validationFailureKind: z
    .enum(RECOVERY_KINDS)
    .optional()
    .meta({ placeholder: 'kind' })
    .describe(`what a failed validation asks for next (${RECOVERY_KINDS.join(', ')}; default repair_required)`),
  availableCapabilities: z
    .array(z.string())
    .optional()
    .meta({ flag: '--available-capability', placeholder: 'name' })
    .describe('a capability the agent has'),
};

export const turnPlan = defineOperation({
  key: 'turnPlan',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: z.string().meta({ placeholder: 'id' }).describe('the registered agent the turn is for'),
    turnInstanceId: turnInstanceIdArg('the turn instance id (default: a fresh one from the clock)').optional(),
    ...turnExecutionArgs,
  }),
  run: async (args, env): Promise<TurnPlan> => {
    const goal = await resolveGoal(env, args.goalId);
    const turnGoal = loadTurnGoal({
      agentId: args.agentId,
      clock: env.clock,
      homeDir: goal.homeDir,
      runtimeRootOverride: env.runtimeRootOverride,
      hostAdapterCommand: args.hostAdapterCommand,
      validationCommand: args.validationCommand,
      availableCapabilities: args.availableCapabilities,
      goal,
    });
    const { plan } = await planGoalTurn(turnGoal, {
      clock: env.clock,
      turnInstanceId: blankless(args.turnInstanceId),
      availableCapabilities: args.availableCapabilities,
    });
    return plan;
  },
});

export const turnInspectJournal = defineOperation({
  key: 'turnInspectJournal',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    turnKey: z.string().optional().meta({ placeholder: 'key' }).describe("show this turn's journal in full"),
  }),
  run: async (args, env): Promise<JournalInspection> => {
    const goal = await resolveGoal(env, args.goalId);
    return inspectJournal(goal, blankless(args.turnKey));
  },
});

/** What every turn-running operation passes the driver: the resolved goal and how it is executed. */
async function turnExecution(
  args: {
    goalId: string;
    hostAdapterCommand?: string[] | undefined;
    validationCommand?: string[] | undefined;
    validationFailureKind?: RecoveryKind | undefined;
    availableCapabilities?: string[] | undefined;
  },
  env: OperationEnvironment,
) {
  const goal = await resolveGoal(env, args.goalId);
  return {
    goal,
    registryDocument: goal.document,
    clock: env.clock,
    homeDir: goal.homeDir,
    runtimeRootOverride: env.runtimeRootOverride,
    hostAdapterCommand: args.hostAdapterCommand,
    validationCommand: args.validationCommand,
    availableCapabilities: args.availableCapabilities,
    env: env.env,
    signal: env.signal,
    onEvent: env.onEvent,
    executorFactory: env.executorFactory,
    ...(args.validationFailureKind !== undefined ? { validationFailureKind: args.validationFailureKind } : {}),
  };
}

export const turnRunOnce = defineOperation({
  key: 'turnRunOnce',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: z.string().meta({ placeholder: 'id' }).describe('the registered agent to run'),
    execute: z
      .boolean()
      .default(false)
      .describe('run the turn (without it: a preview that invokes and writes nothing)'),
    turnInstanceId: turnInstanceIdArg('the turn instance id (default: a fresh one from the clock)').optional(),
    resumeTurnKey: z
      .string()
      .optional()
      .meta({ placeholder: 'key' })
      .describe('resume this turn from its journal (or replay it when it is finished)'),
    retryFailedTurn: z
      .boolean()
      .default(false)
      .describe('with --resume-turn-key: retry a failed turn from its last safe phase'),
    ...turnExecutionArgs,
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<TurnRunResult> =>
    runOnce({
      ...(await turnExecution(args, env)),
      agentId: args.agentId,
      execute: args.execute,
      turnInstanceId: blankless(args.turnInstanceId),
      resumeTurnKey: blankless(args.resumeTurnKey),
      retryFailedTurn: args.retryFailedTurn,
    }),
});

export const turnLoop = defineOperation({
  key: 'turnLoop',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentIds: z
      .array(z.string())
      .min(1)
      .meta({ flag: '--agent-id', placeholder: 'id' })
      .describe('a registered agent to run (several run side by side when the spawn policy allows)'),
    maxTurns: z.number().int().min(1).optional().describe('a whole number ≥ 1: stop after this many turns'),
    cadenceSeconds: z.number().min(0).optional().describe('a number ≥ 0: pause between turns, in seconds (default 0)'),
    ...turnExecutionArgs,
  }),
  run: async (args, env): Promise<LoopResult> =>
    runLoop({
      ...(await turnExecution(args, env)),
      agentIds: args.agentIds,
      maxTurns: args.maxTurns,
      cadenceSeconds: args.cadenceSeconds,
    }),
});

export type { TurnEvent } from '../turn/events';
export type { JournalInspection } from '../turn/inspect';
export type { LoopResult } from '../turn/loop';
export type { TurnPlan } from '../turn/plan';
export type { NextStep, NextStepKind, TurnRunResult } from '../turn/runOnce';
