import { requireRegisteredAgent } from '../registry/agentIds';
import { LoopxError } from '../errors';
import { refuseCredentials } from '../privacy/refuse';
import {
  compactText,
  deriveTodoId,
  markerForStatus,
  parseStateDocument,
  priorityOf,
  PRIORITIES,
  TERMINAL_STATUSES,
  type Priority,
  type Section,
  type StateDocument,
  type TodoItem,
  type TodoStatus,
} from './document';
import { applyEdits, newTodoLines, rewriteTodo, type MetadataChanges } from './edits';
import {
  analyzeGates,
  DECISION_OUTCOMES,
  decisionScopeProblem,
  DUE_INSTANT,
  GATE_DUE_META_KEY,
  isMergeLaneGate,
  isUserGate,
  MERGE_GATE_TITLE,
  metaList,
  parseDecisionScope,
  USER_GATE_CLASS,
  type DecisionOutcome,
} from './gates';
import type { LineSplice } from './lines';
import { parseIsoInstant } from '../isoTime';
import { setFrontMatterField } from './nextAction';
import { DEFAULT_SECTION_TITLES, type TodoRole } from './sections';

/**
 * Todo operations as pure functions over the state file text: each parses, checks, and returns
 * the new text with a summary of what changed. When an operation would have to guess (which
 * todo, which continuation, which outcome) it refuses with a LoopxError that names the fix.
 */

export const TASK_CLASSES = ['advancement_task', 'continuous_monitor', 'user_gate', 'user_action', 'blocker'] as const;

/** A todo as the CLI and the extension show it (the original's field names). */
export interface TodoView {
  index: number;
  done: boolean;
  text: string;
  title: string;
  todo_id: string;
  todo_id_source: 'metadata' | 'generated';
  priority: Priority | null;
  status: TodoStatus;
  claimed_by: string | null;
  task_class: string | null;
  role: TodoRole;
  section: string;
  /** 1-based line of the checkbox. */
  line: number;
  /** Every decoded metadata value (gate fields, evidence, continuation, …). */
  metadata: Record<string, string>;
}

export function todoView(item: TodoItem): TodoView {
  return {
    index: item.index,
    done: item.status === 'done',
    text: item.text,
    title: item.title,
    todo_id: item.todoId,
    todo_id_source: item.todoIdSource,
    priority: item.priority,
    status: item.status,
    claimed_by: item.meta['claimed_by'] ?? null,
    task_class: item.meta['task_class'] ?? null,
    role: item.role === 'archive' ? 'agent' : item.role,
    section: item.section.title,
    line: item.line + 1,
    metadata: { ...item.meta },
  };
}

export interface TodoEditSummary {
  operation: 'todo_add' | 'todo_claim' | 'todo_update' | 'todo_complete' | 'todo_supersede' | 'todo_defer';
  todo_id: string;
  changed: boolean;
  changed_fields: string[];
  /** The todo after the edit. */
  todo: TodoView;
  /** Todos this edit created (successor, replacement, or the new todo of an add). */
  added_todos: TodoView[];
  /** Agent todos a gate held back that are free now (gate approval). */
  released_todo_ids: string[];
}

export interface TodoEditResult {
  text: string;
  changed: boolean;
  summary: TodoEditSummary;
  /** Add only: whether a new todo was written (false when an unfinished todo with this text exists). */
  added?: boolean;
}

export interface OperationContext {
  /** ISO timestamp written as `updated_at` / `completed_at`. */
  now: string;
  /** The goal id, for error messages about the roster. */
  goalId: string;
  /** The goal's registered agents, or null when the goal has no roster (then no agent may claim). */
  roster: readonly string[] | null;
  /** The agent attributed with the edit (`--agent-id`), when given. */
  actorAgentId?: string | null;
}

// ---------------------------------------------------------------------------------------------
// Reading

export interface TodoListFilter {
  role?: TodoRole;
  status?: TodoStatus;
  /** Include done and deferred todos (default: only open and blocked). */
  includeTerminal?: boolean;
  claimedBy?: string;
}

/** Active todos (archive sections excluded) in document order, filtered. */
export function listTodos(doc: StateDocument, filter: TodoListFilter = {}): TodoView[] {
  const views: TodoView[] = [];
  for (const item of doc.todos) {
    if (item.role === 'archive') continue;
    if (filter.role !== undefined && item.role !== filter.role) continue;
    if (filter.status !== undefined && item.status !== filter.status) continue;
    if (filter.status === undefined && !filter.includeTerminal && TERMINAL_STATUSES.has(item.status)) continue;
    if (filter.claimedBy !== undefined && item.meta['claimed_by'] !== filter.claimedBy) continue;
    views.push(todoView(item));
  }
  return views;
}

/** The one active todo with this id; refuses when it is missing, archived or not unique. */
export function findTodo(doc: StateDocument, todoId: string): TodoItem {
  const matches = doc.todos.filter((item) => item.todoId === todoId);
  const active = matches.filter((item) => item.role !== 'archive');
  if (active.length === 1) return active[0] as TodoItem;
  if (active.length > 1) {
    throw new LoopxError(
      'todo_id_ambiguous',
      `todo ${todoId} appears ${active.length} times (lines ${active.map((t) => t.line + 1).join(', ')}); give each of them its own todo_id in the state file, then retry`,
      {
        todo_id: todoId,
        lines: active.map((t) => t.line + 1),
      },
    );
  }
  if (matches.length > 0) {
    throw new LoopxError(
      'todo_archived',
      `todo ${todoId} is in the archive section "${(matches[0] as TodoItem).section.title}" and cannot be edited; add a new todo instead`,
      { todo_id: todoId },
    );
  }
  throw new LoopxError(
    'todo_not_found',
    `todo_id '${todoId}' was not found in active user or agent todos; run \`loopx todo list\` to see the ids`,
    { todo_id: todoId },
  );
}

// ---------------------------------------------------------------------------------------------
// Add

export interface GateFields {
  blocksAgent?: string;
  /** User todos: the agent lane whose continuation this todo is for (`bound_agent`). */
  boundAgent?: string;
  /** User todos: bound to the whole goal rather than one agent (`goal_bound=true`). */
  goalBound?: boolean;
  globalGate?: boolean;
  /** Agent todo ids this gate holds back until approved. */
  unblocksTodoIds?: string[];
  decisionScope?: string;
  /** When the person should decide (ISO-8601 instant, written as `next_due_at`); null clears it (update). */
  dueAt?: string | null;
}

export interface NewTodoInput {
  text: string;
  priority?: Priority;
  taskClass?: string;
  actionKind?: string;
  claimedBy?: string;
  requiredDecisionScopes?: string[];
  note?: string;
  /** When a deferred or monitoring todo resumes (`todo_done:<id>`, `pr_merged:#<n>`, `capacity_available:<capability>`). */
  resumeWhen?: string;
  /** A continuous_monitor todo that only watches (never delivers). */
  watchOnly?: boolean;
  /** When a continuous_monitor todo stops (ISO-8601 instant). */
  expiresAt?: string;
  /** Further metadata LoopX itself writes (a merge-lane gate's `gate_kind`, `lane_branch`, `lane_agent`). */
  extraMetadata?: readonly (readonly [string, string])[];
}

