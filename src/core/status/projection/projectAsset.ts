import { z } from 'zod';
import { cleanCopyOf, isCredentialClean } from '../../privacy/scrub';
import { compactOrchestrationPolicy, type CompactOrchestration } from '../../registry/orchestration';
import type { GoalStatusItem } from '../goalStatusSchema';
import { collapseWhitespace, publicSafeCompact, truncateText } from './text';
import { CONTROLLER_READINESS_FIELDS, OPERATOR_GATE_FIELDS } from './lifecycle';
import { CONNECTED_WITHOUT_RUN_ACTION } from './routeAction';

/**
 * The original's `project_asset` block of a status item (loopx/control_plane/work_items/project_asset.py
 * `build_project_asset`, `enrich_project_asset`, `attach_active_state_project_asset_fields`, and
 * control_plane/scheduler/monitor_display.py for a quiet monitor), built from our status item, its quota and the
 * goal's registry entry, for `loopx status` and `/status.json` alike. The rules, as we read them:
 *
 * - `owner`: who the item waits on (`waiting_on`; `unknown` when empty).
 * - `gate`: `operator_question` when the item carries an operator question, else the first missing controller gate,
 *   else the item's `status` when it waits on the controller or the user (`active_state_user_gate`, …), else
 *   `external_evidence` when it waits on outside evidence, else `none`.
 * - `support_mode`: `reward_capture` when "reward" appears in the status, the action, the agent command or the missing
 *   gates (a connected goal without runs: the route's own words, not its todo); else `decision_support` (an operator question, missing gates, or a controller/user wait); else
 *   `read_only_observer` (outside evidence, a monitor); else `selective_assist` (an agent command, or a codex wait);
 *   else `read_only_observer`.
 * - `next_action`: the item's `recommended_action`.
 * - `stop_condition`: the next handoff condition when there is one, else a sentence per wait (see `stopCondition`).
 * - `next_safe_command`: the approved agent command, public-safe compacted (320), when there is one.
 * - A quiet-monitor item (`waiting_on: monitor_signal` with an `execution_waiting_on`): owner `monitor_signal`, gate
 *   `none`, `read_only_observer`, the monitor stop condition, and `monitor_display`.
 * - Copied from the item when set: `latest_run_recommended_action(_source)`, `long_task_cadence_hint`,
 *   `agent_lane_recommendation`, `stale_latest_run_warning`, `active_state_next_action`,
 *   `next_action_projection_warning`, `backlog_hygiene_warning`, `state_projection_gap`,
 *   `completed_todo_archive_warning`, `issue_meta_surface`.
 * - `execution_profile`: the registry's `execution_profile` compacted over the default (`compactExecutionProfile`);
 *   `orchestration`: the registry's `spawn_policy` compacted (registry/orchestration.ts), only when it has one.
 * - `latest_validation`: the latest status run's `generated_at`, `classification` and `summary` (its health check,
 *   else its recommended action, compacted to 260), when any is set (`latestValidation`, computed with the item).
 * - `user_todos`/`agent_todos`: the todo overview (`project_asset_overview`, `todoOverview`), for each role whose
 *   summary the state file has (a section, or todos); `todo_projection_gap` names the roles that have none.
 * - `quota`: `compute`, `state`, `spent_slots`, `allowed_slots`, and `reason` compacted to 220 when set (ours keeps
 *   `window_hours` and `slot_minutes` beside them).
 * A registry wait over a run carries the entry's own question and handoff condition (`itemAttentionFields`).
 * Not carried (we do not project them yet): `dreaming_proposal`/`dreaming_lane_badge`, `control_plane`,
 * `subagent_activity`, `interface_budget_cadence`, `autonomous_replan_ack`/`_obligation(s_by_agent)`, and the agent-scoped todo lanes (`gate_open_items`, …).
 */

const MONITOR_SIGNAL = 'monitor_signal';
const MONITOR_STOP_CONDITION = 'stop until a material monitor transition, regression, or concrete blocker appears';
const MONITOR_DISPLAY_SCHEMA = 'monitor_quiet_display_v0';
/** `MAX_PROJECT_ASSET_TODO_ITEMS` and `MAX_DEFERRED_TODO_VISIBILITY_ITEMS` of the original. */
export const ASSET_TODO_ITEM_LIMIT = 3;
export const ASSET_DEFERRED_ITEM_LIMIT = 8;

