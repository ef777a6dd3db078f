import { z } from 'zod';

/**
 * The types and nullability of every `/status.json` field the LoopX web dashboard reads, as its own
 * schema checks them (`apps/presentation/dashboard/src/data/status.ts` and `goal-channel-frontstage.ts`
 * of the original). `dashboardContract.ts` says which fields must be there; this schema says what each
 * may hold, which the field list cannot: `optional()` = a value of the type or no key (`null` is
 * refused), `maybe()` = the type, `null` or no key. A payload that fails here is refused by the
 * dashboard before it draws anything ("Invalid input" on the field's path). Unknown keys pass.
 */

const str = z.string();
const num = z.number();
const bool = z.boolean();
const strs = z.array(z.string());

/** The type, `null` or no key. */
const maybe = <T extends z.ZodType>(schema: T) => schema.nullable().optional();
const scalar = z.union([z.string(), z.number(), z.boolean(), z.null()]);
const scalarRecord = z.record(z.string(), scalar);

export const DashboardQuotaSchema = z.looseObject({
  compute: num.optional(),
  window_hours: num.optional(),
  slot_minutes: num.optional(),
  allowed_slots: maybe(num),
  spent_slots: num.optional(),
  state: maybe(str),
  next_eligible_at: maybe(str),
  reason: maybe(str),
  blocked_action_scope: maybe(str),
  focus_wait: maybe(bool),
  handoff_outcome_floor_block: maybe(bool),
  safe_bypass_allowed: bool.optional(),
  safe_bypass_kind: maybe(str),
  safe_bypass_policy: maybe(str),
  post_handoff_outcome_gap_streak: maybe(num),
  outcome_gap_threshold: maybe(num),
  must_advance: strs.optional(),
  avoid: strs.optional(),
});

const ControlPlaneSchema = z.looseObject({
  self_repair: maybe(
    z.looseObject({
      enabled: bool.optional(),
      allow_health_blocker_repair: bool.optional(),
      allow_waiting_projection_repair: bool.optional(),
    }),
  ),
});

const OrchestrationSchema = z.looseObject({
  mode: str.optional(),
  orchestration_mode: maybe(str),
  spawn_allowed: bool.optional(),
  allowed: maybe(bool),
  max_children: num.optional(),
  allowed_domains: strs.optional(),
});

const ReviewMaterialSchema = z.looseObject({
  label: maybe(str),
  path: str,
  anchor: maybe(str),
  exists: bool.optional(),
  resolved_path: maybe(str),
});

export const DashboardTodoItemSchema = z.looseObject({
  index: num,
  done: bool,
  text: str,
  schema_version: maybe(str),
  todo_id: maybe(str),
  role: maybe(str),
  status: maybe(str),
  priority: maybe(str),
  title: maybe(str),
  archive_state: maybe(str),
  source_section: maybe(str),
  task_class: maybe(str),
  action_kind: maybe(str),
  claimed_by: maybe(str),
  required_capabilities: strs.optional(),
  note: maybe(str),
  evidence: maybe(str),
  updated_at: maybe(str),
  review_materials: z.array(ReviewMaterialSchema).optional(),
});

const TodoGroupSchema = z.looseObject({
  source_section: maybe(str),
  total_count: num.optional(),
  open_count: num.optional(),
  done_count: num.optional(),
  items: z.array(DashboardTodoItemSchema).optional(),
});

const AssetTodoSummarySchema = z.looseObject({
  source_section: maybe(str),
  open: num.optional(),
  done: num.optional(),
  total: num.optional(),
  next: maybe(str),
  next_index: maybe(num),
  items: z.array(DashboardTodoItemSchema).optional(),
});

const StaleLatestRunWarningSchema = z.looseObject({
  kind: maybe(str),
  source: maybe(str),
  severity: maybe(str),
  requires_refresh_state: bool.optional(),
  reason: maybe(str),
  active_state_updated_at: maybe(str),
  latest_run_generated_at: maybe(str),
  latest_run_state_updated_at: maybe(str),
  latest_run_classification: maybe(str),
  recommended_action: maybe(str),
});

