import { z } from 'zod';
import type { StateDocument } from '../state/document';
import type { RunIndexEntry } from '../runtime/runIndex';
import { QuotaStatusSchema } from '../quota/state';
import { RouteSchema } from './route';
import { SelectedTodoSchema, SelectionSummarySchema } from '../todo/runnable';
import { ReplanObligationSchema } from './replanObligation';

/**
 * The decision contract of `quota should-run` (docs/quota.md, docs/turns.md): the answer's schema, the
 * refusal's schema, and what a decision takes besides the goal's snapshot, the agent and the time.
 */

export const DecisionStateSchema = z.union([
  QuotaStatusSchema.shape.state,
  z.literal('terminal_no_followup'),
  z.literal('unknown'),
]);

/** LoopX's decision words: `run`, `skip` and the named non-normal paths. */
export const DECISION_WORDS = [
  'run',
  'skip',
  'observe',
  'safe_bypass_user_gate_fallback',
  'automation_prompt_upgrade',
  'autonomous_replan_required',
  'self_repair',
] as const;
export const DecisionWordSchema = z.enum(DECISION_WORDS);
export type DecisionWord = z.infer<typeof DecisionWordSchema>;

const PermissionsSchema = z.object({
  normal_delivery_allowed: z.boolean(),
  recovery_allowed: z.boolean(),
  self_repair_allowed: z.boolean(),
  capability_repair_allowed: z.boolean(),
  workspace_repair_allowed: z.boolean(),
});

export const ShouldRunDecisionSchema = z.object({
  ok: z.boolean(),
  /** The goal's attention status as LoopX's status projection names it (goalAttention.ts), or `goal_not_found`. */
  status: z.string(),
  /** Whether the goal's own records are sound (no agent-lane run with missing artifacts, no todo contract error). */
  status_health_ok: z.boolean(),
  /** The todo metadata contract errors of the goal's state file (todo/contract.ts); any makes `ok` false. */
  todo_contract_errors: z
    .array(
      z.object({
        code: z.string(),
        severity: z.literal('error'),
        todo_id: z.string(),
        line: z.number().int(),
        message: z.string(),
      }),
    )
    .optional(),
  goal_id: z.string(),
  agent_id: z.string().nullable(),
  generated_at: z.string(),
  should_run: z.boolean(),
  decision: DecisionWordSchema,
  state: DecisionStateSchema,
  effective_action: z.string(),
  reason: z.string(),
  pause_cause: z.string().nullable(),
  quota: QuotaStatusSchema.nullable(),
  selected_todo: SelectedTodoSchema.nullable(),
  /** LoopX's todo summary: the first executable agent todo (for this agent when one is named). */
  agent_todo_summary: z.object({ first_executable_items: z.array(SelectedTodoSchema) }),
  next_action_projection_warning: z
    .object({ kind: z.string(), severity: z.string(), requires_state_writeback: z.boolean() })
    .nullable(),
  safe_bypass_allowed: z.boolean(),
  safe_bypass_kind: z.string().nullable(),
  permissions: PermissionsSchema,
  execution_obligation: z.object({ must_attempt_work: z.boolean(), delivery_allowed: z.boolean() }),
  interaction_contract: z.object({
    mode: z.enum(['deliver', 'quiet_wait', 'user_action', 'paused', 'blocked']),
    user_channel: z.object({
      notify: z.enum(['NOTIFY', 'DONT_NOTIFY']),
      action_required: z.boolean(),
      actions: z.array(z.string()),
    }),
    agent_channel: z.object({
      must_attempt: z.boolean(),
      delivery_allowed: z.boolean(),
      quiet_noop_allowed: z.boolean(),
      primary_action: z.string(),
    }),
    cli_channel: z.object({
      next_cli_actions: z.array(z.string()),
      settlement_plan: z.array(z.string()),
      spend_after_validation: z.boolean(),
    }),
  }),
  scheduler_hint: z.object({ action: z.string(), cadence_class: z.string(), next_eligible_at: z.string().nullable() }),
  heartbeat_recommendation: z.object({ recommended_mode: z.string() }),
  route: RouteSchema,
  /** The identity the turn's settlement will carry (when agent, turn id and a binding are known). */
  settlement_identity: z.looseObject({ effect_id: z.string() }).nullable(),
  /** Present once todos were read (never in the paused contract). */
  selection: SelectionSummarySchema.optional(),
  capability_gate: z
    .object({ todo_id: z.string(), required: z.array(z.string()), missing: z.array(z.string()) })
    .optional(),
  /** The replan the lane owes (two stalled turns), when the decision is `autonomous_replan_required`. */
  replan_obligation: ReplanObligationSchema.optional(),
  /**
   * Present when the original Python LoopX also works on the goal (its lock files are in the goal's runtime
   * folder): how far the hard limit holds with it in the loop (docs/compatibility.md#mixed-teams).
   */
  original_loopx: z.object({ active: z.literal(true), footprint: z.string(), hard_limit: z.string() }).optional(),
});
export type ShouldRunDecision = z.infer<typeof ShouldRunDecisionSchema>;

/** What a decision takes besides the goal's snapshot, the agent and the time. */
export interface DecisionOptions {
  /** Capabilities the agent declared (`--available-capability`). */
  availableCapabilities?: readonly string[];
  /** `--turn-instance-id`: with an agent, the decision names the settlement identity of the turn. */
  turnInstanceId?: string | undefined;
  /**
   * Projects `next_action_projection_warning` from what the decision read (status's rule,
   * `status/projection/shouldRunWarning.ts`, handed in because scheduling cannot import status).
   * Without it the field is null.
   */
  nextActionWarning?: NextActionWarningProjector | undefined;
  /**
   * Whether the goal's status item carries a state projection gap (status's rule,
   * `status/projection/shouldRunWarning.ts`, handed in as `nextActionWarning` is). Without it there is none.
   */
  stateProjectionGap?: ((input: { goalId: string; doc: StateDocument }) => boolean) | undefined;
  /** The effect id of the asking turn: when it already holds a live reservation (or spent), it was admitted. */
  admittedEffectId?: string | undefined;
  /** A reservation's refusal met after an earlier decision: the answer is throttled with this reason. */
  refusedBy?: string | undefined;
}

/** See `DecisionOptions.nextActionWarning`. */
export type NextActionWarningProjector = (input: {
  goalId: string;
  doc: StateDocument;
  rowsNewestFirst: readonly RunIndexEntry[];
  agentId: string | null;
  /** The asking agent's first executable todo (its lane's next action), or null. */
  agentLaneTodo?: { text: string; preservesGoalNextAction: boolean } | null;
}) => { kind: string; severity: string; requires_state_writeback: boolean } | null;

/**
 * The answer when no decision can be made (LoopX's refusal payload): an unknown goal
 * (`goal_not_found`, state unknown) or an agent that may not ask (`quota_identity_precondition_failed`,
 * state blocked_health, with the identity error's code and details). No action, quota or bypass is
 * named, so nothing can be mistaken for permission; `ok` is false and the CLI exits 1.
 */
export const ShouldRunRefusalSchema = z.object({
  ok: z.literal(false),
  status: z.enum(['goal_not_found', 'quota_identity_precondition_failed']),
  goal_id: z.string(),
  agent_id: z.string().nullable(),
  should_run: z.literal(false),
  decision: z.literal('skip'),
  state: z.enum(['unknown', 'blocked_health']),
  reason: z.string(),
  recommended_action: z.string(),
  error_code: z.string().optional(),
  error_details: z.record(z.string(), z.unknown()).optional(),
});
export type ShouldRunRefusal = z.infer<typeof ShouldRunRefusalSchema>;
