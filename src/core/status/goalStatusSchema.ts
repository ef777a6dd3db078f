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
import { DecisionScopeSchema, StandingDecisionAuthoritySchema } from './projection/standingDecisionAuthority';
import { AgentLaneRecommendationSchema } from './projection/agentLaneRecommendation';
import { GoalTodoIndexSchema } from './reports/todoIndex';

/**
 * The per-goal status item's contract (what `loopx status --format json` prints per goal) and what
 * status needs to know about a goal (`GoalStatusTarget`). The projection that fills it is
 * `goalStatus.ts`; the files it is projected from are read through `core/goal` (`GoalFiles`).
 */

// ---------------------------------------------------------------------------------------------
// Output contract

export const StatusTodoItemSchema = z.object({
  /** The original's per-todo fields (goalStatus.ts `statusTodoItem`). */
  schema_version: z.literal('todo_item_v0'),
  role: z.enum(['user', 'agent']),
  archive_state: z.literal('active'),
  /** The first heading of the todo's role, as the summary's `source_section`. */
  source_section: z.string().nullable(),
  index: z.number().int(),
  done: z.boolean(),
  text: z.string(),
  title: z.string(),
  todo_id: z.string(),
  priority: z.string().nullable(),
  status: z.enum(['open', 'done', 'blocked', 'deferred']),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
});
export type StatusTodoItem = z.infer<typeof StatusTodoItemSchema>;

/** The original's `compact_todo_item` for the fields ours reads (projection/todoLists.ts). */
export const CompactTodoSchema = z.object({
  index: z.number().int(),
  done: z.boolean(),
  text: z.string(),
  schema_version: z.literal('todo_item_v0'),
  todo_id: z.string(),
  role: z.enum(['user', 'agent']),
  status: z.string(),
  priority: z.string().optional(),
  title: z.string().optional(),
  archive_state: z.literal('active'),
  source_section: z.string().nullable(),
  task_class: z.string(),
  action_kind: z.string().optional(),
  claimed_by: z.string().optional(),
  decision_scope: DecisionScopeSchema.optional(),
  required_decision_scopes: z.array(DecisionScopeSchema).optional(),
  bound_agent: z.string().optional(),
  goal_bound: z.boolean().optional(),
  blocks_agent: z.string().optional(),
  global_gate: z.boolean().optional(),
  unblocks_todo_id: z.string().optional(),
  created_by: z.string().optional(),
  last_actor_agent_id: z.string().optional(),
  note: z.string().optional(),
  evidence: z.string().optional(),
  reason: z.string().optional(),
  completed_at: z.string().optional(),
  completion_turn_key: z.string().optional(),
  updated_at: z.string().optional(),
  superseded_by: z.string().optional(),
});

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
  /** The first open todos in document order (for `--agent-id`, agent todos claimed by it or unclaimed). */
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
  /**
   * The goal's part of the payload's `todo_index` (reports/todoIndex.ts), cached with the item; the payload's items
   * do not carry it (statusPayload.ts).
   */
  todo_index: GoalTodoIndexSchema.optional(),
});
export type GoalStatusItem = z.infer<typeof GoalStatusItemSchema>;

// ---------------------------------------------------------------------------------------------
// Inputs

/** What status needs to know about a goal; a `GoalSummary` of the workspace read model fits. */
export const GoalStatusTargetSchema = z.object({
  goalId: z.string().min(1),
  displayName: z.string(),
  status: z.string(),
  domain: z.string().nullable(),
  projectRoot: z.string(),
  runtimeRoot: z.string(),
  stateFile: z.string().nullable(),
  agents: z.array(z.string()),
  registryMember: z.boolean().default(true),
  /** The registry entry's `adapter.status`/`adapter.kind`, `waiting_on` and `attention_status` (attention routing). */
  adapterStatus: z.string().nullable().default(null),
  adapterKind: z.string().nullable().default(null),
  registryWaitingOn: z.string().nullable().default(null),
  attentionStatus: z.string().nullable().default(null),
});
export type GoalStatusTarget = z.input<typeof GoalStatusTargetSchema>;

const nullableText = (value: unknown): value is string | null => value === null || typeof value === 'string';

/** An array whose every index holds a string (a hole does not). */
function allText(value: unknown): value is string[] {
  if (!Array.isArray(value)) return false;
  for (let i = 0; i < value.length; i++) if (typeof value[i] !== 'string') return false;
  return true;
}

/**
 * `GoalStatusTargetSchema.parse(goal)`, without zod for a target whose every field already has its
 * output type (status's own targets, `statusTargets`, always do): the same object zod makes (its
 * fields in the schema's order, no other field, the agents copied). Anything else is parsed by the
 * schema, which fills the defaults or throws.
 */
export function parseGoalStatusTarget(goal: GoalStatusTarget): z.output<typeof GoalStatusTargetSchema> {
  const g = goal as Record<keyof GoalStatusTarget, unknown>;
  if (
    typeof g.goalId === 'string' &&
    g.goalId.length > 0 &&
    typeof g.displayName === 'string' &&
    typeof g.status === 'string' &&
    nullableText(g.domain) &&
    typeof g.projectRoot === 'string' &&
    typeof g.runtimeRoot === 'string' &&
    nullableText(g.stateFile) &&
    allText(g.agents) &&
    typeof g.registryMember === 'boolean' &&
    nullableText(g.adapterStatus) &&
    nullableText(g.adapterKind) &&
    nullableText(g.registryWaitingOn) &&
    nullableText(g.attentionStatus)
  )
    return {
      goalId: g.goalId,
      displayName: g.displayName,
      status: g.status,
      domain: g.domain,
      projectRoot: g.projectRoot,
      runtimeRoot: g.runtimeRoot,
      stateFile: g.stateFile,
      agents: [...g.agents],
      registryMember: g.registryMember,
      adapterStatus: g.adapterStatus,
      adapterKind: g.adapterKind,
      registryWaitingOn: g.registryWaitingOn,
      attentionStatus: g.attentionStatus,
    };
  return GoalStatusTargetSchema.parse(goal);
}

export const DEFAULT_STATUS_RUN_LIMIT = 5;
export const DEFAULT_STATUS_TODO_ITEM_LIMIT = 5;