const PostHandoffRunSchema = z.looseObject({
  generated_at: maybe(str),
  classification: maybe(str),
  delivery_batch_scale: maybe(str),
  delivery_outcome: maybe(str),
  health_check: maybe(str),
  json_exists: maybe(bool),
  markdown_exists: maybe(bool),
});

const HandoffReadinessSchema = z.looseObject({
  ready: bool.optional(),
  codex_ready: bool.optional(),
  source: maybe(str),
  quota_state: maybe(str),
  checks: z.record(z.string(), bool).optional(),
  handoff_status: maybe(str),
  handoff_ready_at: maybe(str),
  handoff_ready_classification: maybe(str),
  post_handoff_run_seen: bool.optional(),
  post_handoff_latest_run: maybe(PostHandoffRunSchema),
  post_handoff_recent_runs: z.array(PostHandoffRunSchema).optional(),
  post_handoff_small_scale_streak: z.number().int().nonnegative().optional(),
  post_handoff_outcome_gap_streak: z.number().int().nonnegative().optional(),
  next_probe: maybe(str),
});

const ProjectAssetSchema = z.looseObject({
  owner: str,
  gate: str,
  next_action: str,
  stop_condition: str,
  user_todos: maybe(AssetTodoSummarySchema),
  agent_todos: maybe(AssetTodoSummarySchema),
  quota: maybe(DashboardQuotaSchema),
  control_plane: maybe(ControlPlaneSchema),
  orchestration: maybe(OrchestrationSchema),
  latest_validation: maybe(
    z.looseObject({ generated_at: maybe(str), classification: maybe(str), summary: maybe(str) }),
  ),
  stale_latest_run_warning: maybe(StaleLatestRunWarningSchema),
  todo_projection_gap: maybe(
    z.looseObject({
      schema_version: maybe(str),
      kind: maybe(str),
      missing_roles: strs.optional(),
      source: maybe(str),
      recommended_action: maybe(str),
    }),
  ),
});

const ChannelTodoSchema = z.looseObject({
  todo_id: str.optional(),
  priority: str.optional(),
  status: str,
  title: str,
  claimed_by: str.optional(),
  task_class: str.optional(),
  action_kind: str.optional(),
});

export const DashboardGoalChannelSchema = z.looseObject({
  schema_version: z.literal('goal_channel_projection_v0'),
  mode: z.literal('read_only'),
  goal_id: str,
  display_name: str,
  generated_at: maybe(str),
  latest_status: str,
  waiting_on: str,
  next_action: str,
  source_refs: scalarRecord,
  decision_frame: z.looseObject({ user_action_required: bool, agent_action_required: bool, quiet_noop_allowed: bool }),
  quota: scalarRecord,
  user_todos: z.array(ChannelTodoSchema).optional(),
  agent_todos: z.array(ChannelTodoSchema).optional(),
  open_gates: z.array(z.looseObject({ gate_id: str, kind: str, status: str, blocks: strs.optional() })).optional(),
  active_leases: z
    .array(
      z.looseObject({
        todo_id: str.optional(),
        owner_agent: str.optional(),
        status: str.optional(),
        lease_until: str.optional(),
        write_scope: strs.optional(),
      }),
    )
    .optional(),
  artifacts: z.array(scalarRecord).optional(),
  recent_events: z
    .array(z.looseObject({ generated_at: str.optional(), classification: str.optional(), summary: str.optional() }))
    .optional(),
  source_warnings: z
    .array(z.looseObject({ kind: str.optional(), message: z.union([str, strs]).optional() }))
    .optional(),
  truth_contract: z.looseObject({
    event_ledger_is_source_of_truth: bool,
    projection_is_writable: bool,
    recompute_rule: str,
    write_authority: str,
  }),
});

