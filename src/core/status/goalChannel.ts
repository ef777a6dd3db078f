import { z } from 'zod';
import { cleanCopyOf } from '../privacy/scrub';
import { goalStopped } from '../quota/state';
import type { RegistryGoal } from '../registry/schema';
import { OPERATOR_WAITS } from '../todo/attention';
import { todosOrEmpty, type GoalStatusItem, type StatusTodoItem } from './goalStatus';
import { projectAsset, ProjectAssetSchema } from './projection/projectAsset';

/**
 * The per-goal blocks existing LoopX dashboards read from every `attention_queue.items[]` entry
 * besides the status item itself: `project_asset`, `activation_state` and the read-only
 * `goal_channel_projection`. Pure functions of the status item and the goal's registry entry;
 * field names and types follow status-contract-fields.txt. No paths: sources are named by
 * their file names only.
 */

export const GOAL_CHANNEL_PROJECTION_SCHEMA = 'goal_channel_projection_v0' as const;

export const ActivationStateSchema = z.enum(['active', 'stopped']);
export type ActivationState = z.infer<typeof ActivationStateSchema>;

export { ProjectAssetSchema, type ProjectAsset } from './projection/projectAsset';

/** A scalar: the only values the dashboards accept in the projection's `quota`, `source_refs` and `artifacts[]`. */
const ScalarSchema = z.union([z.string(), z.number(), z.boolean(), z.null()]);
export const ScalarRecordSchema = z.record(z.string(), ScalarSchema);

/** `priority` and `claimed_by` are left out rather than `null`: the dashboards accept a string or no key. */
const GoalChannelTodoSchema = z.object({
  todo_id: z.string(),
  status: z.string(),
  title: z.string(),
  priority: z.string().optional(),
  claimed_by: z.string().optional(),
});
export type GoalChannelTodo = z.infer<typeof GoalChannelTodoSchema>;

export const GoalChannelProjectionSchema = z.object({
  schema_version: z.literal(GOAL_CHANNEL_PROJECTION_SCHEMA),
  mode: z.literal('read_only'),
  goal_id: z.string(),
  display_name: z.string(),
  latest_status: z.string(),
  waiting_on: z.string(),
  next_action: z.string(),
  /** Which files the projection is computed from, by file name only. */
  source_refs: z.record(z.string(), z.string()),
  decision_frame: z.object({
    user_action_required: z.boolean(),
    agent_action_required: z.boolean(),
    quiet_noop_allowed: z.boolean(),
  }),
  /** The status item's quota, scalars only (nested budgets and warning lists stay on `items[].quota`). */
  quota: ScalarRecordSchema,
  user_todos: z.array(GoalChannelTodoSchema),
  agent_todos: z.array(GoalChannelTodoSchema),
  open_gates: z.array(
    z.object({
      gate_id: z.string(),
      kind: z.literal('user_gate'),
      status: z.string(),
      title: z.string(),
      /** Todo ids the gate holds back, then `agent:<id>` for a gated agent lane. */
      blocks: z.array(z.string()),
      decision_scope: z.string().nullable(),
    }),
  ),
  /** Claimed open agent todos: the soft leases agents hold. */
  active_leases: z.array(
    z.object({ agent_id: z.string(), owner_agent: z.string(), todo_id: z.string(), write_scope: z.array(z.string()) }),
  ),
  artifacts: z.array(ScalarRecordSchema),
  /** The dashboards' names (`generated_at`, `classification`, `summary`: a string or no key) beside ours. */
  recent_events: z.array(
    z.object({
      at: z.string().nullable(),
      kind: z.string().nullable(),
      agent_id: z.string().nullable(),
      summary: z.string().optional(),
      generated_at: z.string().optional(),
      classification: z.string().optional(),
    }),
  ),
  source_warnings: z.array(z.object({ id: z.string(), kind: z.string(), severity: z.string(), message: z.string() })),
  truth_contract: z.object({
    event_ledger_is_source_of_truth: z.boolean(),
    projection_is_writable: z.boolean(),
    recompute_rule: z.string(),
    write_authority: z.string(),
  }),
});
export type GoalChannelProjection = z.infer<typeof GoalChannelProjectionSchema>;

export const DashboardGoalFieldsSchema = z.object({
  project_asset: ProjectAssetSchema,
  activation_state: ActivationStateSchema,
  goal_channel_projection: GoalChannelProjectionSchema,
});
export type DashboardGoalFields = z.infer<typeof DashboardGoalFieldsSchema>;

const TRUTH_CONTRACT: GoalChannelProjection['truth_contract'] = {
  event_ledger_is_source_of_truth: true,
  projection_is_writable: false,
  recompute_rule:
    'recomputed from the registry entry, ACTIVE_GOAL_STATE.md and the run index whenever one of them changes',
  write_authority: 'loopx CLI and LoopX editor commands (todo, refresh-state, quota); never this projection',
};

