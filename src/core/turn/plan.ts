import { createHash } from 'node:crypto';
import { z } from 'zod';
import { errorMessage } from '../errors';
import { RouteSchema, type Route } from '../scheduling/route';
import type { ShouldRunDecision } from '../scheduling/decisionContract';
import {
  checkTurnInstanceId,
  settlementIdentity,
  SettlementIdentitySchema,
  type SettlementIdentity,
} from '../quota/identity';
import { selectTodo, type SelectedTodo } from '../todo/runnable';
import { ReplanObligationSchema, type ReplanObligation } from '../scheduling/replanObligation';
import type { RunIndexRow } from '../runtime/runIndex';
import type { StateDocument } from '../state/document';
import { analyzeGates } from '../state/gates';
import {
  buildHostRequest,
  HOST_ROUTES,
  HostRequestSchema,
  TodoBriefSchema,
  TURN_PHASES,
  type BudgetBrief,
  type HostRequest,
  type ReplanBrief,
} from '../protocol/contract';
import { buildTurnBrief, todoBrief } from '../protocol/prompt';

/**
 * Step 3 of a turn (docs/turns.md): from the decision to a typed, read-only plan — the route, the
 * selected todo, the session action, the turn key, the settlement identity and the exact host
 * request that would be sent. `planTurn` is pure over loaded inputs; it never executes anything
 * (`host_invocation_allowed` is always false in a plan).
 */

export const TURN_PLAN_SCHEMA_VERSION = 'loopx_turn_plan_v0';
/** LoopX runs agents headless, as their scheduler (the "outer controller" of the original). */
export const EXECUTION_MODE = 'isolated-headless';
export const SCHEDULER_OWNER = 'outer_controller';
export const SESSION_BINDING_SCHEMA = 'loopx_turn_session_binding_v0';

const HOST_ROUTE_SET: ReadonlySet<string> = new Set(HOST_ROUTES);

export function isHostRoute(route: Route): route is HostRequest['route'] {
  return HOST_ROUTE_SET.has(route);
}

/** JSON with object keys sorted at every level: equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The turn's lineage: who works on what, and why (the action). */
export const LineageSchema = z.object({
  goal_id: z.string(),
  agent_id: z.string(),
  todo_id: z.string().nullable(),
  action_hash: z.string(),
  /** A replan turn works on no todo: the owed replan obligation is what it is bound to. */
  replan_obligation_id: z.string().optional(),
});
export type Lineage = z.infer<typeof LineageSchema>;

export function lineageOf(
  goalId: string,
  agentId: string,
  todoId: string | null,
  route: Route,
  effectiveAction: string,
  replanObligationId: string | null = null,
): Lineage {
  return {
    goal_id: goalId,
    agent_id: agentId,
    todo_id: todoId,
    action_hash: sha256Hex(canonicalJson({ route, effective_action: effectiveAction })),
    // Absent (not null) on todo turns, so their turn keys stay what they were (canonicalJson drops undefined).
    ...(replanObligationId === null ? {} : { replan_obligation_id: replanObligationId }),
  };
}

export interface TurnKeyInput {
  lineage: Lineage;
  host: string;
  executionMode: string;
  schedulerOwner: string;
  sessionAction: string;
  turnInstanceId: string;
}

/**
 * `turn_key = "sha256:" + hash(lineage, host, mode, owner, session action, turn instance id)`:
 * stable for retries of one turn, different per todo and per turn instance id.
 */
export function turnKeyOf(input: TurnKeyInput): string {
  const turn = checkTurnInstanceId(input.turnInstanceId);
  return `sha256:${sha256Hex(
    canonicalJson({
      lineage: input.lineage,
      host: input.host,
      execution_mode: input.executionMode,
      scheduler_owner: input.schedulerOwner,
      session_action: input.sessionAction,
      turn_instance_id: turn,
    }),
  )}`;
}

// ---------------------------------------------------------------------------------------------
// Session (resume the agent's conversation on the same todo)

export const SessionBindingSchema = z.looseObject({
  schema_version: z.literal(SESSION_BINDING_SCHEMA),
  goal_id: z.string(),
  agent_id: z.string(),
  todo_id: z.string().nullable(),
  session_id: z.string().min(1),
  updated_at: z.string(),
});
export type SessionBinding = z.infer<typeof SessionBindingSchema>;

export const SessionPlanSchema = z.object({
  action: z.enum(['none', 'start_new', 'resume', 'reject']),
  session_id: z.string().nullable(),
  reason: z.string().nullable(),
});
export type SessionPlan = z.infer<typeof SessionPlanSchema>;

