import { Option, type Command } from 'commander';
import { z } from 'zod';
import { registeredAgentsForGoal } from '../../core/agents/identity';
import { isLoopxError, LoopxError } from '../../core/errors';
import { isoSeconds } from '../../core/clock';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry, resolveGoalStatePath } from '../../core/registry/locate';
import { findRawRegistryGoal, readRegistry } from '../../core/registry/read';
import { TODO_STATUSES, type Priority, type TodoStatus } from '../../core/state/document';
import { analyzeGates, DECISION_OUTCOMES, type DecisionOutcome, type GateBlock } from '../../core/state/gates';
import { applyStateEdit, readStateFile } from '../../core/state/stateFile';
import { diagnoseStateDocument } from '../../core/state/structured';
import {
  addTodo,
  claimTodo,
  completeTodo,
  deferTodo,
  listTodos,
  parsePriority,
  supersedeTodo,
  updateTodo,
  type GateFields,
  type NewTodoInput,
  type OperationContext,
  type TodoEditResult,
  type TodoEditSummary,
  type TodoView,
} from '../../core/state/todos';
import { TodoListResultSchema, TodoSchema } from '../../core/api/schemas';
import type { CliContext, CommandOutput, GlobalOptions } from '../context';
import { markdownTable } from '../output';
import type { CliHandler, CliInvocation } from './index';
import { collect } from './registerAgent';
import { cliHomeDir } from './registry';

/**
 * `loopx todo add|list|claim|update|complete|supersede|defer`: lifecycle edits of a goal's
 * ACTIVE_GOAL_STATE.md, found through the registry. Every edit is a locked compare-and-swap
 * write (src/core/state/stateFile.ts); `list` only reads.
 */

/** Core refusals that mean "the arguments are wrong": the CLI exits 2 for them. */
const ARGUMENT_ERROR_CODES = new Set([
  'todo_text_required',
  'todo_priority_conflict',
  'invalid_task_class',
  'task_class_role_mismatch',
  'invalid_todo_field',
  'invalid_decision_scope',
  'todo_evidence_required',
  'todo_completion_continuation_required',
  'todo_completion_continuation_conflict',
  'gate_decision_outcome_required',
  'gate_decision_outcome_not_a_gate',
  'todo_supersede_target_required',
  'todo_defer_reason_required',
  'invalid_resume_condition',
  'agent_id_invalid',
  'todo_gate_fields_need_user_gate',
  'invalid_goal_id',
]);

export const TodoEditJsonSchema = z.object({
  ok: z.literal(true),
  goal_id: z.string(),
  state_file: z.string(),
  operation: z.string(),
  todo_id: z.string(),
  changed: z.boolean(),
  written: z.boolean(),
  changed_fields: z.array(z.string()),
  todo: TodoSchema,
  added: z.array(TodoSchema),
  released_todo_ids: z.array(z.string()),
});

/** `loopx todo list --format json`: the same contract as the library's `listTodos`. */
export const TodoListJsonSchema = TodoListResultSchema;

interface GoalState {
  goalId: string;
  statePath: string;
  roster: string[] | null;
}

