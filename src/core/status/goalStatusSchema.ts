import { z } from 'zod';
import {
  latestRunRecommendationSourceSchema,
  nextActionProjectionWarningSchema,
  projectionWarningSchema,
  staleLatestRunWarningSchema,
  stateProjectionGapSchema,
} from './projection/schemas';
import { AttentionSeveritySchema, WaitingOnSchema } from '../todo/attention';
import { StateDiagnosticsSchema } from '../state/structured';
import { ContractDiagnosticSchema } from './contractCheck';
import { ReplanObligationSchema } from '../scheduling/replanObligation';
import { CadenceHintSchema, HandoffReadinessSchema } from './projection/handoffReadiness';
import { BacklogHygieneWarningSchema } from './projection/backlogHygiene';
import { CompletedTodoArchiveWarningSchema } from './projection/completedTodoArchive';
import { IssueMetaSurfaceSchema } from './projection/issueMetaSurface';
import { DecisionScopeSchema, StandingDecisionAuthoritySchema } from './projection/standingDecisionAuthority';
import { AgentLaneRecommendationSchema } from './projection/agentLaneRecommendation';
import { AttentionFieldsSchema, LatestValidationSchema } from './projection/projectAsset';
import { GoalTodoIndexSchema } from './reports/todoIndex';

/**
 * The per-goal status item's contract (what `loopx status --format json` prints per goal) and what
 * status reads of a goal's `GoalRef` (`StatusRefKeys`). The projection that fills it is
 * `goalStatus.ts`; the files it is projected from are read through `core/goal` (`GoalFiles`).
 */

// ---------------------------------------------------------------------------------------------
// Output contract

const optionalText = z.string().optional();
const optionalTexts = z.array(z.string()).optional();

/**
 * The original's structured todo (projection/compactTodoItem.ts): its parser's todo, every metadata key of its schema
 * normalized, a validation command as `completion_validation_required`, a `resume_when`'s condition.
 */
const structuredTodoShape = {
  index: z.number().int(),
  done: z.boolean(),
  text: z.string(),
  schema_version: z.literal('todo_item_v0'),
  todo_id: z.string(),
  role: z.enum(['user', 'agent']),
  status: z.enum(['open', 'done', 'blocked', 'deferred']),
  priority: optionalText,
  title: optionalText,
  archive_state: z.literal('active'),
  /** The first heading of the todo's role, as the summary's `source_section`. */
  source_section: z.string().nullable(),
  task_class: z.string(),
  action_kind: optionalText,
  task_domain: optionalText,
  capability_binding_ref: optionalText,
  task_repository: optionalText,
  continuation_policy: optionalText,
  removed_continuation_policy: optionalText,
  required_write_scopes: optionalTexts,
  required_capabilities: optionalTexts,
  target_capabilities: optionalTexts,
  explore_result_node_refs: optionalTexts,
  decision_scope: DecisionScopeSchema.optional(),
  required_decision_scopes: z.array(DecisionScopeSchema).optional(),
  decision_outcome: optionalText,
  decision_scope_outcomes: z
    .array(
      z.object({
        schema_version: z.literal('todo_decision_scope_outcome_v0'),
        outcome: z.string(),
        decision_scope: DecisionScopeSchema,
        source_todo_id: z.string(),
      }),
    )
    .optional(),
  claimed_by: optionalText,
  bound_agent: optionalText,
  goal_bound: z.boolean().optional(),
  blocks_agent: optionalText,
  excluded_agents: optionalTexts,
  global_gate: z.boolean().optional(),
  unblocks_todo_id: optionalText,
  resume_when: optionalText,
  /** The markdown files its text links, each with whether it exists (projection/reviewMaterials.ts). */
  review_materials: z
    .array(z.object({ label: z.string(), path: z.string(), exists: z.boolean(), anchor: z.string().optional() }))
    .optional(),
  /** `todo_resume_condition_v0`: kind, target and what was found (projection/compactTodoItem.ts). */
  resume_condition: z
    .looseObject({
      schema_version: z.literal('todo_resume_condition_v0'),
      resume_when: z.string(),
      satisfied: z.boolean(),
      kind: z.string(),
    })
    .optional(),
  resume_ready: z.boolean().optional(),
  no_followup: z.boolean().optional(),
  successor_todo_ids: optionalTexts,
  completion_continuation: optionalText,
  completion_recovery: optionalText,
  replan_obligation_id: optionalText,
  target_key: optionalText,
  cadence: optionalText,
  next_due_at: optionalText,
  expires_at: optionalText,
  watch_only: optionalText,
  last_checked_at: optionalText,
  result_hash: optionalText,
  consecutive_no_change: optionalText,
  material_change: optionalText,
  max_no_change_before_replan: optionalText,
  note: optionalText,
  evidence: optionalText,
  reason: optionalText,
  completed_at: optionalText,
  completion_turn_key: optionalText,
  updated_at: optionalText,
  superseded_by: optionalText,
  completion_validation_required: z.literal(true).optional(),
};