/** The file name (without folder) of the session binding of a lineage's goal, agent and todo. */
export function sessionBindingName(goalId: string, agentId: string, todoId: string | null): string {
  return `${sha256Hex(canonicalJson({ goal_id: goalId, agent_id: agentId, todo_id: todoId }))}.json`;
}

/**
 * Session rules: none for non-host routes, reject a broken lineage or a foreign binding, else start
 * or resume. A turn is bound to a todo, or (a replan turn) to the replan obligation it discharges;
 * a replan turn always starts a new session: the stalled conversation is what it replans.
 */
export function planSession(lineage: Lineage, hostRoute: boolean, binding: unknown): SessionPlan {
  if (!hostRoute) return { action: 'none', session_id: null, reason: null };
  const replan = lineage.todo_id === null && (lineage.replan_obligation_id ?? '') !== '';
  if (
    lineage.goal_id === '' ||
    lineage.agent_id === '' ||
    (lineage.todo_id === null && !replan) ||
    lineage.action_hash === ''
  ) {
    return { action: 'reject', session_id: null, reason: 'missing_turn_lineage' };
  }
  if (replan) return { action: 'start_new', session_id: null, reason: null };
  if (binding === null || binding === undefined) return { action: 'start_new', session_id: null, reason: null };
  const parsed = SessionBindingSchema.safeParse(binding);
  if (!parsed.success) return { action: 'reject', session_id: null, reason: 'invalid_session_binding' };
  const b = parsed.data;
  if (b.goal_id !== lineage.goal_id || b.agent_id !== lineage.agent_id || b.todo_id !== lineage.todo_id) {
    return { action: 'reject', session_id: null, reason: 'identity_mismatch' };
  }
  return { action: 'resume', session_id: b.session_id, reason: null };
}

// ---------------------------------------------------------------------------------------------
// The plan

export const SkippedTodoSchema = z.object({ todo_id: z.string(), reason: z.string(), detail: z.string().nullable() });
export type SkippedTodo = z.infer<typeof SkippedTodoSchema>;

const FALSE_EFFECTS = {
  host_invoked: false,
  state_written: false,
  quota_spent: false,
  scheduler_acknowledged: false,
} as const;
export const EffectsSchema = z.object({
  host_invoked: z.boolean(),
  state_written: z.boolean(),
  quota_spent: z.boolean(),
  scheduler_acknowledged: z.boolean(),
});
export type Effects = z.infer<typeof EffectsSchema>;

/** Settlement receipts a committed turn produces, each keyed by the settlement identity. */
export const SETTLEMENT_STEPS = ['validation', 'durable_writeback', 'quota_spend', 'terminal_closeout'] as const;

export const TurnPlanSchema = z.object({
  ok: z.boolean(),
  schema_version: z.literal(TURN_PLAN_SCHEMA_VERSION),
  goal_id: z.string(),
  agent_id: z.string(),
  generated_at: z.string(),
  decision: z.object({
    should_run: z.boolean(),
    state: z.string(),
    effective_action: z.string(),
    reason: z.string(),
    route: RouteSchema,
    notify: z.boolean(),
    user_actions: z.array(z.string()),
  }),
  route: RouteSchema,
  would_invoke_host: z.boolean(),
  host_invocation_allowed: z.literal(false),
  selected_todo: TodoBriefSchema.nullable(),
  /** Open agent todos this agent does not take now, and why (claimed by a peer, held by a gate, …). */
  skipped_todos: z.array(SkippedTodoSchema),
  open_gates: z.array(z.object({ todo_id: z.string(), title: z.string(), blocked_todo_ids: z.array(z.string()) })),
  turn_instance_id: z.string(),
  turn_key: z.string(),
  lineage: LineageSchema,
  settlement_identity: SettlementIdentitySchema.nullable(),
  host: z.string().nullable(),
  execution_mode: z.literal(EXECUTION_MODE),
  scheduler_owner: z.literal(SCHEDULER_OWNER),
  session: SessionPlanSchema,
  transaction: z.object({ status: z.enum(['planned', 'not_applicable']), phases: z.array(z.enum(TURN_PHASES)) }),
  receipt_seed: z
    .object({ turn_key: z.string(), completed_phases: z.array(z.string()), next_phase: z.string() })
    .nullable(),
  settlement_steps: z.array(
    z.object({ step_kind: z.enum(SETTLEMENT_STEPS), idempotency_key_ref: z.literal('$.identity.effect_id') }),
  ),
  effects: EffectsSchema,
  contract_problems: z.array(z.string()),
  executor: z.object({ kind: z.string(), timeout_minutes: z.number() }).nullable(),
  validation_command: z.array(z.string()).nullable(),
  host_request: HostRequestSchema.nullable(),
  /** A replan turn: the obligation it discharges (absent in journals written before replan turns). */
  replan_obligation: ReplanObligationSchema.nullable().optional(),
});
export type TurnPlan = z.infer<typeof TurnPlanSchema>;

