import { z } from 'zod';
import { shouldRun as decideShouldRun, type ShouldRunDecision } from '../quota/decision';
import { parseArguments } from './arguments';
import {
  clockOf, goalIdArgument, homeDirArgument, homeDirOf, nowArgument, registryPathArgument, resolvedPath, runtimeRootOverrideArgument,
} from './common';

const ShouldRunArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  agentId: z.string().trim().min(1).nullish().transform((value) => value ?? undefined)
    .describe('a registered agent id of the goal, or null/undefined to decide for the goal as a whole'),
  availableCapabilities: z.array(z.string().trim().min(1)).nullish().transform((value) => value ?? undefined)
    .describe('a list of capability names the agent has, or null/undefined for none'),
  turnInstanceId: z.string().trim().min(1).nullish().transform((value) => value ?? undefined)
    .describe('the id of the turn about to run (with agentId, the decision names its settlement identity), or null/undefined'),
  runtimeRootOverride: runtimeRootOverrideArgument,
  now: nowArgument,
  homeDir: homeDirArgument,
});
export type ShouldRunOptions = z.input<typeof ShouldRunArguments>;

/**
 * The quota guard (`loopx quota should-run`): whether a turn of the goal, by `agentId` when given,
 * may run now, and on what (`selected_todo`, `route`, `interaction_contract`). It only reads. A goal
 * the registry does not list is `{ ok: false, status: "goal_not_found" }`, not an error; an
 * unregistered agent is LoopxError `quota_agent_not_registered`.
 */
export async function shouldRun(options: ShouldRunOptions): Promise<ShouldRunDecision> {
  const args = parseArguments(ShouldRunArguments, options, { functionName: 'shouldRun', root: 'options' });
  return decideShouldRun({
    registryPath: resolvedPath(args.registryPath),
    goalId: args.goalId,
    agentId: args.agentId,
    clock: clockOf(args.now),
    runtimeRootOverride: args.runtimeRootOverride,
    homeDir: homeDirOf(args.homeDir),
    ...(args.availableCapabilities === undefined ? {} : { availableCapabilities: args.availableCapabilities }),
    turnInstanceId: args.turnInstanceId,
  });
}