export const DashboardQueueItemSchema = z.looseObject({
  goal_id: str,
  activation_state: z.enum(['active', 'stopped']).optional(),
  status: str,
  waiting_on: str,
  severity: str,
  recommended_action: str,
  project_asset: maybe(ProjectAssetSchema),
  handoff_readiness: maybe(HandoffReadinessSchema),
  source: str.optional(),
  operator_question: maybe(str),
  agent_command: maybe(str),
  lifecycle_phase: maybe(str),
  lifecycle_flags: strs.optional(),
  controller_stage: maybe(str),
  missing_gates: strs.optional(),
  next_handoff_condition: maybe(str),
  quota: maybe(DashboardQuotaSchema),
  control_plane: maybe(ControlPlaneSchema),
  user_todos: maybe(TodoGroupSchema),
  agent_todos: maybe(TodoGroupSchema),
  stale_latest_run_warning: maybe(StaleLatestRunWarningSchema),
  dependency_blockers: maybe(
    z.looseObject({
      source: maybe(str),
      open_count: num.optional(),
      items: z
        .array(
          z.looseObject({
            goal_id: str,
            status: maybe(str),
            waiting_on: maybe(str),
            severity: maybe(str),
            index: maybe(num),
            text: str,
            source: maybe(str),
          }),
        )
        .optional(),
    }),
  ),
  todo_state_file: maybe(str),
  goal_channel_projection: maybe(DashboardGoalChannelSchema),
});

const RunRecordSchema = z.looseObject({
  generated_at: str,
  goal_id: str,
  classification: maybe(str),
  lifecycle_phase: maybe(str),
  lifecycle_flags: strs.optional(),
  recommended_action: maybe(str),
  health_check: maybe(str),
  active_task_count: maybe(num),
  active_priorities: maybe(z.record(z.string(), z.unknown())),
  cache_check: maybe(str),
  json_exists: bool.optional(),
  markdown_exists: bool.optional(),
  human_reward: maybe(
    z.looseObject({
      recorded_at: maybe(str),
      gate: maybe(str),
      decision: maybe(str),
      reward: maybe(str),
      operator_question: maybe(str),
      reason_summary: maybe(str),
      follow_up: maybe(str),
      agent_command: maybe(str),
    }),
  ),
  operator_gate: maybe(
    z.looseObject({
      recorded_at: maybe(str),
      gate: maybe(str),
      decision: maybe(str),
      reward: maybe(str),
      operator_question: maybe(str),
      reason_summary: maybe(str),
      follow_up: maybe(str),
      agent_command: maybe(str),
    }),
  ),
  operator_gate_resume_contract: maybe(
    z.looseObject({
      interrupt_payload: maybe(z.looseObject({ question: maybe(str), choices: strs.optional() })),
      allowed_decisions: strs.optional(),
    }),
  ),
  controller_readiness: maybe(
    z.looseObject({
      classification: maybe(str),
      read_only_observer_ready: maybe(bool),
      decision_advisor_ready: maybe(bool),
      write_controller_ready: maybe(bool),
      missing_gates: strs.optional(),
      review_judgment: maybe(str),
      next_handoff_condition: maybe(str),
      gates: z.array(z.looseObject({ id: maybe(str), ok: maybe(bool), review: maybe(str) })).optional(),
    }),
  ),
  project_map: maybe(z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))),
});

const RunGoalSchema = z.looseObject({
  id: str,
  activation_state: z.enum(['active', 'stopped']).optional(),
  display_name: maybe(str),
  domain: maybe(str),
  status: maybe(str),
  lifecycle_phase: maybe(str),
  lifecycle_flags: strs.optional(),
  registry_member: bool.optional(),
  legacy_runtime_goal: bool.optional(),
  adapter_kind: maybe(str),
  adapter_status: maybe(str),
  authority_registry: maybe(z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()]))),
  quota: maybe(DashboardQuotaSchema),
  control_plane: maybe(ControlPlaneSchema),
  spawn_policy: maybe(OrchestrationSchema),
  orchestration: maybe(OrchestrationSchema),
  index_exists: bool.optional(),
  raw_index_records: num.optional(),
  unique_runs: num.optional(),
  latest_runs: z.array(RunRecordSchema).optional(),
});

const numbersRecord = z.record(z.string(), num);