/** The fields of a todo the overview shows, in the original's order (`PROJECT_ASSET_TODO_DISPLAY_FIELDS`). */
const DISPLAY_FIELDS = [
  'index',
  'done',
  'schema_version',
  'todo_id',
  'role',
  'status',
  'priority',
  'archive_state',
  'source_section',
  'task_class',
  'action_kind',
  'task_domain',
  'task_repository',
  'required_write_scopes',
  'required_capabilities',
  'target_capabilities',
  'decision_scope',
  'required_decision_scopes',
  'claimed_by',
  'bound_agent',
  'goal_bound',
  'blocks_agent',
  'excluded_agents',
  'global_gate',
  'unblocks_todo_id',
  'resume_when',
  'resume_condition',
  'resume_ready',
  'blocking_monitor_todo_id',
  'no_followup',
  'successor_todo_ids',
  'target_key',
  'cadence',
  'next_due_at',
  'expires_at',
  'last_checked_at',
  'result_hash',
  'consecutive_no_change',
  'material_change',
  'max_no_change_before_replan',
  'route_continuation_replan_required',
  'route_continuation_reason',
  'route_id',
  'route_key',
  'completed_at',
  'updated_at',
  'superseded_by',
] as const;

export const LatestValidationSchema = z.object({
  generated_at: z.string().optional(),
  classification: z.string().optional(),
  summary: z.string().optional(),
});
export type LatestValidation = z.infer<typeof LatestValidationSchema>;

/**
 * The run-side inputs of the block the item carries (the original's `attention_item` arguments): the latest status
 * run's operator gate and controller readiness, read when the item is projected (`attentionRunFields`).
 */
export const AttentionFieldsSchema = z.object({
  operator_question: z.string().optional(),
  agent_command: z.string().optional(),
  controller_stage: z.string().optional(),
  missing_gates: z.array(z.string()).optional(),
  next_handoff_condition: z.string().optional(),
});
export type AttentionFields = z.infer<typeof AttentionFieldsSchema>;

/** A todo of an overview: the display fields the todo has, then `text` and `title` compacted to 220. */
export const AssetTodoSchema = z.looseObject({ index: z.number().optional(), text: z.string().optional() });
export type AssetTodo = z.infer<typeof AssetTodoSchema>;

export const AssetTodoOverviewSchema = z.looseObject({
  schema_version: z.string(),
  source_section: z.literal('project_asset'),
  open: z.number(),
  done: z.number(),
  total: z.number(),
  projection_view: z.looseObject({ view: z.literal('project_asset_overview') }),
  detail_pointer: z.looseObject({ full_list_included: z.literal(false) }),
  claimed_open_count: z.number().optional(),
  unclaimed_open_count: z.number().optional(),
  items: z.array(AssetTodoSchema).optional(),
  next: z.string().optional(),
  next_index: z.number().optional(),
  next_claimed_by: z.string().optional(),
  deferred_count: z.number().optional(),
  deferred_visibility_limit: z.number().optional(),
  deferred_items: z.array(AssetTodoSchema).optional(),
  deferred_resume_candidates: z.array(AssetTodoSchema).optional(),
  first_executable_items: z.array(AssetTodoSchema).optional(),
  active_next_action_items: z.array(AssetTodoSchema).optional(),
  active_next_action_executable_items: z.array(AssetTodoSchema).optional(),
  claimed_advancement_open_count: z.number().optional(),
  claimed_monitor_open_count: z.number().optional(),
});
export type AssetTodoOverview = z.infer<typeof AssetTodoOverviewSchema>;

/** The roles whose todo summary the state file lacks (also on the item, as the original has it). */
export const TodoProjectionGapSchema = z.object({
  schema_version: z.literal('project_asset_todo_projection_gap_v0'),
  kind: z.literal('project_asset_todo_projection_gap'),
  missing_roles: z.array(z.enum(['user', 'agent'])),
  source: z.literal('active_state_todo_projection'),
  recommended_action: z.string(),
});

export const ProjectAssetSchema = z.looseObject({
  owner: z.string(),
  /** A code: `none`, `operator_question`, a missing gate, or the item's status when the owner must act. */
  gate: z.string(),
  support_mode: z.enum(['reward_capture', 'decision_support', 'read_only_observer', 'selective_assist']),
  next_action: z.string(),
  stop_condition: z.string(),
  next_safe_command: z.string().optional(),
  latest_run_recommended_action: z.string().optional(),
  latest_run_recommended_action_source: z.string().optional(),
  execution_profile: z.record(z.string(), z.unknown()),
  orchestration: z.record(z.string(), z.unknown()).optional(),
  latest_validation: LatestValidationSchema.optional(),
  long_task_cadence_hint: z.unknown(),
  user_todos: AssetTodoOverviewSchema.optional(),
  agent_todos: AssetTodoOverviewSchema.optional(),
  todo_projection_gap: TodoProjectionGapSchema.optional(),
  quota: z
    .looseObject({
      compute: z.unknown(),
      state: z.unknown(),
      spent_slots: z.unknown(),
      allowed_slots: z.unknown(),
      reason: z.string().optional(),
    })
    .optional(),
  monitor_display: z.record(z.string(), z.unknown()).optional(),
});
export type ProjectAsset = z.infer<typeof ProjectAssetSchema>;

