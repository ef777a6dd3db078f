import { TERMINAL_STATUSES, type StateDocument, type TodoItem } from './document';
import { deepFreeze } from './freeze';

/**
 * User gates and what they block. A gate is a user todo with `task_class=user_gate`. Which agent
 * todos it blocks is decided ONLY by explicit relations (the original fell back to text-token
 * overlap, which blocked or released work by accident):
 *   - `global_gate`           the gate sets `global_gate=true`: every agent todo waits;
 *   - `gate_targets_todo`     the gate's `unblocks_todo_id` names the todo;
 *   - `gate_covers_action`    the gate's `decision_scope` covers one of the todo's `required_decision_scopes`;
 *   - `projection_repair_required`  the scope covers the todo but `unblocks_todo_id` names another one.
 * An open gate blocks; a resolved gate keeps blocking when its `decision_outcome` was `reject` or
 * `cancel` (only `approve` releases the work) until it is superseded.
 */
export const USER_GATE_CLASS = 'user_gate';
/**
 * The metadata key of a gate's due time. Not `due_at`: the original's parser keeps only the keys of
 * its schema and drops any other when it rewrites the todo (checked against it: test/mixed/gateDueAt.test.ts).
 * `next_due_at` is in its schema (a monitor's next check), kept as text on any todo and read only for
 * `continuous_monitor` agent todos, so on a user gate it carries the due time through the original's edits.
 */
export const GATE_DUE_META_KEY = 'next_due_at';
export const DECISION_OUTCOMES = ['approve', 'reject', 'cancel'] as const;
export type DecisionOutcome = (typeof DECISION_OUTCOMES)[number];

export const DECISION_KINDS = [
  'private_read',
  'write_scope',
  'resource',
  'production',
  'public_claim',
  'direction',
  'other',
] as const;
export const DECISION_GRANULARITIES = ['action', 'lane', 'goal', 'project', 'global'] as const;

export type GateRelation = 'global_gate' | 'gate_targets_todo' | 'gate_covers_action' | 'projection_repair_required';
export type GateState = 'open' | 'rejected' | 'cancelled';

export interface DecisionScope {
  kind: string;
  granularity: string;
  key: string;
}

/** Parses `kind:granularity:key` (the key may itself hold colons); null when malformed. */
export function parseDecisionScope(text: string): DecisionScope | null {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (second < 0) return null;
  const scope = {
    kind: text.slice(0, first).trim(),
    granularity: text.slice(first + 1, second).trim(),
    key: text.slice(second + 1).trim(),
  };
  if (!(DECISION_KINDS as readonly string[]).includes(scope.kind)) return null;
  if (!(DECISION_GRANULARITIES as readonly string[]).includes(scope.granularity)) return null;
  return scope.key === '' ? null : scope;
}

/** Why a decision scope text is not valid, or null. */
export function decisionScopeProblem(text: string): string | null {
  if (parseDecisionScope(text) !== null) return null;
  return `decision scope ${JSON.stringify(text)} must be kind:granularity:key with kind one of ${DECISION_KINDS.join(', ')} and granularity one of ${DECISION_GRANULARITIES.join(', ')}`;
}

/** Same kind, same key (or a `*` gate key), and a gate granularity at least as wide as required. */
export function scopeCovers(gate: DecisionScope, required: DecisionScope): boolean {
  if (gate.kind !== required.kind) return false;
  if (gate.key !== '*' && gate.key !== required.key) return false;
  const rank = (g: string): number => (DECISION_GRANULARITIES as readonly string[]).indexOf(g);
  return rank(gate.granularity) >= rank(required.granularity);
}

/** Splits a comma-separated metadata list, dropping empty parts. */
export function metaList(value: string | undefined): string[] {
  if (value === undefined) return [];
  return value
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
}

export function metaFlag(value: string | undefined): boolean {
  return value !== undefined && ['true', '1', 'yes'].includes(value.trim().toLowerCase());
}

/**
 * The title of a merge-lane gate (docs/lanes.md), which names its lane: the original LoopX drops the
 * gate's own metadata keys (`gate_kind`, `lane_branch`) when it rewrites the gate, the title stays.
 */