/** Finds the goal in the registry and its state file; the roster is null when the goal registers no agents. */
async function resolveGoalState(
  options: Record<string, unknown>,
  globals: GlobalOptions,
  ctx: CliContext,
): Promise<GoalState> {
  const goalId = asUsage(() => checkGoalIdSegment(String(options['goalId'] ?? '')));
  const homeDir = cliHomeDir(ctx);
  const registry = locateRegistry({
    flag: globals.registry,
    env: ctx.env,
    cwd: ctx.cwd,
    homeDir,
    runtimeRootOverride: globals.runtimeRoot,
  });
  if (!registry.exists) {
    throw new LoopxError(
      'registry_missing',
      `registry file does not exist: ${registry.path}; pass --registry or run loopx bootstrap`,
      { registry: registry.path },
    );
  }
  const goal = findRawRegistryGoal(await readRegistry(registry.path), goalId);
  if (goal === undefined)
    throw new LoopxError('goal_not_found', `goal '${goalId}' is not in the registry ${registry.path}`, {
      goal_id: goalId,
      registry: registry.path,
    });
  const statePath = resolveGoalStatePath(goal, goalId, homeDir);
  if (statePath === null) {
    throw new LoopxError(
      'state_file_unresolved',
      `goal '${goalId}' has no state_file and no absolute repo, so its ACTIVE_GOAL_STATE.md cannot be found; set state_file in ${registry.path}`,
      { goal_id: goalId },
    );
  }
  const registered = registeredAgentsForGoal(goal);
  return { goalId, statePath, roster: registered.length > 0 ? registered : null };
}

function asUsage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw usageError(error);
  }
}

function usageError(error: unknown): unknown {
  return isLoopxError(error) && ARGUMENT_ERROR_CODES.has(error.code)
    ? new LoopxError('usage', error.message, { ...error.details, code: error.code })
    : error;
}

function stringOption(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  return typeof value === 'string' ? value : undefined;
}

function priorityOption(options: Record<string, unknown>, key: string): Priority | undefined {
  const raw = stringOption(options, key);
  if (raw === undefined) return undefined;
  const priority = parsePriority(raw);
  if (priority === null)
    throw new LoopxError('usage', `${flagName(key)} must be one of P0, P1, P2, P3, P4, got ${JSON.stringify(raw)}`);
  return priority;
}

function flagName(key: string): string {
  return `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

function listOption(options: Record<string, unknown>, key: string): string[] | undefined {
  const value = options[key];
  if (!Array.isArray(value)) return undefined;
  return value
    .flatMap((v) => String(v).split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function gateOptions(options: Record<string, unknown>): GateFields | undefined {
  const gate: GateFields = {};
  const blocksAgent = stringOption(options, 'blocksAgent');
  if (blocksAgent !== undefined) gate.blocksAgent = blocksAgent;
  if (options['globalGate'] === true) gate.globalGate = true;
  const unblocks = listOption(options, 'unblocksTodoId');
  if (unblocks !== undefined) gate.unblocksTodoIds = unblocks;
  const scope = stringOption(options, 'decisionScope');
  if (scope !== undefined) gate.decisionScope = scope;
  return Object.keys(gate).length > 0 ? gate : undefined;
}

function addGateOptions(command: Command): Command {
  return command
    .option('--blocks-agent <agent>', 'gate: the agent lane this gate concerns')
    .option('--global-gate', 'gate: every agent todo waits for this gate')
    .option(
      '--unblocks-todo-id <id>',
      'gate: an agent todo this gate holds back until approved (repeatable)',
      collect,
      undefined,
    )
    .option(
      '--decision-scope <scope>',
      'gate: the decision it grants, kind:granularity:key (e.g. public_claim:project:release)',
    );
}

function operationContext(state: GoalState, ctx: CliContext): OperationContext {
  return { now: isoSeconds(ctx.clock.now()), goalId: state.goalId, roster: state.roster };
}

/** Runs one edit as a locked compare-and-swap write and renders the summary. */
async function runEdit(
  invocation: CliInvocation,
  operation: string,
  edit: (text: string, context: OperationContext) => TodoEditResult,
): Promise<CommandOutput> {
  const { options, globals, ctx } = invocation;
  const state = await resolveGoalState(options, globals, ctx);
  const context = operationContext(state, ctx);
  let result: TodoEditResult & { written: boolean };
  try {
    result = await applyStateEdit(state.statePath, (text) => edit(text, context), {
      operation,
      lock: { clock: ctx.clock, env: ctx.env },
    });
  } catch (error) {
    throw usageError(error);
  }
  const json = TodoEditJsonSchema.parse({
    ok: true,
    goal_id: state.goalId,
    state_file: state.statePath,
    written: result.written,
    ...result.summary,
  });
  return { ok: true, json, markdown: editMarkdown(result.summary, result.written, state) };
}

function editMarkdown(summary: TodoEditSummary, written: boolean, state: GoalState): string {
  const verb = summary.operation.replace('todo_', '');
  const lines = [`# todo ${verb}: \`${summary.todo_id}\``, ''];
  lines.push(todoLine(summary.todo));
  if (summary.changed) lines.push('', `Changed: ${summary.changed_fields.join(', ') || 'new todo'}.`);
  else lines.push('', 'Nothing changed; the state file was not written.');
  for (const added of summary.added) if (added.todo_id !== summary.todo_id) lines.push(`Added: ${todoLine(added)}`);
  if (summary.released_todo_ids.length > 0)
    lines.push(`Released: ${summary.released_todo_ids.map((id) => `\`${id}\``).join(', ')}.`);
  lines.push('', `${written ? 'Written' : 'State file'}: \`${state.statePath}\``);
  return lines.join('\n');
}