type Json = Record<string, unknown>;

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The original's `compact_text`: whitespace collapsed, cut at `limit` with `…`. */
export function compactText(value: unknown, limit: number): string {
  const text = typeof value === 'string' ? value : value == null ? '' : String(value);
  // Most texts are short single-spaced lines: kept as they are (a UTF-16 length within the limit is within it).
  if (text.length <= limit && !/^\s|\s$|\s\s|[^\S ]/u.test(text)) return text;
  const collapsed = collapseWhitespace(text);
  return collapsed.length <= limit ? collapsed : truncateText(collapsed, limit);
}

/** Python truthiness of a JSON value. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return value !== null && value !== undefined && value !== false && value !== 0 && value !== '';
}

// ---------------------------------------------------------------------------------------------
// Owner, gate, support mode, stop condition

export interface AssetRoute {
  status: string;
  waiting_on: string;
  recommended_action: string;
  operator_question?: string | undefined;
  agent_command?: string | undefined;
  missing_gates?: readonly string[] | undefined;
  next_handoff_condition?: string | undefined;
}

export function assetOwner(waitingOn: string): string {
  return waitingOn === '' ? 'unknown' : waitingOn;
}

export function assetGate(route: AssetRoute): string {
  if (truthy(route.operator_question)) return 'operator_question';
  const missing = route.missing_gates ?? [];
  if (missing.length > 0) return String(missing[0]);
  if (route.waiting_on === 'user_or_controller' || route.waiting_on === 'controller')
    return route.status || route.waiting_on;
  if (route.waiting_on === 'external_evidence') return 'external_evidence';
  return 'none';
}

export function assetSupportMode(route: AssetRoute): ProjectAsset['support_mode'] {
  const surface = [
    route.status,
    route.recommended_action,
    route.agent_command ?? '',
    (route.missing_gates ?? []).join(' '),
  ]
    .join(' ')
    .toLowerCase();
  if (surface.includes('reward')) return 'reward_capture';
  if (
    truthy(route.operator_question) ||
    (route.missing_gates ?? []).length > 0 ||
    route.waiting_on === 'user_or_controller' ||
    route.waiting_on === 'controller'
  )
    return 'decision_support';
  if (route.waiting_on === 'external_evidence' || route.waiting_on === MONITOR_SIGNAL) return 'read_only_observer';
  if (truthy(route.agent_command) || route.waiting_on === 'codex') return 'selective_assist';
  return 'read_only_observer';
}

export function assetStopCondition(route: AssetRoute): string {
  if (truthy(route.next_handoff_condition)) return route.next_handoff_condition as string;
  switch (route.waiting_on) {
    case 'user_or_controller':
      return 'stop until the user or controller decision is recorded';
    case 'controller':
      return 'stop until the controller or owner resolves this gate';
    case 'external_evidence':
      return 'stop until external evidence changes';
    case MONITOR_SIGNAL:
      return MONITOR_STOP_CONDITION;
  }
  if (truthy(route.agent_command))
    return 'stop if the command fails or needs write, production, or additional approval';
  return 'stop if the next action needs reward, gate approval, write control, or production access';
}

// ---------------------------------------------------------------------------------------------
// Execution profile

const LABEL = /^[A-Za-z0-9][A-Za-z0-9_.:/-]{0,79}$/u;

/** Python's `str(value or "")` for JSON values. */
function pyStr(value: unknown): string {
  if (!truthy(value)) return '';
  if (value === true) return 'True';
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return String(value);
  return JSON.stringify(value);
}

function label(value: unknown, fallback: string): string {
  const text = pyStr(value).trim();
  return LABEL.test(text) ? text : fallback;
}

function labelList(value: unknown, fallback: readonly string[]): string[] {
  if (!Array.isArray(value)) return [...fallback];
  const labels = value.map((entry) => label(entry, '')).filter((entry) => entry !== '');
  return labels.length > 0 ? labels : [...fallback];
}

/** Python's `int(value)` when it is above 0, else the fallback. */
function positiveInt(value: unknown, fallback: number): number {
  let parsed: number | null = null;
  if (typeof value === 'boolean') parsed = value ? 1 : 0;
  else if (typeof value === 'number' && Number.isFinite(value)) parsed = Math.trunc(value);
  else if (typeof value === 'string' && /^\s*[+-]?\d+\s*$/u.test(value)) parsed = Number.parseInt(value.trim(), 10);
  return parsed !== null && parsed > 0 ? parsed : fallback;
}

