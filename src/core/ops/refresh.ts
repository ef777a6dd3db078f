import { z } from 'zod';
import { ProgressScopeSchema, type RefreshStatePayload } from '../refresh/schemas';
import { refreshState as refreshGoalState } from '../refresh/refreshState';
import { isLoopxError, LoopxError } from '../errors';
import { goalIdArg, turnInstanceIdArg } from './common';
import { BATCH_SCALE_ALIASES, DELIVERY_BATCH_SCALES, DELIVERY_OUTCOMES } from '../protocol/contract';
import { resolveGoal } from './goalHandle';
import { defineOperation } from './operation';
import { recordStepEvent, resolveChainBinding, type TurnStep } from '../evidence/heartbeatChain';
import type { HeartbeatReceipt } from '../evidence/receipts';
import type { RolloutEvent } from '../evidence/rolloutLog';
import { readQuotaView } from '../quota/quotaView';
import type { RunIndexRow } from '../runtime/runIndex';
import type { AppendRunOptions } from '../runtime/runIndexWrite';
import { QUOTA_SLOT_SPENT, QUOTA_SLOT_VOIDED } from '../quota/ledger';
import { normalizeAgentId } from '../registry/agentIds';
import { crashCheckpoint } from '../turn/crashHook';
import { recordTurnHead, snapshotProjectRoot } from '../snapshots/gitSnapshot';
import { quotaGoalOf } from './goalHandle';

/**
 * `refresh-state`: records a snapshot run of a goal's state and, with `nextAction`, rewrites the
 * durable route first (goal scope only). `dryRun` writes nothing and shows what would change.
 */

const optionalText = (placeholder: string, what: string) => z.string().optional().meta({ placeholder }).describe(what);

/** The original's older spellings of single_surface, accepted and recorded as single_surface. */
const BATCH_SCALE_INPUT_ALIASES = Object.keys(BATCH_SCALE_ALIASES) as [string, ...string[]];

function orNull(value: string | undefined): string | null {
  return value === undefined ? null : value;
}