function todoLine(todo: TodoView): string {
  const claim = todo.claimed_by ? ` (claimed by ${todo.claimed_by})` : '';
  return `- [${todo.status === 'done' ? 'x' : todo.status === 'deferred' ? '-' : ' '}] \`${todo.todo_id}\` ${todo.text} — ${todo.role}, ${todo.status}${claim}`;
}

/** The new todo of `todo add`. */
function newTodoOptions(options: Record<string, unknown>): NewTodoInput {
  const input: NewTodoInput = { text: requireOption(options, 'text') };
  const priority = priorityOption(options, 'priority');
  if (priority !== undefined) input.priority = priority;
  const taskClass = stringOption(options, 'taskClass');
  if (taskClass !== undefined) input.taskClass = taskClass;
  const actionKind = stringOption(options, 'actionKind');
  if (actionKind !== undefined) input.actionKind = actionKind;
  const claimedBy = stringOption(options, 'claimedBy');
  if (claimedBy !== undefined) input.claimedBy = claimedBy;
  const note = stringOption(options, 'note');
  if (note !== undefined) input.note = note;
  const scopes = listOption(options, 'requiredDecisionScope');
  if (scopes !== undefined) input.requiredDecisionScopes = scopes;
  return input;
}

/** The successor / replacement todo of complete and supersede (`--successor-text` or the original's `--next-agent-todo`). */
function successorOptions(options: Record<string, unknown>): NewTodoInput | undefined {
  const successorText = stringOption(options, 'successorText');
  const nextAgentTodo = stringOption(options, 'nextAgentTodo');
  if (successorText !== undefined && nextAgentTodo !== undefined && successorText !== nextAgentTodo) {
    throw new LoopxError('usage', '--successor-text and --next-agent-todo name the same successor; give only one');
  }
  const text = successorText ?? nextAgentTodo;
  if (text === undefined) return undefined;
  const input: NewTodoInput = { text };
  const priority = priorityOption(options, 'successorPriority');
  if (priority !== undefined) input.priority = priority;
  const claimedBy = stringOption(options, 'nextClaimedBy');
  if (claimedBy !== undefined) input.claimedBy = claimedBy;
  const actionKind = stringOption(options, 'nextActionKind');
  if (actionKind !== undefined) input.actionKind = actionKind;
  return input;
}

function addSuccessorOptions(command: Command, what: string): Command {
  return command
    .option('--successor-text <text>', `the ${what} todo to add`)
    .option('--next-agent-todo <text>', "same as --successor-text (the original's name)")
    .option('--successor-priority <P>', `priority of the ${what} todo, P0…P4`)
    .option('--next-claimed-by <agent>', `agent that claims the ${what} todo`)
    .option('--next-action-kind <kind>', `action kind of the ${what} todo`);
}