/** One todo of a summary's `items`: the structured todo, and ours beside it: `title` always, `priority` and `claimed_by` null when none. */
type StatusTodoItemShape = Omit<typeof structuredTodoShape, 'title' | 'priority' | 'claimed_by'> & {
  title: z.ZodString;
  priority: z.ZodNullable<z.ZodString>;
  claimed_by: z.ZodNullable<z.ZodString>;
};
const HandoffNoteSchema = z.looseObject({
  schema_version: z.literal('handoff_note_v0'),
  handoff_id: z.string(),
  intent: z.string(),
});
type CompactTodoShape = typeof structuredTodoShape & { handoff_note: z.ZodOptional<typeof HandoffNoteSchema> };
/** The keys every todo has, checked when an item is parsed; the others are typed above and pass through as built. */
const CHECKED = [
  'index',
  'done',
  'text',
  'schema_version',
  'todo_id',
  'role',
  'status',
  'archive_state',
  'source_section',
  'task_class',
] as const;
const checkedShape = Object.fromEntries(CHECKED.map((key) => [key, structuredTodoShape[key]])) as Pick<
  typeof structuredTodoShape,
  (typeof CHECKED)[number]
>;

/**
 * One todo of a summary's `items` (its type: every key above). Parsing checks the keys every todo has and ours beside
 * them; the ~50 optional keys pass as `projection/compactTodoItem.ts` built them (checking each absent key of every
 * listed todo cost a tenth of an uncached `status` on a 100-goal workspace).
 */
export const StatusTodoItemSchema = z.looseObject({
  ...checkedShape,
  title: z.string(),
  priority: z.string().nullable(),
  claimed_by: z.string().nullable(),
}) as unknown as z.ZodObject<StatusTodoItemShape>;
export type StatusTodoItem = z.infer<typeof StatusTodoItemSchema>;

/** The original's `compact_todo_item` (projection/compactTodoItem.ts), checked as `StatusTodoItemSchema`. */
export const CompactTodoSchema = z.looseObject({
  ...checkedShape,
  handoff_note: HandoffNoteSchema.optional(),
}) as unknown as z.ZodObject<CompactTodoShape>;

/** A compact todo as a closure or succession report lists it (projection/todoSuccession.ts): its extra keys kept. */
const ReportedTodoSchema = CompactTodoSchema.partial().passthrough();
/** A report object of the original's (projection/todoSuccession.ts), kept as projected. */
const ReportSchema = z.record(z.string(), z.unknown());

