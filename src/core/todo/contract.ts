import { normalizeAgentId, registeredLookup } from '../registry/agentIds';
import { TERMINAL_STATUSES, type StateDocument, type TodoItem } from '../state/document';
import { normalizeHeadingTitle } from '../state/sections';

/**
 * The per-todo contract rules, in the two readings of the original's `loopx contract` that LoopX keeps
 * side by side (docs/architecture.md, "Two readings"): `quota should-run`'s (`todoContractDiagnostics`,
 * first) and `loopx status`'s contract check (`statusTodoContractDiagnostics`, below). The compatibility kit
 * passes with both; they differ on other inputs, pinned one by one in `test/unit/todo/ruleReadings.test.ts`,
 * so merging them is a compatibility decision, not a refactoring.
 *
 * Should-run's reading. The todo metadata contract of a goal's state file (the original's `loopx contract` per-todo rules):
 * which metadata combinations make a todo unroutable. Any error makes the goal's contract health fail,
 * so `quota should-run` skips automatic compute (`quota_skip`) until the todo is repaired. Pure: a
 * parsed document and the goal's registered agents in, diagnostics out, in document order.
 *
 * For an open user todo only the first failing rule of the original's chain is reported (its order
 * is the order of the checks below).
 */

export interface TodoContractDiagnostic {
  code: TodoContractCode;
  severity: 'error';
  todo_id: string;
  /** 1-based line of the todo's checkbox. */
  line: number;
  message: string;
}

export type TodoContractCode =
  | 'agent_todo_removed_continuation_policy'
  | 'agent_todo_blocks_agent_invalid'
  | 'todo_claimed_by_excluded_agent'
  | 'todo_executor_exclusion_scope_invalid'
  | 'todo_excludes_unregistered_agent'
  | 'user_todo_task_class_missing'
  | 'user_action_blocking_scope_invalid'
  | 'user_gate_scope_conflict'
  | 'user_todo_response_scope_conflict'
  | 'goal_user_gate_agent_binding_invalid'
  | 'agent_user_gate_goal_binding_invalid'
  | 'agent_user_gate_response_binding_mismatch'
  | 'user_todo_bound_agent_unregistered'
  | 'multi_agent_user_todo_missing_response_scope'
  | 'user_gate_blocks_unregistered_agent'
  | 'multi_agent_user_gate_missing_scope';

// The vocabulary of the per-todo rules, shared by both readings.

/** `continuation_policy` values the original removed: an agent todo that still uses one is a contract error. */
export const REMOVED_CONTINUATION_POLICIES: ReadonlySet<string> = new Set(['primary_review', 'review_handoff']);
/** The words that make a metadata flag (`global_gate`, `goal_bound`) true, lowercase. */
export const FLAG_TRUE_WORDS: ReadonlySet<string> = new Set(['1', 'true', 'yes', 'y', 'global_gate', 'global-gate']);

/** A metadata flag as the original reads `global_gate`/`goal_bound`: true only for its true words. */
function flag(value: string | undefined): boolean {
  return value !== undefined && FLAG_TRUE_WORDS.has(value.trim().toLowerCase());
}

function agentOf(value: string | undefined): string | null {
  if (value === undefined || value.trim() === '') return null;
  return normalizeAgentId(value);
}

function agentList(value: string | undefined): string[] {
  if (value === undefined) return [];
  const ids = value
    .split(',')
    .map((part) => agentOf(part))
    .filter((id): id is string => id !== null);
  return [...new Set(ids)].sort();
}

export function todoContractDiagnostics(
  doc: StateDocument,
  registeredAgents: readonly string[],
): TodoContractDiagnostic[] {
  const out: TodoContractDiagnostic[] = [];
  // A goal may register 50,000 agents: one Set for the membership checks, the roster joined once and only for a message.
  let rosterText: string | undefined;
  const roster: Roster = {
    empty: registeredAgents.length === 0,
    count: registeredAgents.length,
    has: registeredLookup(registeredAgents),
    text: () => (rosterText ??= registeredAgents.join(', ')),
  };
  for (const todo of doc.todos) {
    const add = (code: TodoContractCode, message: string): void => {
      out.push({ code, severity: 'error', todo_id: todo.todoId, line: todo.line + 1, message });
    };
    checkTodo(todo, roster, add);
  }
  return out;
}