export interface AddTodoInput extends NewTodoInput {
  role: TodoRole;
  gate?: GateFields;
}

/**
 * Adds a todo, or, as the original does, returns the unfinished todo of the same role with the same
 * text (`added: false`): the given claim, class and note are merged into it and it gets an
 * `updated_at` if it has none. Either write bumps the front matter's `updated_at`.
 */
export function addTodo(text: string, input: AddTodoInput, context: OperationContext): TodoEditResult {
  const doc = parseStateDocument(text);
  const gate = userTodoBinding(input.role, input.taskClass, input.gate ?? {}, context);
  const planned = planNewTodo(doc, input.role, input, gate, context, false);
  const existing = doc.todos.find(
    (item) => item.role === input.role && !DONE_FOR_ADD.has(item.status) && compactText(item.text) === planned.text,
  );
  if (existing !== undefined) {
    // The original rewrites the found todo's status to the add's own status, `open`: adding the text of a
    // blocked todo again reopens it (its claim and other metadata stay).
    const merge: Record<string, string> = { status: 'open' };
    for (const [key, value] of planned.metadata) {
      if (key === 'status' || key === 'updated_at') continue;
      if (key === 'task_class' && input.taskClass === undefined) continue;
      merge[key] = value;
    }
    if (existing.meta['updated_at'] === undefined) merge['updated_at'] = context.now;
    const result = finishEdit(
      doc,
      existing,
      'todo_add',
      { marker: ' ', metadata: merge },
      context,
      [],
      [],
      undefined,
      false,
    );
    return { ...result, added: false };
  }
  const insertion = insertTodo(doc, input.role, planned.text, planned.metadata);
  const newText = bumpFrontMatter(applyEdits(doc, insertion.splices), context.now);
  const added = findTodo(parseStateDocument(newText), insertion.todoId);
  return {
    text: newText,
    changed: true,
    added: true,
    summary: {
      operation: 'todo_add',
      todo_id: insertion.todoId,
      changed: true,
      changed_fields: ['todo'],
      todo: todoView(added),
      added_todos: [todoView(added)],
      released_todo_ids: [],
    },
  };
}

/**
 * The original's scope and binding of a user todo (its `require_user_gate_scope` and
 * `require_user_todo_binding`), checked before a duplicate is looked for:
 * - a user todo is bound to one agent lane (`bound_agent`) or to the goal (`goal_bound=true`); without either,
 *   it is bound to the `--agent-id` author, else (a gate) to the agent it blocks, else to the only registered
 *   agent; a global gate is goal-bound;
 * - on a goal with several registered agents a user gate needs `blocks_agent` or `global_gate`, and every
 *   user todo needs a binding;
 * - an agent-scoped gate binds to the agent it blocks, a global gate to the goal; agent todos take neither.
 */
function userTodoBinding(
  role: TodoRole,
  taskClass: string | undefined,
  given: GateFields,
  context: OperationContext,
): GateFields {
  const gate: GateFields = { ...given };
  if (role !== 'user') {
    if (gate.boundAgent !== undefined || gate.goalBound === true)
      throw new LoopxError('todo_binding_user_only', 'bound_agent and goal_bound are only valid for user todos');
    return gate;
  }
  const isGate =
    taskClass === USER_GATE_CLASS ||
    (taskClass === undefined &&
      (gate.blocksAgent !== undefined ||
        gate.globalGate === true ||
        (gate.unblocksTodoIds ?? []).length > 0 ||
        gate.decisionScope !== undefined));
  const actor = context.actorAgentId ?? undefined;
  if (isGate && gate.blocksAgent === undefined && gate.globalGate !== true && actor !== undefined)
    gate.blocksAgent = actor;
  if (gate.blocksAgent !== undefined) gate.blocksAgent = registeredAgent(gate.blocksAgent, 'blocks_agent', context);
  if (isGate && gate.blocksAgent !== undefined && gate.globalGate === true)
    throw new LoopxError(
      'gate_scope_conflict',
      'user_gate cannot set both blocks_agent and global_gate=true; use blocks_agent for one registered agent or global_gate=true for a goal-wide gate',
    );
  const registered = context.roster ?? [];
  if (gate.boundAgent === undefined && gate.goalBound !== true) {
    if (gate.globalGate === true) gate.goalBound = true;
    else if (actor !== undefined) gate.boundAgent = actor;
    else if (isGate && gate.blocksAgent !== undefined) gate.boundAgent = gate.blocksAgent;
    else if (registered.length === 1) gate.boundAgent = registered[0] as string;
  } else if (gate.globalGate === true) gate.goalBound = true;
  if (gate.boundAgent !== undefined) gate.boundAgent = registeredAgent(gate.boundAgent, 'bound_agent', context);
  if (isGate && registered.length > 1 && gate.blocksAgent === undefined && gate.globalGate !== true)
    throw new LoopxError(
      'gate_scope_required',
      'multi-agent user_gate requires an explicit scope: pass --blocks-agent <registered-agent> (or --agent-id <registered-agent> for authoring) when the gate blocks one lane, or pass --global-gate when it genuinely blocks every registered agent',
      { registered_agents: [...registered] },
    );
  if (gate.boundAgent !== undefined && gate.goalBound === true)
    throw new LoopxError(
      'todo_binding_conflict',
      'user todo cannot set both bound_agent and goal_bound=true; bind the continuation to one agent lane or explicitly to the whole goal',
    );
  if (isGate && gate.globalGate === true && gate.boundAgent !== undefined)
    throw new LoopxError(
      'todo_binding_conflict',
      'a goal-wide user_gate must use goal_bound=true and cannot bind its continuation to one agent',
    );
  if (isGate && gate.blocksAgent !== undefined) {
    if (gate.goalBound === true || gate.boundAgent !== gate.blocksAgent)
      throw new LoopxError(
        'todo_binding_conflict',
        'an agent-scoped user_gate must bind to the same agent named by blocks_agent',
      );
  }
  if (registered.length > 1 && gate.boundAgent === undefined && gate.goalBound !== true)
    throw new LoopxError(
      'todo_binding_required',
      'multi-agent user todo requires an explicit binding: pass --bound-agent <registered-agent> (or --agent-id <registered-agent> for authoring), or pass --goal-bound for an intentionally goal-wide user todo',
      { registered_agents: [...registered] },
    );
  return gate;
}

/**
 * Statuses an add does not match a duplicate against: the original's terminal statuses (`done`, `deferred`;
 * `matching_todo_block` skips them), so adding a deferred todo's text adds a new todo (kit seeds 6 todo-012,
 * 7 todo-022).
 */
const DONE_FOR_ADD: ReadonlySet<TodoStatus> = new Set<TodoStatus>(['done', 'deferred']);

/**
 * The front matter's `updated_at` set to `now`, as the original does on every todo write. A file
 * without front matter is left without one (the original's behavior, kept).
 */
export function bumpFrontMatter(text: string, now: string): string {
  return parseStateDocument(text).frontMatter === null ? text : setFrontMatterField(text, 'updated_at', now).text;
}

interface PlannedTodo {
  text: string;
  metadata: [string, string][];
}