export const StatusTodoSummarySchema = z.object({
  /** The original's summary version. */
  schema_version: z.literal('todo_summary_v0'),
  /** The heading of the section the todos come from, or null when the file has none. */
  source_section: z.string().nullable(),
  total_count: z.number().int().nonnegative(),
  open_count: z.number().int().nonnegative(),
  /** Closed todos, as LoopX counts them: done and deferred (`deferred_count` says how many of them are deferred). */
  done_count: z.number().int().nonnegative(),
  blocked_count: z.number().int().nonnegative(),
  deferred_count: z.number().int().nonnegative(),
  /**
   * The original's `items`: up to 12 todos of the role, the open ones by priority then position, then the deferred
   * ones likewise, then the done ones in document order (readers wanting open todos filter on `done`).
   */
  items: z.array(StatusTodoItemSchema),
  /** Open todos claimed and not, when at least one is claimed (projection/claimedCounts.ts). */
  claimed_open_count: z.number().int().nonnegative().optional(),
  unclaimed_open_count: z.number().int().nonnegative().optional(),
  claimed_advancement_open_count: z.number().int().nonnegative().optional(),
  claimed_monitor_open_count: z.number().int().nonnegative().optional(),
  /** The original's lists (projection/todoLists.ts), each todo in its `compact_todo_item` shape. */
  first_open_items: z.array(CompactTodoSchema),
  first_executable_items: z.array(CompactTodoSchema),
  monitor_open_items: z.array(CompactTodoSchema),
  unclaimed_priority_open_items: z.array(CompactTodoSchema),
  claimed_open_items: z.array(CompactTodoSchema),
  claimed_advancement_open_items: z.array(CompactTodoSchema),
  claimed_monitor_open_items: z.array(CompactTodoSchema),
  backlog_items: z.array(CompactTodoSchema),
  executable_backlog_items: z.array(CompactTodoSchema),
  deferred_items: z.array(CompactTodoSchema),
  deferred_resume_candidates: z.array(CompactTodoSchema),
  blocker_open_count: z.number().int().nonnegative().optional(),
  blocker_items: z.array(CompactTodoSchema).optional(),
  resume_blocked_count: z.number().int().nonnegative().optional(),
  resume_blocked_items: z.array(CompactTodoSchema).optional(),
  /**
   * Derived when status answers, for the time of the read (projection/monitorDue.ts): never in the cached item.
   */
  monitor_due_count: z.number().int().nonnegative().optional(),
  monitor_due_items: z.array(CompactTodoSchema).optional(),
  monitor_schedule_gap_count: z.number().int().nonnegative().optional(),
  monitor_schedule_gap_items: z.array(CompactTodoSchema).optional(),
  watch_only_monitor_due_count: z.number().int().nonnegative().optional(),
  /** The closure and succession reports (projection/todoSuccession.ts). */
  watch_only_monitor_count: z.number().int().nonnegative().optional(),
  convergence_open_count: z.number().int().nonnegative().optional(),
  recent_completed_advancement_items: z.array(ReportedTodoSchema).optional(),
  source_proof: ReportSchema.optional(),
  terminal_closure_proof: ReportSchema.optional(),
  closure_intent: ReportSchema.optional(),
  handoff_gates: z.array(ReportSchema).optional(),
  completed_without_successor_count: z.number().int().nonnegative().optional(),
  completed_without_successor_items: z.array(ReportedTodoSchema).optional(),
  todo_succession_warning: ReportSchema.optional(),
  active_next_action_items: z.array(ReportedTodoSchema).optional(),
  active_next_action_executable_items: z.array(ReportedTodoSchema).optional(),
  /** Only for a goal whose spawn policy allows sub-agents (projection/taskOrchestrationAuthority.ts). */
  task_orchestration_authority: z
    .object({
      schema_version: z.literal('task_orchestration_authority_v0'),
      role: z.enum(['user', 'agent']),
      candidate_items: z.array(z.record(z.string(), z.unknown())),
      user_blocker_items: z.array(z.record(z.string(), z.unknown())),
    })
    .optional(),
});
export type StatusTodoSummary = z.infer<typeof StatusTodoSummarySchema>;

export const StatusGateSchema = z.object({
  todo_id: z.string(),
  text: z.string(),
  title: z.string(),
  status: z.string(),
  gate_state: z.enum(['open', 'rejected', 'cancelled']),
  /** 1-based line of the gate in the state file. */
  line: z.number().int().positive(),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
  unblocks_todo_ids: z.array(z.string()),
  decision_scope: z.string().nullable(),
  unscoped: z.boolean(),
  blocked_todo_ids: z.array(z.string()),
  /** When the person should have decided (ISO-8601; metadata `next_due_at`), or null. */
  due_at: z.string().nullable(),
  /** The gate's `updated_at` metadata (when it was last written), or null. */
  updated_at: z.string().nullable(),
});
export type StatusGate = z.infer<typeof StatusGateSchema>;

/** A run as status lists it: no paths, and the action public-safe compacted (null when it named a path or a secret). */
export const StatusRunSchema = z.object({
  generated_at: z.string().nullable(),
  goal_id: z.string(),
  classification: z.string().nullable(),
  agent_id: z.string().nullable(),
  progress_scope: z.string().nullable(),
  recommended_action: z.string().nullable(),
  recommended_action_source: z.string().nullable(),
  health_check: z.string().nullable(),
  json_exists: z.boolean(),
  markdown_exists: z.boolean(),
});
export type StatusRun = z.infer<typeof StatusRunSchema>;