/**
 * The original's `compact_execution_profile`: the default profile, each field replaced by the registry's when it is a
 * valid label (list, positive integer); `turn_granularity: fine` applies the fine-grained contract (single-surface
 * turns, a small-step threshold of 5). A `turn_granularity` that is neither `standard` nor `fine` (the original
 * fails the whole status on it) is read as standard.
 */
export function compactExecutionProfile(value: unknown): Json {
  const raw = isRecord(value) ? value : {};
  const rawPolicy = isRecord(raw['degradation_policy']) ? raw['degradation_policy'] : {};
  const rawFloor = isRecord(raw['outcome_floor']) ? raw['outcome_floor'] : {};
  const granularity = pyStr(raw['turn_granularity'] ?? 'standard')
    .trim()
    .toLowerCase()
    .replace(/-/gu, '_');
  const fine = Object.hasOwn(raw, 'turn_granularity') && granularity === 'fine';
  const profile: Json = {
    ...(fine ? { turn_granularity: 'fine' } : {}),
    cadence: label(raw['cadence'], 'bounded_progress_segment'),
    minimum_scale: label(raw['minimum_scale'], 'multi_surface_or_implementation'),
    must_include: labelList(raw['must_include'], ['coherent_artifact', 'targeted_validation', 'state_writeback']),
    spend_rule: label(raw['spend_rule'], 'spend_only_after_artifact_validation_writeback'),
    outcome_floor: {
      required_when: label(rawFloor['required_when'], 'after_surface_progress_streak'),
      surface_streak_threshold: positiveInt(rawFloor['surface_streak_threshold'], 3),
      outcome_markers: labelList(rawFloor['outcome_markers'], []),
      surface_only_hints: labelList(rawFloor['surface_only_hints'], []),
      must_advance: labelList(rawFloor['must_advance'], ['primary_goal_outcome']),
      avoid: labelList(rawFloor['avoid'], ['surface_only_progress_loop']),
      if_unavailable: label(rawFloor['if_unavailable'], 'report_blocker_without_spend'),
    },
    degradation_policy: {
      small_scale_streak_threshold: positiveInt(rawPolicy['small_scale_streak_threshold'], 2),
      on_degradation: label(rawPolicy['on_degradation'], 'require_blocker_or_expand_next_batch'),
    },
  };
  if (fine) {
    profile['planning_granularity'] = 'fine_checkpoint';
    profile['turn_work_budget'] = 'coherent_slice';
    profile['checkpoint_accounting'] = 'advancement_only';
    profile['minimum_scale'] = 'single_surface';
    profile['degradation_policy'] = {
      small_scale_streak_threshold: 5,
      on_degradation: 'review_direction_after_bounded_chain',
    };
  }
  return profile;
}

// ---------------------------------------------------------------------------------------------
// Projected with the item (from the raw latest status run)

/** The original's `project_asset_latest_validation` of the latest status run (null: none, or nothing set). */
export function latestValidation(run: Json | null): LatestValidation | null {
  if (run === null) return null;
  const signal: LatestValidation = {};
  for (const field of ['generated_at', 'classification'] as const) {
    const value = run[field];
    if (truthy(value)) signal[field] = typeof value === 'string' ? value : String(value);
  }
  const summary = truthy(run['health_check']) ? run['health_check'] : run['recommended_action'];
  // Public-safe (ours): a summary naming a local path or a credential is left out, as the run list leaves it.
  const safe = truthy(summary) ? publicSafeCompact(typeof summary === 'string' ? summary : String(summary), 260) : null;
  if (safe !== null) signal.summary = safe;
  return Object.keys(signal).length > 0 ? signal : null;
}

const DEFAULT_OPERATOR_GATE = 'read_only_map_opt_in';

function compactBlock(value: unknown, fields: readonly string[]): Json | null {
  return isRecord(value) && fields.some((field) => Object.hasOwn(value, field)) ? value : null;
}

/** The original's `default_operator_question`. */
export function defaultOperatorQuestion(goalId: string, gate: string): string {
  return gate === DEFAULT_OPERATOR_GATE
    ? `是否同意 \`${goalId}\` 先执行 read-only map opt-in？`
    : `是否同意 \`${goalId}\` 的 operator gate \`${gate}\`？`;
}

/** The original's `normalize_operator_question`: its legacy English defaults read as the current default. */
export function normalizeOperatorQuestion(question: string, goalId: string, gate: string): string {
  const legacy = [
    `Approve a read-only map opt-in for \`${goalId}\`?`,
    `Approve operator gate \`${gate}\` for \`${goalId}\`?`,
  ];
  return legacy.includes(question) ? defaultOperatorQuestion(goalId, gate) : question;
}