/** Everything planTurn needs, read from disk by the caller. */
export interface TurnPlanInputs {
  goalId: string;
  agentId: string;
  /** The raw registry goal. */
  goal: Record<string, unknown>;
  decision: ShouldRunDecision;
  doc: StateDocument;
  /** The goal's run index rows, newest first. */
  runs: readonly RunIndexRow[];
  /** The goal's quota for the brief (window, slots, budgets), or null when unknown; planTurn adds the turn timeout. */
  budget: BudgetBrief | null;
  /** The agent's executor, or null with `executorProblem` saying why there is none. */
  executor: { kind: string; timeoutMinutes: number } | null;
  executorProblem: string | null;
  /** The validator argv (registry or override), or null; `validationProblem` when it is invalid. */
  validationCommand: string[] | null;
  validationProblem: string | null;
  /** Todos other agents' turns are working on right now: never selected twice. */
  inFlightTodoIds: ReadonlySet<string>;
  /** Time-active hard task leases by todo id: a todo leased to another agent is never selected. */
  leaseHolders?: ReadonlyMap<string, { owner: string; expires_at: string }>;
  /** The stored session binding of the selected todo's lineage, if any. */
  sessionBinding: unknown;
  turnInstanceId: string;
  generatedAt: string;
  now: number;
}

/** The selected todo after in-flight exclusion, and the route it leaves. */
function effectiveSelection(inputs: TurnPlanInputs): {
  selected: SelectedTodo | null;
  route: Route;
  action: string;
  reason: string;
} {
  const { decision } = inputs;
  const selected = decision.selected_todo;
  if (selected === null || !inputs.inFlightTodoIds.has(selected.todo_id)) {
    return { selected, route: decision.route, action: decision.effective_action, reason: decision.reason };
  }
  const remaining = { ...inputs.doc, todos: inputs.doc.todos.filter((t) => !inputs.inFlightTodoIds.has(t.todoId)) };
  const again = selectTodo({
    doc: remaining,
    agentId: inputs.agentId,
    availableCapabilities: [],
    now: inputs.now,
    ...(inputs.leaseHolders === undefined ? {} : { leaseHolders: inputs.leaseHolders }),
  }).selected;
  if (again !== null)
    return {
      selected: again,
      route: decision.route,
      action: decision.effective_action,
      reason: `${selected.todo_id} is being worked on by another turn; selected ${again.todo_id} instead`,
    };
  return {
    selected: null,
    route: 'wait',
    action: 'peer_turn_in_flight',
    reason: `every todo this agent could take is being worked on by another turn (${[...inputs.inFlightTodoIds].join(', ')})`,
  };
}

function skippedTodos(inputs: TurnPlanInputs, selectedId: string | null): SkippedTodo[] {
  const skipped: SkippedTodo[] = (inputs.decision.selection?.excluded ?? []).map((e) => ({
    todo_id: e.todo_id,
    reason: e.reason,
    detail: e.detail,
  }));
  for (const id of inputs.inFlightTodoIds) {
    if (id !== selectedId && inputs.doc.todos.some((t) => t.todoId === id && t.role === 'agent'))
      skipped.push({ todo_id: id, reason: 'in_flight', detail: 'another turn is working on it' });
  }
  return skipped;
}