interface Roster {
  empty: boolean;
  count: number;
  has(agentId: string): boolean;
  text(): string;
}

function checkTodo(todo: TodoItem, registered: Roster, add: (code: TodoContractCode, message: string) => void): void {
  const meta = todo.meta;
  const id = todo.todoId;
  const where = `(line ${todo.line + 1}: ${todo.title})`;
  const blocksAgentRaw = (meta['blocks_agent'] ?? '').trim();
  const blocksAgent = blocksAgentRaw === '' ? null : (agentOf(blocksAgentRaw) ?? blocksAgentRaw);
  const excluded = agentList(meta['excluded_agents'] ?? meta['excluded_agent']);
  const claimedBy = agentOf(meta['claimed_by']);
  const taskClass = meta['task_class'] ?? '';

  if (todo.role === 'agent') {
    const removed = (meta['continuation_policy'] ?? '').trim().toLowerCase();
    if (REMOVED_CONTINUATION_POLICIES.has(removed))
      add(
        'agent_todo_removed_continuation_policy',
        `agent todo ${id} uses removed continuation_policy=${removed}; use continuation_policy=independent_handoff ${where}`,
      );
    if (blocksAgent !== null)
      add(
        'agent_todo_blocks_agent_invalid',
        `agent todo ${id} uses removed blocks_agent routing; blocks_agent is reserved for user gates, while agent executor constraints use excluded_agents ${where}`,
      );
  }
  if (claimedBy !== null && excluded.includes(claimedBy))
    add(
      'todo_claimed_by_excluded_agent',
      `agent todo ${id} has claimed_by='${claimedBy}' also listed in excluded_agents ${where}`,
    );
  if (todo.role !== 'agent' && excluded.length > 0 && !(todo.role === 'archive' && TERMINAL_STATUSES.has(todo.status)))
    add(
      'todo_executor_exclusion_scope_invalid',
      `${todo.role} todo ${id} uses excluded_agents; executor exclusions are only valid for agent todos ${where}`,
    );
  const unknownExcluded = registered.empty ? [] : excluded.filter((agent) => !registered.has(agent));
  if (todo.role === 'agent' && unknownExcluded.length > 0)
    add(
      'todo_excludes_unregistered_agent',
      `agent todo ${id} excludes unregistered agents: ${unknownExcluded.join(', ')} ${where}`,
    );

  if (todo.role !== 'user' || TERMINAL_STATUSES.has(todo.status)) return;
  const globalGate = flag(meta['global_gate']);
  const boundAgent = agentOf(meta['bound_agent']);
  const goalBound = flag(meta['goal_bound']);
  const isGate = taskClass === 'user_gate';
  const effectiveBound = boundAgent ?? (isGate ? blocksAgent : null) ?? claimedBy;
  const effectiveGoalBound = goalBound || (globalGate && isGate);
  const multiAgent = registered.count > 1;
  if (taskClass !== 'user_action' && taskClass !== 'user_gate')
    add(
      'user_todo_task_class_missing',
      `open user todo ${id} requires task_class=user_gate or task_class=user_action ${where}`,
    );
  else if (taskClass === 'user_action' && (blocksAgent !== null || globalGate))
    add(
      'user_action_blocking_scope_invalid',
      `open user_action todo ${id} is non-blocking and cannot set blocks_agent or global_gate=true ${where}`,
    );
  else if (isGate && blocksAgent !== null && globalGate)
    add(
      'user_gate_scope_conflict',
      `open user_gate todo ${id} in multi-agent goal cannot set both blocks_agent and global_gate=true ${where}`,
    );
  else if (boundAgent !== null && goalBound)
    add(
      'user_todo_response_scope_conflict',
      `open user todo ${id} cannot set both bound_agent and goal_bound=true ${where}`,
    );
  else if (isGate && globalGate && boundAgent !== null)
    add(
      'goal_user_gate_agent_binding_invalid',
      `goal-wide user_gate todo ${id} cannot set bound_agent; its response binding is goal_bound=true ${where}`,
    );
  else if (isGate && blocksAgent !== null && goalBound)
    add(
      'agent_user_gate_goal_binding_invalid',
      `agent-scoped user_gate todo ${id} cannot set goal_bound=true ${where}`,
    );
  else if (isGate && blocksAgent !== null && boundAgent !== null && boundAgent !== blocksAgent)
    add(
      'agent_user_gate_response_binding_mismatch',
      `agent-scoped user_gate todo ${id} must bind to blocks_agent='${blocksAgent}', not bound_agent='${boundAgent}' ${where}`,
    );
  else if (boundAgent !== null && !registered.empty && !registered.has(boundAgent))
    add(
      'user_todo_bound_agent_unregistered',
      `open user todo ${id} has bound_agent='${boundAgent}', which is not registered for this goal (registered_agents=${registered.text()}) ${where}`,
    );
  else if (multiAgent && effectiveBound === null && !effectiveGoalBound)
    add(
      'multi_agent_user_todo_missing_response_scope',
      `open user todo ${id} in multi-agent goal requires bound_agent=<registered-agent> or goal_bound=true ${where}`,
    );
  else if (isGate && blocksAgent !== null && !registered.empty && !registered.has(blocksAgent))
    add(
      'user_gate_blocks_unregistered_agent',
      `open user_gate todo ${id} has blocks_agent='${blocksAgent}', which is not registered for this goal (registered_agents=${registered.text()}) ${where}`,
    );
  else if (isGate && multiAgent && blocksAgent === null && !globalGate)
    add(
      'multi_agent_user_gate_missing_scope',
      `open user_gate todo ${id} in multi-agent goal requires blocks_agent=<registered-agent> or global_gate=true ${where}`,
    );
}