function stringList(value: unknown): string[] {
  return Array.isArray(value)
    ? value.filter((entry): entry is string => typeof entry === 'string' && entry.trim() !== '')
    : [];
}

export function activationState(goal: Record<string, unknown> | undefined): ActivationState {
  return goal !== undefined && goalStopped(goal) ? 'stopped' : 'active';
}

function channelTodo(todo: StatusTodoItem): GoalChannelTodo {
  // Made of the todo's texts only: clean when the todo is (the status redaction need not walk it).
  return cleanCopyOf(
    {
      todo_id: todo.todo_id,
      status: todo.status,
      title: todo.title,
      ...(todo.priority !== null ? { priority: todo.priority } : {}),
      ...(todo.claimed_by !== null ? { claimed_by: todo.claimed_by } : {}),
    },
    todo,
  );
}

/** The scalar entries of a record: what a dashboard's scalar record accepts. */
function scalarEntries(record: Record<string, unknown> | undefined): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [key, value] of Object.entries(record ?? {}))
    if (value === null || ['string', 'number', 'boolean'].includes(typeof value))
      out[key] = value as string | number | boolean | null;
  return out;
}

/** Present only when it is a string: the dashboards accept a string or no key, never `null`. */
function optionalText<K extends string>(key: K, value: string | null | undefined): Partial<Record<K, string>> {
  return typeof value === 'string' ? ({ [key]: value } as Record<K, string>) : {};
}

/** The read-only goal channel projection of one status item. */
export function goalChannelProjection(item: GoalStatusItem, goal: RegistryGoal | undefined): GoalChannelProjection {
  const userActionRequired = OPERATOR_WAITS.has(item.waiting_on) || item.open_gates.length > 0;
  const agentActionRequired = item.waiting_on === 'codex' && todosOrEmpty(item.agent_todos).open_count > 0;
  const writeScope = stringList(goal?.coordination?.write_scope);
  return {
    schema_version: GOAL_CHANNEL_PROJECTION_SCHEMA,
    mode: 'read_only',
    goal_id: item.goal_id,
    display_name: item.display_name,
    latest_status: item.status,
    waiting_on: item.waiting_on,
    next_action: item.recommended_action,
    source_refs: { registry: 'registry.json', state_file: 'ACTIVE_GOAL_STATE.md', run_index: 'runs/index.jsonl' },
    decision_frame: {
      user_action_required: userActionRequired,
      agent_action_required: agentActionRequired,
      quiet_noop_allowed: !userActionRequired && !agentActionRequired,
    },
    quota: scalarEntries(item.quota),
    user_todos: todosOrEmpty(item.user_todos).items.map(channelTodo),
    agent_todos: todosOrEmpty(item.agent_todos).items.map(channelTodo),
    open_gates: item.open_gates.map((gate) => ({
      gate_id: gate.todo_id,
      kind: 'user_gate',
      status: gate.gate_state,
      title: gate.title,
      blocks: [...gate.blocked_todo_ids, ...(gate.blocks_agent !== null ? [`agent:${gate.blocks_agent}`] : [])],
      decision_scope: gate.decision_scope,
    })),
    active_leases: todosOrEmpty(item.agent_todos)
      .items.filter((todo) => todo.claimed_by !== null)
      .map((todo) => ({
        agent_id: todo.claimed_by ?? '',
        owner_agent: todo.claimed_by ?? '',
        todo_id: todo.todo_id,
        write_scope: writeScope,
      })),
    // Each made of one run's (one warning's) texts and constants: clean when that run is.
    artifacts: item.latest_runs.map((run) =>
      cleanCopyOf(
        {
          kind: 'run_record',
          generated_at: run.generated_at,
          classification: run.classification,
          json_exists: run.json_exists,
          markdown_exists: run.markdown_exists,
        },
        run,
      ),
    ),
    recent_events: item.latest_runs.map((run) =>
      cleanCopyOf(
        {
          at: run.generated_at,
          kind: run.classification,
          agent_id: run.agent_id,
          ...optionalText('summary', run.recommended_action),
          ...optionalText('generated_at', run.generated_at),
          ...optionalText('classification', run.classification),
        },
        run,
      ),
    ),
    source_warnings: item.projection_warnings.map((warning) =>
      cleanCopyOf(
        {
          id: warning.id,
          kind: warning.kind,
          severity: warning.severity,
          message: warning.message,
        },
        warning,
      ),
    ),
    truth_contract: TRUTH_CONTRACT,
  };
}

export function dashboardGoalFields(item: GoalStatusItem, goal: RegistryGoal | undefined): DashboardGoalFields {
  return {
    project_asset: projectAsset(item, goal),
    activation_state: activationState(goal),
    goal_channel_projection: goalChannelProjection(item, goal),
  };
}
