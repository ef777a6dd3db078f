import { z } from 'zod';
import { isoSeconds } from '../clock';
import { LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import { PRIORITIES, type Priority } from '../state/document';
import { parseDuration } from '../state/gates';
import { parsePriority, type GateFields, type NewTodoInput } from '../state/todos';
import type { HeartbeatReceipt } from '../evidence/receipts';
import type { RolloutEvent } from '../evidence/rolloutLog';
import { TodoSchema } from './resultSchemas';

/**
 * The todo operations' schemas: the argument fields they share (goal, todo, agent, priority, the gate
 * and task-lease fields, a successor), the JSON contract of an edit, the fields a failure prints, and
 * the gate and successor inputs read off the arguments.
 */

export const goalId = z
  .string()
  .refine((value) => {
    try {
      checkGoalIdSegment(value);
      return true;
    } catch {
      return false;
    }
  })
  .describe('the goal id (one path segment, e.g. "my-goal")');
export const todoId = z.string().trim().min(1).describe('the todo id, e.g. todo_a1b2c3');
export const agentId = z.string().trim().min(1);
/** The priorities the todo operations take (`priority`, `successorPriority`), most urgent first: a palette offers these. */
export const TODO_PRIORITIES: readonly Priority[] = PRIORITIES;

export const priority = z
  .string()
  .transform((value) => parsePriority(value) ?? value)
  .pipe(z.enum(PRIORITIES))
  .meta({ placeholder: 'P' });
export const text = z.string().trim().min(1);
export const scopes = z
  .array(z.string())
  .optional()
  .meta({ split: true, placeholder: 'scope' })
  .describe('a decision this agent todo needs, kind:granularity:key');

export const gateFields = {
  blocksAgent: agentId.optional().meta({ placeholder: 'agent' }).describe('gate: the agent lane this gate concerns'),
  globalGate: z.boolean().default(false).describe('gate: every agent todo waits for this gate'),
  unblocksTodoId: z
    .array(z.string())
    .optional()
    .meta({ split: true, placeholder: 'id' })
    .describe('gate: an agent todo this gate holds back until approved'),
  decisionScope: z
    .string()
    .optional()
    .meta({ placeholder: 'scope' })
    .describe('gate: the decision it grants, kind:granularity:key (e.g. public_claim:project:release)'),
  dueAt: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta({ placeholder: 'instant' })
    .describe('gate: when the person should decide, an ISO-8601 instant (e.g. 2026-01-31T12:00:00Z)'),
  dueIn: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta({ placeholder: 'duration' })
    .describe('gate: due this long from now, e.g. 30m, 4h, 2d, 1w'),
};

export const leaseFields = {
  leaseKey: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta({ placeholder: 'key' })
    .describe("the todo's task lease idempotency key (needed when the todo is leased)"),
  taskLeaseIdempotencyKey: z
    .string()
    .trim()
    .min(1)
    .optional()
    .meta({ placeholder: 'key' })
    .describe("same as --lease-key (the original's name)"),
  expectedVersion: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ placeholder: 'n' })
    .describe('the task lease version you hold (compare-and-swap: a stale version is refused, nothing is written)'),
  taskLeaseExpectedVersion: z
    .number()
    .int()
    .min(0)
    .optional()
    .meta({ placeholder: 'n' })
    .describe("same as --expected-version (the original's name)"),
};

export function successorFields(what: string) {
  return {
    successorText: text.optional().meta({ placeholder: 'text' }).describe(`the ${what} todo to add`),
    nextAgentTodo: text
      .optional()
      .meta({ placeholder: 'text' })
      .describe("same as --successor-text (the original's name)"),
    successorPriority: priority.optional().describe(`priority of the ${what} todo, P0…P4`),
    nextClaimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe(`agent that claims the ${what} todo`),
    nextActionKind: z.string().optional().meta({ placeholder: 'kind' }).describe(`action kind of the ${what} todo`),
  };
}

/**
 * The JSON contract of a todo edit. The original's fields: `todo_id`, `role`, `section`, `status`,
 * `claimed_by`, `task_class`, `todo` (the text); for add `added` (a new todo was written) and
 * `already_exists` (an unfinished todo with this text was found) and no `changed`; for complete
 * `completed: true`; for the other edits `changed`. Ours beside them: `written`, `changed_fields`,
 * the todo as `todo_item`, the todos an edit created as `added_todos`, `released_todo_ids`.
 */
