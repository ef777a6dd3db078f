import { z } from 'zod';

/**
 * Output contracts of the state projections. Each warning keeps the original LoopX fields
 * byte-compatible (same names, order, fixed texts) and adds ours alongside: `message`, `id`,
 * `goal_id`, `compared`, `actions`. This module imports only zod, so the status server and the
 * webview can validate payloads without pulling in Node APIs.
 */

export const projectionSeveritySchema = z.enum(['warning', 'info']);
export type ProjectionSeverity = z.infer<typeof projectionSeveritySchema>;

export const todoRoleSchema = z.enum(['agent', 'user']);
export type TodoRole = z.infer<typeof todoRoleSchema>;

/** One thing the user can do to resolve a warning; the UI renders each as a button. */
export const resolutionActionSchema = z.discriminatedUnion('kind', [
  /** Write `text` as the durable Next Action (`refresh-state --next-action <text>`). */
  z.object({ kind: z.literal('set_next_action'), text: z.string().min(1) }),
  /** Record a fresh run snapshot from the current state file (`refresh-state`). */
  z.object({ kind: z.literal('refresh_state') }),
  /** Add an open todo for `role` so the Next Action has backing work. */
  z.object({ kind: z.literal('add_todo'), role: todoRoleSchema, text: z.string().min(1) }),
  /** Hide this warning until its `id` changes. */
  z.object({ kind: z.literal('dismiss') }),
]);
export type ResolutionAction = z.infer<typeof resolutionActionSchema>;

/** A value the warning was computed from, named by its field in the original payloads. */
export const comparedValueSchema = z.object({ field: z.string().min(1), value: z.string().nullable() });
export type ComparedValue = z.infer<typeof comparedValueSchema>;

export const WARNING_ID_PATTERN = /^lxw_[0-9a-f]{16}$/u;

const uiFields = {
  message: z.string().min(1),
  id: z.string().regex(WARNING_ID_PATTERN),
  goal_id: z.string().min(1).optional(),
  compared: z.array(comparedValueSchema),
  actions: z.array(resolutionActionSchema).min(1),
};

export const NEXT_ACTION_WARNING_TEXT = {
  warning: {
    reason: 'latest run recommended_action differs from the durable active-state Next Action',
    recommended_action:
      'if the latest run action is the intended durable route, write it back explicitly with refresh-state --next-action; otherwise keep treating the run recommendation and active-state Next Action as separate signals',
  },
  info: {
    reason:
      'current agent lane action differs from the durable goal route while explicitly preserving the active-state Next Action',
    recommended_action:
      'run the agent-lane action without mutating active-state Next Action; only the primary/goal route should write a new durable Next Action',
  },
} as const;

export const nextActionProjectionWarningSchema = z.object({
  schema_version: z.literal('next_action_projection_warning_v0'),
  kind: z.literal('next_action_projection_mismatch'),
  severity: projectionSeveritySchema,
  requires_state_writeback: z.boolean(),
  active_state_next_action: z.string().min(1),
  latest_run_recommended_action: z.string().min(1),
  reason: z.enum([NEXT_ACTION_WARNING_TEXT.warning.reason, NEXT_ACTION_WARNING_TEXT.info.reason]),
  recommended_action: z.enum([
    NEXT_ACTION_WARNING_TEXT.warning.recommended_action,
    NEXT_ACTION_WARNING_TEXT.info.recommended_action,
  ]),
  agent_lane_next_action: z.string().optional(),
  ...uiFields,
});
export type NextActionProjectionWarning = z.infer<typeof nextActionProjectionWarningSchema>;

export const STATE_ACTION_WARNING_TEXT = {
  reason: 'quota selected executable backlog while active Next Action differs',
  recommended_action: 'run primary_action; sync active route only on route change',
} as const;

export const stateActionProjectionWarningSchema = z.object({
  schema_version: z.literal('state_action_projection_warning_v0'),
  kind: z.literal('state_action_projection_mismatch'),
  severity: z.literal('warning'),
  requires_state_writeback: z.literal(true),
  active_state_next_action: z.string().min(1),
  selected_recommended_action: z.string().min(1),
  reason: z.literal(STATE_ACTION_WARNING_TEXT.reason),
  recommended_action: z.literal(STATE_ACTION_WARNING_TEXT.recommended_action),
  ...uiFields,
});
export type StateActionProjectionWarning = z.infer<typeof stateActionProjectionWarningSchema>;

