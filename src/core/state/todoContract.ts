import { normalizeAgentId, registeredLookup } from '../registry/agentIds';
import { TERMINAL_STATUSES, type StateDocument, type TodoItem } from './document';

/**
 * The todo metadata contract of a goal's state file (the original's `loopx contract` per-todo rules):
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

// The vocabulary of the per-todo rules, shared with status's contract check (status/contractCheck.ts),
// which reads todos its own way (docs/architecture.md, "Known debt").

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
