import { z } from 'zod';
import { shouldRun as decideShouldRun } from '../scheduling/shouldRun';
import { loadQuotaGoal } from '../quota/goal';
import { TurnUsageSchema } from '../quota/ledger';
import { spendSlot, type SpendSlotResult } from '../quota/spend';
import { parseArguments } from '../ops/arguments';
import {
  clockOf,
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  nowArgument,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from '../ops/libraryArguments';

const SettleTurnArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  agentId: z.string().trim().min(1).describe('the registered agent whose turn is settled'),
  turnInstanceId: z
    .string()
    .trim()
    .min(1)
    .describe('the id of the turn being settled (with agentId and todoId it forms the settlement identity)'),
  todoId: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((value) => value ?? null)
    .describe('the todo the turn worked on, or null/undefined'),
  slots: z.number().int().min(1).default(1).describe('a whole number of slots, at least 1 (default 1)'),
  usage: TurnUsageSchema.optional().describe('{ tokens?, cost_usd?, minutes?, estimated } as the agent reported it'),
  execute: z.boolean().default(false).describe('true to write the spend; false (default) previews'),
  runtimeRootOverride: runtimeRootOverrideArgument,
  now: nowArgument,
  homeDir: homeDirArgument,
});
export type SettleTurnOptions = z.input<typeof SettleTurnArguments>;

/**
 * Settles a finished turn (`loopx quota spend-slot`): checks that the spend is allowed and, with
 * `execute: true`, writes exactly one spend record for the settlement identity
 * `goal:agent:todo:turn`. Settling the same turn again is an idempotent replay (`idempotent_replay: true`,
 * nothing written). The turn driver (`runTurnOnce`) settles its own turns; this is for hosts that run
 * turns themselves.
 */
export async function settleTurn(options: SettleTurnOptions): Promise<SpendSlotResult> {
  const args = parseArguments(SettleTurnArguments, options, { functionName: 'settleTurn', root: 'options' });
  const goalOptions = {
    registryPath: resolvedPath(args.registryPath),
    goalId: args.goalId,
    runtimeRootOverride: args.runtimeRootOverride,
    homeDir: homeDirOf(args.homeDir),
  };
  const clock = clockOf(args.now);
  const decision = await decideShouldRun({
    ...goalOptions,
    agentId: args.agentId,
    clock,
    turnInstanceId: args.turnInstanceId,
  });
  return spendSlot(await loadQuotaGoal(goalOptions), clock, {
    decision,
    agentId: args.agentId,
    todoId: args.todoId,
    turnInstanceId: args.turnInstanceId,
    slots: args.slots,
    source: 'heartbeat',
    execute: args.execute,
    ...(args.usage === undefined ? {} : { usage: args.usage }),
  });
}