export const gapEvidenceKindSchema = z.enum([
  'next_action_executable_without_agent_todo',
  'next_action_waits_without_user_todo',
]);
export type GapEvidenceKind = z.infer<typeof gapEvidenceKindSchema>;

export const gapEvidenceSchema = z.object({
  kind: gapEvidenceKindSchema,
  target_role: todoRoleSchema,
  section: z.literal('Next Action'),
  text: z.string().min(1),
});
export type GapEvidence = z.infer<typeof gapEvidenceSchema>;

// The original's text here is Chinese copy the spec does not reproduce; ours says the same in English.
export const STATE_PROJECTION_GAP_RECOMMENDED_ACTION =
  'expand the Next Action into explicit todos (agent work under Agent Todo, owner waits under User Todo), or rewrite the Next Action to match the open todos';

export const stateProjectionGapSchema = z.object({
  schema_version: z.literal('state_projection_gap_v0'),
  kind: z.literal('state_projection_gap'),
  severity: z.literal('warning'),
  requires_todo_expansion: z.literal(true),
  agent_open_count: z.number().int().nonnegative(),
  user_open_count: z.number().int().nonnegative(),
  target_roles: z.array(todoRoleSchema).min(1),
  evidence_count: z.number().int().positive(),
  first_evidence: z.array(gapEvidenceSchema).min(1).max(3),
  recommended_action: z.literal(STATE_PROJECTION_GAP_RECOMMENDED_ACTION),
  ...uiFields,
});
export type StateProjectionGap = z.infer<typeof stateProjectionGapSchema>;

export const staleReasonCodeSchema = z.enum([
  'active_state_updated_after_latest_run',
  'active_state_updated_after_latest_run_snapshot',
  'active_state_digest_differs_from_latest_run_snapshot',
]);
export type StaleReasonCode = z.infer<typeof staleReasonCodeSchema>;

export const STALE_LATEST_RUN_RECOMMENDED_ACTION = 'run refresh-state before trusting latest_run-derived routing';

export const staleLatestRunWarningSchema = z.object({
  kind: z.literal('stale_latest_run_projection'),
  source: z.literal('active_state_vs_latest_run'),
  severity: z.literal('warning'),
  requires_refresh_state: z.literal(true),
  /** The reason codes joined with ","; `reason_codes` below carries them as a list. */
  reason: z.string().min(1),
  active_state_updated_at: z.string().nullable(),
  latest_run_generated_at: z.string().nullable(),
  latest_run_state_updated_at: z.string().nullable(),
  latest_run_classification: z.string().nullable(),
  recommended_action: z.literal(STALE_LATEST_RUN_RECOMMENDED_ACTION),
  reason_codes: z.array(staleReasonCodeSchema).min(1),
  ...uiFields,
});
export type StaleLatestRunWarning = z.infer<typeof staleLatestRunWarningSchema>;

/** Any warning `projectGoalWarnings` returns, told apart by `kind`. */
export const projectionWarningSchema = z.discriminatedUnion('kind', [
  staleLatestRunWarningSchema,
  nextActionProjectionWarningSchema,
  stateActionProjectionWarningSchema,
  stateProjectionGapSchema,
]);
export type ProjectionWarning = z.infer<typeof projectionWarningSchema>;
export type ProjectionWarningKind = ProjectionWarning['kind'];

export const goalProjectionWarningsSchema = z.array(projectionWarningSchema);

export const latestRunRecommendationSourceSchema = z.enum(['latest_status_run', 'agent_lane_recommendation']);
export type LatestRunRecommendationSource = z.infer<typeof latestRunRecommendationSourceSchema>;

/** What status items store about the latest run's recommendation (docs/projection.md). */
export const latestRunRecommendationSchema = z.object({
  latest_run_recommended_action: z.string().min(1).nullable(),
  latest_run_recommended_action_source: latestRunRecommendationSourceSchema.nullable(),
});
export type LatestRunRecommendation = z.infer<typeof latestRunRecommendationSchema>;

export const recommendedActionSourceSchema = z.enum([
  'explicit_arg',
  'active_state_next_action',
  'agent_todo_fallback',
  'default_refresh_action',
]);
export type RecommendedActionSource = z.infer<typeof recommendedActionSourceSchema>;

/** The result of refresh-state's derivation chain, stored on every run record and index row. */
export const recommendedActionDerivationSchema = z.object({
  recommended_action: z.string().min(1),
  recommended_action_source: recommendedActionSourceSchema,
});
export type RecommendedActionDerivation = z.infer<typeof recommendedActionDerivationSchema>;