export const DashboardStatusPayloadSchema = z.looseObject({
  ok: bool,
  registry: str,
  runtime_root: str,
  goal_count: num,
  run_count: num,
  status_contract: z
    .looseObject({
      schema_version: num.optional(),
      minimum_dashboard_schema_version: num.optional(),
      producer: maybe(str),
      reload_hint: maybe(str),
    })
    .optional(),
  local_dashboard_api: maybe(
    z.looseObject({
      source: str.optional(),
      status_url: maybe(str),
      health_url: maybe(str),
      reward_write_enabled: bool.optional(),
      control_plane_write_enabled: bool.optional(),
    }),
  ),
  contract: z.looseObject({
    ok: bool,
    summary: z.looseObject({ errors: num, warnings: num, checks: num }),
    errors: strs,
    warnings: strs,
    checks: strs.optional(),
  }),
  global_registry: z
    .looseObject({
      available: bool,
      ok: bool,
      registry: str,
      current_registry: maybe(str),
      current_registry_is_global: bool.optional(),
      global_goal_count: num.optional(),
      current_goal_count: num.optional(),
      source_registry_count: num.optional(),
      summary: numbersRecord,
      findings: z
        .array(
          z.looseObject({
            kind: str,
            severity: str,
            message: str,
            recommended_action: str,
            goal_id: maybe(str),
            path: maybe(str),
            goal_ids: strs.optional(),
          }),
        )
        .optional(),
      checks: strs.optional(),
    })
    .optional(),
  attention_queue: z.looseObject({
    available: bool,
    item_count: num,
    needs_user_or_controller: num,
    needs_controller: num.optional(),
    needs_codex: num,
    watching_external_evidence: num,
    autonomous_backlog_candidates: maybe(
      z.looseObject({
        source: maybe(str),
        open_count: num.optional(),
        items: z
          .array(
            z.looseObject({
              goal_id: str,
              status: maybe(str),
              waiting_on: maybe(str),
              quota_state: maybe(str),
              priority: maybe(str),
              todo_index: maybe(num),
              text: str,
              source: maybe(str),
            }),
          )
          .optional(),
      }),
    ),
    items: z.array(DashboardQueueItemSchema),
  }),
  run_history: z
    .looseObject({
      available: bool,
      goal_count: num.optional(),
      run_count: num.optional(),
      goals: z.array(RunGoalSchema).optional(),
      recent_runs: z.array(RunRecordSchema).optional(),
    })
    .optional(),
  event_ledger_summary: maybe(
    z.looseObject({ event_classes: strs.optional(), goals: z.array(z.looseObject({ goal_id: str })).optional() }),
  ),
  decision_freshness_summary: maybe(z.looseObject({ items: z.array(z.looseObject({ goal_id: str })).optional() })),
  usage_summary: maybe(
    z.looseObject({
      available: bool.optional(),
      source: str.optional(),
      generated_at: maybe(str),
      sample_run_count: num.optional(),
      proxy_note: maybe(str),
      totals: numbersRecord.optional(),
      goals: z.array(z.looseObject({ goal_id: str, project_share_24h: num.optional() })).optional(),
    }),
  ),
  promotion_readiness_summary: maybe(z.looseObject({ available: bool.optional() })),
  promotion_gate: maybe(z.looseObject({ ok: bool.optional() })),
  todo_index: maybe(
    z.looseObject({
      schema_version: maybe(str),
      source: maybe(str),
      total_count: num.optional(),
      current_projected_count: num.optional(),
      rollout_event_count: num.optional(),
      item_limit: maybe(num),
      items: z
        .array(
          DashboardTodoItemSchema.extend({
            goal_id: str,
            source: maybe(str),
            event_count: num.optional(),
            event_kinds: strs.optional(),
            latest_event_kind: maybe(str),
            latest_event_at: maybe(str),
            latest_event_status: maybe(str),
            agent_id: maybe(str),
          }),
        )
        .optional(),
    }),
  ),
  agent_management_projection: maybe(
    z.looseObject({ agents: z.array(z.looseObject({ agent_id: str, goal_ids: strs.optional() })).optional() }),
  ),
  goal_channel_notification_projection: maybe(
    z.looseObject({ goals: z.array(z.looseObject({ goal_id: str })).optional() }),
  ),
});

/** The dashboard's complaints about a payload, as `path: message` lines (empty when it renders). */
export function dashboardSchemaProblems(payload: unknown): string[] {
  const parsed = DashboardStatusPayloadSchema.safeParse(payload);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}
