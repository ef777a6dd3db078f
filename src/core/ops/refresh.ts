import { z } from 'zod';
import { ProgressScopeSchema, type RefreshStatePayload } from '../refresh/schemas';
import { refreshState as refreshGoalState } from '../refresh/refreshState';
import { isLoopxError, LoopxError } from '../errors';
import { goalIdArg } from './common';
import { resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `refresh-state`: records a snapshot run of a goal's state and, with `nextAction`, rewrites the
 * durable route first (goal scope only). `dryRun` writes nothing and shows what would change.
 */

const optionalText = (placeholder: string, what: string) => z.string().optional().meta({ placeholder }).describe(what);

function orNull(value: string | undefined): string | null {
  return value === undefined ? null : value;
}

export const refreshState = defineOperation({
  key: 'refreshState',
  args: z.strictObject({
    goalId: goalIdArg('the goal to refresh'),
    classification: z
      .string()
      .meta({ placeholder: 'token' })
      .describe('what happened, as a public-safe token (e.g. state_refreshed, validated_progress)'),
    nextAction: optionalText('text', 'write this as the durable Next Action (goal scope only)'),
    recommendedAction: optionalText(
      'text',
      'record this recommended action instead of deriving it from the state file',
    ),
    agentId: optionalText(
      'agent',
      'the registered agent this refresh is for (required when the goal registers several)',
    ),
    progressScope: ProgressScopeSchema.optional()
      .meta({ placeholder: 'scope' })
      .describe('goal, or agent_lane (default: agent_lane with --agent-id, else goal)'),
    todoId: optionalText('id', 'the todo this run delivered on'),
    turnInstanceId: optionalText('id', 'the turn this run belongs to'),
    deliveryBatchScale: optionalText('scale', 'size of the delivered batch, e.g. single_surface'),
    deliveryOutcome: optionalText('outcome', 'what the delivery achieved, e.g. outcome_progress'),
    dryRun: z.boolean().default(false).describe('write nothing; show what would change'),
  }),
  // As in the original, a refused refresh is a failed operation (exit 1); only a malformed goal id is a usage error.
  run: async (args, env): Promise<RefreshStatePayload> => {
    const goal = await resolveGoal(env, args.goalId).catch((error: unknown) => {
      throw isLoopxError(error, 'goal_not_found')
        ? new LoopxError(
            'goal_not_found',
            `state file is required when the goal is not resolvable from registry: ${error.message}`,
            error.details,
          )
        : error;
    });
    return refreshGoalState(
      {
        registryPath: goal.registryPath,
        registry: goal.document,
        goalId: goal.goalId,
        classification: args.classification,
        nextAction: orNull(args.nextAction),
        recommendedAction: orNull(args.recommendedAction),
        agentId: orNull(args.agentId),
        progressScope: args.progressScope ?? null,
        todoId: orNull(args.todoId),
        turnInstanceId: orNull(args.turnInstanceId),
        deliveryBatchScale: orNull(args.deliveryBatchScale),
        deliveryOutcome: orNull(args.deliveryOutcome),
        homeDir: goal.homeDir,
        runtimeRootOverride: env.runtimeRootOverride ?? null,
      },
      { clock: env.clock, dryRun: args.dryRun, lock: { clock: env.clock, env: env.env } },
    );
  },
});

export type { RefreshStatePayload } from '../refresh/schemas';
