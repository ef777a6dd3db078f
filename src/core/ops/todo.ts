import { z } from 'zod';
import { TodoListResultSchema, type TodoListResult } from './resultSchemas';
import { turnInstanceIdArg } from './common';
import { LoopxError } from '../errors';
import { TODO_STATUSES } from '../state/document';
import { DECISION_OUTCOMES, isUserGate } from '../state/gates';
import {
  addTodo,
  claimTodo,
  completeTodo,
  deferTodo,
  supersedeTodo,
  TASK_CLASSES,
  updateTodo,
  type NewTodoInput,
} from '../state/todos';
import { parseStateDocument } from '../state/document';
import { listTodosWithGates } from '../todo/list';
import { readGoalStateFile } from '../goal/reads';
import { requireStatePath, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';
import {
  agentId,
  dueInstantOf,
  gateFields,
  gateOf,
  goalId,
  leaseFields,
  priority,
  scopes,
  successorFields,
  successorOf,
  text,
  todoErrorFields,
  todoId,
} from './todoFields';
import { editTodos } from './todoEdit';
import { completeInTurn } from './todoInTurn';
import { claimLease, completionFence } from './todoLease';

/**
 * The todo lifecycle of a goal's ACTIVE_GOAL_STATE.md: add, list, claim, update, complete,
 * supersede, defer, and a gate's due time. Every edit is one locked compare-and-swap write of the state
 * file; `list` only reads. This file holds the operation definitions; their shared fields and result
 * schema are `todoFields.ts`, the locked edit pipeline `todoEdit.ts`, lease fencing `todoLease.ts`, a
 * completion inside a heartbeat `todoInTurn.ts`, the pure edits `state/todos.ts` and the listing `todo/list.ts`.
 */

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

export const todoList = defineOperation({
  key: 'todoList',
  args: z.strictObject({
    goalId: goalId.describe('the goal whose todos to list'),
    role: z.enum(['user', 'agent']).optional().describe('only user or agent todos'),
    status: z.enum(TODO_STATUSES).optional().describe('only todos with this status'),
    claimedBy: agentId.optional().meta({ placeholder: 'agent' }).describe('only todos claimed by this agent'),
    includeTerminal: z.boolean().default(false).meta({ flag: '--all' }).describe('include done and deferred todos'),
  }),
  run: async (args, env): Promise<TodoListResult> => {
    const goal = await resolveGoal(env, args.goalId);
    const statePath = requireStatePath(goal);
    const snapshot = await readGoalStateFile(statePath);
    const listing = listTodosWithGates(snapshot.document, {
      includeTerminal: args.includeTerminal,
      ...(args.role === undefined ? {} : { role: args.role }),
      ...(args.status === undefined ? {} : { status: args.status }),
      ...(args.claimedBy === undefined ? {} : { claimedBy: args.claimedBy }),
    });
    return TodoListResultSchema.parse({
      ok: true,
      goal_id: goal.goalId,
      state_file: statePath,
      count: listing.todos.length,
      todos: listing.todos,
      open_gates: listing.open_gates,
      holding_gates: listing.holding_gates,
      lane_gates_by_agent: listing.lane_gates_by_agent,
      diagnostics: listing.diagnostics,
    });
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