// ---------------------------------------------------------------------------------------------
// Status's reading (`loopx status`'s contract check, status/contractCheck.ts)

const USER_GATE = 'user_gate';
const USER_ACTION = 'user_action';
const TASK_CLASSES = new Set(['advancement_task', 'continuous_monitor', USER_GATE, USER_ACTION, 'blocker']);
const STATUSES = new Set(['open', 'done', 'blocked', 'deferred']);
const TERMINAL = new Set(['done', 'deferred', 'completed', 'closed', 'archived']);
const AGENT_TOKEN = /^[a-z][a-z0-9_.:@-]{0,79}$/;
const COMPLETED_WORK_ARCHIVE = 'completed work archive';

/** An agent token as a todo's metadata holds it (lowercase, spaces as `-`), or null when it is not one. */
function agentToken(value: string | undefined): string | null {
  if (value === undefined) return null;
  const candidate = value.trim().replace(/\s+/g, ' ').toLowerCase().replace(/ /g, '-');
  return candidate !== '' && AGENT_TOKEN.test(candidate) ? candidate : null;
}

/** A metadata flag as status reads it: true, false, or null when it is neither word (malformed). */
function flagOrNull(value: string | undefined): boolean | null {
  if (value === undefined) return null;
  const candidate = value.trim().replace(/\s+/g, ' ').toLowerCase();
  if (FLAG_TRUE_WORDS.has(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return null;
}

/** `excluded_agents` split on commas: the valid tokens (sorted, distinct), and whether any part was not a token. */
function excludedAgents(value: string | undefined): { agents: string[]; malformed: boolean } {
  if (value === undefined) return { agents: [], malformed: false };
  const agents = new Set<string>();
  let malformed = false;
  for (const part of value.split(',')) {
    const token = agentToken(part);
    if (token === null) malformed = true;
    else agents.add(token);
  }
  return { agents: [...agents].sort(), malformed };
}

/**
 * The role the rules apply to a todo. Our sections decide for user and agent todos; a todo of an
 * archive section is judged by its heading as LoopX does (an "Agent Todo Archive" holds agent
 * todos; "Completed Work Archive" unscoped ones).
 */
function ruleRole(todo: TodoItem): 'user' | 'agent' | null {
  if (todo.role !== 'archive') return todo.role;
  const heading = normalizeHeadingTitle(todo.section.title);
  if (heading.includes('user todo') || heading.includes('owner review')) return 'user';
  if (heading.includes('agent todo')) return 'agent';
  return null;
}

/** A contract error as status's check words it (`ContractDiagnosticSchema` in status/contractCheck.ts). */
export interface StatusContractDiagnostic {
  code: string;
  message: string;
}

export interface TodoContractInput {
  goalId: string;
  /** The goal's registered agents (registeredAgentsForGoal). */
  registeredAgents: readonly string[];
  /** How the state file is named in messages (a path label such as `<project>/…`). */
  stateFileLabel: string;
}

/**
 * The contract errors of one state file's todos, in document order: malformed `status` or
 * `excluded_agents`, agent todos with removed routing (`blocks_agent`, a removed continuation
 * policy), executor exclusions outside agent todos or naming unregistered agents, a claimant that
 * is also excluded, and the scoping of open user todos (task class, blocking and response scope
 * in multi-agent goals). Pure.
 */
export function statusTodoContractDiagnostics(
  doc: StateDocument,
  input: TodoContractInput,
): StatusContractDiagnostic[] {
  const diagnostics: StatusContractDiagnostic[] = [];
  const registered = input.registeredAgents;
  // A goal may register 50,000 agents: membership is a Set lookup and the roster text is joined once, only for a message.
  const isRegistered = registeredLookup(registered);
  let rosterText: string | undefined;
  const list = (): string => (rosterText ??= registered.join(', '));
  const goal = input.goalId;
  const add = (code: string, message: string): void => {
    diagnostics.push({ code, message: `${goal}: ${message}` });
  };
  for (const todo of doc.todos) {
    const role = ruleRole(todo);
    const meta = todo.meta;
    const line = todo.line + 1;
    const where = `(state_file=${input.stateFileLabel}, line=${line}, text=${todo.text})`;
    const explicitId = meta['todo_id']?.trim().toLowerCase();
    const todoId = explicitId !== undefined && /^todo_[a-z0-9_-]{3,64}$/.test(explicitId) ? explicitId : `line:${line}`;

    const metaStatus = meta['status'];
    const status =
      metaStatus !== undefined && STATUSES.has(metaStatus.trim().toLowerCase())
        ? metaStatus.trim().toLowerCase()
        : todo.marker === ' '
          ? 'open'
          : todo.marker === '-'
            ? 'deferred'
            : 'done';
    const excluded = excludedAgents(meta['excluded_agents']);
    const singularExcluded = excludedAgents(meta['excluded_agent']);
    if (excluded.malformed || singularExcluded.malformed)
      add(
        'todo_excluded_agents_invalid',
        `todo ${todoId} has malformed excluded_agents metadata; replace it with --excluded-agent <registered-agent> or remove it with --clear-excluded-agents`,
      );
    if (metaStatus !== undefined && !STATUSES.has(metaStatus.trim().toLowerCase()))
      add(
        'todo_status_invalid',
        `todo ${todoId} has malformed status metadata; replace it with status=open, status=done, status=blocked, or status=deferred`,
      );
    const continuation = meta['continuation_policy'] ?? meta['removed_continuation_policy'];
    const removedPolicy = continuation?.trim().toLowerCase();
    if (role === 'agent' && removedPolicy !== undefined && REMOVED_CONTINUATION_POLICIES.has(removedPolicy))
      add(
        'agent_todo_removed_continuation_policy',
        `agent todo ${todoId} uses removed continuation_policy=${removedPolicy}; use continuation_policy=independent_handoff with an explicit review action_kind and excluded_agents=<author> only when executor separation is required`,
      );
    const blocksAgent = agentToken(meta['blocks_agent']);
    if (role === 'agent' && blocksAgent !== null)
      add(
        'agent_todo_blocks_agent_invalid',
        `agent todo ${todoId} uses removed blocks_agent routing; blocks_agent is reserved for user gates, while agent executor constraints use excluded_agents`,
      );
    const claimedBy = agentToken(meta['claimed_by']);
    if (claimedBy !== null && excluded.agents.includes(claimedBy))
      add(
        'todo_claimed_by_excluded_agent',
        `agent todo ${todoId} has claimed_by='${claimedBy}' also listed in excluded_agents`,
      );
    const archivedTerminal =
      normalizeHeadingTitle(todo.section.title) === COMPLETED_WORK_ARCHIVE &&
      todo.marker !== ' ' &&
      TERMINAL.has(status);
    if (role !== 'agent' && excluded.agents.length > 0 && !archivedTerminal)
      add(
        'todo_executor_exclusion_scope_invalid',
        `${role ?? 'unscoped'} todo ${todoId} uses excluded_agents; executor exclusions are only valid for agent todos`,
      );
    const unknownExcluded = excluded.agents.filter((agent) => registered.length > 0 && !isRegistered(agent));
    if (role === 'agent' && unknownExcluded.length > 0)
      add(
        'todo_excludes_unregistered_agent',
        `agent todo ${todoId} excludes unregistered agents: ${unknownExcluded.join(', ')}`,
      );

    if (role !== 'user' || TERMINAL.has(status)) continue;
    const rawClass = meta['task_class']?.trim().toLowerCase() ?? '';
    const taskClass = TASK_CLASSES.has(rawClass) ? rawClass : '';
    const globalGate = flagOrNull(meta['global_gate']) === true;
    const boundAgent = agentToken(meta['bound_agent']);
    const goalBound = flagOrNull(meta['goal_bound']) === true;
    const isGate = taskClass === USER_GATE;
    const effectiveBoundAgent = boundAgent ?? (isGate ? blocksAgent : null) ?? claimedBy;
    const effectiveGoalBound = goalBound || (globalGate && isGate);
    if (taskClass !== USER_GATE && taskClass !== USER_ACTION)
      add(
        'user_todo_task_class_missing',
        `open user todo ${todoId} requires task_class=user_gate or task_class=user_action ${where}`,
      );
    else if (taskClass === USER_ACTION && (blocksAgent !== null || globalGate))
      add(
        'user_action_blocking_scope_invalid',
        `open user_action todo ${todoId} is non-blocking and cannot set blocks_agent or global_gate=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && globalGate)
      add(
        'user_gate_scope_conflict',
        `open user_gate todo ${todoId} in multi-agent goal cannot set both blocks_agent and global_gate=true ${where}`,
      );
    else if (boundAgent !== null && goalBound)
      add(
        'user_todo_response_scope_conflict',
        `open user todo ${todoId} cannot set both bound_agent and goal_bound=true ${where}`,
      );
    else if (isGate && globalGate && boundAgent !== null)
      add(
        'goal_user_gate_agent_binding_invalid',
        `goal-wide user_gate todo ${todoId} cannot set bound_agent; its response binding is goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && goalBound)
      add(
        'agent_user_gate_goal_binding_invalid',
        `agent-scoped user_gate todo ${todoId} cannot set goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && boundAgent !== null && boundAgent !== blocksAgent)
      add(
        'agent_user_gate_response_binding_mismatch',
        `agent-scoped user_gate todo ${todoId} must bind to blocks_agent='${blocksAgent}', not bound_agent='${boundAgent}' ${where}`,
      );
    else if (boundAgent !== null && registered.length > 0 && !isRegistered(boundAgent))
      add(
        'user_todo_bound_agent_unregistered',
        `open user todo ${todoId} has bound_agent='${boundAgent}', which is not registered for this goal (registered_agents=${list()}, ${where.slice(1)}`,
      );
    else if (registered.length > 1 && effectiveBoundAgent === null && !effectiveGoalBound)
      add(
        'multi_agent_user_todo_missing_response_scope',
        `open user todo ${todoId} in multi-agent goal requires bound_agent=<registered-agent> or goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && registered.length > 0 && !isRegistered(blocksAgent))
      add(
        'user_gate_blocks_unregistered_agent',
        `open user_gate todo ${todoId} has blocks_agent='${blocksAgent}', which is not registered for this goal (registered_agents=${list()}, ${where.slice(1)}`,
      );
    else if (isGate && registered.length > 1 && blocksAgent === null && !globalGate)
      add(
        'multi_agent_user_gate_missing_scope',
        `open user_gate todo ${todoId} in multi-agent goal requires blocks_agent=<registered-agent> or global_gate=true ${where}`,
      );
  }
  return diagnostics;
}