function requireOption(options: Record<string, unknown>, key: string): string {
  const value = stringOption(options, key);
  if (value === undefined || value.trim() === '') throw new LoopxError('usage', `${flagName(key)} is required`);
  return value;
}

function roleOption(options: Record<string, unknown>): 'user' | 'agent' | undefined {
  const role = stringOption(options, 'role');
  if (role === undefined) return undefined;
  if (role !== 'user' && role !== 'agent')
    throw new LoopxError('usage', `--role must be user or agent, got ${JSON.stringify(role)}`);
  return role;
}

// ---------------------------------------------------------------------------------------------

export const todoAddCommand: CliHandler = {
  configure: (command) => {
    addGateOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal whose state file gets the todo')
        .requiredOption('--text <text>', 'the todo text')
        .option('--role <role>', 'user or agent (default agent; gate options imply user)')
        .option('--priority <P>', 'P0 (highest) … P4, written as a [Pn] prefix')
        .option('--task-class <class>', 'advancement_task, continuous_monitor, blocker, user_action or user_gate')
        .option('--action-kind <kind>', 'lowercase action kind, e.g. implement, review')
        .option('--claimed-by <agent>', 'claim it for a registered agent right away')
        .option('--note <text>', 'a note kept in the metadata')
        .option(
          '--required-decision-scope <scope>',
          'a decision this agent todo needs, kind:granularity:key (repeatable)',
          collect,
          undefined,
        ),
    );
  },
  run: (invocation) => {
    const { options } = invocation;
    const gate = gateOptions(options);
    const role =
      roleOption(options) ??
      (gate !== undefined || stringOption(options, 'taskClass') === 'user_gate' ? 'user' : 'agent');
    const input = newTodoOptions(options);
    return runEdit(invocation, 'todo add', (text, context) =>
      addTodo(text, { ...input, role, ...(gate ? { gate } : {}) }, context),
    );
  },
};

export const todoListCommand: CliHandler = {
  configure: (command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal whose todos to list')
      .option('--role <role>', 'only user or agent todos')
      .option('--status <status>', `only this status: ${TODO_STATUSES.join(', ')}`)
      .option('--claimed-by <agent>', 'only todos claimed by this agent')
      .option('--all', 'include done and deferred todos');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const state = await resolveGoalState(options, globals, ctx);
    const role = roleOption(options);
    const status = stringOption(options, 'status');
    if (status !== undefined && !(TODO_STATUSES as readonly string[]).includes(status)) {
      throw new LoopxError(
        'usage',
        `--status must be one of ${TODO_STATUSES.join(', ')}, got ${JSON.stringify(status)}`,
      );
    }
    const snapshot = await readStateFile(state.statePath);
    const filter: Parameters<typeof listTodos>[1] = { includeTerminal: options['all'] === true };
    if (role !== undefined) filter.role = role;
    if (status !== undefined) filter.status = status as TodoStatus;
    const claimedBy = stringOption(options, 'claimedBy');
    if (claimedBy !== undefined) filter.claimedBy = claimedBy;
    const gates = analyzeGates(snapshot.document);
    const blockedBy = new Map<string, GateBlock[]>(gates.agent_todos.map((t) => [t.todo_id, t.blocked_by]));
    const todos = listTodos(snapshot.document, filter).map((todo) => ({
      ...todo,
      blocked_by: todo.role === 'agent' ? (blockedBy.get(todo.todo_id) ?? []) : [],
    }));
    const diagnostics = diagnoseStateDocument(snapshot.document);
    const json = TodoListJsonSchema.parse({
      ok: true,
      goal_id: state.goalId,
      state_file: state.statePath,
      count: todos.length,
      todos,
      open_gates: gates.open_gates,
      holding_gates: gates.holding_gates,
      lane_gates_by_agent: gates.lane_gates_by_agent,
      diagnostics,
    });
    const lines = [`# Todos of ${state.goalId}`, ''];
    if (todos.length === 0) lines.push('No todos match.');
    else {
      lines.push(
        markdownTable(
          ['Id', 'Role', 'P', 'Status', 'Claimed by', 'Text', 'Blocked by'],
          todos.map((t) => [
            `\`${t.todo_id}\``,
            t.role,
            t.priority ?? '',
            t.status,
            t.claimed_by ?? '',
            t.title,
            t.blocked_by.map((b) => `${b.gate_todo_id} (${b.relation}, ${b.gate_state})`).join(', '),
          ]),
        ),
      );
    }
    if (gates.open_gates.length > 0) {
      lines.push('', '## Open gates', '');
      for (const gate of gates.open_gates)
        lines.push(
          `- \`${gate.todo_id}\` ${gate.title}${gate.blocked_todo_ids.length > 0 ? ` — holds back ${gate.blocked_todo_ids.map((id) => `\`${id}\``).join(', ')}` : ''}`,
        );
    }
    if (diagnostics.warning_count + diagnostics.error_count > 0) {
      lines.push('', '## Diagnostics', '');
      for (const d of [...diagnostics.errors, ...diagnostics.warnings])
        lines.push(`- ${d.line === null ? '' : `line ${d.line}: `}${d.kind}: ${d.message}`);
    }
    lines.push('', `State file: \`${state.statePath}\``);
    return { ok: true, json, markdown: lines.join('\n') };
  },
};