/** Validates a new todo and returns its text (with `[Pn]` prefix) and metadata (todo_id comes later). */
function planNewTodo(
  doc: StateDocument,
  role: TodoRole,
  input: NewTodoInput,
  gate: GateFields,
  context: OperationContext,
  writeDefaultClass = true,
): PlannedTodo {
  refuseCredentials({ text: input.text, note: input.note });
  let todoText = compactText(input.text);
  if (todoText === '') throw new LoopxError('todo_text_required', 'a todo needs non-empty text (--text)');
  if (input.priority !== undefined) {
    const written = priorityOf(todoText, undefined);
    if (written !== null && written !== input.priority) {
      throw new LoopxError(
        'todo_priority_conflict',
        `the text starts with priority ${written} but ${input.priority} was given; drop one of them`,
        { text_priority: written, priority: input.priority },
      );
    }
    if (written === null) todoText = `[${input.priority}] ${todoText}`;
  }
  const hasGateFields =
    gate.blocksAgent !== undefined ||
    gate.globalGate === true ||
    (gate.unblocksTodoIds ?? []).length > 0 ||
    gate.decisionScope !== undefined ||
    typeof gate.dueAt === 'string';
  // As in the original, `todo add` writes an agent todo without --task-class without one (readers
  // take it as advancement_task); successors and user todos get their class written.
  const explicitClass = input.taskClass;
  const taskClass =
    explicitClass ?? (role === 'agent' ? 'advancement_task' : hasGateFields ? USER_GATE_CLASS : 'user_action');
  checkTaskClass(role, taskClass);
  const monitorFields = monitorMetadata(taskClass, input);
  if (hasGateFields && taskClass !== USER_GATE_CLASS) {
    throw new LoopxError(
      'todo_gate_fields_need_user_gate',
      'gate fields (blocks_agent, global_gate, unblocks_todo_id, decision_scope, due time) belong to user todos of class user_gate; use --role user (and --task-class user_gate)',
    );
  }
  if (role === 'user' && input.claimedBy !== undefined) {
    throw new LoopxError('todo_claim_agent_only', 'only agent todos can be claimed; user todos are for people');
  }
  const metadata: [string, string][] = [['status', 'open']];
  if (explicitClass !== undefined || role === 'user' || writeDefaultClass) metadata.push(['task_class', taskClass]);
  if (input.actionKind !== undefined) metadata.push(['action_kind', checkedToken('action_kind', input.actionKind)]);
  if (input.claimedBy !== undefined)
    metadata.push(['claimed_by', registeredAgent(input.claimedBy, 'claimed_by', context)]);
  metadata.push(...gateMetadata(doc, gate, context));
  if (input.requiredDecisionScopes !== undefined && input.requiredDecisionScopes.length > 0) {
    metadata.push(['required_decision_scopes', checkedScopes(input.requiredDecisionScopes)]);
  }
  metadata.push(...monitorFields);
  for (const [key, value] of input.extraMetadata ?? []) metadata.push([key, value]);
  if (input.note !== undefined && input.note.trim() !== '') metadata.push(['note', compactText(input.note)]);
  metadata.push(['updated_at', context.now]);
  return { text: todoText, metadata };
}

/**
 * The bounds of a monitoring todo: a continuous_monitor needs one of `expires_at`, `resume_when`
 * or `watch_only` (the original's rule), so it cannot hold a lane forever.
 */
function monitorMetadata(taskClass: string, input: NewTodoInput): [string, string][] {
  const fields: [string, string][] = [];
  if (input.resumeWhen !== undefined) fields.push(['resume_when', supportedResumeWhen(input.resumeWhen)]);
  const monitorOnly = input.watchOnly === true || input.expiresAt !== undefined;
  if (monitorOnly && taskClass !== 'continuous_monitor')
    throw new LoopxError(
      'invalid_todo_field',
      '--watch-only and --expires-at are only valid for --task-class continuous_monitor',
      { task_class: taskClass },
    );
  if (input.expiresAt !== undefined) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(input.expiresAt))
      throw new LoopxError(
        'invalid_todo_field',
        `expires_at must be an ISO-8601 instant such as 2026-01-31T12:00:00Z, got ${JSON.stringify(input.expiresAt)}`,
        { field: 'expires_at', value: input.expiresAt },
      );
    fields.push(['expires_at', input.expiresAt]);
  }
  if (input.watchOnly === true) fields.push(['watch_only', 'true']);
  if (taskClass === 'continuous_monitor' && fields.length === 0)
    throw new LoopxError(
      'todo_monitor_unbounded',
      'continuous_monitor requires one of: --expires-at, --resume-when, or --watch-only',
      { task_class: taskClass },
    );
  return fields;
}

function gateMetadata(doc: StateDocument, gate: GateFields, context: OperationContext): [string, string][] {
  const metadata: [string, string][] = [];
  if (gate.boundAgent !== undefined) metadata.push(['bound_agent', gate.boundAgent]);
  if (gate.goalBound === true) metadata.push(['goal_bound', 'true']);
  if (gate.blocksAgent !== undefined)
    metadata.push(['blocks_agent', registeredAgent(gate.blocksAgent, 'blocks_agent', context)]);
  if (gate.globalGate === true) metadata.push(['global_gate', 'true']);
  if (gate.unblocksTodoIds !== undefined && gate.unblocksTodoIds.length > 0) {
    for (const id of gate.unblocksTodoIds) {
      const target = findTodo(doc, id);
      if (target.role !== 'agent')
        throw new LoopxError(
          'gate_target_not_agent_todo',
          `unblocks_todo_id ${id} is a ${target.role} todo; a gate holds back agent todos`,
          { todo_id: id },
        );
    }
    metadata.push(['unblocks_todo_id', gate.unblocksTodoIds.join(',')]);
  }
  if (gate.decisionScope !== undefined) {
    const problem = decisionScopeProblem(gate.decisionScope);
    if (problem !== null)
      throw new LoopxError('invalid_decision_scope', problem, { decision_scope: gate.decisionScope });
    metadata.push(['decision_scope', gate.decisionScope]);
  }
  if (typeof gate.dueAt === 'string') {
    if (!DUE_INSTANT.test(gate.dueAt) || parseIsoInstant(gate.dueAt) === null)
      throw new LoopxError(
        'invalid_todo_field',
        `a gate's due time must be an ISO-8601 instant such as 2026-01-31T12:00:00Z, got ${JSON.stringify(gate.dueAt)}`,
        { field: 'due_at', value: gate.dueAt },
      );
    metadata.push([GATE_DUE_META_KEY, gate.dueAt]);
  }
  return metadata;
}

function checkedScopes(scopes: readonly string[]): string {
  for (const scope of scopes) {
    const problem = decisionScopeProblem(scope);
    if (problem !== null) throw new LoopxError('invalid_decision_scope', problem, { decision_scope: scope });
  }
  return scopes.join(',');
}

function checkTaskClass(role: TodoRole, taskClass: string): void {
  if (!(TASK_CLASSES as readonly string[]).includes(taskClass)) {
    throw new LoopxError(
      'invalid_task_class',
      `task_class ${JSON.stringify(taskClass)} is not one of ${TASK_CLASSES.join(', ')}`,
      { task_class: taskClass },
    );
  }
  const userClass = taskClass === USER_GATE_CLASS || taskClass === 'user_action';
  if (userClass !== (role === 'user')) {
    throw new LoopxError(
      'task_class_role_mismatch',
      `task_class ${taskClass} belongs to ${userClass ? 'user' : 'agent'} todos, not ${role} todos`,
      { task_class: taskClass, role },
    );
  }
}