export function planTurn(inputs: TurnPlanInputs): TurnPlan {
  const { decision, goalId, agentId } = inputs;
  const selection = effectiveSelection(inputs);
  const todoId = selection.selected?.todo_id ?? null;
  const replan = replanOf(decision, selection.route, todoId);
  const replanId = replan?.obligation_id ?? null;
  const host = isHostRoute(selection.route);
  const problems: string[] = [];
  if (host) {
    if (inputs.executor === null)
      problems.push(
        inputs.executorProblem ??
          `agent ${agentId} has no executor; configure one with loopx agent configure --agent-id ${agentId} --preset <preset> --execute (LoopX: Configure Agent…), which sets coordination.agent_profiles.${agentId}.executor in the registry (see docs/executors.md)`,
      );
    if (inputs.validationProblem !== null) problems.push(inputs.validationProblem);
  }
  const lineage = lineageOf(goalId, agentId, todoId, selection.route, selection.action, replanId);
  const session = planSession(lineage, host, inputs.sessionBinding);
  if (session.action === 'reject') problems.push(`session binding rejected: ${session.reason ?? 'unknown'}`);
  const route: Route = problems.length > 0 ? 'contract_error' : selection.route;
  const invokes = isHostRoute(route);
  const executorKind = inputs.executor?.kind ?? null;
  const turnKey = turnKeyOf({
    lineage,
    host: executorKind ?? 'none',
    executionMode: EXECUTION_MODE,
    schedulerOwner: SCHEDULER_OWNER,
    sessionAction: session.action,
    turnInstanceId: inputs.turnInstanceId,
  });
  const identity: SettlementIdentity | null = invokes
    ? settlementIdentity({
        goalId,
        agentId,
        turnInstanceId: inputs.turnInstanceId,
        todoId,
        replanObligationId: replanId,
      })
    : null;

  let hostRequest: HostRequest | null = null;
  if (invokes && identity !== null) {
    try {
      const brief = buildTurnBrief({
        goal: inputs.goal,
        agentId,
        doc: inputs.doc,
        runs: inputs.runs,
        selectedTodoId: todoId,
        budget:
          inputs.budget === null
            ? null
            : { ...inputs.budget, turn_timeout_minutes: inputs.executor?.timeoutMinutes ?? null },
      });
      hostRequest = buildHostRequest({
        brief: {
          ...brief,
          validation_command: inputs.validationCommand,
          ...(replan === null ? {} : { replan: replanBrief(replan) }),
        },
        turnKey,
        route,
        identity,
        session: { action: session.action === 'resume' ? 'resume' : 'start_new', session_id: session.session_id },
      });
    } catch (error) {
      problems.push(`the host request cannot be built: ${errorMessage(error)}`);
    }
  }
  const finalRoute: Route = problems.length > 0 ? 'contract_error' : route;
  const planned = isHostRoute(finalRoute);
  const selectedItem = todoId === null ? undefined : inputs.doc.todos.find((t) => t.todoId === todoId);
  const gates = analyzeGates(inputs.doc).open_gates;
  return {
    ok: finalRoute !== 'contract_error',
    schema_version: TURN_PLAN_SCHEMA_VERSION,
    goal_id: goalId,
    agent_id: agentId,
    generated_at: inputs.generatedAt,
    decision: {
      should_run: decision.should_run,
      state: decision.state,
      effective_action: selection.action,
      reason: selection.reason,
      route: decision.route,
      notify: decision.interaction_contract.user_channel.notify === 'NOTIFY',
      user_actions: decision.interaction_contract.user_channel.actions,
    },
    route: finalRoute,
    would_invoke_host: planned,
    host_invocation_allowed: false,
    selected_todo: selectedItem === undefined ? null : todoBrief(selectedItem),
    skipped_todos: skippedTodos(inputs, todoId),
    open_gates: gates.map((g) => ({ todo_id: g.todo_id, title: g.title, blocked_todo_ids: g.blocked_todo_ids })),
    turn_instance_id: inputs.turnInstanceId,
    turn_key: turnKey,
    lineage,
    settlement_identity: planned ? identity : null,
    host: executorKind,
    execution_mode: EXECUTION_MODE,
    scheduler_owner: SCHEDULER_OWNER,
    session: planned
      ? session
      : { action: 'none', session_id: null, reason: session.action === 'reject' ? session.reason : null },
    transaction: planned ? { status: 'planned', phases: [...TURN_PHASES] } : { status: 'not_applicable', phases: [] },
    receipt_seed: planned ? { turn_key: turnKey, completed_phases: [], next_phase: 'host_execute' } : null,
    settlement_steps: planned
      ? SETTLEMENT_STEPS.map((step) => ({ step_kind: step, idempotency_key_ref: '$.identity.effect_id' as const }))
      : [],
    effects: { ...FALSE_EFFECTS },
    contract_problems: problems,
    executor:
      inputs.executor === null ? null : { kind: inputs.executor.kind, timeout_minutes: inputs.executor.timeoutMinutes },
    validation_command: inputs.validationCommand,
    host_request: planned ? hostRequest : null,
    replan_obligation: replan,
  };
}

/** The obligation a replan turn discharges: the decision owes one, and no todo was selected instead. */
function replanOf(decision: ShouldRunDecision, route: Route, todoId: string | null): ReplanObligation | null {
  if (route !== 'replan_required' || todoId !== null) return null;
  if (decision.effective_action !== 'autonomous_replan_required') return null;
  return decision.replan_obligation ?? null;
}

function replanBrief(obligation: ReplanObligation): ReplanBrief {
  return {
    obligation_id: obligation.obligation_id,
    reason: obligation.triggers[0]?.text ?? 'the lane stalled',
    recommended_action: obligation.recommended_action,
    guidance_actions: [...obligation.guidance_actions],
    stop_condition: obligation.stop_condition,
  };
}

/** A fresh turn instance id: the clock's instant plus a random suffix, e.g. `20260115T100000Z-3fa1b2c4`. */
export function newTurnInstanceId(now: Date, randomHex: string): string {
  const stamp = now
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return checkTurnInstanceId(`${stamp}-${randomHex}`);
}