export const todoClaimCommand: CliHandler = {
  configure: (command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the agent todo to claim')
      .requiredOption('--agent-id <agent>', 'the registered agent that takes it')
      .option('--takeover', 'take it over from the agent that holds it');
  },
  run: (invocation) => {
    const { options } = invocation;
    const todoId = requireOption(options, 'todoId');
    const agentId = requireOption(options, 'agentId');
    return runEdit(invocation, 'todo claim', (text, context) =>
      claimTodo(text, { todoId, agentId, takeover: options['takeover'] === true }, context),
    );
  },
};

export const todoUpdateCommand: CliHandler = {
  configure: (command) => {
    addGateOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption('--todo-id <id>', 'the todo to change')
        .option('--text <text>', 'new text (keeps the priority unless the text has its own)')
        .option('--priority <P>', 'new priority, P0…P4')
        .option(
          '--status <status>',
          'open or blocked (use complete, defer, supersede to close a todo); open resumes a deferred todo',
        )
        .option('--task-class <class>', 'new task class')
        .option('--action-kind <kind>', 'new action kind')
        .option('--claimed-by <agent>', 'claim it for this registered agent')
        .option('--unclaim', 'release the claim')
        .option('--note <text>', 'replace the note (empty removes it)')
        .option(
          '--required-decision-scope <scope>',
          'decisions the todo needs, kind:granularity:key (repeatable; replaces the list)',
          collect,
          undefined,
        ),
    );
  },
  run: (invocation) => {
    const { options } = invocation;
    const todoId = requireOption(options, 'todoId');
    const status = stringOption(options, 'status');
    if (status !== undefined && status !== 'open' && status !== 'blocked') {
      throw new LoopxError(
        'usage',
        `--status must be open or blocked; close a todo with todo complete, defer or supersede (got ${JSON.stringify(status)})`,
      );
    }
    if (options['unclaim'] === true && stringOption(options, 'claimedBy') !== undefined)
      throw new LoopxError('usage', '--claimed-by and --unclaim contradict each other; give one');
    const input: Parameters<typeof updateTodo>[1] = { todoId };
    const text = stringOption(options, 'text');
    if (text !== undefined) input.text = text;
    const priority = priorityOption(options, 'priority');
    if (priority !== undefined) input.priority = priority;
    if (status !== undefined) input.status = status;
    const taskClass = stringOption(options, 'taskClass');
    if (taskClass !== undefined) input.taskClass = taskClass;
    const actionKind = stringOption(options, 'actionKind');
    if (actionKind !== undefined) input.actionKind = actionKind;
    const claimedBy = stringOption(options, 'claimedBy');
    if (claimedBy !== undefined) input.claimedBy = claimedBy;
    if (options['unclaim'] === true) input.claimedBy = null;
    const note = stringOption(options, 'note');
    if (note !== undefined) input.note = note;
    const scopes = listOption(options, 'requiredDecisionScope');
    if (scopes !== undefined) input.requiredDecisionScopes = scopes;
    const gate = gateOptions(options);
    if (gate !== undefined) input.gate = gate;
    if (Object.keys(input).length === 1)
      throw new LoopxError(
        'usage',
        'nothing to update: give at least one of --text, --priority, --status, --task-class, --action-kind, --claimed-by, --unclaim, --note, --required-decision-scope or a gate option',
      );
    return runEdit(invocation, 'todo update', (stateText, context) => updateTodo(stateText, input, context));
  },
};