/**
 * The original's run attention fields (`readiness_attention_fields` and `operator_gate_attention_fields`) of the latest
 * status run: the controller stage, missing gates and handoff condition of its controller readiness; the operator
 * question of an undecided operator gate (the command of an approved one) and its follow-up as handoff condition.
 */
export function attentionRunFields(run: Json | null, goalId: string): AttentionFields {
  if (run === null) return {};
  const fields: AttentionFields = {};
  const readiness = compactBlock(run['controller_readiness'], CONTROLLER_READINESS_FIELDS);
  if (readiness !== null) {
    if (truthy(readiness['classification'])) fields.controller_stage = pyStr(readiness['classification']);
    const missing = readiness['missing_gates'];
    if (Array.isArray(missing)) {
      const names = missing.filter(truthy).map(pyStr);
      if (names.length > 0) fields.missing_gates = names;
    }
    if (truthy(readiness['next_handoff_condition']))
      fields.next_handoff_condition = pyStr(readiness['next_handoff_condition']);
  }
  const gate = compactBlock(run['operator_gate'], OPERATOR_GATE_FIELDS);
  if (gate !== null) {
    const gateName = pyStr(gate['gate']) || DEFAULT_OPERATOR_GATE;
    const runGoal = pyStr(run['goal_id']) || goalId;
    if (gate['decision'] !== 'approve' && truthy(gate['operator_question']))
      fields.operator_question = normalizeOperatorQuestion(pyStr(gate['operator_question']), runGoal, gateName);
    if (gate['decision'] === 'approve' && truthy(gate['agent_command']))
      fields.agent_command = pyStr(gate['agent_command']);
    if (truthy(gate['follow_up'])) fields.next_handoff_condition = pyStr(gate['follow_up']);
  }
  return fields;
}

/**
 * The attention fields of an item by its route (the original's `goal_attention` branches): a route from the latest
 * status run (its classification, the registry's wait over it, or its missing artifacts) carries the run's fields; a
 * planned read-only-map goal without runs asks the default operator question with the dry-run map command; other
 * routes (the active state, no run) carry none. A registry wait over a run takes the registry's own
 * `operator_question` and `next_handoff_condition` over the run's when the entry has them.
 */
export function itemAttentionFields(input: {
  goalId: string;
  attentionSource: string;
  status: string;
  latestStatusRun: Json | null;
  adapterStatus: string | null;
  adapterKind: string | null;
  /** The registry entry's own `operator_question` and `next_handoff_condition` (read on a registry route over a run). */
  registryOperatorQuestion?: string | null;
  registryNextHandoffCondition?: string | null;
}): AttentionFields {
  const { latestStatusRun: run } = input;
  if (run === null) {
    if (
      input.attentionSource === 'registry' &&
      input.adapterStatus === 'planned' &&
      (input.adapterKind ?? '').endsWith('_read_only_map_v0')
    )
      return {
        operator_question: defaultOperatorQuestion(input.goalId, DEFAULT_OPERATOR_GATE),
        agent_command: `loopx read-only-map --goal-id ${input.goalId} --dry-run`,
      };
    return {};
  }
  const fromRun =
    input.attentionSource === 'latest_run' ||
    input.attentionSource === 'registry' ||
    (input.attentionSource === 'run_history' && input.status === 'run_artifact_missing');
  if (!fromRun) return {};
  const fields = attentionRunFields(run, input.goalId);
  // A registry wait over a run: the registry's own question (normalized against the default gate: the loaded goal
  // carries no `operator_gate`) and handoff condition replace the run's (`goal_attention`'s registry override).
  if (input.attentionSource === 'registry') {
    if (truthy(input.registryOperatorQuestion))
      fields.operator_question = normalizeOperatorQuestion(
        input.registryOperatorQuestion as string,
        input.goalId,
        DEFAULT_OPERATOR_GATE,
      );
    if (truthy(input.registryNextHandoffCondition))
      fields.next_handoff_condition = input.registryNextHandoffCondition as string;
  }
  return fields;
}

// ---------------------------------------------------------------------------------------------
// Todo overviews

type Summary = NonNullable<GoalStatusItem['user_todos']>;
type Listed = Summary['first_open_items'][number];

/** A todo as the overview shows it: the display fields it has (not null), then `text` and `title` compacted to 220. */
function displayTodo(todo: Json, overrides: { done?: boolean; text?: string } = {}): AssetTodo {
  const display: Json = {};
  for (const field of DISPLAY_FIELDS) {
    const value = field === 'done' && overrides.done !== undefined ? overrides.done : todo[field];
    if (value !== undefined && value !== null) display[field] = value;
  }
  const text = compactText(overrides.text ?? todo['text'], 220);
  if (text !== '') display['text'] = text;
  const title = compactText(todo['title'], 220);
  if (title !== '') display['title'] = title;
  // Compacting could join what the credential redaction reads apart: the copy stays unmarked then.
  if (text === (todo['text'] ?? '') && title === (todo['title'] ?? '')) cleanCopyOf(display, todo);
  return display as AssetTodo;
}