export const TodoEditResultSchema = z.object({
  ok: z.literal(true),
  goal_id: z.string(),
  state_file: z.string(),
  operation: z.string(),
  todo_id: z.string(),
  role: z.enum(['user', 'agent']),
  section: z.string(),
  status: z.string(),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
  todo: z.string(),
  added: z.boolean().optional(),
  already_exists: z.boolean().optional(),
  metadata_updated: z.boolean().optional(),
  completed: z.literal(true).optional(),
  changed: z.boolean().optional(),
  agent_id: z.string().nullable().optional(),
  updated_at: z.string().nullable(),
  written: z.boolean(),
  changed_fields: z.array(z.string()),
  todo_item: TodoSchema,
  added_todos: z.array(TodoSchema),
  released_todo_ids: z.array(z.string()),
  /** complete/supersede: how the todo's task lease was checked (and released after the write). */
  task_lease_fence: z.record(z.string(), z.unknown()).optional(),
  /** claim in hard_lease mode: the lease the claimant holds now (its key and version complete the todo). */
  task_lease: z.record(z.string(), z.unknown()).nullable().optional(),
});
export type TodoEditOutput = z.infer<typeof TodoEditResultSchema>;

/** `todo complete --turn-instance-id T --agent-id A`: the edit plus its place in the heartbeat's receipt chain. */
export type TodoCompleteOutput = TodoEditOutput & {
  /** True when a retry of the same turn step found its completion already recorded (nothing was written). */
  idempotent_replay?: boolean;
  heartbeat_receipt?: HeartbeatReceipt | null;
  rollout_event?: RolloutEvent;
};

/** What the original prints beside `error` when a todo command fails (stdout JSON, exit 1). */
export function todoErrorFields(input: Record<string, unknown>): Record<string, unknown> {
  return {
    dry_run: false,
    added: false,
    already_exists: false,
    goal_id: typeof input['goalId'] === 'string' ? input['goalId'] : null,
    role: typeof input['role'] === 'string' ? input['role'] : null,
    // The original also echoes the text as `todo`; we do not, since a refused text may hold a credential.
  };
}

/** `--due-at` / `--due-in` as one instant (ISO seconds, UTC); undefined when neither is given. */
export function dueInstantOf(
  args: { dueAt?: string | undefined; dueIn?: string | undefined },
  now: Date,
): string | undefined {
  if (args.dueAt !== undefined && args.dueIn !== undefined)
    throw new LoopxError('usage', '--due-at and --due-in both set the due time; give only one');
  if (args.dueIn === undefined) return args.dueAt;
  const ms = parseDuration(args.dueIn);
  if (ms === null)
    throw new LoopxError(
      'invalid_todo_field',
      `--due-in ${JSON.stringify(args.dueIn)} must be a duration such as 30m, 4h, 2d or 1w`,
      { field: 'due_in', value: args.dueIn },
    );
  return isoSeconds(new Date(now.getTime() + ms));
}

export function gateOf(
  args: {
    blocksAgent?: string | undefined;
    globalGate: boolean;
    unblocksTodoId?: string[] | undefined;
    decisionScope?: string | undefined;
    dueAt?: string | undefined;
    dueIn?: string | undefined;
  },
  now: Date,
): GateFields | undefined {
  const gate: GateFields = {};
  const due = dueInstantOf(args, now);
  if (due !== undefined) gate.dueAt = due;
  if (args.blocksAgent !== undefined) gate.blocksAgent = args.blocksAgent;
  if (args.globalGate) gate.globalGate = true;
  if (args.unblocksTodoId !== undefined) gate.unblocksTodoIds = args.unblocksTodoId;
  if (args.decisionScope !== undefined) gate.decisionScope = args.decisionScope;
  return Object.keys(gate).length > 0 ? gate : undefined;
}

export function successorOf(args: {
  successorText?: string | undefined;
  nextAgentTodo?: string | undefined;
  successorPriority?: NewTodoInput['priority'] | undefined;
  nextClaimedBy?: string | undefined;
  nextActionKind?: string | undefined;
}): NewTodoInput | undefined {
  if (
    args.successorText !== undefined &&
    args.nextAgentTodo !== undefined &&
    args.successorText !== args.nextAgentTodo
  ) {
    throw new LoopxError('usage', '--successor-text and --next-agent-todo name the same successor; give only one');
  }
  const successor = args.successorText ?? args.nextAgentTodo;
  if (successor === undefined) return undefined;
  const input: NewTodoInput = { text: successor };
  if (args.successorPriority !== undefined) input.priority = args.successorPriority;
  if (args.nextClaimedBy !== undefined) input.claimedBy = args.nextClaimedBy;
  if (args.nextActionKind !== undefined) input.actionKind = args.nextActionKind;
  return input;
}
