import { z } from 'zod';
import { TERMINAL_STATUSES, type StateDocument, type TodoItem } from '../state/document';
import { analyzeGates, metaList, type GateAnalysis } from '../state/gates';
import { parseIsoInstant } from '../isoTime';
import { deferredTodoDue } from './resume';

/**
 * Which todo is runnable: todo selection (docs/turns.md, step 1) and the first executable todo. Among the goal's agent todos: drop done/deferred and blocked ones,
 * todos claimed by another agent, todos whose `excluded_agents` names this agent, todos held back
 * by a user gate (explicit relations only, via `analyzeGates`), and classes that are not work;
 * keep `advancement_task` todos and only due `continuous_monitor` todos whose required
 * capabilities are available. Order: claimed by me first, then unclaimed; then priority
 * (P0…P4, none = 50); then document order. A deferred todo whose resume condition is met is the
 * fallback (`successor_replan_required`).
 */

export const WORK_CLASSES: ReadonlySet<string> = new Set(['advancement_task', 'continuous_monitor']);
export const MISSING_PRIORITY_RANK = 50;

export const SelectedTodoSchema = z.object({
  todo_id: z.string(),
  text: z.string(),
  title: z.string(),
  priority: z.string().nullable(),
  priority_rank: z.number().int(),
  index: z.number().int(),
  line: z.number().int(),
  task_class: z.string(),
  claimed_by: z.string().nullable(),
  required_capabilities: z.array(z.string()),
  selection_reason: z.string(),
});
export type SelectedTodo = z.infer<typeof SelectedTodoSchema>;

export const ExclusionReasonSchema = z.enum([
  'claimed_by_other_agent',
  'leased_to_other_agent',
  'excluded_agent',
  'gate_blocked',
  'status_blocked',
  'not_work',
  'monitor_not_due',
  'monitor_missing_capability',
]);
export type ExclusionReason = z.infer<typeof ExclusionReasonSchema>;

export const SelectionSummarySchema = z.object({
  candidate_count: z.number().int(),
  excluded: z.array(z.object({ todo_id: z.string(), reason: ExclusionReasonSchema, detail: z.string().nullable() })),
  /** Open gates that hold back work this agent could otherwise take. */
  blocking_gate_ids: z.array(z.string()),
  lane_gate_ids: z.array(z.string()),
  open_agent_todo_count: z.number().int(),
});
export type SelectionSummary = z.infer<typeof SelectionSummarySchema>;

export interface SelectionInput {
  doc: StateDocument;
  /** Null for an unscoped decision: claims then exclude nothing (leases still do). */
  agentId: string | null;
  availableCapabilities: readonly string[];
  now: number;
  /** Time-active hard task leases by todo id (docs/leases.md): a todo leased to another agent is never selected. */
  leaseHolders?: ReadonlyMap<string, { owner: string; expires_at: string }>;
}

export interface SelectionResult {
  selected: SelectedTodo | null;
  /**
   * The original's `agent_todo_summary.first_executable_items[0]`: the first open (not blocked) `advancement_task`
   * this agent may take by claim and exclusion, in claim-bucket, priority and document order. User gates do not
   * hold it back (the original weighs gates later, in the operator-gate fallback) and monitors are not in it.
   */
  firstExecutable: SelectedTodo | null;
  /** Whether an open `continuous_monitor` (due or not) is in this agent's scope by claim and exclusion. */
  hasOpenMonitor: boolean;
  /** A deferred todo whose resume condition is met, when nothing else is selectable. */
  successor: SelectedTodo | null;
  summary: SelectionSummary;
  gates: GateAnalysis;
}

export function priorityRank(item: TodoItem): number {
  return item.priority === null ? MISSING_PRIORITY_RANK : Number(item.priority.slice(1));
}

function taskClassOf(item: TodoItem): string {
  return item.meta['task_class'] ?? 'advancement_task';
}

function monitorProblem(item: TodoItem, input: SelectionInput): { reason: ExclusionReason; detail: string } | null {
  const due = parseIsoInstant(item.meta['next_due_at']);
  if (due !== null && due > input.now)
    return { reason: 'monitor_not_due', detail: `next due at ${item.meta['next_due_at'] ?? ''}` };
  const expires = parseIsoInstant(item.meta['expires_at']);
  if (expires !== null && expires <= input.now)
    return { reason: 'monitor_not_due', detail: `expired at ${item.meta['expires_at'] ?? ''}` };
  const missing = metaList(item.meta['required_capabilities']).filter((c) => !input.availableCapabilities.includes(c));
  if (missing.length > 0) return { reason: 'monitor_missing_capability', detail: `needs ${missing.join(', ')}` };
  return null;
}

export function selectedTodoView(item: TodoItem, reason: string): SelectedTodo {
  return {
    todo_id: item.todoId,
    text: item.text,
    title: item.title,
    priority: item.priority,
    priority_rank: priorityRank(item),
    index: item.index,
    line: item.line + 1,
    task_class: taskClassOf(item),
    claimed_by: item.meta['claimed_by'] ?? null,
    required_capabilities: metaList(item.meta['required_capabilities']),
    selection_reason: reason,
  };
}

