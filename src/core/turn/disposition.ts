import { z } from 'zod';
import { LoopxError } from '../errors';
import type { Route } from '../scheduling/route';
import { FAILURE_RESULT_KINDS } from '../protocol/contract';

/**
 * The loop controller (docs/turns.md): a pure map from the last turn's receipt, a fresh plan and the
 * loop's turn budget to one of six dispositions. It never spends, writes or launches.
 *
 * Deliberate fix (spec bug 6): the original's plan route let `should_run` beat a visible user
 * action while its loop controller let the user action beat delivery. Here both agree: a user
 * action that does not block this agent's work (safe bypass, route `ready_for_host`) is surfaced
 * but does not stop the loop; a fresh `user_action_required` route does.
 */

export const LOOP_DISPOSITIONS = ['run_now', 'wait', 'user_action_required', 'repair', 'replan', 'terminal'] as const;
export type LoopDisposition = (typeof LOOP_DISPOSITIONS)[number];

export const ReplanRequirementsSchema = z.object({
  requires_bounded_delta: z.literal(true),
  delta_kinds: z.tuple([z.literal('todo_delta'), z.literal('vision_delta')]),
  stale_todo_rerun_allowed: z.literal(false),
  fresh_envelope_required: z.literal(true),
});

export const DispositionResultSchema = z.object({
  disposition: z.enum(LOOP_DISPOSITIONS),
  reason: z.string(),
  spends: z.literal(false),
  launches: z.literal(false),
  replan: ReplanRequirementsSchema.nullable(),
});
export type DispositionResult = z.infer<typeof DispositionResultSchema>;

/** The last turn's receipt, as far as the controller needs it. */
export interface ReceiptInput {
  goal_id: string;
  agent_id: string;
  todo_id: string | null;
  turn_key: string;
  status: string;
  result_kind: string;
}

/** The fresh plan after the turn. */
export interface FreshPlanInput {
  goal_id: string;
  agent_id: string;
  route: Route;
  /** The decision state; `terminal_no_followup` ends the loop. */
  state: string;
  /** The turn key the fresh plan expects as its predecessor, when the caller tracks one. */
  predecessor_turn_key?: string | null;
  /**
   * The fresh plan is a replan turn the driver can run (an owed autonomous replan, bound to its
   * obligation, with an executor): `replan_required` then runs it instead of stopping the loop.
   */
  replan_turn?: boolean;
}

export interface TurnBudget {
  max_turns: number;
  completed: number;
}

const REPLAN: z.infer<typeof ReplanRequirementsSchema> = {
  requires_bounded_delta: true,
  delta_kinds: ['todo_delta', 'vision_delta'],
  stale_todo_rerun_allowed: false,
  fresh_envelope_required: true,
};

const FAILURE_KINDS: ReadonlySet<string> = new Set(FAILURE_RESULT_KINDS);

function result(disposition: LoopDisposition, reason: string): DispositionResult {
  return {
    disposition,
    reason,
    spends: false,
    launches: false,
    replan: disposition === 'replan' ? { ...REPLAN } : null,
  };
}

export function routeDisposition(route: Route): LoopDisposition {
  switch (route) {
    case 'ready_for_host':
      return 'run_now';
    case 'replan_required':
      return 'replan';
    case 'repair_required':
      return 'repair';
    case 'contract_error':
      return 'repair';
    case 'user_action_required':
      return 'user_action_required';
    case 'wait':
    case 'blocked':
      return 'wait';
  }
}

export function loopDisposition(
  receipt: ReceiptInput | null,
  fresh: FreshPlanInput,
  budget: TurnBudget | null = null,
): DispositionResult {
  if (receipt !== null) {
    const stale =
      receipt.goal_id !== fresh.goal_id ||
      receipt.agent_id !== fresh.agent_id ||
      (fresh.predecessor_turn_key !== undefined &&
        fresh.predecessor_turn_key !== null &&
        fresh.predecessor_turn_key !== receipt.turn_key);
    if (stale) {
      throw new LoopxError(
        'turn_disposition_stale_input',
        `the receipt (goal ${receipt.goal_id}, agent ${receipt.agent_id}, turn ${receipt.turn_key}) does not belong to the fresh plan (goal ${fresh.goal_id}, agent ${fresh.agent_id}); plan again from current files`,
        {
          receipt_turn_key: receipt.turn_key,
          goal_id: fresh.goal_id,
          agent_id: fresh.agent_id,
        },
      );
    }
  }
  if (
    budget !== null &&
    (!Number.isInteger(budget.max_turns) ||
      budget.max_turns <= 0 ||
      budget.completed < 0 ||
      budget.completed > budget.max_turns)
  ) {
    throw new LoopxError(
      'turn_budget_invalid',
      `a bounded turn budget needs max_turns > 0 and 0 ≤ completed ≤ max_turns, got ${budget.completed}/${budget.max_turns}`,
      { ...budget },
    );
  }
  if (fresh.state === 'terminal_no_followup')
    return result('terminal', 'every agent todo is done and none has a follow-up');
  if (fresh.route === 'user_action_required')
    return result('user_action_required', 'a person must act before this agent can continue');
  if (receipt !== null) {
    switch (receipt.result_kind) {
      case 'repair_required':
        return result('repair', 'the last turn asked for a repair');
      case 'replan_required':
        return result('replan', 'the last turn asked for a replan');
      case 'wait':
        return result('wait', 'the last turn found nothing to do');
      case 'user_action_required':
        return result('user_action_required', 'the last turn asked a person for something');
      default:
        break;
    }
    if (FAILURE_KINDS.has(receipt.result_kind))
      return result('repair', `the last turn failed (${receipt.result_kind})`);
    if (
      (receipt.result_kind === 'validated_progress' || receipt.result_kind === 'validated_completion') &&
      budget !== null &&
      budget.completed >= budget.max_turns
    ) {
      return result('replan', `the bounded turn budget is used up (${budget.completed}/${budget.max_turns})`);
    }
  }
  if (fresh.route === 'replan_required' && fresh.replan_turn === true)
    return result('run_now', 'the lane owes a replan: the next turn is the replan turn');
  const disposition = routeDisposition(fresh.route);
  return result(disposition, `fresh plan route ${fresh.route}`);
}