function checkedToken(field: string, value: string): string {
  const token = value.trim().toLowerCase();
  if (!/^[a-z0-9][a-z0-9_.:-]*$/.test(token))
    throw new LoopxError(
      'invalid_todo_field',
      `${field} must be a lowercase token such as implement or review, got ${JSON.stringify(value)}`,
      { field, value },
    );
  return token;
}

/** A normalized agent id that is on the goal's roster (any valid id when the goal has none). */
function registeredAgent(value: string, field: string, context: OperationContext): string {
  // Without a roster no agent id may be used (the original's rule): the error names the
  // configure-goal command that registers it.
  return requireRegisteredAgent(
    { id: context.goalId, coordination: { registered_agents: [...(context.roster ?? [])] } },
    value,
    { field },
  );
}

/**
 * Splices that add a todo after the last todo of its role, so the positions (and thus the derived
 * ids) of the todos already there do not move. The id written is the one the original derives for
 * the todo at that position; if another todo already has it, a disambiguated hash is used.
 */
function insertTodo(
  doc: StateDocument,
  role: TodoRole,
  todoText: string,
  metadata: readonly [string, string][],
): { splices: LineSplice[]; todoId: string } {
  const roleTodos = doc.todos.filter((t) => t.role === role);
  // The first section of the role, as every reader (and the original's writer) takes it.
  const target = doc.sections.find((s) => s.role === role) ?? null;
  const sectionTitle = target?.title ?? DEFAULT_SECTION_TITLES[role];
  const index = roleTodos.length + 1;
  const taken = new Set(doc.todos.map((t) => t.todoId));
  let todoId = deriveTodoId(role, sectionTitle, index, todoText);
  for (let n = 2; taken.has(todoId); n++) todoId = deriveTodoId(role, sectionTitle, index, `${todoText}#${n}`);
  const lines = newTodoLines(' ', todoText, [['todo_id', todoId], ...metadata]);

  if (target !== null) {
    // The original's spacing (`insert_into_existing_section`): after the section's last non-blank line; a blank
    // line after a heading with an empty body; and one before the next heading when no blank line was left there.
    const at = lastContentLine(doc, target) + 1;
    const spaced = [...(at === target.headingLine + 1 ? [''] : []), ...lines];
    if (at === target.end && target.end < doc.lines.length) spaced.push('');
    return { splices: [{ from: at, to: at, lines: spaced }], todoId };
  }
  // No section for this role yet: the original's anchor (`insertion_anchor`): a user section goes before the agent
  // section, else (and an agent section always) before Next Action, else at the end.
  const before =
    (role === 'user' ? doc.sections.find((s) => s.role === 'agent') : undefined) ??
    doc.sections.find((s) => s.role === 'next_action');
  // The original's new section (`insert_new_section`): heading, blank, the todo, blank; a blank before it when
  // the line above is not blank.
  const anchor = before ? before.headingLine : doc.lines.length;
  const above = doc.lines[anchor - 1];
  const spacer = above !== undefined && above.content.trim() !== '' ? [''] : [];
  return {
    splices: [{ from: anchor, to: anchor, lines: [...spacer, `## ${sectionTitle}`, '', ...lines, ''] }],
    todoId,
  };
}

/** The last non-blank line of a section (its heading when the body is blank). */
function lastContentLine(doc: StateDocument, section: Section): number {
  for (let i = section.end - 1; i >= section.bodyStart; i--) {
    if ((doc.lines[i]?.content ?? '').trim() !== '') return i;
  }
  return section.headingLine;
}

// ---------------------------------------------------------------------------------------------
// Claim

export interface ClaimTodoInput {
  todoId: string;
  /** The agent that takes the todo (`--claimed-by`). */
  agentId: string;
  /** The agent attributed with the claim (`--agent-id`); when given it must be the claimant. */
  actorAgentId?: string;
  /**
   * The CLI's rule, as in the original: on a goal with several registered agents the actor
   * (`--agent-id`) must be named. The turn runner claims with its own verified identity.
   */
  requireActor?: boolean;
  /** Take over a todo another agent has claimed. */
  takeover?: boolean;
}

export function claimTodo(text: string, input: ClaimTodoInput, context: OperationContext): TodoEditResult {
  const doc = parseStateDocument(text);
  const agentId = registeredAgent(input.agentId, 'claimed_by', context);
  const actor = input.actorAgentId === undefined ? null : registeredAgent(input.actorAgentId, 'agent_id', context);
  // The original looks the todo up before it attributes the lifecycle actor: an unknown todo is
  // "not found" whoever asks.
  const item = findTodo(doc, input.todoId);
  if (actor === null && input.requireActor === true && (context.roster?.length ?? 0) > 1) {
    throw new LoopxError(
      'todo_claim_actor_required',
      'multi-agent todo claim requires --agent-id to attribute the lifecycle actor; only completion of an exactly linked user_gate decision_scope may use the typed owner/controller override',
      { claimed_by: agentId, registered_agents: [...(context.roster ?? [])] },
    );
  }
  if (actor !== null && actor !== agentId) {
    throw new LoopxError(
      'todo_claim_actor_mismatch',
      `agent_id='${actor}' cannot claim todo_id='${input.todoId}' for claimed_by='${agentId}'; an agent claims work for itself`,
      { agent_id: actor, claimed_by: agentId, todo_id: input.todoId },
    );
  }
  if (item.role !== 'agent')
    throw new LoopxError(
      'todo_claim_agent_only',
      `todo ${item.todoId} is a user todo; only agent todos can be claimed`,
      { todo_id: item.todoId },
    );
  if (metaList(item.meta['excluded_agents']).includes(agentId)) {
    throw new LoopxError(
      'todo_agent_excluded',
      `agent ${agentId} is in excluded_agents of todo ${item.todoId}; another agent has to take it`,
      { todo_id: item.todoId, agent_id: agentId },
    );
  }
  const holder = item.meta['claimed_by'];
  if (holder !== undefined && holder !== '' && holder !== agentId && input.takeover !== true) {
    throw new LoopxError(
      'todo_claimed_by_other_agent',
      `agent_id='${agentId}' cannot claim todo_id='${item.todoId}'; it is claimed_by='${holder}' (pass --takeover to take it over)`,
      { todo_id: item.todoId, claimed_by: holder, agent_id: agentId },
    );
  }
  if (item.status !== 'open') {
    throw new LoopxError(
      'todo_terminal',
      `todo claim requires status=open; todo_id '${item.todoId}' is status='${item.status}'`,
      { todo_id: item.todoId, status: item.status },
    );
  }
  requireBoundedMonitor(item, {});
  return finishEdit(doc, item, 'todo_claim', { metadata: { claimed_by: agentId } }, context);
}

/**
 * The original's rule on every claim and update (`update_goal_todo` → `require_continuous_monitor_boundedness`): a
 * `continuous_monitor` todo, as it stands after the edit, has an `expires_at`, a `resume_when` or `watch_only=true`;
 * else the edit is refused (kit seed 5 todo-007: a claim of an unbounded monitor).
 */