function priorityRank(todo: Json): number {
  const match = /^P([0-4])/u.exec(
    String(todo['priority'] ?? '')
      .trim()
      .toUpperCase(),
  );
  return match === null ? 50 : Number(match[1]);
}

/** The original's `open_todo_items`: the first `limit` not-done todos of the lists, by (index, text) once, sorted. */
function openTodos(lists: readonly (readonly Listed[] | undefined)[], limit: number): AssetTodo[] {
  const result: AssetTodo[] = [];
  const seen = new Set<string>();
  collect: for (const list of lists)
    for (const todo of list ?? []) {
      if (todo.done) continue;
      const text = compactText(todo.text, 220);
      if (text === '') continue;
      const key = JSON.stringify([todo.index, text]);
      if (seen.has(key)) continue;
      seen.add(key);
      result.push(displayTodo(todo as unknown as Json, { done: false, text }));
      if (result.length >= limit) break collect;
    }
  return result
    .map((todo, i) => ({ todo, i }))
    .sort(
      (a, b) =>
        priorityRank(a.todo) - priorityRank(b.todo) ||
        Number(a.todo.index ?? 0) - Number(b.todo.index ?? 0) ||
        a.i - b.i,
    )
    .map(({ todo }) => todo);
}

/** Whether the state file has the role's summary (the original leaves it out when there is no section and no todo). */
export function hasTodoSummary(summary: Summary | null | undefined): summary is Summary {
  return summary !== null && summary !== undefined && (summary.source_section !== null || summary.total_count > 0);
}

/** The original's `project_asset_todo_summary` of a role's todo summary. */
export function todoOverview(summary: Summary, role: 'user' | 'agent'): AssetTodoOverview {
  const overview: AssetTodoOverview = {
    schema_version: summary.schema_version || 'todo_summary_v0',
    source_section: 'project_asset',
    open: summary.open_count,
    done: summary.done_count,
    total: summary.total_count,
    projection_view: {
      schema_version: 'todo_projection_view_v0',
      view: 'project_asset_overview',
      truth: 'derived',
      canonical_source: `attention_queue.items[].${role}_todos`,
      item_limit: ASSET_TODO_ITEM_LIMIT,
      deferred_item_limit: ASSET_DEFERRED_ITEM_LIMIT,
    },
    detail_pointer: {
      schema_version: 'todo_projection_detail_pointer_v0',
      cold_path: 'loopx status --format json',
      active_state_source: 'registry goal state_file',
      full_list_included: false,
    },
  };
  const items = openTodos([summary.first_open_items], ASSET_TODO_ITEM_LIMIT);
  const claimed =
    summary.claimed_open_count ?? (summary.claimed_open_items.length || items.filter((t) => t['claimed_by']).length);
  if (claimed > 0) {
    overview.claimed_open_count = claimed;
    overview.unclaimed_open_count = summary.unclaimed_open_count ?? Math.max(0, summary.open_count - claimed);
  }
  const first = items[0];
  if (first !== undefined) {
    overview.items = items;
    overview.next = String(first['text'] ?? '');
    if (first.index !== undefined) overview.next_index = first.index;
    if (truthy(first['claimed_by'])) overview.next_claimed_by = String(first['claimed_by']);
  }
  const deferred = summary.deferred_items
    .slice(0, ASSET_DEFERRED_ITEM_LIMIT)
    .map((t) => displayTodo(t as unknown as Json));
  const candidates = summary.deferred_resume_candidates
    .slice(0, ASSET_DEFERRED_ITEM_LIMIT)
    .map((t) => displayTodo(t as unknown as Json));
  overview.deferred_count = summary.deferred_count;
  overview.deferred_visibility_limit = ASSET_DEFERRED_ITEM_LIMIT;
  if (deferred.length > 0) overview.deferred_items = deferred;
  if (candidates.length > 0) overview.deferred_resume_candidates = candidates;
  const executable = openTodos(
    [summary.first_executable_items, summary.executable_backlog_items],
    ASSET_TODO_ITEM_LIMIT,
  ).filter((todo) => todo['status'] === 'open' && todo['task_class'] === 'advancement_task');
  if (executable.length > 0) overview.first_executable_items = executable;
  // `todo_lane_items` of the lanes ours has (the agent-scoped `gate_open_items`, `current_agent_claimed_open_items` not).
  for (const lane of ['active_next_action_items', 'active_next_action_executable_items'] as const) {
    const laneItems = openTodos([summary[lane] as readonly Listed[] | undefined], ASSET_TODO_ITEM_LIMIT);
    if (laneItems.length > 0) overview[lane] = laneItems;
  }
  const laneCount = (count: number | undefined, lane: readonly unknown[]): number | undefined =>
    count ?? (lane.length > 0 ? lane.length : undefined);
  const advancement = laneCount(summary.claimed_advancement_open_count, summary.claimed_advancement_open_items);
  if (advancement !== undefined) overview.claimed_advancement_open_count = advancement;
  const monitor = laneCount(summary.claimed_monitor_open_count, summary.claimed_monitor_open_items);
  if (monitor !== undefined) overview.claimed_monitor_open_count = monitor;
  // Made of the summary's values, its todos' (each marked when unchanged) and constants: clean when they are.
  const todos = [
    ...(overview.items ?? []),
    ...(overview.deferred_items ?? []),
    ...(overview.deferred_resume_candidates ?? []),
    ...(overview.first_executable_items ?? []),
    ...(overview.active_next_action_items ?? []),
    ...(overview.active_next_action_executable_items ?? []),
  ];
  if (todos.every((todo) => isCredentialClean(todo))) cleanCopyOf(overview, summary);
  return overview;
}

