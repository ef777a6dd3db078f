import { z } from 'zod';

/**
 * The answer of `loopx global-summary|global-gates|global-todos|global-risks` (the original's
 * `global_manager_command_response_v0`): the request as understood, summary counts, row groups,
 * and the boundary that says what the view did not do (write, spend, reveal paths).
 */

export const GLOBAL_RESPONSE_SCHEMA = 'global_manager_command_response_v0' as const;
export const GLOBAL_SOURCE_UNAVAILABLE = 'Global status source unavailable.';

export const GlobalCommandSchema = z.enum(['global-summary', 'global-gates', 'global-todos', 'global-risks']);
export type GlobalCommand = z.infer<typeof GlobalCommandSchema>;

export const DEFAULT_GLOBAL_LIMIT = 8;
export const DEFAULT_TIME_RANGE = '24h';

export const GlobalRequestSchema = z.object({
  agent_id: z.string().nullable(),
  /** Rows listed per group; counts in `summary` are always complete. */
  limit: z.number().int().positive(),
  time_range: z.string(),
  time_range_hours: z.number().positive(),
  generated_at: z.string(),
});
export type GlobalRequest = z.infer<typeof GlobalRequestSchema>;

export const GlobalBoundarySchema = z.object({
  mode: z.literal('read_only'),
  writes: z.literal(false),
  spends_quota: z.literal(false),
  /** Paths are labels (`<project>/…`) and credentials are redacted in every row. */
  scrubbed: z.literal(true),
  source: z.string(),
  registry: z.string(),
  goal_count: z.number().int().nonnegative(),
});
export type GlobalBoundary = z.infer<typeof GlobalBoundarySchema>;

export const GlobalWarningSchema = z.object({
  kind: z.string(),
  goal_id: z.string().nullable(),
  todo_id: z.string().nullable(),
  message: z.string(),
});
export type GlobalWarning = z.infer<typeof GlobalWarningSchema>;

// --- rows ---------------------------------------------------------------------------------

export const SummaryRowSchema = z.object({
  goal_id: z.string(),
  display_name: z.string(),
  status: z.string(),
  activation_state: z.enum(['active', 'stopped']),
  waiting_on: z.string(),
  severity: z.string(),
  recommended_action: z.string(),
  open_agent_todos: z.number().int(),
  open_user_todos: z.number().int(),
  open_gates: z.number().int(),
  runs_in_range: z.number().int(),
  progress_runs_in_range: z.number().int(),
  latest_run_at: z.string().nullable(),
  latest_run_classification: z.string().nullable(),
  quota_state: z.string().nullable(),
  spent_slots: z.number().nullable(),
  allowed_slots: z.number().nullable(),
});
export type SummaryRow = z.infer<typeof SummaryRowSchema>;

export const GateRowSchema = z.object({
  goal_id: z.string(),
  display_name: z.string(),
  todo_id: z.string(),
  title: z.string(),
  priority: z.string().nullable(),
  gate_state: z.enum(['open', 'rejected', 'cancelled']),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
  decision_scope: z.string().nullable(),
  blocked_todo_ids: z.array(z.string()),
  unscoped: z.boolean(),
  line: z.number().int(),
});
export type GateRow = z.infer<typeof GateRowSchema>;

export const TodoRowSchema = z.object({
  goal_id: z.string(),
  display_name: z.string(),
  todo_id: z.string(),
  title: z.string(),
  priority: z.string().nullable(),
  status: z.string(),
  role: z.enum(['user', 'agent']),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
  /** Why a blocked row is held (`gate:<todo_id>`, `status_blocked`, `lane_gate:<agent>`), or why a deferred row may resume. */
  reasons: z.array(z.string()),
  resume_when: z.string().nullable(),
});
export type TodoRow = z.infer<typeof TodoRowSchema>;

export const RiskSeveritySchema = z.enum(['high', 'action', 'info']);
export type RiskSeverity = z.infer<typeof RiskSeveritySchema>;

export const RiskRowSchema = z.object({
  kind: z.string(),
  severity: RiskSeveritySchema,
  goal_id: z.string().nullable(),
  message: z.string(),
  recommended_action: z.string(),
  details: z.record(z.string(), z.unknown()),
});
export type RiskRow = z.infer<typeof RiskRowSchema>;