function requireBoundedMonitor(item: TodoItem, metadata: Readonly<Record<string, string | null>>): void {
  const after = (key: string): string => (key in metadata ? (metadata[key] ?? '') : (item.meta[key] ?? '')).trim();
  if (after('task_class') !== 'continuous_monitor') return;
  if (after('expires_at') !== '' || after('resume_when') !== '' || after('watch_only') === 'true') return;
  throw new LoopxError(
    'todo_monitor_unbounded',
    'continuous_monitor requires one of: --expires-at, --resume-when, or --watch-only',
    { todo_id: item.todoId, task_class: 'continuous_monitor' },
  );
}

// ---------------------------------------------------------------------------------------------
// Update

export interface UpdateTodoInput {
  todoId: string;
  text?: string;
  priority?: Priority;
  /**
   * Not `done` (use complete or supersede). `open` also resumes a deferred todo; `deferred` (the original's spelling
   * of defer) needs a resume condition, given or already on the todo.
   */
  status?: 'open' | 'blocked' | 'deferred';
  /** Why (`reason`): a blocked or deferred todo keeps it, as the original writes it. */
  reason?: string;
  /** When a deferred todo resumes (see `supportedResumeWhen`). */
  resumeWhen?: string;
  taskClass?: string;
  actionKind?: string;
  /** A new claim, or null to release the claim. */
  claimedBy?: string | null;
  note?: string;
  requiredDecisionScopes?: string[];
  gate?: GateFields;
}

export function updateTodo(text: string, input: UpdateTodoInput, context: OperationContext): TodoEditResult {
  refuseCredentials({ text: input.text, note: input.note, reason: input.reason });
  const doc = parseStateDocument(text);
  const item = findTodo(doc, input.todoId);
  if (item.status === 'done') {
    throw new LoopxError(
      'todo_terminal',
      `todo ${item.todoId} is done; add a new todo instead of editing a finished one`,
      { todo_id: item.todoId, status: item.status },
    );
  }
  if (item.status === 'deferred' && input.status !== 'open') {
    throw new LoopxError(
      'todo_terminal',
      `todo ${item.todoId} is deferred; resume it with --status open (in the same update) before changing it`,
      { todo_id: item.todoId, status: item.status },
    );
  }
  const role = item.role as TodoRole;
  const metadata: Record<string, string | null> = {};
  let newText: string | undefined;
  let marker: TodoItem['marker'] | undefined;

  if (input.text !== undefined) {
    newText = compactText(input.text);
    if (newText === '') throw new LoopxError('todo_text_required', 'a todo needs non-empty text (--text)');
    // A new text without a priority prefix keeps the todo's current priority.
    if (
      priorityOf(newText, undefined) === null &&
      item.priority !== null &&
      input.priority === undefined &&
      item.meta['priority'] === undefined
    ) {
      newText = `[${item.priority}] ${newText}`;
    }
  }
  if (input.priority !== undefined) {
    const base = newText ?? item.lineText;
    const bracket = /^\[P[0-4]\]\s*/.exec(base);
    if (bracket) newText = `[${input.priority}] ${base.slice(bracket[0].length)}`;
    else if (priorityOf(base, undefined) !== null) {
      throw new LoopxError(
        'todo_priority_conflict',
        `todo ${item.todoId} text starts with a bare priority word; change it with --text instead of --priority`,
        { todo_id: item.todoId },
      );
    } else if (item.meta['priority'] !== undefined) metadata['priority'] = input.priority;
    else newText = `[${input.priority}] ${base}`;
  }
  if (input.status !== undefined) {
    metadata['status'] = input.status;
    marker = markerForStatus(input.status);
  }
  if (input.reason !== undefined && compactText(input.reason) !== '') metadata['reason'] = compactText(input.reason);
  if (input.resumeWhen !== undefined) metadata['resume_when'] = supportedResumeWhen(input.resumeWhen);
  if (input.status === 'deferred') {
    if (isUserGate(item))
      throw new LoopxError(
        'gate_cannot_be_deferred',
        `todo ${item.todoId} is a user gate; resolve it with complete --decision-outcome cancel or supersede it, so the work it holds back stays accounted for`,
        { todo_id: item.todoId },
      );
    const existing = item.meta['resume_when'];
    const kept = existing !== undefined && RESUME_CONDITION.test(compactText(existing).toLowerCase());
    if (input.resumeWhen === undefined && !kept)
      throw new LoopxError('todo_defer_resume_when_required', DEFER_NEEDS_RESUME_WHEN, { todo_id: item.todoId });
  }
  if (input.taskClass !== undefined) {
    checkTaskClass(role, input.taskClass);
    metadata['task_class'] = input.taskClass;
  }
  if (input.actionKind !== undefined) metadata['action_kind'] = checkedToken('action_kind', input.actionKind);
  if (input.claimedBy !== undefined) {
    if (role !== 'agent')
      throw new LoopxError(
        'todo_claim_agent_only',
        `todo ${item.todoId} is a user todo; only agent todos can be claimed`,
        { todo_id: item.todoId },
      );
    metadata['claimed_by'] = input.claimedBy === null ? null : registeredAgent(input.claimedBy, 'claimed_by', context);
  }
  if (input.note !== undefined) metadata['note'] = compactText(input.note) === '' ? null : compactText(input.note);
  if (input.requiredDecisionScopes !== undefined) {
    metadata['required_decision_scopes'] =
      input.requiredDecisionScopes.length === 0 ? null : checkedScopes(input.requiredDecisionScopes);
  }
  if (input.gate !== undefined) {
    const gateFields = gateMetadata(doc, input.gate, context);
    if (
      gateFields.length > 0 &&
      (role !== 'user' || (input.taskClass ?? item.meta['task_class']) !== USER_GATE_CLASS)
    ) {
      throw new LoopxError(
        'todo_gate_fields_need_user_gate',
        `todo ${item.todoId} is not a user_gate; gate fields belong to user todos of class user_gate`,
        { todo_id: item.todoId },
      );
    }
    for (const [key, value] of gateFields) metadata[key] = value;
    if (input.gate.dueAt === null) {
      if (role !== 'user' || (input.taskClass ?? item.meta['task_class']) !== USER_GATE_CLASS)
        throw new LoopxError(
          'todo_gate_fields_need_user_gate',
          `todo ${item.todoId} is not a user_gate; only a gate has a due time`,
          { todo_id: item.todoId },
        );
      metadata[GATE_DUE_META_KEY] = null;
    }
  }
  requireBoundedMonitor(item, metadata);
  const rewrite: Parameters<typeof rewriteTodo>[2] = { metadata };
  if (newText !== undefined) rewrite.text = newText;
  if (marker !== undefined) rewrite.marker = marker;
  return finishEdit(doc, item, 'todo_update', rewrite, context);
}

// ---------------------------------------------------------------------------------------------
// Complete

export interface CompleteTodoInput {
  todoId: string;
  /** What shows it is done; optional on the CLI as in the original, required when `strict`. */
  evidence?: string;
  /**
   * The turn writeback's rule: evidence and exactly one of a successor or `noFollowUp`. Without it
   * (the CLI, as in the original), a completion with neither continues the goal (`active_goal`).
   */
  strict?: boolean;
  /** The follow-up agent todo this completion hands over to. */
  successor?: NewTodoInput;
  /** An explicit final: no follow-up work. */
  noFollowUp?: boolean;
  /** Required when resolving a user gate. */
  decisionOutcome?: DecisionOutcome;
  /** Set by `lane merge` only: the approval of a merge-lane gate whose lane was just merged. */
  mergeApproval?: boolean;
  /**
   * The CLI's rule, as in the original: on a goal with several registered agents the lifecycle actor
   * (`--agent-id`, in `context.actorAgentId`) must be named, unless the completion resolves a user gate
   * whose decision scope is exactly one the todo it unblocks requires. The editor acts for the
   * project's owner and the turn runner with its own verified identity: neither sets it.
   */
  requireActor?: boolean;
}