// ---------------------------------------------------------------------------------------------
// The block

/** What the block is built from: the status item with its quota (and the run-side fields it carries). */
export type ProjectAssetItem = Pick<
  GoalStatusItem,
  | 'status'
  | 'waiting_on'
  | 'severity'
  | 'execution_waiting_on'
  | 'execution_severity'
  | 'recommended_action'
  | 'latest_run_recommended_action'
  | 'latest_run_recommended_action_source'
  | 'long_task_cadence_hint'
  | 'agent_lane_recommendation'
  | 'stale_latest_run_warning'
  | 'active_state_next_action'
  | 'next_action_projection_warning'
  | 'backlog_hygiene_warning'
  | 'completed_todo_archive_warning'
  | 'issue_meta_surface'
  | 'state_projection_gap'
  | 'user_todos'
  | 'agent_todos'
  | 'quota'
> &
  AttentionFields & { latest_validation?: LatestValidation | undefined };

function assetQuota(quota: GoalStatusItem['quota']): ProjectAsset['quota'] {
  if (quota === undefined) return undefined;
  return {
    compute: quota.compute ?? null,
    state: quota.state ?? null,
    spent_slots: quota.spent_slots ?? null,
    allowed_slots: quota.allowed_slots ?? null,
    ...(truthy(quota.reason) ? { reason: compactText(quota.reason, 220) } : {}),
    // Ours, beside the original's.
    ...(quota.window_hours !== undefined ? { window_hours: quota.window_hours } : {}),
    ...(quota.slot_minutes !== undefined ? { slot_minutes: quota.slot_minutes } : {}),
  };
}

/**
 * The registry entry's `spawn_policy` compacted (registry/orchestration.ts), null when the entry has none (not an
 * object): `project_asset.orchestration`, and whether the todo summaries carry the task orchestration authority
 * (projection/taskOrchestrationAuthority.ts).
 */
export function registryOrchestration(
  registryEntry: Readonly<Record<string, unknown>> | undefined,
): CompactOrchestration | null {
  const spawnPolicy = registryEntry?.['spawn_policy'];
  return isRecord(spawnPolicy) ? compactOrchestrationPolicy(spawnPolicy) : null;
}

/** The `project_asset` block of a status item (see the module comment for each rule). */
export function projectAsset(
  item: ProjectAssetItem,
  /** The goal's registry entry: its `execution_profile` and `spawn_policy` are read. */
  registryEntry: Readonly<Record<string, unknown>> | undefined,
): ProjectAsset {
  return withAssetQuota(projectAssetBase(item, registryEntry), item);
}

/**
 * The block without what the item's quota decides (the quota changes with the time: a rolling window), kept with
 * the item between calls: `long_task_cadence_hint` and `quota` hold null where {@link withAssetQuota} puts the
 * item's (so the keys keep the block's order, also through JSON). Never shown as it is.
 */
export type ProjectAssetBase = Omit<ProjectAsset, 'long_task_cadence_hint' | 'quota'> & {
  long_task_cadence_hint: null;
  /** Null (set after the todo overviews, where the quota goes). */
  quota?: null;
};

/**
 * The block of an item from its base (`projectAssetBase` of the same item, with or without its quota): its quota
 * and its cadence hint (which a blocking quota state replaces: projection/quotaSignals.ts) put in. A new object.
 */
