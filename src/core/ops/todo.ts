import type { GoalRef } from '../registry/goalRef';
import { z } from 'zod';
import { registeredAgentsForGoal } from '../registry/agentIds';
import { TodoListResultSchema, TodoSchema } from './resultSchemas';
import { isoSeconds } from '../clock';
import { turnInstanceIdArg } from './common';
import { isLoopxError, LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import { PRIORITIES, TODO_STATUSES, type Priority } from '../state/document';
import { analyzeGates, DECISION_OUTCOMES, isUserGate, parseDuration, type GateBlock } from '../state/gates';
import { applyStateEdit, readStateFile } from '../state/stateFile';
import { diagnoseStateDocument } from '../state/structured';
import {
  addTodo,
  claimTodo,
  completeTodo,
  deferTodo,
  listTodos,
  parsePriority,
  supersedeTodo,
  TASK_CLASSES,
  updateTodo,
  type GateFields,
  type NewTodoInput,
  type OperationContext,
  type TodoEditResult,
} from '../state/todos';
import { withAgentLease, withCompletionFence, type FenceReceipt } from '../leases/completionFence';
import type { LeaseResult } from '../leases/verbs';
import { handoffModeOf, leasePath } from '../leases/store';
import { compactUtcStamp } from '../runtime/time';
import { parseStateDocument } from '../state/document';
import * as fs from 'node:fs';
import { quotaGoalOf, requireStatePath, resolveGoal, type ResolvedGoal } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';
import { recordStepEvent, resolveChainBinding, stepEventRecorded, type TurnStep } from '../evidence/heartbeatChain';
import type { HeartbeatReceipt } from '../evidence/receipts';
import { appendRolloutEvents, buildRolloutEvent, rolloutEventLogOf, type RolloutEvent } from '../evidence/rolloutLog';
import { LOCK_FILE_SUFFIX, reclaimAbandonedLock } from '../fs/fileLock';
import { checkTurnInstanceId } from '../quota/identity';
import { normalizeAgentId } from '../registry/agentIds';
import { crashCheckpoint } from '../turn/crashHook';

/**
 * The todo lifecycle of a goal's ACTIVE_GOAL_STATE.md: add, list, claim, update, complete,
 * supersede, defer. Every edit is one locked compare-and-swap write of the state file; `list` only
 * reads.
 */

const goalId = z
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
const todoId = z.string().trim().min(1).describe('the todo id, e.g. todo_a1b2c3');
const agentId = z.string().trim().min(1);
/** The priorities the todo operations take (`priority`, `successorPriority`), most urgent first: a palette offers these. */
export const TODO_PRIORITIES: readonly Priority[] = PRIORITIES;

const priority = z
  .string()
  .transform((value) => parsePriority(value) ?? value)
  .pipe(z.enum(PRIORITIES))
  .meta({ placeholder: 'P' });
const text = z.string().trim().min(1);
const scopes = z
  .array(z.string())
  .optional()
  .meta({ split: true, placeholder: 'scope' })
  .describe('a decision this agent todo needs, kind:granularity:key');

const gateFields = {
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

const leaseFields = {
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

function oneOf<T>(a: T | undefined, b: T | undefined, names: string): T | undefined {
  if (a !== undefined && b !== undefined && a !== b)
    throw new LoopxError('usage', `${names} name the same value; give only one`);
  return a ?? b;
}

/** The goal's handoff mode read outside any lock (the locked paths read it again). */
function handoffModeNow(goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>) {
  if (goal.statePath === null) return handoffModeOf(goal, null);
  let text: string;
  try {
    text = fs.readFileSync(goal.statePath, 'utf8');
  } catch {
    return handoffModeOf(goal, null);
  }
  return handoffModeOf(goal, parseStateDocument(text));
}

function leaseFileExists(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todoId: string,
): boolean {
  try {
    return fs.existsSync(leasePath(goal, todoId));
  } catch {
    return false; // not a structured todo id: no lease can name it
  }
}

/**
 * complete / supersede behind the todo's task lease (docs/leases.md): with no lease file, no key
 * and no hard_lease mode there is nothing to check and no lock is taken.
 */
function completionFence(
  env: OperationEnvironment,
  todoId: string,
  agentId: string | undefined,
  lease: {
    leaseKey?: string | undefined;
    taskLeaseIdempotencyKey?: string | undefined;
    expectedVersion?: number | undefined;
    taskLeaseExpectedVersion?: number | undefined;
  },
): LeaseWrap {
  const key = oneOf(lease.leaseKey, lease.taskLeaseIdempotencyKey, '--lease-key and --task-lease-idempotency-key');
  const version = oneOf(
    lease.expectedVersion,
    lease.taskLeaseExpectedVersion,
    '--expected-version and --task-lease-expected-version',
  );
  return async (goal, write) => {
    const leaseGoal = goal;
    if (
      key === undefined &&
      version === undefined &&
      !leaseFileExists(leaseGoal, todoId) &&
      handoffModeNow(leaseGoal) !== 'hard_lease'
    )
      return write();
    const { value, fence } = await withCompletionFence(
      leaseGoal,
      { todoId, actorAgentId: agentId ?? null, idempotencyKey: key, expectedVersion: version },
      env.clock,
      write,
    );
    return { ...value, task_lease_fence: fenceFields(fence) };
  };
}

function fenceFields(fence: FenceReceipt): Record<string, unknown> {
  return { ...fence };
}

/** claim in hard_lease mode: the claimant acquires the todo's lease first (refused when another agent holds it). */
function claimLease(env: OperationEnvironment, todoId: string, claimant: string, takeover: boolean): LeaseWrap {
  return async (goal, write) => {
    const leaseGoal = goal;
    if (handoffModeNow(leaseGoal) !== 'hard_lease') return write();
    return withAgentLease(
      leaseGoal,
      { todoId, agentId: claimant, idempotencyKey: `claim:${claimant}:${compactUtcStamp(env.clock.now())}`, takeover },
      env.clock,
      async (lease: LeaseResult | null) => ({ ...(await write()), task_lease: lease?.lease ?? null }),
    );
  };
}

function successorFields(what: string) {
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
 * The original's goal-not-found text for todo commands comes first (agents match it), then ours.
 */
function withOriginalGoalText(error: unknown): unknown {
  if (isLoopxError(error, 'goal_not_found'))
    return new LoopxError(
      'goal_not_found',
      `state file is required when the goal is not resolvable from registry: ${error.message}`,
      error.details,
    );
  return error;
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

/** Edits whose rollout event (docs/turns.md#the-rollout-event-log) is appended after a written edit. */
const EVENT_KINDS = {
  todo_add: 'added',
  todo_claim: 'claimed',
  todo_update: 'updated',
  todo_complete: 'completed',
} as const;

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

function gateOf(
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

function successorOf(args: {
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

/** Runs one edit as a locked compare-and-swap write of the goal's state file. */
async function editTodos(
  env: OperationEnvironment,
  id: string,
  operation: string,
  edit: (stateText: string, context: OperationContext) => TodoEditResult,
  actorAgentId?: string,
  around?: LeaseWrap,
  options: { goal?: ResolvedGoal; recordEvent?: boolean } = {},
): Promise<TodoEditOutput> {
  let goal: ResolvedGoal;
  try {
    goal = options.goal ?? (await resolveGoal(env, id));
  } catch (error) {
    throw withOriginalGoalText(error);
  }
  const write = () => writeEdit(env, goal, operation, edit, actorAgentId, options.recordEvent !== false);
  return around === undefined ? write() : around(goal, write);
}

/** Runs a todo write behind the todo's task lease (the completion fence, or hard_lease's acquire-on-claim). */
type LeaseWrap = (goal: ResolvedGoal, write: () => Promise<TodoEditOutput>) => Promise<TodoEditOutput>;

async function writeEdit(
  env: OperationEnvironment,
  goal: ResolvedGoal,
  operation: string,
  edit: (stateText: string, context: OperationContext) => TodoEditResult,
  actorAgentId: string | undefined,
  recordEvent: boolean,
): Promise<TodoEditOutput> {
  const statePath = requireStatePath(goal);
  const context = operationContextOf(goal, env, actorAgentId);
  // This command may append to the event log. A run of it killed while holding that lock left the
  // lock behind, and a rerun whose edit is a no-op would never take it: reclaim it now (dead holders only).
  if (recordEvent) reclaimAbandonedLock(`${rolloutEventLogOf(quotaGoalOf(goal).runtimeDir)}${LOCK_FILE_SUFFIX}`);
  const result = await applyStateEdit(statePath, (stateText) => edit(stateText, context), {
    operation,
    lock: { clock: env.clock, env: env.env },
  });
  const { todo, added_todos, ...summary } = result.summary;
  const kind = summary.operation;
  if (result.written && recordEvent && kind in EVENT_KINDS) {
    const eventKind = kind as keyof typeof EVENT_KINDS;
    await appendRolloutEvents(
      quotaGoalOf(goal).runtimeDir,
      [
        buildRolloutEvent({
          goalId: goal.goalId,
          eventKind,
          recordedAt: context.now,
          agentId: context.actorAgentId ?? todo.claimed_by ?? null,
          todoId: summary.todo_id,
          status: EVENT_KINDS[eventKind],
          summary: `${operation} ${summary.todo_id}`,
          details: { todo_id: summary.todo_id, role: todo.role, todo_status: todo.status },
        }),
      ],
      { lock: { clock: env.clock, env: env.env, operation } },
    );
  }
  return TodoEditResultSchema.parse({
    ok: true,
    goal_id: goal.goalId,
    state_file: statePath,
    ...summary,
    role: todo.role,
    section: todo.section,
    status: todo.status,
    claimed_by: todo.claimed_by,
    task_class: todo.task_class,
    todo: todo.text,
    ...(kind === 'todo_add'
      ? {
          added: result.added ?? true,
          already_exists: result.added === false,
          metadata_updated: result.added === false && result.changed,
          changed: undefined,
        }
      : {}),
    ...(kind === 'todo_complete' ? { completed: true } : {}),
    agent_id: context.actorAgentId ?? null,
    updated_at: result.changed ? context.now : null,
    written: result.written,
    todo_item: todo,
    added_todos,
  });
}

function operationContextOf(goal: ResolvedGoal, env: OperationEnvironment, actorAgentId?: string): OperationContext {
  const registered = registeredAgentsForGoal(goal.rawEntry);
  return {
    now: isoSeconds(env.clock.now()),
    goalId: goal.goalId,
    roster: registered.length > 0 ? registered : null,
    actorAgentId: actorAgentId ?? null,
  };
}

export const todoAdd = defineOperation({
  key: 'todoAdd',
  args: z.strictObject({
    goalId: goalId.describe('the goal whose state file gets the todo'),
    text: text.describe('the todo text'),
    role: z.enum(['user', 'agent']).optional().describe('user or agent (default agent; gate options imply user)'),
    priority: priority.optional().describe('P0 (highest) … P4, written as a [Pn] prefix'),
    taskClass: z
      .string()
      .optional()
      .meta({ placeholder: 'class' })
      .describe(`${TASK_CLASSES.join(', ')}`),
    actionKind: z.string().optional().meta({ placeholder: 'kind' }).describe('lowercase action kind, e.g. implement'),
    claimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe('claim it for a registered agent right away'),
    note: z.string().optional().meta({ placeholder: 'text' }).describe('a note kept in the metadata'),
    requiredDecisionScope: scopes,
    resumeWhen: z
      .string()
      .optional()
      .meta({ placeholder: 'condition' })
      .describe('when it resumes: todo_done:<todo_id>, pr_merged:[owner/repo]#<n> or capacity_available:<capability>'),
    watchOnly: z.boolean().default(false).describe('continuous_monitor: only watch, never deliver'),
    expiresAt: z
      .string()
      .optional()
      .meta({ placeholder: 'instant' })
      .describe('continuous_monitor: when it stops (ISO-8601)'),
    ...gateFields,
    boundAgent: agentId
      .optional()
      .meta({ placeholder: 'agent' })
      .describe(
        'user todo: the agent lane it is for (default: --agent-id, the agent a gate blocks, or the only agent)',
      ),
    goalBound: z.boolean().default(false).describe('user todo: for the whole goal rather than one agent lane'),
    agentId: agentId
      .optional()
      .meta({ placeholder: 'agent' })
      .describe('the registered agent authoring it (a user gate then blocks, and a user todo binds to, this agent)'),
  }),
  errorFields: todoErrorFields,
  run: (args, env) => {
    const gateFields = gateOf(args, env.clock.now());
    const gate = { ...gateFields };
    if (args.boundAgent !== undefined) gate.boundAgent = args.boundAgent;
    if (args.goalBound) gate.goalBound = true;
    const role =
      args.role ??
      (gateFields !== undefined || args.taskClass === 'user_gate' || args.boundAgent !== undefined || args.goalBound
        ? 'user'
        : 'agent');
    const input: NewTodoInput = { text: args.text };
    if (args.priority !== undefined) input.priority = args.priority;
    if (args.taskClass !== undefined) input.taskClass = args.taskClass;
    if (args.actionKind !== undefined) input.actionKind = args.actionKind;
    if (args.claimedBy !== undefined) input.claimedBy = args.claimedBy;
    if (args.note !== undefined) input.note = args.note;
    if (args.requiredDecisionScope !== undefined) input.requiredDecisionScopes = args.requiredDecisionScope;
    if (args.resumeWhen !== undefined) input.resumeWhen = args.resumeWhen;
    if (args.watchOnly) input.watchOnly = true;
    if (args.expiresAt !== undefined) input.expiresAt = args.expiresAt;
    return editTodos(
      env,
      args.goalId,
      'todo add',
      (stateText, context) => addTodo(stateText, { ...input, role, gate }, context),
      args.agentId,
    );
  },
});

export const TodoListOutputSchema = TodoListResultSchema;
export type TodoListOutput = z.infer<typeof TodoListOutputSchema> & { ok: true };

export const todoList = defineOperation({
  key: 'todoList',
  args: z.strictObject({
    goalId: goalId.describe('the goal whose todos to list'),
    role: z.enum(['user', 'agent']).optional().describe('only user or agent todos'),
    status: z.enum(TODO_STATUSES).optional().describe('only todos with this status'),
    claimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe('only todos claimed by this agent'),
    includeTerminal: z.boolean().default(false).meta({ flag: '--all' }).describe('include done and deferred todos'),
  }),
  run: async (args, env): Promise<TodoListOutput> => {
    const goal = await resolveGoal(env, args.goalId);
    const statePath = requireStatePath(goal);
    const snapshot = await readStateFile(statePath);
    const gates = analyzeGates(snapshot.document);
    const blockedBy = new Map<string, GateBlock[]>(gates.agent_todos.map((t) => [t.todo_id, t.blocked_by]));
    const todos = listTodos(snapshot.document, {
      includeTerminal: args.includeTerminal,
      ...(args.role === undefined ? {} : { role: args.role }),
      ...(args.status === undefined ? {} : { status: args.status }),
      ...(args.claimedBy === undefined ? {} : { claimedBy: args.claimedBy }),
    }).map((todo) => ({
      ...todo,
      blocked_by: todo.role === 'agent' ? (blockedBy.get(todo.todo_id) ?? []) : [],
    }));
    return TodoListOutputSchema.parse({
      ok: true,
      goal_id: goal.goalId,
      state_file: statePath,
      count: todos.length,
      todos,
      open_gates: gates.open_gates,
      holding_gates: gates.holding_gates,
      lane_gates_by_agent: gates.lane_gates_by_agent,
      diagnostics: diagnoseStateDocument(snapshot.document),
    }) as TodoListOutput;
  },
});

export const todoClaim = defineOperation({
  key: 'todoClaim',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the agent todo to claim'),
    claimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe('the registered agent that takes it'),
    agentId: agentId
      .optional()
      .meta({ placeholder: 'agent' })
      .describe('the agent making the claim (needed when the goal has several registered agents)'),
    takeover: z.boolean().default(false).describe('take it over from the agent that holds it'),
  }),
  errorFields: todoErrorFields,
  run: (args, env) => {
    const claimant = args.claimedBy ?? args.agentId;
    if (claimant === undefined)
      throw new LoopxError(
        'usage',
        'todo claim needs --claimed-by <agent> (and --agent-id <agent> on multi-agent goals)',
      );
    return editTodos(
      env,
      args.goalId,
      'todo claim',
      (stateText, context) =>
        claimTodo(
          stateText,
          {
            todoId: args.todoId,
            agentId: claimant,
            ...(args.agentId === undefined ? {} : { actorAgentId: args.agentId }),
            requireActor: true,
            takeover: args.takeover,
          },
          context,
        ),
      args.agentId,
      claimLease(env, args.todoId, claimant, args.takeover),
    );
  },
});

export const todoUpdate = defineOperation({
  key: 'todoUpdate',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the todo to change'),
    text: text.optional().describe('new text (keeps the priority unless the text has its own)'),
    priority: priority.optional().describe('new priority, P0…P4'),
    status: z
      .enum(['open', 'blocked', 'deferred'])
      .optional()
      .describe(
        'open, blocked or deferred (with --resume-when, as defer); open resumes a deferred todo (close one with complete or supersede)',
      ),
    reason: z
      .string()
      .optional()
      .meta({ placeholder: 'text' })
      .describe('why it is blocked or deferred (kept on the todo)'),
    resumeWhen: z
      .string()
      .optional()
      .meta({ placeholder: 'condition' })
      .describe(
        'with --status deferred: todo_done:<todo_id>, pr_merged:[owner/repo]#<n> or capacity_available:<capability>',
      ),
    taskClass: z.string().optional().meta({ placeholder: 'class' }).describe('new task class'),
    actionKind: z.string().optional().meta({ placeholder: 'kind' }).describe('new action kind'),
    claimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe('claim it for this registered agent'),
    unclaim: z.boolean().default(false).describe('release the claim'),
    note: z.string().optional().meta({ placeholder: 'text' }).describe('replace the note (empty removes it)'),
    requiredDecisionScope: scopes.describe('decisions the todo needs, kind:granularity:key (replaces the list)'),
    ...gateFields,
  }),
  errorFields: todoErrorFields,
  run: (args, env) => {
    if (args.unclaim && args.claimedBy !== undefined)
      throw new LoopxError('usage', '--claimed-by and --unclaim contradict each other; give one');
    const input: Parameters<typeof updateTodo>[1] = { todoId: args.todoId };
    if (args.text !== undefined) input.text = args.text;
    if (args.priority !== undefined) input.priority = args.priority;
    if (args.status !== undefined) input.status = args.status;
    if (args.taskClass !== undefined) input.taskClass = args.taskClass;
    if (args.actionKind !== undefined) input.actionKind = args.actionKind;
    if (args.claimedBy !== undefined) input.claimedBy = args.claimedBy;
    if (args.unclaim) input.claimedBy = null;
    if (args.note !== undefined) input.note = args.note;
    if (args.reason !== undefined) input.reason = args.reason;
    if (args.resumeWhen !== undefined) input.resumeWhen = args.resumeWhen;
    if (args.requiredDecisionScope !== undefined) input.requiredDecisionScopes = args.requiredDecisionScope;
    const gate = gateOf(args, env.clock.now());
    if (gate !== undefined) input.gate = gate;
    if (Object.keys(input).length === 1)
      throw new LoopxError(
        'usage',
        'nothing to update: give at least one of text, priority, status, reason, task class, action kind, claim, note, decision scopes or a gate field (a due time too)',
      );
    return editTodos(env, args.goalId, 'todo update', (stateText, context) => updateTodo(stateText, input, context));
  },
});

export const todoComplete = defineOperation({
  key: 'todoComplete',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the todo that is done'),
    evidence: text.optional().describe('what shows it is done (test run, commit, link)'),
    agentId: agentId.optional().meta({ placeholder: 'agent' }).describe('the registered agent completing it'),
    noFollowUp: z.boolean().default(false).describe('an explicit final: no successor work'),
    turnInstanceId: turnInstanceIdArg(
      'the heartbeat turn completing it (with --agent-id: checked against its receipt; a retry writes nothing)',
    ).optional(),
    decisionOutcome: z.enum(DECISION_OUTCOMES).optional().describe('resolve a user gate: approve, reject or cancel'),
    ...successorFields('successor'),
    ...leaseFields,
  }),
  errorFields: todoErrorFields,
  run: (args, env) => {
    const input: Parameters<typeof completeTodo>[1] = {
      todoId: args.todoId,
      noFollowUp: args.noFollowUp,
    };
    if (args.evidence !== undefined) input.evidence = args.evidence;
    const successor = successorOf(args);
    if (successor !== undefined) input.successor = successor;
    if (args.decisionOutcome !== undefined) input.decisionOutcome = args.decisionOutcome;
    if (env.actingAs !== 'owner') input.requireActor = true;
    // The original's argument rule: an explicit final says what was done (it also takes --note, which ours has not).
    if (args.noFollowUp && env.actingAs !== 'owner' && (args.evidence ?? '').trim() === '')
      throw new LoopxError('todo_evidence_required', '--no-follow-up requires --note or --evidence', {
        todo_id: args.todoId,
      });
    if (args.turnInstanceId !== undefined) return completeInTurn(env, args, input);
    return editTodos(
      env,
      args.goalId,
      'todo complete',
      (stateText, context) => completeTodo(stateText, input, context),
      args.agentId,
      completionFence(env, args.todoId, args.agentId, args),
    );
  },
});

/**
 * A completion inside a heartbeat (docs/quota.md#heartbeat-receipts): the todo must be the one the
 * turn's receipt binds; the `todo_complete` event carries the settlement effect id; a retry of the
 * same step finds that event and writes nothing (the todo is not re-stamped).
 */
async function completeInTurn(
  env: OperationEnvironment,
  args: {
    goalId: string;
    todoId: string;
    agentId?: string | undefined;
    turnInstanceId?: string | undefined;
    noFollowUp: boolean;
    leaseKey?: string | undefined;
    taskLeaseIdempotencyKey?: string | undefined;
    expectedVersion?: number | undefined;
    taskLeaseExpectedVersion?: number | undefined;
  },
  input: Parameters<typeof completeTodo>[1],
): Promise<TodoCompleteOutput> {
  if (args.agentId === undefined)
    throw new LoopxError(
      'usage',
      'todo complete --turn-instance-id checks the heartbeat receipt of one agent: pass --agent-id too',
    );
  const turnInstanceId = checkTurnInstanceId((args.turnInstanceId ?? '').trim());
  let goal: ResolvedGoal;
  try {
    goal = await resolveGoal(env, args.goalId);
  } catch (error) {
    throw withOriginalGoalText(error);
  }
  const agent = normalizeAgentId(args.agentId) ?? args.agentId;
  const step: TurnStep = {
    goalId: goal.goalId,
    goalDir: quotaGoalOf(goal).runtimeDir,
    agentId: agent,
    turnInstanceId,
  };
  const chain = await resolveChainBinding(step, { todoId: args.todoId, replanObligationId: null }, 'todo complete');
  const replay = await stepEventRecorded(step, chain, 'todo_complete');
  const output = await editTodos(
    env,
    args.goalId,
    'todo complete',
    (stateText, context) => {
      const result = completeTodo(stateText, input, context);
      // A replay keeps the file as it is: the completion of this turn is already recorded.
      return replay ? { ...result, text: stateText, changed: false } : result;
    },
    args.agentId,
    completionFence(env, args.todoId, args.agentId, args),
    { goal, recordEvent: false },
  );
  if (!replay) crashCheckpoint(env.env, 'todo_complete:effect');
  const recorded = await recordStepEvent(step, chain, {
    kind: 'todo_complete',
    clock: env.clock,
    status: 'completed',
    summary: `todo ${args.todoId} completed in turn ${turnInstanceId}`,
    details: { no_followup: args.noFollowUp },
    lock: { clock: env.clock, env: env.env, operation: 'todo complete' },
  });
  return {
    ...output,
    ...(replay ? { written: false, updated_at: null } : {}),
    idempotent_replay: replay,
    heartbeat_receipt: chain.receipt,
    rollout_event: recorded.event,
  };
}

export const todoSupersede = defineOperation({
  key: 'todoSupersede',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the todo that is replaced'),
    supersededBy: todoId.optional().meta({ placeholder: 'id' }).describe('an existing todo that replaces it'),
    reason: z.string().optional().meta({ placeholder: 'text' }).describe('why it is replaced'),
    agentId: agentId
      .optional()
      .meta({ placeholder: 'agent' })
      .describe('the agent superseding it (the lease holder, when the todo is leased)'),
    ...successorFields('replacement'),
    ...leaseFields,
  }),
  run: (args, env) => {
    const input: Parameters<typeof supersedeTodo>[1] = { todoId: args.todoId };
    const replacement = successorOf(args);
    if (replacement !== undefined) input.replacement = replacement;
    if (args.supersededBy !== undefined) input.supersededBy = args.supersededBy;
    if (args.reason !== undefined) input.reason = args.reason;
    return editTodos(
      env,
      args.goalId,
      'todo supersede',
      (stateText, context) => supersedeTodo(stateText, input, context),
      args.agentId,
      completionFence(env, args.todoId, args.agentId, args),
    );
  },
});