export const MERGE_GATE_TITLE = /^Review and merge lane (\S+) \(agent ([^)\s]+)\) into main$/;

/** Whether a todo is a merge-lane gate: its `gate_kind`, or its title when another writer dropped the key. */
export function isMergeLaneGate(item: TodoItem): boolean {
  return isUserGate(item) && (item.meta['gate_kind'] === 'merge_lane' || MERGE_GATE_TITLE.test(item.title));
}

export function isUserGate(item: TodoItem): boolean {
  return item.role === 'user' && item.meta['task_class'] === USER_GATE_CLASS;
}

/** Whether a gate holds work back: open, or resolved with reject/cancel and not superseded. */
export function gateState(item: TodoItem): GateState | null {
  if (!isUserGate(item)) return null;
  if (!TERMINAL_STATUSES.has(item.status)) return 'open';
  if (item.status !== 'done' || item.meta['superseded_by'] !== undefined) return null;
  const outcome = item.meta['decision_outcome'];
  if (outcome === 'reject') return 'rejected';
  if (outcome === 'cancel') return 'cancelled';
  return null;
}

export interface GateView {
  todo_id: string;
  text: string;
  title: string;
  status: string;
  gate_state: GateState;
  line: number;
  blocks_agent: string | null;
  global_gate: boolean;
  unblocks_todo_ids: string[];
  decision_scope: string | null;
  decision_outcome: string | null;
  /** True when the gate names no lane and no work: nothing tells which todo waits for it. */
  unscoped: boolean;
  blocked_todo_ids: string[];
  /** When the person should have decided (ISO-8601, metadata `next_due_at`), or null. */
  due_at: string | null;
  /** The gate's `updated_at` metadata: when it was last written (opened, unless edited since). */
  updated_at: string | null;
}

export interface GateBlock {
  gate_todo_id: string;
  relation: GateRelation;
  gate_state: GateState;
}

export interface AgentTodoGateStatus {
  todo_id: string;
  claimed_by: string | null;
  blocked: boolean;
  blocked_by: GateBlock[];
}

export interface GateAnalysis {
  /** Open gates in document order. */
  open_gates: GateView[];
  /** Resolved gates that still hold work back (rejected or cancelled, not superseded). */
  holding_gates: GateView[];
  /** Every non-terminal agent todo, in document order. */
  agent_todos: AgentTodoGateStatus[];
  /** Agents with an open lane gate (`blocks_agent`): their user channel needs attention. */
  lane_gates_by_agent: Record<string, string[]>;
}

/** A gate's relation fields, parsed once. */
interface GateRelations {
  global: boolean;
  targets: ReadonlySet<string>;
  scope: DecisionScope | null;
}

function gateRelations(gate: TodoItem): GateRelations {
  const scopeText = gate.meta['decision_scope'];
  return {
    global: metaFlag(gate.meta['global_gate']),
    targets: new Set(metaList(gate.meta['unblocks_todo_id'])),
    scope: scopeText === undefined ? null : parseDecisionScope(scopeText),
  };
}

function requiredScopes(todo: TodoItem): DecisionScope[] {
  return metaList(todo.meta['required_decision_scopes'])
    .map(parseDecisionScope)
    .filter((s): s is DecisionScope => s !== null);
}

function relationOf(gate: GateRelations, todoId: string, required: readonly DecisionScope[]): GateRelation | null {
  if (gate.global) return 'global_gate';
  if (gate.targets.has(todoId)) return 'gate_targets_todo';
  if (gate.scope === null || required.length === 0) return null;
  const scope = gate.scope;
  if (!required.some((r) => scopeCovers(scope, r))) return null;
  return gate.targets.size > 0 ? 'projection_repair_required' : 'gate_covers_action';
}

/** The gate relation between one gate and one agent todo, or null when none is explicit. */
export function gateRelation(gate: TodoItem, todo: TodoItem): GateRelation | null {
  return relationOf(gateRelations(gate), todo.todoId, requiredScopes(todo));
}

