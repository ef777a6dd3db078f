import { z } from 'zod';
import { recommendedActionSourceSchema, stateProjectionGapSchema } from '../status/projection/schemas';
import { IndexStateSchema, StateSnapshotSchema } from './snapshot';

/**
 * Contracts of refresh-state: the run record it appends (`<stem>.json`, the original's shape),
 * the Next Action update block, and the payload the CLI prints. Field names are the original's.
 */

export const ProgressScopeSchema = z.enum(['goal', 'agent_lane']);
export type ProgressScope = z.infer<typeof ProgressScopeSchema>;

export const NEXT_ACTION_UPDATE_SCHEMA_VERSION = 'active_state_next_action_update_v0';

/** What a `--next-action` did (or, in a dry run, would do) to the state file. */
export const NextActionUpdateSchema = z.object({
  schema_version: z.literal(NEXT_ACTION_UPDATE_SCHEMA_VERSION),
  source: z.literal('refresh_state'),
  next_action: z.string().min(1),
  /** True only when the file was written (never in a dry run). */
  updated: z.boolean(),
  /** True when the text differs from the current route, dry run or not. */
  would_update: z.boolean(),
  dry_run: z.boolean(),
  /** The new front-matter `updated_at`; null when nothing changes. */
  updated_at: z.string().nullable(),
  /** Ours: the route it replaces (null when the file had none), so a preview shows the change. */
  previous_next_action: z.string().nullable(),
});
export type NextActionUpdate = z.infer<typeof NextActionUpdateSchema>;

export const RegistryGoalSnapshotSchema = z.object({
  present: z.literal(true),
  domain: z.string().nullable(),
  status: z.string().nullable(),
  adapter: z.object({ kind: z.string().nullable() }).nullable(),
  authority_source_count: z.number().int().nonnegative(),
});
export type RegistryGoalSnapshot = z.infer<typeof RegistryGoalSnapshotSchema>;

/** The full run record refresh-state writes as `<stem>.json`. */
export const RefreshRecordSchema = z.object({
  generated_at: z.string().min(1),
  goal_id: z.string().min(1),
  classification: z.string().min(1),
  recommended_action: z.string().min(1),
  recommended_action_source: recommendedActionSourceSchema,
  health_check: z.string(),
  state: StateSnapshotSchema,
  registry_goal: RegistryGoalSnapshotSchema,
  progress_scope: ProgressScopeSchema,
  agent_id: z.string().optional(),
  agent_lane: z.string().optional(),
  todo_id: z.string().optional(),
  turn_instance_id: z.string().optional(),
  /** The autonomous replan obligation this run discharges (instead of a todo). */
  replan_obligation_id: z.string().optional(),
  delivery_batch_scale: z.string().optional(),
  delivery_outcome: z.string().optional(),
  /** The checkout an accountable delivery was written in (snapshots/deliveryWorkspace.ts), as the original records it. */
  delivery_workspace: z
    .object({
      schema_version: z.literal('delivery_workspace_v0'),
      task_repository: z.string(),
      repository_source: z.string(),
      workspace_kind: z.enum(['canonical_checkout', 'independent_git_worktree']),
      peer_independent_worktree_required: z.boolean(),
    })
    .optional(),
  active_state_next_action_update: NextActionUpdateSchema.optional(),
  /** The Next Action promises work no open todo backs (computed from the Markdown counts). */
  state_projection_gap: stateProjectionGapSchema.optional(),
});
export type RefreshRecord = z.infer<typeof RefreshRecordSchema>;

/** The index row refresh-state appends (besides the standard fields appendRun writes). */
export const RefreshIndexRowSchema = z.looseObject({
  generated_at: z.string(),
  goal_id: z.string(),
  classification: z.string(),
  recommended_action: z.string(),
  recommended_action_source: recommendedActionSourceSchema,
  health_check: z.string(),
  json_path: z.string(),
  markdown_path: z.string(),
  state: IndexStateSchema,
  progress_scope: ProgressScopeSchema,
});
export type RefreshIndexRow = z.infer<typeof RefreshIndexRowSchema>;

/** `loopx refresh-state --format json`: the original's payload, the record's fields at the top level. */
export const RefreshStatePayloadSchema = RefreshRecordSchema.extend({
  ok: z.literal(true),
  dry_run: z.boolean(),
  /** True when a run was recorded (never in a dry run). */
  appended: z.boolean(),
  registry: z.string(),
  runtime_root: z.string(),
  project: z.string(),
  /** Absolute paths of the artifacts written (or, in a dry run, that would be written). */
  json_path: z.string(),
  markdown_path: z.string(),
  index_path: z.string(),
  index_row: RefreshIndexRowSchema,
});
export type RefreshStatePayload = z.infer<typeof RefreshStatePayloadSchema>;