export const ActiveStateStatusSchema = z.object({
  available: z.boolean(),
  /** Front-matter `status` and `updated_at`. */
  status: z.string().nullable(),
  updated_at: z.string().nullable(),
  sha256_16: z.string().nullable(),
  /** Why the file could not be read; paths in the message are replaced by labels such as `<project>/…`. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type ActiveStateStatus = z.infer<typeof ActiveStateStatusSchema>;

/** The quota summary of a goal as the original's attention items carry it. */
export const StatusItemQuotaSchema = z.looseObject({
  compute: z.number().optional(),
  window_hours: z.number().optional(),
  slot_minutes: z.number().optional(),
  allowed_slots: z.number().optional(),
  spent_slots: z.number().optional(),
  state: z.string().optional(),
  reason: z.string().optional(),
  // The state's gate fields, as the original's status item carries them (status/statusQuota.ts `statusQuotaState`).
  blocked_action_scope: z.string().optional(),
  safe_bypass_allowed: z.boolean().optional(),
  safe_bypass_policy: z.string().optional(),
  focus_wait: z.boolean().optional(),
});
export type StatusItemQuota = z.infer<typeof StatusItemQuotaSchema>;

export { WaitingOnSchema, AttentionSeveritySchema } from '../todo/attention';
export const RecommendedActionOriginSchema = z.enum([
  'active_state',
  'latest_run',
  'active_state_next_action',
  'default',
  // A route of the original's own words (projection/routeAction.ts): no status run, or its artifacts missing.
  'run_history',
  'registry',
]);

export const DEFAULT_STATUS_ACTION =
  'add a durable route under "## Next Action" in ACTIVE_GOAL_STATE.md, or record a run with loopx refresh-state';

/**
 * An autonomous replan obligation a lane owes now (scheduling/replanObligation.ts): the obligation
 * `quota should-run` would surface as `autonomous_replan_required`, with the stalled runs that owe it.
 */
export const StatusReplanObligationSchema = z.object({
  /** The agent lane (null: the goal registers no agent and all runs count). */
  agent_id: z.string().nullable(),
  obligation: ReplanObligationSchema,
  /** The stalled runs, newest first (paths and secrets compacted away like `latest_runs`). */
  stalled_runs: z.array(
    z.object({
      generated_at: z.string().nullable(),
      classification: z.string().nullable(),
      recommended_action: z.string().nullable(),
      todo_id: z.string().nullable(),
      turn_instance_id: z.string().nullable(),
    }),
  ),
  /** When the streak began: the oldest stalled run's time. */
  since: z.string().nullable(),
});
export type StatusReplanObligation = z.infer<typeof StatusReplanObligationSchema>;

/** One goal of the status read model (an `attention_queue.items[]` entry of the original). */
export const GoalStatusItemSchema = z.object({
  goal_id: z.string(),
  display_name: z.string(),
  /**
   * LoopX's attention status: `active_state_user_gate`, `active_state_user_todo`, `connected_without_run`,
   * `run_artifact_missing`, the latest status run's classification, … (todo/attention.ts).
   */
  status: z.string(),
  /** The goal's status in the registry. */
  goal_status: z.string(),
  domain: z.string().nullable(),
  waiting_on: WaitingOnSchema,
  severity: AttentionSeveritySchema,
  /**
   * Set on a quiet-monitor item (`waiting_on: monitor_signal`, todo/attention.ts `monitorQuietDisplay`): the
   * route it had before, which its quota state follows.
   */
  execution_waiting_on: WaitingOnSchema.optional(),
  execution_severity: AttentionSeveritySchema.optional(),
  recommended_action: z.string().min(1),
  /** Where `recommended_action` came from. */
  source: RecommendedActionOriginSchema,
  /** The goal's lifecycle (projection/lifecycle.ts); the original dashboard reads both. */
  lifecycle_phase: z.string(),
  lifecycle_flags: z.array(z.string()),
  /** The project-agent handoff readiness (projection/handoffReadiness.ts); its quota fields follow `quota`. */
  handoff_readiness: HandoffReadinessSchema,
  long_task_cadence_hint: CadenceHintSchema,
  /** Durable work in Next Action / Operating Lessons with no open agent todo (projection/backlogHygiene.ts). */
  backlog_hygiene_warning: BacklogHygieneWarningSchema.optional(),
  /** More than 12 done agent todos in the active section: archive them (projection/completedTodoArchive.ts). */
  completed_todo_archive_warning: CompletedTodoArchiveWarningSchema.optional(),
  /** The state file's issue/PR anchors (projection/issueMetaSurface.ts). */
  issue_meta_surface: IssueMetaSurfaceSchema.optional(),
  /** Completed, unlinked user gates with a decision scope and an outcome (projection/standingDecisionAuthority.ts). */
  standing_decision_authority: StandingDecisionAuthoritySchema.optional(),
  registry_member: z.boolean(),
  registered_agents: z.array(z.string()),
  /** Set when the status was asked for one agent (`--agent-id`). */
  agent_id: z.string().optional(),
  active_state_next_action: z.string().optional(),
  active_state_next_action_entries: z.array(z.string()).optional(),
  latest_run_recommended_action: z.string().nullable(),
  latest_run_recommended_action_source: latestRunRecommendationSourceSchema.nullable(),
  /** The newest listed agent-lane run's recommendation (projection/agentLaneRecommendation.ts). */
  agent_lane_recommendation: AgentLaneRecommendationSchema.optional(),
  next_action_projection_warning: nextActionProjectionWarningSchema.optional(),
  state_projection_gap: stateProjectionGapSchema.optional(),
  stale_latest_run_warning: staleLatestRunWarningSchema.optional(),
  /** Every drift warning, most severe first. */
  projection_warnings: z.array(projectionWarningSchema),
  /** Null when the state file could not be read, as LoopX reports it. */
  user_todos: StatusTodoSummarySchema.nullable(),
  agent_todos: StatusTodoSummarySchema.nullable(),
  open_gates: z.array(StatusGateSchema),
  latest_runs: z.array(StatusRunSchema),
  index_exists: z.boolean(),
  raw_index_records: z.number().int().nonnegative(),
  unique_runs: z.number().int().nonnegative(),
  /** Index lines that could not be read (bad JSON, not an object). */
  skipped_index_lines: z.number().int().nonnegative(),
  /** Set when the run index could not be read at all: why, naming the file and the fix (runs and slot use unknown). */
  run_index_unreadable: z.string().optional(),
  active_state: ActiveStateStatusSchema,
  state_diagnostics: StateDiagnosticsSchema.nullable(),
  /**
   * The goal's errors in LoopX's contract check (contractCheck.ts): todo metadata rules, or a state
   * file that exists but cannot be read. Any error fails the status (`ok: false`).
   */
  contract_diagnostics: z.array(ContractDiagnosticSchema),
  /** Replan obligations the goal's lanes owe now (one per registered agent at most); absent when none. */
  replan_obligations: z.array(StatusReplanObligationSchema).optional(),
  quota: StatusItemQuotaSchema.optional(),
  /** The latest status run's validation signal (projection/projectAsset.ts; the original's `project_asset` only). */
  latest_validation: LatestValidationSchema.optional(),
  /** The original's run attention fields: operator question, agent command, controller stage, missing gates, … */
  ...AttentionFieldsSchema.shape,
  /**
   * The goal's part of the payload's `todo_index` (reports/todoIndex.ts), cached with the item; the payload's items
   * do not carry it (statusPayload.ts).
   */
  todo_index: GoalTodoIndexSchema.optional(),
  /**
   * The raw-material key names of the goal's listed runs as written (the goal channel's scan of the original's raw
   * run rows, channelProjection.ts), cached with the item; the payload's items do not carry it (statusPayload.ts).
   */
  latest_run_raw_keys: z.array(z.string()).optional(),
});
export type GoalStatusItem = z.infer<typeof GoalStatusItemSchema>;

// ---------------------------------------------------------------------------------------------
// Inputs

/**
 * What status reads of a goal's `GoalRef` (`registry/goalRef.ts`): where its files are and its typed registry
 * entry. Status takes `Pick<GoalRef, StatusRefKeys>`; the display name, status, agents and attention fields it
 * shows are the entry's (`goalStatus.ts`: `statusFieldsOf`).
 */
export type StatusRefKeys = 'goalId' | 'projectRoot' | 'runtimeRoot' | 'homeDir' | 'entry';

export const DEFAULT_STATUS_RUN_LIMIT = 5;
