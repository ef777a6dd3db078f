import { z } from 'zod';
import { nextActionProjectionWarningSchema, projectionWarningSchema } from '../status/projection/schemas';
import { GoalSummarySchema } from './goalRows';
import { RegistryGoalRowSchema } from '../registry/validate';
import { ArchiveRuntimeResult } from '../runtime/archive';
import { RunIndexEntry } from '../runtime/runIndex';
import { TODO_STATUSES } from '../state/document';
import { StateDiagnosticsSchema, StructuredProjectionSchema } from '../state/structured';

/**
 * The result contracts of the public API. Where the CLI prints the same thing with `--format json`
 * the schema is the same one (or, for `todo list`, field for field the same shape, which a test
 * checks against the CLI's output), so a script and the CLI see identical JSON.
 */

/** `archiveRuntimeGoal`: the `archive-runtime --format json` result. */
export const ArchiveRuntimeResultSchema = ArchiveRuntimeResult;

/** `nextActionProjectionWarning`: the `next_action_projection_warning_v0` object (plus our `message`, `id`, `compared`, `actions`). */
export const NextActionProjectionWarningSchema = nextActionProjectionWarningSchema;

/** Any projection warning `getGoalStatus` reports, told apart by `kind`. */
export const ProjectionWarningSchema = projectionWarningSchema;

/** `compactOrchestrationPolicy`: the `orchestration` object of each goal row of `loopx registry`. */
export const CompactOrchestrationSchema = RegistryGoalRowSchema.shape.orchestration;
export type CompactOrchestration = z.infer<typeof CompactOrchestrationSchema>;

/** `listGoals`: one goal as the editor's Goals view shows it. */
export { GoalSummarySchema };

/** `loadGoalState`: the state file's structured projection (`active_state_structured_projection_v0`). */
export const GoalStateSchema = z.object({
  goal_id: z.string(),
  state_file: z.string(),
  projection: StructuredProjectionSchema,
});
export type GoalState = z.infer<typeof GoalStateSchema>;

/** One todo, as `loopx todo list --format json` prints it. */
export const TodoSchema = z.object({
  index: z.number().int(),
  done: z.boolean(),
  text: z.string(),
  title: z.string(),
  todo_id: z.string(),
  todo_id_source: z.enum(['metadata', 'generated']),
  priority: z.string().nullable(),
  status: z.enum(TODO_STATUSES),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
  role: z.enum(['user', 'agent']),
  section: z.string(),
  /** 1-based line of the checkbox. */
  line: z.number().int(),
  metadata: z.record(z.string(), z.string()),
});
export type Todo = z.infer<typeof TodoSchema>;

export const GateRelationSchema = z.enum([
  'global_gate',
  'gate_targets_todo',
  'gate_covers_action',
  'projection_repair_required',
]);
export const GateStateSchema = z.enum(['open', 'rejected', 'cancelled']);

export const GateBlockSchema = z.object({
  gate_todo_id: z.string(),
  relation: GateRelationSchema,
  gate_state: GateStateSchema,
});
export type GateBlock = z.infer<typeof GateBlockSchema>;

/** A user gate (a `user_gate` todo that is open, or resolved with reject/cancel and still holding work back). */
export const GateSchema = z.object({
  todo_id: z.string(),
  text: z.string(),
  title: z.string(),
  status: z.string(),
  gate_state: GateStateSchema,
  line: z.number().int(),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
  unblocks_todo_ids: z.array(z.string()),
  decision_scope: z.string().nullable(),
  decision_outcome: z.string().nullable(),
  /** The gate names no lane and no work: nothing tells which todo waits for it. */
  unscoped: z.boolean(),
  blocked_todo_ids: z.array(z.string()),
  /** When the person should have decided (ISO-8601; metadata `next_due_at`), or null. */
  due_at: z.string().nullable(),
  /** The gate's `updated_at` metadata (when it was last written), or null. */
  updated_at: z.string().nullable(),
});
export type Gate = z.infer<typeof GateSchema>;

/** `listTodos`: the `loopx todo list --format json` result. Agent todos carry the gates holding them back. */
export const TodoListResultSchema = z.object({
  ok: z.literal(true),
  goal_id: z.string(),
  state_file: z.string(),
  count: z.number().int(),
  todos: z.array(TodoSchema.extend({ blocked_by: z.array(GateBlockSchema) })),
  open_gates: z.array(GateSchema),
  holding_gates: z.array(GateSchema),
  lane_gates_by_agent: z.record(z.string(), z.array(z.string())),
  diagnostics: StateDiagnosticsSchema,
});
export type TodoListResult = z.infer<typeof TodoListResultSchema>;

/** `listGates`: the goal's gates and, for every agent todo not done or deferred, what holds it back. */
export const GateListResultSchema = z.object({
  goal_id: z.string(),
  state_file: z.string(),
  open_gates: z.array(GateSchema),
  holding_gates: z.array(GateSchema),
  agent_todos: z.array(
    z.object({
      todo_id: z.string(),
      claimed_by: z.string().nullable(),
      blocked: z.boolean(),
      blocked_by: z.array(GateBlockSchema),
    }),
  ),
  /** Agents with an open lane gate (`blocks_agent`), and those gates' ids. */
  lane_gates_by_agent: z.record(z.string(), z.array(z.string())),
});
export type GateListResult = z.infer<typeof GateListResultSchema>;

const RoleCountsSchema = z.object({
  total_count: z.number().int(),
  open_count: z.number().int(),
  done_count: z.number().int(),
  blocked_count: z.number().int(),
  deferred_count: z.number().int(),
});

/**
 * `getGoalStatus`: one goal at a glance, read-only. `state` is null (and `state_error` says why)
 * when the state file cannot be read; the registry entry and the run history are still reported.
 */
export const GoalStatusSchema = z.object({
  schema_version: z.literal('loopx_api_goal_status_v1'),
  goal: GoalSummarySchema,
  state: z
    .object({
      state_file: z.string(),
      updated_at: z.string().nullable(),
      /** The durable route: the first Next Action entry. */
      next_action: z.string().nullable(),
      todos: z.object({ user: RoleCountsSchema, agent: RoleCountsSchema }),
      open_gate_count: z.number().int(),
      diagnostics: z.object({ parseable: z.boolean(), warning_count: z.number().int(), error_count: z.number().int() }),
    })
    .nullable(),
  state_error: z.object({ code: z.string(), message: z.string() }).nullable(),
  runs: z.object({
    count: z.number().int(),
    /** The newest run that speaks for the goal (not quota bookkeeping, not one agent's lane). */
    latest_status_run: RunIndexEntry.nullable(),
  }),
  /** Projection drift warnings, most severe first. */
  warnings: z.array(projectionWarningSchema),
});
export type GoalStatus = z.infer<typeof GoalStatusSchema>;