/**
 * The original's attribution of a lifecycle mutation on a multi-agent goal (`authorize_todo_lifecycle_mutation`):
 * the actor is named, not excluded from the todo, the agent a user todo is bound to, and the todo's
 * claimant. A goal with one agent or none is not checked (the original's single-agent compatibility).
 */
function requireLifecycleActor(
  doc: StateDocument,
  item: TodoItem,
  command: 'complete',
  context: OperationContext,
  decisionOutcome: DecisionOutcome | undefined,
): void {
  if ((context.roster?.length ?? 0) <= 1) return;
  if (command === 'complete' && exactGateOverride(doc, item, decisionOutcome)) return;
  const given = context.actorAgentId ?? null;
  if (given === null)
    throw new LoopxError(
      'todo_lifecycle_actor_required',
      `multi-agent todo ${command} requires --agent-id to attribute the lifecycle actor; only completion of an exactly linked user_gate decision_scope may use the typed owner/controller override`,
      { todo_id: item.todoId, registered_agents: [...(context.roster ?? [])] },
    );
  const actor = registeredAgent(given, 'agent_id', context);
  if (metaList(item.meta['excluded_agents']).includes(actor))
    throw new LoopxError(
      'todo_agent_excluded',
      `agent_id='${actor}' is excluded from mutating todo_id='${item.todoId}'`,
      {
        todo_id: item.todoId,
        agent_id: actor,
      },
    );
  const bound = item.meta['bound_agent'] ?? (item.role === 'user' ? item.meta['blocks_agent'] : undefined);
  if (bound !== undefined && bound !== '' && bound !== actor)
    throw new LoopxError(
      'todo_bound_to_other_agent',
      `agent_id='${actor}' cannot ${command} user todo_id='${item.todoId}'; its response continuation is bound to bound_agent='${bound}'`,
      { todo_id: item.todoId, agent_id: actor, bound_agent: bound },
    );
  const holder = item.meta['claimed_by'];
  if (holder !== undefined && holder !== '' && holder !== actor)
    throw new LoopxError(
      'todo_claimed_by_other_agent',
      `agent_id='${actor}' cannot ${command} todo_id='${item.todoId}'; it is claimed_by='${holder}'`,
      { todo_id: item.todoId, claimed_by: holder, agent_id: actor },
    );
}

/** A user gate completed with an outcome whose decision scope is one its unblocked agent todo requires. */
function exactGateOverride(doc: StateDocument, gate: TodoItem, outcome: DecisionOutcome | undefined): boolean {
  if (gate.role !== 'user' || !isUserGate(gate) || outcome === undefined) return false;
  const scope = parseDecisionScope(gate.meta['decision_scope'] ?? '');
  const targetId = gate.meta['unblocks_todo_id'];
  if (scope === null || targetId === undefined || targetId === '') return false;
  const target = doc.todos.find((t) => t.role === 'agent' && t.todoId === targetId);
  if (target === undefined) return false;
  return metaList(target.meta['required_decision_scopes'])
    .map(parseDecisionScope)
    .some((r) => r !== null && r.kind === scope.kind && r.granularity === scope.granularity && r.key === scope.key);
}

export function completeTodo(text: string, input: CompleteTodoInput, context: OperationContext): TodoEditResult {
  refuseCredentials({
    evidence: input.evidence,
    'successor text': input.successor?.text,
    'successor note': input.successor?.note,
  });
  const doc = parseStateDocument(text);
  const item = findTodo(doc, input.todoId);
  // The lifecycle actor is checked as soon as the todo is found, before its status (as in the original).
  if (input.requireActor === true) requireLifecycleActor(doc, item, 'complete', context, input.decisionOutcome);
  // A done todo may be completed again (the original re-stamps it), and so may a deferred one: the
  // original completes it where it stands (its resume condition stays as a record).
  const evidence = compactText(input.evidence ?? '');
  if (evidence === '' && input.strict === true)
    throw new LoopxError(
      'todo_evidence_required',
      `completing todo ${item.todoId} needs evidence of what was done (--evidence)`,
      { todo_id: item.todoId },
    );
  const successorGiven = input.successor !== undefined;
  const noFollowUp = input.noFollowUp === true;
  if (successorGiven && noFollowUp) {
    throw new LoopxError(
      'todo_completion_continuation_conflict',
      `completing todo ${item.todoId}: give either a successor todo or --no-follow-up, not both`,
      { todo_id: item.todoId },
    );
  }
  if (input.strict === true && item.role === 'agent' && !successorGiven && !noFollowUp) {
    throw new LoopxError(
      'todo_completion_continuation_required',
      `completing agent todo ${item.todoId} needs exactly one of a successor todo (--successor-text) or an explicit final (--no-follow-up)`,
      { todo_id: item.todoId },
    );
  }
  const gate = isUserGate(item);
  if (gate && input.decisionOutcome === undefined) {
    throw new LoopxError(
      'gate_decision_outcome_required',
      `todo ${item.todoId} is a user gate; resolve it with a decision outcome (--decision-outcome ${DECISION_OUTCOMES.join('|')})`,
      { todo_id: item.todoId },
    );
  }
  // A merge-lane gate is approved by merging its lane (docs/lanes.md): a bare approval would close it unmerged.
  if (input.decisionOutcome === 'approve' && isMergeLaneGate(item) && input.mergeApproval !== true)
    throw new LoopxError(
      'merge_gate_needs_lane_merge',
      `todo ${item.todoId} is a merge-lane gate; approve it by merging the lane: loopx lane merge --goal-id ${context.goalId} --agent-id ${item.meta['lane_agent'] ?? MERGE_GATE_TITLE.exec(item.title)?.[2] ?? '<agent>'} --execute (LoopX: Merge Lane…)`,
      { todo_id: item.todoId, lane_branch: item.meta['lane_branch'] ?? null },
    );
  if (!gate && input.decisionOutcome !== undefined) {
    throw new LoopxError(
      'gate_decision_outcome_not_a_gate',
      `todo ${item.todoId} is not a user gate; --decision-outcome only resolves user_gate todos`,
      { todo_id: item.todoId },
    );
  }

  const metadata: Record<string, string | null> = { status: 'done' };
  if (evidence !== '') metadata['evidence'] = evidence;
  metadata['completed_at'] = context.now;
  if (input.decisionOutcome !== undefined) metadata['decision_outcome'] = input.decisionOutcome;
  const splices: LineSplice[] = [];
  const added: string[] = [];
  if (input.decisionOutcome === 'approve') {
    // Approval resumes the work the gate names: todos parked as `blocked` for it reopen.
    for (const targetId of metaList(item.meta['unblocks_todo_id'])) {
      const target = doc.todos.find((t) => t.todoId === targetId && t.role === 'agent');
      if (target && target.status === 'blocked')
        splices.push(
          ...rewriteTodo(doc, target, { marker: ' ', metadata: { status: 'open', updated_at: context.now } }),
        );
    }
  }
  // The successor is inserted after the rewrites above: when both insert at the same line, a
  // rewritten todo's new metadata comment must stay directly under its own checkbox.
  if (successorGiven && input.successor) {
    // The original's successor (`complete_goal_todo`): its text takes the completed todo's priority prefix unless
    // it has one (`inherit_todo_priority`), and it links back with `unblocks_todo_id=<the completed todo>`.
    const planned = planNewTodo(doc, 'agent', inheritPriority(input.successor, item), {}, context);
    const insertion = insertTodo(doc, 'agent', planned.text, [...planned.metadata, ['unblocks_todo_id', item.todoId]]);
    splices.push(...insertion.splices);
    added.push(insertion.todoId);
    metadata['completion_continuation'] = 'successor';
    metadata['successor_todo_ids'] = insertion.todoId;
  } else if (noFollowUp) {
    metadata['completion_continuation'] = 'no_followup';
    metadata['no_followup'] = 'true';
  } else {
    // Neither a successor nor a final: the goal itself carries on (the original's default).
    metadata['completion_continuation'] = 'active_goal';
  }
  return finishEdit(doc, item, 'todo_complete', { marker: 'x', metadata }, context, splices, added);
}