/** Analyses of frozen (shared, never changed) documents: the goal loader's cache hands the same one to every decision. */
const frozenAnalyses = new WeakMap<StateDocument, GateAnalysis>();

export function analyzeGates(doc: StateDocument): GateAnalysis {
  if (!Object.isFrozen(doc)) return analyzeDocumentGates(doc);
  let analysis = frozenAnalyses.get(doc);
  if (analysis === undefined) {
    analysis = deepFreeze(analyzeDocumentGates(doc));
    frozenAnalyses.set(doc, analysis);
  }
  return analysis;
}

function analyzeDocumentGates(doc: StateDocument): GateAnalysis {
  const gates: { item: TodoItem; state: GateState; relations: GateRelations }[] = [];
  const agentTodos: TodoItem[] = [];
  for (const item of doc.todos) {
    const state = gateState(item);
    if (state !== null) gates.push({ item, state, relations: gateRelations(item) });
    else if (item.role === 'agent' && !TERMINAL_STATUSES.has(item.status)) agentTodos.push(item);
  }
  const blockedByGate = new Map<string, string[]>();
  const statuses = agentTodos.map((todo): AgentTodoGateStatus => {
    const blocks: GateBlock[] = [];
    const required = requiredScopes(todo);
    for (const { item: gate, state, relations } of gates) {
      const relation = relationOf(relations, todo.todoId, required);
      if (relation === null) continue;
      blocks.push({ gate_todo_id: gate.todoId, relation, gate_state: state });
      const list = blockedByGate.get(gate.todoId) ?? [];
      list.push(todo.todoId);
      blockedByGate.set(gate.todoId, list);
    }
    return {
      todo_id: todo.todoId,
      claimed_by: todo.meta['claimed_by'] ?? null,
      blocked: blocks.length > 0,
      blocked_by: blocks,
    };
  });

  const laneGates: Record<string, string[]> = {};
  const view = ({ item, state }: { item: TodoItem; state: GateState }): GateView => {
    const blocksAgent = item.meta['blocks_agent'] ?? null;
    const globalGate = metaFlag(item.meta['global_gate']);
    const targets = metaList(item.meta['unblocks_todo_id']);
    const scope = item.meta['decision_scope'] ?? null;
    if (state === 'open' && blocksAgent !== null) (laneGates[blocksAgent] ??= []).push(item.todoId);
    return {
      todo_id: item.todoId,
      text: item.text,
      title: item.title,
      status: item.status,
      gate_state: state,
      line: item.line + 1,
      blocks_agent: blocksAgent,
      global_gate: globalGate,
      unblocks_todo_ids: targets,
      decision_scope: scope,
      decision_outcome: item.meta['decision_outcome'] ?? null,
      unscoped:
        blocksAgent === null &&
        !globalGate &&
        targets.length === 0 &&
        scope === null &&
        item.meta['gate_kind'] !== 'merge_lane',
      blocked_todo_ids: blockedByGate.get(item.todoId) ?? [],
      due_at: item.meta[GATE_DUE_META_KEY] ?? null,
      updated_at: item.meta['updated_at'] ?? null,
    };
  };
  return {
    open_gates: gates.filter((g) => g.state === 'open').map(view),
    holding_gates: gates.filter((g) => g.state !== 'open').map(view),
    agent_todos: statuses,
    lane_gates_by_agent: laneGates,
  };
}

/** A due time as the CLI takes it: an ISO-8601 instant with an offset (`2026-01-31T12:00:00Z`). */
export const DUE_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

const DURATION = /^\s*([1-9]\d{0,5})\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|weeks?)\s*$/i;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** `30m`, `2h`, `1d`, `1w` (the original's cadence words, plus weeks) in milliseconds, or null. */
export function parseDuration(text: string): number | null {
  const match = DURATION.exec(text);
  if (match === null) return null;
  const unit = (match[2] ?? '').toLowerCase();
  const key = unit.startsWith('mi') || unit === 'm' ? 'm' : unit.charAt(0);
  const ms = UNIT_MS[key];
  return ms === undefined ? null : Number(match[1]) * ms;
}