const responseBase = {
  ok: z.literal(true),
  schema_version: z.literal(GLOBAL_RESPONSE_SCHEMA),
  request: GlobalRequestSchema,
  truncated: z.boolean(),
  warnings: z.array(GlobalWarningSchema),
  boundary: GlobalBoundarySchema,
};

export const GlobalSummaryResponseSchema = z.object({
  ...responseBase,
  command: z.literal('global-summary'),
  summary: z.object({
    goal_count: z.number().int(),
    active_goal_count: z.number().int(),
    stopped_goal_count: z.number().int(),
    waiting_on_user: z.number().int(),
    waiting_on_agents: z.number().int(),
    open_agent_todos: z.number().int(),
    open_user_todos: z.number().int(),
    open_gates: z.number().int(),
    runs_in_range: z.number().int(),
    progress_runs_in_range: z.number().int(),
    contract_errors: z.number().int(),
    contract_warnings: z.number().int(),
  }),
  groups: z.object({ goals: z.array(SummaryRowSchema) }),
});
export type GlobalSummaryResponse = z.infer<typeof GlobalSummaryResponseSchema>;

export const GlobalGatesResponseSchema = z.object({
  ...responseBase,
  command: z.literal('global-gates'),
  summary: z.object({
    open_gate_count: z.number().int(),
    holding_gate_count: z.number().int(),
    goals_with_open_gates: z.number().int(),
    blocked_todo_count: z.number().int(),
    unscoped_gate_count: z.number().int(),
  }),
  groups: z.object({ open: z.array(GateRowSchema), holding: z.array(GateRowSchema) }),
});
export type GlobalGatesResponse = z.infer<typeof GlobalGatesResponseSchema>;

export const GlobalTodosResponseSchema = z.object({
  ...responseBase,
  command: z.literal('global-todos'),
  summary: z.object({
    runnable_count: z.number().int(),
    deferred_ready_count: z.number().int(),
    blocked_count: z.number().int(),
    review_count: z.number().int(),
    deferred_waiting_count: z.number().int(),
    not_listed_without_delivery_authority: z.number().int(),
    goals_considered: z.number().int(),
  }),
  groups: z.object({
    runnable: z.array(TodoRowSchema),
    deferred_ready: z.array(TodoRowSchema),
    blocked: z.array(TodoRowSchema),
    review: z.array(TodoRowSchema),
  }),
});
export type GlobalTodosResponse = z.infer<typeof GlobalTodosResponseSchema>;

export const GlobalRisksResponseSchema = z.object({
  ...responseBase,
  command: z.literal('global-risks'),
  summary: z.object({
    risk_count: z.number().int(),
    high: z.number().int(),
    action: z.number().int(),
    info: z.number().int(),
    state_errors: z.number().int(),
    failing_validations: z.number().int(),
    stale_runs: z.number().int(),
    projection_warnings: z.number().int(),
    quota: z.number().int(),
    dead_locks: z.number().int(),
  }),
  groups: z.object({
    state_errors: z.array(RiskRowSchema),
    failing_validations: z.array(RiskRowSchema),
    stale_runs: z.array(RiskRowSchema),
    projection_warnings: z.array(RiskRowSchema),
    quota: z.array(RiskRowSchema),
    dead_locks: z.array(RiskRowSchema),
  }),
});
export type GlobalRisksResponse = z.infer<typeof GlobalRisksResponseSchema>;

export type GlobalResponse = GlobalSummaryResponse | GlobalGatesResponse | GlobalTodosResponse | GlobalRisksResponse;

/** The answer when the status read model cannot be built (registry missing or unreadable). */
export const GlobalUnavailableResponseSchema = z.object({
  ok: z.literal(false),
  schema_version: z.literal(GLOBAL_RESPONSE_SCHEMA),
  command: GlobalCommandSchema,
  request: GlobalRequestSchema,
  error: z.literal(GLOBAL_SOURCE_UNAVAILABLE),
  /** Why, with paths labelled. */
  reason: z.string(),
  boundary: GlobalBoundarySchema,
});
export type GlobalUnavailableResponse = z.infer<typeof GlobalUnavailableResponseSchema>;