/** A follow-up todo's input with the source todo's `[Pn]` prefix when it has no priority of its own. */
function inheritPriority(next: NewTodoInput, source: TodoItem): NewTodoInput {
  if (next.priority !== undefined || priorityOf(compactText(next.text), undefined) !== null) return next;
  const sourcePriority = priorityOf(source.text, undefined);
  return sourcePriority === null ? next : { ...next, priority: sourcePriority };
}

// ---------------------------------------------------------------------------------------------
// Supersede

export interface SupersedeTodoInput {
  todoId: string;
  reason?: string;
  /** A new todo that replaces this one (same role, class, action kind, claim and gate relations unless given). */
  replacement?: NewTodoInput;
  /** Or an existing todo that replaces it. */
  supersededBy?: string;
}

export function supersedeTodo(text: string, input: SupersedeTodoInput, context: OperationContext): TodoEditResult {
  refuseCredentials({
    reason: input.reason,
    'replacement text': input.replacement?.text,
    'replacement note': input.replacement?.note,
  });
  const doc = parseStateDocument(text);
  const item = findTodo(doc, input.todoId);
  const heldGate =
    isUserGate(item) &&
    item.status === 'done' &&
    ['reject', 'cancel'].includes(item.meta['decision_outcome'] ?? '') &&
    item.meta['superseded_by'] === undefined;
  if (!heldGate) requireNotTerminal(item, 'superseded');
  if ((input.replacement === undefined) === (input.supersededBy === undefined)) {
    throw new LoopxError(
      'todo_supersede_target_required',
      `superseding todo ${item.todoId} needs exactly one of a replacement todo (--successor-text) or an existing todo id (--superseded-by)`,
      { todo_id: item.todoId },
    );
  }
  const role = item.role as TodoRole;
  // As the original's supersede (`supersede_goal_todo`): the todo is completed with `note=superseded`, a
  // `completed_at`, the default continuation (`active_goal`), and linked to its replacement by `superseded_by` and
  // `successor_todo_ids`.
  const metadata: Record<string, string | null> = { status: 'done' };
  if (input.reason !== undefined && compactText(input.reason) !== '') metadata['reason'] = compactText(input.reason);
  if (!heldGate) {
    metadata['note'] = 'superseded';
    if (item.meta['completed_at'] === undefined) metadata['completed_at'] = context.now;
    if (item.meta['completion_continuation'] === undefined) metadata['completion_continuation'] = 'active_goal';
  }
  const splices: LineSplice[] = [];
  const added: string[] = [];
  if (input.supersededBy !== undefined) {
    const replacement = findTodo(doc, input.supersededBy);
    if (replacement.todoId === item.todoId)
      throw new LoopxError('todo_supersede_self', `todo ${item.todoId} cannot supersede itself`, {
        todo_id: item.todoId,
      });
    if (replacement.role !== role)
      throw new LoopxError(
        'todo_supersede_role_mismatch',
        `todo ${replacement.todoId} is a ${replacement.role} todo; a ${role} todo is superseded by a todo of the same role`,
        { todo_id: item.todoId },
      );
    metadata['superseded_by'] = replacement.todoId;
    if (!heldGate) metadata['successor_todo_ids'] = successorIdsWith(item, replacement.todoId);
  } else if (input.replacement && role === 'agent') {
    // The original's `--next-agent-todo`: the replacement takes the todo's `[Pn]` prefix unless it has its own and
    // the gate link (`unblocks_todo_id`) of the todo it replaces; its class is advancement_task and its claim,
    // action kind and decision scopes are only what is given.
    const planned = planNewTodo(doc, role, inheritPriority(withoutUndefined(input.replacement), item), {}, context);
    const link = item.meta['unblocks_todo_id'];
    const insertion = insertTodo(
      doc,
      role,
      planned.text,
      link === undefined || link === '' ? planned.metadata : [...planned.metadata, ['unblocks_todo_id', link]],
    );
    splices.push(...insertion.splices);
    added.push(insertion.todoId);
    metadata['superseded_by'] = insertion.todoId;
    metadata['successor_todo_ids'] = successorIdsWith(item, insertion.todoId);
  } else if (input.replacement) {
    const inherited: NewTodoInput = { ...input.replacement };
    inherited.taskClass ??= item.meta['task_class'];
    inherited.actionKind ??= item.meta['action_kind'];
    if (role === 'agent') inherited.claimedBy ??= item.meta['claimed_by'];
    if (inherited.requiredDecisionScopes === undefined && item.meta['required_decision_scopes'] !== undefined)
      inherited.requiredDecisionScopes = metaList(item.meta['required_decision_scopes']);
    const gateFields: GateFields = {};
    if (isUserGate(item)) {
      if (item.meta['blocks_agent'] !== undefined) gateFields.blocksAgent = item.meta['blocks_agent'];
      if (item.meta['global_gate'] !== undefined)
        gateFields.globalGate = ['true', '1', 'yes'].includes(item.meta['global_gate'].toLowerCase());
      if (item.meta['unblocks_todo_id'] !== undefined)
        gateFields.unblocksTodoIds = metaList(item.meta['unblocks_todo_id']);
      if (item.meta['decision_scope'] !== undefined) gateFields.decisionScope = item.meta['decision_scope'];
    }
    const planned = planNewTodo(doc, role, withoutUndefined(inherited), gateFields, context);
    const insertion = insertTodo(doc, role, planned.text, planned.metadata);
    splices.push(...insertion.splices);
    added.push(insertion.todoId);
    metadata['superseded_by'] = insertion.todoId;
  }
  // A rejected or cancelled gate is already closed: it only gains the link that releases its hold.
  if (heldGate) delete metadata['status'];
  return finishEdit(
    doc,
    item,
    'todo_supersede',
    heldGate ? { metadata } : { marker: 'x', metadata },
    context,
    splices,
    added,
  );
}