export function withAssetQuota(
  base: ProjectAssetBase,
  item: Pick<ProjectAssetItem, 'quota' | 'long_task_cadence_hint'>,
): ProjectAsset {
  const quota = assetQuota(item.quota);
  const asset: Json = {};
  // Key by key (a `delete` would leave the copy a slow dictionary object).
  for (const key in base) {
    if (key === 'long_task_cadence_hint') asset[key] = item.long_task_cadence_hint;
    else if (key !== 'quota') asset[key] = (base as Json)[key];
    else if (quota !== undefined) asset[key] = quota;
  }
  return asset as ProjectAsset;
}

/** The block without its quota-decided parts (see {@link ProjectAssetBase}): what status keeps with the item. */
export function projectAssetBase(
  item: Omit<ProjectAssetItem, 'quota' | 'long_task_cadence_hint'>,
  /** The goal's registry entry: its `execution_profile` and `spawn_policy` are read. */
  registryEntry: Readonly<Record<string, unknown>> | undefined,
): ProjectAssetBase {
  const quiet = item.waiting_on === MONITOR_SIGNAL && item.execution_waiting_on !== undefined;
  const route: AssetRoute = {
    status: item.status,
    waiting_on: item.waiting_on,
    // A connected goal without runs recommends its first agent todo, set after the block's support mode was read
    // from the route's own words (the original's `sync_connected_attention_action_from_todos`).
    recommended_action:
      item.status === 'connected_without_run' ? CONNECTED_WITHOUT_RUN_ACTION : item.recommended_action,
    operator_question: item.operator_question,
    agent_command: item.agent_command,
    missing_gates: item.missing_gates,
    next_handoff_condition: item.next_handoff_condition,
  };
  const nextSafeCommand = truthy(item.agent_command) ? publicSafeCompact(item.agent_command, 320) : null;
  const asset: ProjectAssetBase = quiet
    ? {
        owner: MONITOR_SIGNAL,
        gate: 'none',
        support_mode: 'read_only_observer',
        next_action: item.recommended_action,
        stop_condition: MONITOR_STOP_CONDITION,
        execution_profile: {},
        long_task_cadence_hint: null,
      }
    : {
        owner: assetOwner(item.waiting_on),
        gate: assetGate(route),
        support_mode: assetSupportMode(route),
        next_action: item.recommended_action,
        stop_condition: assetStopCondition(route),
        execution_profile: {},
        long_task_cadence_hint: null,
      };
  if (nextSafeCommand !== null) asset.next_safe_command = nextSafeCommand;
  if (truthy(item.latest_run_recommended_action)) {
    asset.latest_run_recommended_action = item.latest_run_recommended_action as string;
    if (truthy(item.latest_run_recommended_action_source))
      asset.latest_run_recommended_action_source = item.latest_run_recommended_action_source as string;
  }
  asset.execution_profile = compactExecutionProfile(registryEntry?.['execution_profile']);
  const orchestration = registryOrchestration(registryEntry);
  if (orchestration !== null) asset.orchestration = { ...orchestration };
  if (item.latest_validation !== undefined) asset.latest_validation = item.latest_validation;
  const optional: Json = {
    agent_lane_recommendation: item.agent_lane_recommendation,
    stale_latest_run_warning: item.stale_latest_run_warning,
    active_state_next_action: truthy(item.active_state_next_action) ? item.active_state_next_action : undefined,
    issue_meta_surface: item.issue_meta_surface,
    next_action_projection_warning: item.next_action_projection_warning,
    backlog_hygiene_warning: item.backlog_hygiene_warning,
    state_projection_gap: item.state_projection_gap,
    completed_todo_archive_warning: item.completed_todo_archive_warning,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) (asset as Json)[key] = value;
  const missing: ('user' | 'agent')[] = [];
  if (hasTodoSummary(item.user_todos)) asset.user_todos = todoOverview(item.user_todos, 'user');
  else missing.push('user');
  if (hasTodoSummary(item.agent_todos)) asset.agent_todos = todoOverview(item.agent_todos, 'agent');
  else missing.push('agent');
  if (missing.length > 0)
    asset.todo_projection_gap = {
      schema_version: 'project_asset_todo_projection_gap_v0',
      kind: 'project_asset_todo_projection_gap',
      missing_roles: missing,
      source: 'active_state_todo_projection',
      recommended_action:
        'add parseable User Todo / Agent Todo sections or repair the active state_file ' +
        'before treating this project_asset as first-screen complete',
    };
  // Where the quota goes (withAssetQuota).
  asset.quota = null;
  if (quiet)
    asset.monitor_display = {
      schema_version: MONITOR_DISPLAY_SCHEMA,
      mode: 'monitor_quiet',
      no_immediate_agent_work: true,
      execution_waiting_on: item.execution_waiting_on,
      execution_severity: item.execution_severity ?? '',
      waiting_on: MONITOR_SIGNAL,
      severity: 'watch',
      material_transition: 'write back only a material monitor transition, regression, or concrete blocker',
    };
  return asset;
}
