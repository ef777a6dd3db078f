import { z } from 'zod';
import { createAgentExecutor, type ExecutorConfig } from '../executors/config';
import { loadQuotaGoal } from '../quota/goal';
import { loadTurnGoal, planGoalTurn } from '../turn/context';
import type { TurnEventSink } from '../turn/events';
import { inspectJournal, type JournalInspection } from '../turn/inspect';
import { RECOVERY_KINDS } from '../turn/journal';
import { runLoop, type LoopResult } from '../turn/loop';
import type { TurnPlan } from '../turn/plan';
import { runOnce, type TurnRunResult } from '../turn/runOnce';
import { parseArguments } from './arguments';
import {
  clockOf,
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  nowArgument,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from './common';

/**
 * LoopX-driven turns as a library: plan one (read-only), run one as a journaled transaction, run
 * a loop of them, inspect the journals. Results have the shapes `loopx turn … --format json` prints.
 */

const absent = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

const argv = (what: string) =>
  absent(z.array(z.string().min(1)).min(1)).describe(
    `${what} as an argv array such as ["node", "check.js"], or null/undefined`,
  );

const goalFields = {
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
  now: nowArgument,
};

const executionFields = {
  hostAdapterCommand: argv('a command run as the agent instead of its registry executor'),
  validationCommand: argv("a validator run instead of the goal's validation_command"),
  validationFailureKind: absent(z.enum(RECOVERY_KINDS)).describe(
    `${RECOVERY_KINDS.join(' or ')} (what a failed validation asks for), or null/undefined`,
  ),
  availableCapabilities: absent(z.array(z.string().trim().min(1))).describe(
    'capability names the agent has, or null/undefined',
  ),
  env: absent(z.record(z.string(), z.string().optional())).describe(
    'the environment agents and validators pick allowlisted variables from, or null/undefined for process.env',
  ),
  signal: absent(z.instanceof(AbortSignal)).describe('an AbortSignal that cancels between phases, or null/undefined'),
  onEvent: absent(z.custom<TurnEventSink>((value) => typeof value === 'function')).describe(
    'a function receiving typed turn events, or null/undefined',
  ),
  demoAgentArgv: argv('how to start the built-in demo agent (e.g. [process.execPath, "<out>/demoAgent.js"])'),
};

const agentIdArgument = z.string().trim().min(1).describe('a registered agent id of the goal');

const PlanTurnArguments = z.strictObject({
  ...goalFields,
  agentId: agentIdArgument,
  turnInstanceId: absent(z.string().trim().min(1)).describe('the turn instance id, or null/undefined for a fresh one'),
  hostAdapterCommand: executionFields.hostAdapterCommand,
  validationCommand: executionFields.validationCommand,
  availableCapabilities: executionFields.availableCapabilities,
});
export type PlanTurnOptions = z.input<typeof PlanTurnArguments>;

/** Plans one turn of `agentId` (`loopx turn plan`): decision, todo, route, host request, settlement identity. Writes nothing. */
export async function planTurn(options: PlanTurnOptions): Promise<TurnPlan> {
  const args = parseArguments(PlanTurnArguments, options, { functionName: 'planTurn', root: 'options' });
  const clock = clockOf(args.now);
  const homeDir = homeDirOf(args.homeDir);
  const turnGoal = loadTurnGoal({
    goal: await loadQuotaGoal({
      registryPath: resolvedPath(args.registryPath),
      goalId: args.goalId,
      runtimeRootOverride: args.runtimeRootOverride,
      homeDir,
    }),
    agentId: args.agentId,
    clock,
    homeDir,
    runtimeRootOverride: args.runtimeRootOverride,
    hostAdapterCommand: args.hostAdapterCommand,
    validationCommand: args.validationCommand,
  });
  return (
    await planGoalTurn(turnGoal, {
      clock,
      turnInstanceId: args.turnInstanceId,
      availableCapabilities: args.availableCapabilities,
    })
  ).plan;
}

const RunTurnArguments = z.strictObject({
  ...goalFields,
  ...executionFields,
  agentId: agentIdArgument,
  execute: absent(z.boolean()).describe('true to run the turn, false or undefined for a preview'),
  turnInstanceId: absent(z.string().trim().min(1)).describe('the turn instance id, or null/undefined for a fresh one'),
  resumeTurnKey: absent(z.string().trim().min(1)).describe(
    'the key (sha256:…) of a journaled turn to resume or replay, or null/undefined',
  ),
  retryFailedTurn: absent(z.boolean()).describe('true to retry a failed turn named by resumeTurnKey'),
});
export type RunTurnOnceOptions = z.input<typeof RunTurnArguments>;

async function execution(args: z.output<typeof RunTurnArguments> | z.output<typeof RunLoopArguments>) {
  const homeDir = homeDirOf(args.homeDir);
  const demoAgentArgv = args.demoAgentArgv;
  return {
    goal: await loadQuotaGoal({
      registryPath: resolvedPath(args.registryPath),
      goalId: args.goalId,
      runtimeRootOverride: args.runtimeRootOverride,
      homeDir,
    }),
    clock: clockOf(args.now),
    homeDir,
    runtimeRootOverride: args.runtimeRootOverride,
    hostAdapterCommand: args.hostAdapterCommand,
    validationCommand: args.validationCommand,
    availableCapabilities: args.availableCapabilities,
    env: args.env ?? process.env,
    signal: args.signal,
    onEvent: args.onEvent,
    // An explicit demo agent for this call wins over the one the host installed.
    ...(demoAgentArgv === undefined
      ? {}
      : { executorFactory: (config: ExecutorConfig) => createAgentExecutor(config, { demoAgentArgv }) }),
    ...(args.validationFailureKind !== undefined ? { validationFailureKind: args.validationFailureKind } : {}),
  };
}

/** Runs (or previews) one journaled turn (`loopx turn run-once`); see docs/turns.md. */
export async function runTurnOnce(options: RunTurnOnceOptions): Promise<TurnRunResult> {
  const args = parseArguments(RunTurnArguments, options, { functionName: 'runTurnOnce', root: 'options' });
  return runOnce({
    ...(await execution(args)),
    agentId: args.agentId,
    execute: args.execute === true,
    turnInstanceId: args.turnInstanceId,
    resumeTurnKey: args.resumeTurnKey,
    retryFailedTurn: args.retryFailedTurn === true,
  });
}

const RunLoopArguments = z.strictObject({
  ...goalFields,
  ...executionFields,
  agentIds: z.array(agentIdArgument).min(1).describe('one or more registered agent ids of the goal'),
  maxTurns: absent(z.number().int().positive()).describe(
    'a whole number ≥ 1 of turns to run at most, or null/undefined for no limit',
  ),
  cadenceSeconds: absent(z.number().nonnegative()).describe(
    'seconds to pause between turns (≥ 0), or null/undefined for 0',
  ),
});
export type RunTurnLoopOptions = z.input<typeof RunLoopArguments>;

/** Runs turns until the goal waits, needs a person, runs out of budget, is done or fails (`loopx turn loop`). */
export async function runTurnLoop(options: RunTurnLoopOptions): Promise<LoopResult> {
  const args = parseArguments(RunLoopArguments, options, { functionName: 'runTurnLoop', root: 'options' });
  return runLoop({
    ...(await execution(args)),
    agentIds: args.agentIds,
    maxTurns: args.maxTurns,
    cadenceSeconds: args.cadenceSeconds,
  });
}

const InspectArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  turnKey: absent(z.string().trim().min(1)).describe(
    'a turn key (sha256:…) to show in full, or null/undefined to list every turn',
  ),
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
});
export type InspectTurnJournalOptions = z.input<typeof InspectArguments>;

/** The goal's turn journals, or one in full (`loopx turn inspect-journal`). */
export async function inspectTurnJournal(options: InspectTurnJournalOptions): Promise<JournalInspection> {
  const args = parseArguments(InspectArguments, options, { functionName: 'inspectTurnJournal', root: 'options' });
  return inspectJournal({
    registryPath: resolvedPath(args.registryPath),
    goalId: args.goalId,
    turnKey: args.turnKey,
    homeDir: homeDirOf(args.homeDir),
    runtimeRootOverride: args.runtimeRootOverride,
  });
}