/** The todo's `successor_todo_ids` with one more id (kept in order, no repeats), as the original merges them. */
function successorIdsWith(item: TodoItem, todoId: string): string {
  const ids = metaList(item.meta['successor_todo_ids']);
  return (ids.includes(todoId) ? ids : [...ids, todoId]).join(',');
}

function withoutUndefined(input: NewTodoInput): NewTodoInput {
  return Object.fromEntries(
    Object.entries(input).filter(([, value]) => value !== undefined),
  ) as unknown as NewTodoInput;
}

// ---------------------------------------------------------------------------------------------
// Defer

/**
 * The resume conditions the original evaluates (`require_supported_todo_resume_when`): `todo_done:<todo_id>`,
 * `pr_merged:[owner/repo]#<n>`, `capacity_available:<capability>`. A bare `capacity_available` is refused as it
 * refuses it: it would read it back as unsupported and never resume the todo.
 */
export const RESUME_CONDITION =
  /^(?:todo_done:todo_[a-z0-9_-]{3,64}|pr_merged:(?:[a-z0-9_.-]{1,80}\/[a-z0-9_.-]{1,100})?#[1-9][0-9]{0,8}|capacity_available:[a-z][a-z0-9_:-]{0,63})$/;
const RESUME_CONDITION_HELP = 'todo_done:<todo_id>, pr_merged:[owner/repo]#<number> or capacity_available:<capability>';

/**
 * A `--resume-when` value as the original takes it (`require_supported_todo_resume_when`): spaces compacted and
 * lowercased, then one of the supported conditions; anything else is refused with the original's text, nothing
 * written. The value written is the normalized one, as the original writes it.
 */
export function supportedResumeWhen(value: string): string {
  const normalized = compactText(value).toLowerCase();
  if (RESUME_CONDITION.test(normalized)) return normalized;
  throw new LoopxError(
    'invalid_resume_condition',
    `resume_when must use a supported condition: ${RESUME_CONDITION_HELP} (got ${JSON.stringify(value)})`,
    { resume_when: value },
  );
}

/** The original's refusal of a deferral that names no resume condition (`update_goal_todo`). */
const DEFER_NEEDS_RESUME_WHEN = 'transition to deferred requires --resume-when with a supported condition';

export interface DeferTodoInput {
  todoId: string;
  reason: string;
  /** `todo_done:<id>`, `pr_merged:[owner/repo]#<n>` or `capacity_available:<capability>`. */
  resumeWhen?: string;
  /**
   * The CLI's rule, as the original's (`todo update --status deferred`): a deferral names when it resumes, else
   * the original's agents never pick the todo up again. The editor's owner may set a todo aside without one.
   */
  requireResumeWhen?: boolean;
}

export function deferTodo(text: string, input: DeferTodoInput, context: OperationContext): TodoEditResult {
  refuseCredentials({ reason: input.reason });
  const doc = parseStateDocument(text);
  const item = findTodo(doc, input.todoId);
  requireNotTerminal(item, 'deferred');
  if (isUserGate(item)) {
    throw new LoopxError(
      'gate_cannot_be_deferred',
      `todo ${item.todoId} is a user gate; resolve it with complete --decision-outcome cancel or supersede it, so the work it holds back stays accounted for`,
      { todo_id: item.todoId },
    );
  }
  const reason = compactText(input.reason);
  if (reason === '')
    throw new LoopxError('todo_defer_reason_required', `deferring todo ${item.todoId} needs a reason (--reason)`, {
      todo_id: item.todoId,
    });
  const metadata: Record<string, string | null> = { status: 'deferred', reason };
  if (input.resumeWhen !== undefined) metadata['resume_when'] = supportedResumeWhen(input.resumeWhen);
  else if (input.requireResumeWhen === true)
    throw new LoopxError('todo_defer_resume_when_required', DEFER_NEEDS_RESUME_WHEN, { todo_id: item.todoId });
  return finishEdit(doc, item, 'todo_defer', { marker: '-', metadata }, context);
}

// ---------------------------------------------------------------------------------------------

function requireNotTerminal(item: TodoItem, action: string): void {
  if (TERMINAL_STATUSES.has(item.status)) {
    throw new LoopxError(
      'todo_terminal',
      `todo ${item.todoId} is already ${item.status}; only an open or blocked todo can be ${action}`,
      { todo_id: item.todoId, status: item.status },
    );
  }
}

/** Applies the todo's rewrite plus extra splices, stamps `updated_at` when anything changes, and summarizes. */
function finishEdit(
  doc: StateDocument,
  item: TodoItem,
  operation: TodoEditSummary['operation'],
  rewrite: Parameters<typeof rewriteTodo>[2],
  context: OperationContext,
  extraSplices: readonly LineSplice[] = [],
  addedIds: readonly string[] = [],
  gatesBefore = analyzeGates(doc),
  stampUpdatedAt = true,
): TodoEditResult {
  const metadata = rewrite.metadata ?? {};
  const changedFields = changedFieldsOf(item, rewrite, metadata);
  if (changedFields.length === 0 && extraSplices.length === 0) {
    return {
      text: doc.text,
      changed: false,
      summary: {
        operation,
        todo_id: item.todoId,
        changed: false,
        changed_fields: [],
        todo: todoView(item),
        added_todos: [],
        released_todo_ids: [],
      },
    };
  }
  const stamped: MetadataChanges = stampUpdatedAt ? { ...metadata, updated_at: context.now } : metadata;
  const splices = [...rewriteTodo(doc, item, { ...rewrite, metadata: stamped }), ...extraSplices];
  const newText = bumpFrontMatter(applyEdits(doc, splices), context.now);
  const after = parseStateDocument(newText);
  const gatesAfter = analyzeGates(after);
  const stillBlocked = new Set(gatesAfter.agent_todos.filter((t) => t.blocked).map((t) => t.todo_id));
  const released = gatesBefore.agent_todos
    .filter((t) => t.blocked && !stillBlocked.has(t.todo_id))
    .map((t) => t.todo_id);
  const todo = after.todos.find((t) => t.todoId === item.todoId && t.role !== 'archive') ?? item;
  return {
    text: newText,
    changed: true,
    summary: {
      operation,
      todo_id: item.todoId,
      changed: true,
      changed_fields: changedFields,
      todo: todoView(todo),
      added_todos: addedIds.map((id) => todoView(findTodo(after, id))),
      released_todo_ids: released,
    },
  };
}

function changedFieldsOf(
  item: TodoItem,
  rewrite: Parameters<typeof rewriteTodo>[2],
  metadata: MetadataChanges,
): string[] {
  const fields: string[] = [];
  if (rewrite.text !== undefined && rewrite.text !== item.lineText) fields.push('text');
  if (rewrite.marker !== undefined && rewrite.marker !== item.marker) fields.push('checkbox');
  for (const [key, value] of Object.entries(metadata)) {
    const current = item.meta[key];
    if (value === null ? current !== undefined : current !== value) fields.push(key);
  }
  return fields;
}

/** Priority from a CLI-style value (`P1`, `p1`, `1`). */
export function parsePriority(value: string): Priority | null {
  const normalized = value.trim().toUpperCase();
  const candidate = /^[0-4]$/.test(normalized) ? `P${normalized}` : normalized;
  return (PRIORITIES as readonly string[]).includes(candidate) ? (candidate as Priority) : null;
}