export const todoCompleteCommand: CliHandler = {
  configure: (command) => {
    addSuccessorOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption('--todo-id <id>', 'the todo that is done')
        .requiredOption('--evidence <text>', 'what shows it is done (test run, commit, link)')
        .option('--no-follow-up', 'an explicit final: no successor work')
        .addOption(
          new Option('--decision-outcome <outcome>', 'resolve a user gate: approve, reject or cancel').choices([
            ...DECISION_OUTCOMES,
          ]),
        ),
      'successor',
    );
  },
  run: (invocation) => {
    const { options } = invocation;
    const todoId = requireOption(options, 'todoId');
    const evidence = requireOption(options, 'evidence');
    const successor = successorOptions(options);
    const noFollowUp = options['followUp'] === false;
    const input: Parameters<typeof completeTodo>[1] = { todoId, evidence, noFollowUp };
    if (successor !== undefined) input.successor = successor;
    const outcome = stringOption(options, 'decisionOutcome');
    if (outcome !== undefined) input.decisionOutcome = outcome as DecisionOutcome;
    return runEdit(invocation, 'todo complete', (text, context) => completeTodo(text, input, context));
  },
};

export const todoSupersedeCommand: CliHandler = {
  configure: (command) => {
    addSuccessorOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption('--todo-id <id>', 'the todo that is replaced')
        .option('--superseded-by <id>', 'an existing todo that replaces it')
        .option('--reason <text>', 'why it is replaced'),
      'replacement',
    );
  },
  run: (invocation) => {
    const { options } = invocation;
    const todoId = requireOption(options, 'todoId');
    const input: Parameters<typeof supersedeTodo>[1] = { todoId };
    const replacement = successorOptions(options);
    if (replacement !== undefined) input.replacement = replacement;
    const supersededBy = stringOption(options, 'supersededBy');
    if (supersededBy !== undefined) input.supersededBy = supersededBy;
    const reason = stringOption(options, 'reason');
    if (reason !== undefined) input.reason = reason;
    return runEdit(invocation, 'todo supersede', (text, context) => supersedeTodo(text, input, context));
  },
};

export const todoDeferCommand: CliHandler = {
  configure: (command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal')
      .requiredOption('--todo-id <id>', 'the todo to set aside')
      .requiredOption('--reason <text>', 'why it waits')
      .option('--resume-when <condition>', 'todo_done:<todo_id>, pr_merged:#<n> or capacity_available');
  },
  run: (invocation) => {
    const { options } = invocation;
    const todoId = requireOption(options, 'todoId');
    const input: Parameters<typeof deferTodo>[1] = { todoId, reason: requireOption(options, 'reason') };
    const resumeWhen = stringOption(options, 'resumeWhen');
    if (resumeWhen !== undefined) input.resumeWhen = resumeWhen;
    return runEdit(invocation, 'todo defer', (text, context) => deferTodo(text, input, context));
  },
};