export const todoDefer = defineOperation({
  key: 'todoDefer',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the todo to set aside'),
    reason: text.meta({ placeholder: 'text' }).describe('why it waits'),
    resumeWhen: z
      .string()
      .optional()
      .meta({ placeholder: 'condition' })
      .describe(
        'when it resumes (required on the CLI, as in the original; the editor may defer without one): todo_done:<todo_id>, pr_merged:[owner/repo]#<n> or capacity_available:<capability>',
      ),
  }),
  errorFields: todoErrorFields,
  run: (args, env) =>
    editTodos(env, args.goalId, 'todo defer', (stateText, context) =>
      deferTodo(
        stateText,
        {
          todoId: args.todoId,
          reason: args.reason,
          ...(args.resumeWhen === undefined ? {} : { resumeWhen: args.resumeWhen }),
          // The original refuses a deferral without a resume condition; the editor's owner may set one aside.
          requireResumeWhen: env.actingAs !== 'owner',
        },
        context,
      ),
    ),
});

/**
 * `gate set-due`: sets or clears a gate's due time (metadata `next_due_at`, which the original keeps
 * through its own edits; docs/compatibility.md). Past the due time the editor escalates the gate.
 */
export const gateSetDue = defineOperation({
  key: 'gateSetDue',
  args: z.strictObject({
    goalId: goalId.describe('the goal'),
    todoId: todoId.describe('the gate (a user todo of class user_gate)'),
    dueAt: gateFields.dueAt,
    dueIn: gateFields.dueIn,
    clear: z.boolean().default(false).describe('remove the due time'),
  }),
  errorFields: todoErrorFields,
  run: (args, env) => {
    const due = dueInstantOf(args, env.clock.now());
    if (args.clear === (due !== undefined))
      throw new LoopxError(
        'usage',
        args.clear
          ? '--clear removes the due time; do not give --due-at or --due-in with it'
          : 'give the due time: --due-at <instant> or --due-in <duration> (or --clear to remove it)',
      );
    return editTodos(env, args.goalId, 'gate set-due', (stateText, context) => {
      const item = parseStateDocument(stateText).todos.find((t) => t.todoId === args.todoId);
      if (item !== undefined && !isUserGate(item))
        throw new LoopxError(
          'todo_gate_fields_need_user_gate',
          `todo ${args.todoId} is not a user gate (task_class=user_gate); only a gate has a due time`,
          { todo_id: args.todoId },
        );
      return updateTodo(stateText, { todoId: args.todoId, gate: { dueAt: due ?? null } }, context);
    });
  },
});