/** Orders claimed-by-me first, then by priority rank, then document order. */
function compareCandidates(agentId: string | null): (a: TodoItem, b: TodoItem) => number {
  const mine = (item: TodoItem): number => (agentId !== null && item.meta['claimed_by'] === agentId ? 0 : 1);
  return (a, b) => mine(a) - mine(b) || priorityRank(a) - priorityRank(b) || a.index - b.index;
}

function ownershipProblem(
  item: TodoItem,
  agentId: string | null,
  leases?: SelectionInput['leaseHolders'],
): { reason: ExclusionReason; detail: string } | null {
  const lease = leases?.get(item.todoId);
  if (lease !== undefined && lease.owner !== agentId)
    return { reason: 'leased_to_other_agent', detail: `leased to ${lease.owner} until ${lease.expires_at}` };
  const holder = item.meta['claimed_by'];
  // An unscoped decision (no --agent-id) sees every open todo, claimed or not, as the original's
  // claim-scoped view does only for a named agent (kit seeds 1 quota-008, 3 quota-012/-024).
  if (agentId !== null && holder !== undefined && holder !== '' && holder !== agentId)
    return { reason: 'claimed_by_other_agent', detail: `claimed by ${holder}` };
  if (agentId !== null && metaList(item.meta['excluded_agents']).includes(agentId))
    return { reason: 'excluded_agent', detail: `excludes ${agentId}` };
  return null;
}

export function selectTodo(input: SelectionInput): SelectionResult {
  const gates = analyzeGates(input.doc);
  const gateStatus = new Map(gates.agent_todos.map((t) => [t.todo_id, t]));
  const excluded: SelectionSummary['excluded'] = [];
  const candidates: TodoItem[] = [];
  const executable: TodoItem[] = [];
  let hasOpenMonitor = false;
  const blockingGates = new Set<string>();
  let openCount = 0;

  for (const item of input.doc.todos) {
    if (item.role !== 'agent' || TERMINAL_STATUSES.has(item.status)) continue;
    openCount++;
    const exclude = (reason: ExclusionReason, detail: string | null): void => {
      excluded.push({ todo_id: item.todoId, reason, detail });
    };
    if (item.status === 'blocked') {
      exclude('status_blocked', null);
      continue;
    }
    const ownership = ownershipProblem(item, input.agentId, input.leaseHolders);
    if (ownership !== null) {
      exclude(ownership.reason, ownership.detail);
      continue;
    }
    if (taskClassOf(item) === 'advancement_task') executable.push(item);
    if (taskClassOf(item) === 'continuous_monitor') hasOpenMonitor = true;
    const gate = gateStatus.get(item.todoId);
    if (gate?.blocked === true) {
      for (const block of gate.blocked_by) blockingGates.add(block.gate_todo_id);
      exclude('gate_blocked', gate.blocked_by.map((b) => `${b.gate_todo_id} (${b.relation})`).join(', '));
      continue;
    }
    const taskClass = taskClassOf(item);
    if (!WORK_CLASSES.has(taskClass)) {
      exclude('not_work', `task_class ${taskClass}`);
      continue;
    }
    if (taskClass === 'continuous_monitor') {
      const problem = monitorProblem(item, input);
      if (problem !== null) {
        exclude(problem.reason, problem.detail);
        continue;
      }
    }
    candidates.push(item);
  }
  candidates.sort(compareCandidates(input.agentId));
  const first = candidates[0];
  const selected =
    first === undefined
      ? null
      : selectedTodoView(
          first,
          input.agentId !== null && first.meta['claimed_by'] === input.agentId
            ? `claimed by ${input.agentId}; highest priority among its claims`
            : 'highest-priority unclaimed todo in document order',
        );

  executable.sort(compareCandidates(input.agentId));
  const firstOpen = executable[0];
  const firstExecutable =
    firstOpen === undefined
      ? null
      : first === firstOpen && selected !== null
        ? selected
        : selectedTodoView(firstOpen, 'first executable todo (user gates are weighed by the decision)');

  let successor: SelectedTodo | null = null;
  if (selected === null) {
    const deferred = input.doc.todos
      .filter(
        (t) =>
          t.role === 'agent' &&
          t.status === 'deferred' &&
          ownershipProblem(t, input.agentId, input.leaseHolders) === null &&
          deferredTodoDue(t.meta['resume_when'], input.doc.todos),
      )
      .sort(compareCandidates(input.agentId));
    const ready = deferred[0];
    if (ready !== undefined)
      successor = selectedTodoView(
        ready,
        `deferred todo whose resume condition ${ready.meta['resume_when'] ?? ''} is met`,
      );
  }
  return {
    selected,
    firstExecutable,
    hasOpenMonitor,
    successor,
    summary: {
      candidate_count: candidates.length,
      excluded,
      blocking_gate_ids: [...blockingGates],
      lane_gate_ids: input.agentId === null ? [] : (gates.lane_gates_by_agent[input.agentId] ?? []),
      open_agent_todo_count: openCount,
    },
    gates,
  };
}
