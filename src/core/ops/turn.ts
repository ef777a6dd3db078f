import { z } from 'zod';
import type { LoopxErrorCode } from '../errorCodes';
import { LoopxError } from '../errors';
import { loadTurnGoal, planGoalTurn } from '../turn/context';
import { inspectJournal, type JournalInspection } from '../turn/inspect';
import { RECOVERY_KINDS } from '../turn/journal';
import type { TurnPlan } from '../turn/plan';
import { goalIdArg, usageOn } from './common';
import { quotaGoalOf, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/**
 * The LoopX-driven turn (docs/turns.md): `turn plan` shows what one turn would do and
 * `turn inspect-journal` lists (or shows) the goal's turn journals. Both only read.
 */

/** Core refusals that mean "the arguments are wrong": usage errors (exit 2). */
export const TURN_ARGUMENT_ERROR_CODES: ReadonlySet<LoopxErrorCode> = new Set([
  'invalid_goal_id',
  'quota_turn_instance_id_invalid',
  'quota_agent_id_invalid',
  'agent_id_invalid',
]);

/** A JSON argv option (`--validation-command-json '["node","x.js"]'`); blank counts as absent. */
export function argvFromJson(raw: string | undefined, flag: string): string[] | undefined {
  const text = raw?.trim();
  if (text === undefined || text === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new LoopxError(
      'usage',
      `${flag} must be a JSON array of strings such as '["node","scripts/check.js"]', got ${JSON.stringify(text)}`,
    );
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    throw new LoopxError(
      'usage',
      `${flag} must be a non-empty JSON array of non-empty strings (an argv; LoopX never runs a shell)`,
    );
  }
  return value as string[];
}

function blankless(value: string | undefined): string | undefined {
  const text = value?.trim();
  return text === undefined || text === '' ? undefined : text;
}

/** The options that say how a turn is executed (shared by plan, run-once and loop). */
export const turnExecutionArgs = {
  hostAdapterCommandJson: z
    .string()
    .optional()
    .meta({ placeholder: 'argv' })
    .describe('run this command (JSON argv) as the agent instead of the registry executor'),
  validationCommandJson: z
    .string()
    .optional()
    .meta({ placeholder: 'argv' })
    .describe("run this validator (JSON argv) instead of the goal's validation_command"),
  validationFailureKind: z
    .enum(RECOVERY_KINDS)
    .optional()
    .meta({ placeholder: 'kind' })
    .describe(`what a failed validation asks for next (${RECOVERY_KINDS.join(', ')}; default repair_required)`),
  availableCapability: z
    .array(z.string())
    .optional()
    .meta({ placeholder: 'name' })
    .describe('a capability the agent has'),
};

export const turnPlan = defineOperation({
  key: 'turnPlan',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: z.string().meta({ placeholder: 'id' }).describe('the registered agent the turn is for'),
    turnInstanceId: z
      .string()
      .optional()
      .meta({ placeholder: 'id' })
      .describe('the turn instance id (default: a fresh one from the clock)'),
    ...turnExecutionArgs,
  }),
  run: (args, env): Promise<TurnPlan> =>
    usageOn(TURN_ARGUMENT_ERROR_CODES, async () => {
      const hostAdapterCommand = argvFromJson(args.hostAdapterCommandJson, '--host-adapter-command-json');
      const validationCommand = argvFromJson(args.validationCommandJson, '--validation-command-json');
      const goal = await resolveGoal(env, args.goalId);
      const turnGoal = await loadTurnGoal({
        registryPath: goal.registryPath,
        goalId: goal.goalId,
        agentId: args.agentId,
        clock: env.clock,
        homeDir: goal.homeDir,
        runtimeRootOverride: env.runtimeRootOverride,
        hostAdapterCommand,
        validationCommand,
        availableCapabilities: args.availableCapability,
        goal: quotaGoalOf(goal),
      });
      const { plan } = await planGoalTurn(turnGoal, {
        clock: env.clock,
        turnInstanceId: blankless(args.turnInstanceId),
        availableCapabilities: args.availableCapability,
      });
      return plan;
    }),
});

export const turnInspectJournal = defineOperation({
  key: 'turnInspectJournal',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    turnKey: z.string().optional().meta({ placeholder: 'key' }).describe("show this turn's journal in full"),
  }),
  run: (args, env): Promise<JournalInspection> =>
    usageOn(TURN_ARGUMENT_ERROR_CODES, async () => {
      const goal = await resolveGoal(env, args.goalId);
      return inspectJournal({
        registryPath: goal.registryPath,
        goalId: goal.goalId,
        turnKey: blankless(args.turnKey),
        homeDir: goal.homeDir,
        runtimeRootOverride: env.runtimeRootOverride,
        goal: quotaGoalOf(goal),
      });
    }),
});