export const refreshState = defineOperation({
  key: 'refreshState',
  args: z.strictObject({
    goalId: goalIdArg('the goal to refresh'),
    // The original's default (DEFAULT_REFRESH_CLASSIFICATION): the command it prints, and global-risks recommends, has no flag.
    classification: z
      .string()
      .default('state_refreshed')
      .meta({ placeholder: 'token' })
      .describe(
        'what happened, as a public-safe token (e.g. state_refreshed, validated_progress); default state_refreshed',
      ),
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
    turnInstanceId: turnInstanceIdArg(
      'the turn this run belongs to (with --agent-id: checked against its heartbeat receipt; a retry writes no second row)',
    ).optional(),
    replanObligationId: optionalText('id', 'the autonomous replan obligation this run discharges (not with --todo-id)'),
    // The original's vocabularies (its argparse choices): an unknown word is a usage error and nothing is written.
    deliveryBatchScale: z
      .enum([...DELIVERY_BATCH_SCALES, ...BATCH_SCALE_INPUT_ALIASES])
      .transform((scale) => BATCH_SCALE_ALIASES[scale] ?? scale)
      .optional()
      .meta({ placeholder: 'scale' })
      .describe(
        `one of ${[...DELIVERY_BATCH_SCALES, ...BATCH_SCALE_INPUT_ALIASES].join(', ')} (the last two are single_surface): the size of the delivered batch`,
      ),
    deliveryOutcome: z
      .enum(DELIVERY_OUTCOMES)
      .optional()
      .meta({ placeholder: 'outcome' })
      .describe(`one of ${DELIVERY_OUTCOMES.join(', ')}: what the delivery achieved`),
    dryRun: z.boolean().default(false).describe('write nothing; show what would change'),
  }),
  // As in the original, a refused refresh is a failed operation (exit 1); only a malformed goal id is a usage error.
  run: async (args, env): Promise<RefreshStateOutput> => {
    const goal = await resolveGoal(env, args.goalId).catch((error: unknown) => {
      throw isLoopxError(error, 'goal_not_found')
        ? new LoopxError(
            'goal_not_found',
            `state file is required when the goal is not resolvable from registry: ${error.message}`,
            error.details,
          )
        : error;
    });
    const agentId = args.agentId === undefined ? null : (normalizeAgentId(args.agentId) ?? args.agentId);
    const turn = orNull(args.turnInstanceId);
    let todoId = orNull(args.todoId);
    let replanObligationId = orNull(args.replanObligationId);
    const quotaGoal = quotaGoalOf(goal);
    const step: TurnStep | null =
      agentId !== null && turn !== null && !args.dryRun
        ? { goalId: goal.goalId, goalDir: quotaGoal.runtimeDir, agentId, turnInstanceId: turn }
        : null;
    const chain =
      step === null ? null : await resolveChainBinding(step, { todoId, replanObligationId }, 'refresh-state');
    if (chain !== null) ({ todoId, replanObligationId } = chain);
    // A heartbeat turn's delivery writeback: its head snapshot, paired with the base its receipt took.
    const snapshot =
      step === null || chain === null
        ? null
        : await recordTurnHead(
            snapshotProjectRoot(goal.rawEntry, goal.homeDir, goal.projectRoot),
            goal.goalId,
            step.turnInstanceId,
            goal.statePath === null ? [] : [goal.statePath],
          );
    const request = (dryRun: boolean, unlessIndexed?: AppendRunOptions['unlessIndexed']) =>
      refreshGoalState(
        {
          registryPath: goal.registryPath,
          registry: goal.document,
          goalId: goal.goalId,
          classification: args.classification,
          nextAction: orNull(args.nextAction),
          recommendedAction: orNull(args.recommendedAction),
          agentId: orNull(args.agentId),
          progressScope: args.progressScope ?? null,
          todoId,
          replanObligationId,
          turnInstanceId: turn,
          deliveryBatchScale: orNull(args.deliveryBatchScale),
          deliveryOutcome: orNull(args.deliveryOutcome),
          // As the original: the checkout the command runs in produced the delivery.
          deliveryWorkspacePath: env.cwd,
          homeDir: goal.homeDir,
          runtimeRootOverride: env.runtimeRootOverride ?? null,
        },
        {
          clock: env.clock,
          dryRun,
          lock: { clock: env.clock, env: env.env },
          ...(unlessIndexed === undefined ? {} : { unlessIndexed }),
          ...(dryRun ? {} : { snapshot }),
        },
      );
    if (step === null || chain === null) return { ...(await request(args.dryRun)), idempotent_replay: false };
    // A retry of the same turn step writes no second row: the row of (agent, turn, binding) is already there.
    const isThisStep = (row: RunIndexRow): boolean =>
      row.agent_id === step.agentId &&
      row['turn_instance_id'] === step.turnInstanceId &&
      (row.todo_id ?? null) === chain.todoId &&
      ((row['replan_obligation_id'] as string | undefined) ?? null) === chain.replanObligationId &&
      row.classification !== QUOTA_SLOT_SPENT &&
      row.classification !== QUOTA_SLOT_VOIDED;
    const view = await readQuotaView(quotaGoal, env.clock, { kind: 'read' });
    let done = view.rows.some(isThisStep);
    let payload: RefreshStatePayload;
    if (done) payload = await request(true);
    else {
      // Retries running at once all pass the check above: it is made again under the index lock, where
      // only one appends (issue 34). A retry that lost the race on the state file plans again from it.
      payload = await withStateRetry(() =>
        request(false, { needle: JSON.stringify(step.turnInstanceId), matches: isThisStep }),
      );
      done = !payload.appended;
    }
    if (!done) crashCheckpoint(env.env, 'refresh_state:effect');
    const recorded = await recordStepEvent(step, chain, {
      kind: 'refresh_state',
      clock: env.clock,
      status: 'recorded',
      classification: payload.classification,
      deliveryOutcome: payload.delivery_outcome ?? null,
      summary: `writeback of turn ${step.turnInstanceId}: ${payload.classification}`,
      lock: { clock: env.clock, env: env.env, operation: 'refresh-state' },
    });
    return {
      ...payload,
      ...(done ? { dry_run: false, appended: false } : {}),
      idempotent_replay: done,
      heartbeat_receipt: chain.receipt,
      rollout_event: recorded.event,
    };
  },
});

/** How often a turn step's writeback plans again after another writer changed the state file. */
const STATE_RETRIES = 8;

async function withStateRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!isLoopxError(error, 'state_changed_concurrently') || attempt >= STATE_RETRIES) throw error;
    }
  }
}

export type RefreshStateOutput = RefreshStatePayload & {
  /** True when a retry of the same turn step found its row already written (nothing new was written). */
  idempotent_replay: boolean;
  /** With --agent-id and --turn-instance-id: the heartbeat receipt of the turn (null when there is none). */
  heartbeat_receipt?: HeartbeatReceipt | null;
  /** With --agent-id and --turn-instance-id: the `refresh_state` rollout event of this step. */
  rollout_event?: RolloutEvent;
};

export type { RefreshStatePayload } from '../refresh/schemas';
