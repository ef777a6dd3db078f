import { mergeGateLaneOf } from '../lanes/gate';
import { z } from 'zod';
import { planRoute, RouteSchema } from './route';
import { normalizeAgentId, registeredAgentsForGoal, requireRegisteredAgent } from '../registry/agentIds';
import { compactOrchestrationPolicy } from '../registry/orchestration';
import { isoSeconds, type Clock } from '../clock';
import { errorMessage, type LoopxError } from '../errors';
import { latestStatusRun, type RunIndexEntry } from '../runtime/runIndex';
import { goalAttention, type GoalAttention } from '../todo/attention';
import { TERMINAL_STATUSES, type StateDocument } from '../state/document';
import { metaFlag } from '../state/gates';
import type { StateFileSnapshot } from '../state/stateFile';
import { GoalLoader, type LoadOptions } from '../goal/loader';
import type { GoalSnapshot } from '../goal/snapshot';
import { todoContractDiagnostics, type TodoContractDiagnostic } from '../todo/contract';
import { findQuotaGoal, type LoadQuotaGoalOptions, type QuotaGoal } from '../quota/goal';
import { settlementIdentity } from '../quota/identity';
import { SPEND_USAGE_FLAGS, TURN_ID_PLACEHOLDER } from '../quota/spend';
import { admissionProblem, profileEstimate } from '../quota/admission';
import type { QuotaView } from '../quota/quotaView';
import { replanRowsOf } from '../quota/runHistory';
import {
  SelectedTodoSchema,
  selectTodo,
  SelectionSummarySchema,
  type SelectedTodo,
  type SelectionResult,
} from '../todo/runnable';
import { replanObligationFromRuns, ReplanObligationSchema, type ReplanObligation } from './replanObligation';
import { goalFrontier, type GoalFrontier } from './goalFrontier';
import {
  asRecord,
  computeQuotaStatus,
  focusMarkerOf,
  goalStopped,
  QuotaStatusSchema,
  type QuotaStatus,
} from '../quota/state';

/**
 * `quota should-run` (docs/quota.md, docs/turns.md): one read-only decision per turn. Order:
 *   1. goal lookup (missing → ok=false, state unknown);
 *   2. the agent must be registered on the goal's roster (codes `quota_agent_*`);
 *   3. hard pause short-circuit (owner-stopped or compute 0): the canonical paused contract,
 *      returned before any todo is read, with every permission false;
 *   4. quota state (quota/state.ts) with goal health = the state file can be read;
 *   5. todo selection (todoSelection.ts) and the guards that apply here, each overriding the earlier ones:
 *      capability gate, prompt upgrade, autonomous replan obligation (replanObligation.ts: two stalled
 *      turns on the lane → `autonomous_replan_required`), terminal no-follow-up frontier, orchestration contract
 *      (`coordinate_task_bundle`), due monitor (`external_evidence_observe`), monitor-only lane
 *      (`monitor_quiet_skip`), partial user gate (`scoped_user_gate_fallback`, safe bypass).
 * Unlike the original, the guard never writes (no receipt, no stall record): it is a pure read.
 */

export const DecisionStateSchema = z.union([
  QuotaStatusSchema.shape.state,
  z.literal('terminal_no_followup'),
  z.literal('unknown'),
]);

/** LoopX's decision words: `run`, `skip` and the named non-normal paths. */
export const DECISION_WORDS = [
  'run',
  'skip',
  'observe',
  'safe_bypass_user_gate_fallback',
  'automation_prompt_upgrade',
  'autonomous_replan_required',
  'self_repair',
] as const;
export const DecisionWordSchema = z.enum(DECISION_WORDS);
export type DecisionWord = z.infer<typeof DecisionWordSchema>;

const PermissionsSchema = z.object({
  normal_delivery_allowed: z.boolean(),
  recovery_allowed: z.boolean(),
  self_repair_allowed: z.boolean(),
  capability_repair_allowed: z.boolean(),
  workspace_repair_allowed: z.boolean(),
});

export const ShouldRunDecisionSchema = z.object({
  ok: z.boolean(),
  /** The goal's attention status as LoopX's status projection names it (goalAttention.ts), or `goal_not_found`. */
  status: z.string(),
  /** Whether the goal's own records are sound (no agent-lane run with missing artifacts, no todo contract error). */
  status_health_ok: z.boolean(),
  /** The todo metadata contract errors of the goal's state file (state/todoContract.ts); any makes `ok` false. */
  todo_contract_errors: z
    .array(
      z.object({
        code: z.string(),
        severity: z.literal('error'),
        todo_id: z.string(),
        line: z.number().int(),
        message: z.string(),
      }),
    )
    .optional(),
  goal_id: z.string(),
  agent_id: z.string().nullable(),
  generated_at: z.string(),
  should_run: z.boolean(),
  decision: DecisionWordSchema,
  state: DecisionStateSchema,
  effective_action: z.string(),
  reason: z.string(),
  pause_cause: z.string().nullable(),
  quota: QuotaStatusSchema.nullable(),
  selected_todo: SelectedTodoSchema.nullable(),
  /** LoopX's todo summary: the first executable agent todo (for this agent when one is named). */
  agent_todo_summary: z.object({ first_executable_items: z.array(SelectedTodoSchema) }),
  next_action_projection_warning: z
    .object({ kind: z.string(), severity: z.string(), requires_state_writeback: z.boolean() })
    .nullable(),
  safe_bypass_allowed: z.boolean(),
  safe_bypass_kind: z.string().nullable(),
  permissions: PermissionsSchema,
  execution_obligation: z.object({ must_attempt_work: z.boolean(), delivery_allowed: z.boolean() }),
  interaction_contract: z.object({
    mode: z.enum(['deliver', 'quiet_wait', 'user_action', 'paused', 'blocked']),
    user_channel: z.object({
      notify: z.enum(['NOTIFY', 'DONT_NOTIFY']),
      action_required: z.boolean(),
      actions: z.array(z.string()),
    }),
    agent_channel: z.object({
      must_attempt: z.boolean(),
      delivery_allowed: z.boolean(),
      quiet_noop_allowed: z.boolean(),
      primary_action: z.string(),
    }),
    cli_channel: z.object({
      next_cli_actions: z.array(z.string()),
      settlement_plan: z.array(z.string()),
      spend_after_validation: z.boolean(),
    }),
  }),
  scheduler_hint: z.object({ action: z.string(), cadence_class: z.string(), next_eligible_at: z.string().nullable() }),
  heartbeat_recommendation: z.object({ recommended_mode: z.string() }),
  route: RouteSchema,
  /** The identity the turn's settlement will carry (when agent, turn id and a binding are known). */
  settlement_identity: z.looseObject({ effect_id: z.string() }).nullable(),
  /** Present once todos were read (never in the paused contract). */
  selection: SelectionSummarySchema.optional(),
  capability_gate: z
    .object({ todo_id: z.string(), required: z.array(z.string()), missing: z.array(z.string()) })
    .optional(),
  /** The replan the lane owes (two stalled turns), when the decision is `autonomous_replan_required`. */
  replan_obligation: ReplanObligationSchema.optional(),
  /**
   * Present when the original Python LoopX also works on the goal (its lock files are in the goal's runtime
   * folder): how far the hard limit holds with it in the loop (docs/compatibility.md#mixed-teams).
   */
  original_loopx: z.object({ active: z.literal(true), footprint: z.string(), hard_limit: z.string() }).optional(),
});
export type ShouldRunDecision = z.infer<typeof ShouldRunDecisionSchema>;

/** What a decision takes besides the goal's snapshot, the agent and the time. */
export interface DecisionOptions {
  /** Capabilities the agent declared (`--available-capability`). */
  availableCapabilities?: readonly string[];
  /** `--turn-instance-id`: with an agent, the decision names the settlement identity of the turn. */
  turnInstanceId?: string | undefined;
  /**
   * Projects `next_action_projection_warning` from what the decision read (status's rule,
   * `status/projection/shouldRunWarning.ts`, handed in because scheduling cannot import status).
   * Without it the field is null.
   */
  nextActionWarning?: NextActionWarningProjector | undefined;
  /**
   * Whether the goal's status item carries a state projection gap (status's rule,
   * `status/projection/shouldRunWarning.ts`, handed in as `nextActionWarning` is). Without it there is none.
   */
  stateProjectionGap?: ((input: { goalId: string; doc: StateDocument }) => boolean) | undefined;
  /** The effect id of the asking turn: when it already holds a live reservation (or spent), it was admitted. */
  admittedEffectId?: string | undefined;
  /** A reservation's refusal met after an earlier decision: the answer is throttled with this reason. */
  refusedBy?: string | undefined;
}

/** The library's `shouldRun` (a goal named by registry and id): loads the goal, then decides. */
export interface ShouldRunOptions extends GoalDecisionOptions, LoadQuotaGoalOptions {}

/** See `ShouldRunOptions.nextActionWarning`. */
export type NextActionWarningProjector = (input: {
  goalId: string;
  doc: StateDocument;
  rowsNewestFirst: readonly RunIndexEntry[];
  agentId: string | null;
  /** The asking agent's first executable todo (its lane's next action), or null. */
  agentLaneTodo?: { text: string; preservesGoalNextAction: boolean } | null;
}) => { kind: string; severity: string; requires_state_writeback: boolean } | null;

const NO_PERMISSIONS = {
  normal_delivery_allowed: false,
  recovery_allowed: false,
  self_repair_allowed: false,
  capability_repair_allowed: false,
  workspace_repair_allowed: false,
};

interface Outcome {
  should_run: boolean;
  decision: DecisionWord;
  state: ShouldRunDecision['state'];
  effective_action: string;
  reason: string;
  mode: ShouldRunDecision['interaction_contract']['mode'];
  notify: boolean;
  user_actions: string[];
  quiet_noop_allowed: boolean;
  safe_bypass_kind: string | null;
  scheduler: ShouldRunDecision['scheduler_hint'];
  recommended_mode: string;
  selected: SelectedTodo | null;
  /** The replan obligation an `autonomous_replan_required` outcome discharges. */
  replan?: ReplanObligation;
}

/**
 * The decision for a goal named by registry path and id (the library's `shouldRun`): a goal the
 * registry does not list is the `goal_not_found` answer. Operations that resolved their goal load it
 * (`GoalLoader`) and call `decideShouldRun`.
 */
export async function shouldRun(options: ShouldRunOptions): Promise<ShouldRunDecision> {
  const goal = await findQuotaGoal(options);
  const requested = options.agentId ?? null;
  if (goal === null)
    return goalNotFound(
      options.goalId,
      requested === null ? null : (normalizeAgentId(requested) ?? requested),
      isoSeconds(options.clock.now()),
    );
  return shouldRunOnGoal(goal, options);
}

/** What `shouldRunOnGoal` takes besides the goal. */
export interface GoalDecisionOptions extends DecisionOptions {
  agentId?: string | null | undefined;
  clock: Clock;
  /** How the run index is read (see `LoadOptions.indexCache`). */
  indexCache?: LoadOptions['indexCache'];
}

/**
 * Loads the goal (`GoalLoader`) and decides. The asking agent is checked against the roster first,
 * so a refused agent costs no read (and no index cache is written for it).
 */
export async function shouldRunOnGoal(goal: QuotaGoal, options: GoalDecisionOptions): Promise<ShouldRunDecision> {
  const requested = options.agentId ?? null;
  if (requested !== null) requireRegisteredAgent(goal.goal, requested, { field: 'agent_id', codePrefix: 'quota_' });
  const snapshot = await new GoalLoader().load(goal, { clock: options.clock, indexCache: options.indexCache });
  return decideShouldRun(snapshot, requested, options.clock.now(), options);
}

/**
 * `quota should-run`'s decision: a function of the goal's snapshot, the asking agent (checked
 * against the goal's roster: `quota_agent_*`) and the time. It reads nothing.
 */
export function decideShouldRun(
  snapshot: GoalSnapshot,
  requested: string | null,
  now: Date,
  options: DecisionOptions,
): ShouldRunDecision {
  const goal = snapshot.goal;
  const agentId =
    requested === null
      ? null
      : requireRegisteredAgent(goal.goal, requested, { field: 'agent_id', codePrefix: 'quota_' });
  const generatedAt = isoSeconds(now);
  const runs = decisionRuns(snapshot, agentId);
  const view = snapshot.quota;
  const stopped = goalStopped(goal.goal);
  const latest = runs.latestStatusRun;
  let stateFile: StateFileSnapshot | null = null;
  let health = { ok: true, reason: '' };
  if (snapshot.state.kind === 'unresolved') {
    health = {
      ok: false,
      reason: `goal '${goal.goalId}' has no state file LoopX can find; set state_file (and an absolute repo) in the registry`,
    };
  } else if (snapshot.state.kind === 'unreadable') {
    health = { ok: false, reason: `the goal's state file cannot be read: ${errorMessage(snapshot.state.error)}` };
  } else stateFile = snapshot.state.file;
  const attention = goalAttention({ goal: goal.goal, latestRun: latest, doc: stateFile?.document ?? null });
  if (attention.severity === 'high' && health.ok)
    health = {
      ok: false,
      reason: `health or contract blocker must clear before compute is spent (${attention.status})`,
    };
  // LoopX's scoped contract health: its todos' metadata routable.
  const roster = registeredAgentsForGoal(goal.goal);
  // An open user gate whose scope is ambiguous on a multi-agent goal is repaired by the agent (the
  // original's `todo_decision_scope_projection_repair`): its diagnostics fail the goal's health, and the repair
  // answers ok (an out-of-date prompt, which disables the repair, leaves ok false: kit seed 6 quota-012).
  const unscopedGates = stateFile === null ? [] : unscopedMultiAgentGates(stateFile.document, roster);
  const todoContract = stateFile === null ? [] : todoContractDiagnostics(stateFile.document, roster);
  // A run record whose artifacts are gone does not fail it (an agent lane's included, whatever lane asks: kit seeds 8
  // quota-026, 9 quota-017/-020); a latest status run without them is the attention's severity high (blocked_health).
  const statusHealthOk = todoContract.length === 0;
  const facts = { stopped, health, waitingOn: attention.waiting_on, focusMarker: focusMarkerOf(goal.goal) };
  const quota = admissionChecked(
    goal,
    agentId,
    computeQuotaStatus(goal.config, view.ledger, reservedBesides(view, options.admittedEffectId), facts),
    view,
    options,
  );
  // The paused contract shows no next-action warning.
  if (quota.state === 'paused')
    return pausedContract(goal, agentId, quota, generatedAt, {
      attention,
      statusHealthOk,
      todoContract,
      nextActionWarning: null,
    });

  let selection: SelectionResult | null = null;
  if (stateFile !== null) {
    selection = selectTodo({
      doc: stateFile.document,
      agentId,
      availableCapabilities: options.availableCapabilities ?? [],
      now: now.getTime(),
      leaseHolders: snapshot.leases,
    });
  }
  // A named agent's first executable todo is its lane's next action, which keeps the durable route (the original's
  // `agent_lane_next_action`, `preserves_goal_next_action: true`): a mismatch is then `info` (kit seed 5 quota-006).
  // Beside an open user gate in its scope it is the scoped user-gate fallback's todo, which replaces the gated route
  // (`preserves_goal_next_action: false`): a `warning` (kit seed 8 quota-021).
  const laneTodo = agentId === null ? null : (selection?.firstExecutable ?? null);
  const laneGated = stateFile !== null && openUserGatesInScope(stateFile.document, agentId).length > 0;
  const nextActionWarning =
    stateFile === null || options.nextActionWarning === undefined
      ? null
      : options.nextActionWarning({
          goalId: goal.goalId,
          doc: stateFile.document,
          rowsNewestFirst: runs.warningRows,
          agentId,
          agentLaneTodo: laneTodo === null ? null : { text: laneTodo.text, preservesGoalNextAction: !laneGated },
        });
  const context = { attention, statusHealthOk, todoContract, nextActionWarning };
  const scoped = agentScopedGateOverride(quota, attention, selection, agentId);
  const replan = replanObligationFromRuns({ goalId: goal.goalId, agentId, rowsNewestFirst: runs.replanRows });
  const frontier = stateFile === null ? null : goalFrontier(stateFile.document, agentId);
  const projectionGap =
    stateFile !== null &&
    options.stateProjectionGap !== undefined &&
    options.stateProjectionGap({ goalId: goal.goalId, doc: stateFile.document });
  const guarded = applyGuards(goal, scoped, selection, options, {
    agentId,
    statusHealthOk,
    todoContract,
    replan,
    frontier,
    unscopedGates,
    projectionGapUnbacked:
      projectionGap &&
      selection !== null &&
      stateFile !== null &&
      nothingOpenInScope(stateFile.document, selection, agentId),
  });
  const outcome = scopedUserGateFallback(guarded, scoped, selection, stateFile?.document ?? null, agentId);
  return assemble(goal, agentId, scoped, outcome, selection, options, generatedAt, context);
}

/**
 * The original's scoped user-gate fallback (`apply_scoped_user_gate_fallback_projection`), applied last, whatever
 * the quota state: beside an open user gate in this agent's scope, the first executable todo no gate holds runs
 * when a gate holds another of its candidates or the quota allows a safe bypass. It keeps a named decision and
 * action (an out-of-date prompt stays `automation_prompt_upgrade`), turns a `skip` into
 * `safe_bypass_user_gate_fallback`, and never overrides a replan. A run the slots do not allow is still refused
 * by the turn's reservation (docs/compatibility.md, "Kit: quota").
 */
function scopedUserGateFallback(
  outcome: Outcome,
  quota: QuotaStatus,
  selection: SelectionResult | null,
  doc: StateDocument | null,
  agentId: string | null,
): Outcome {
  if (outcome.should_run || outcome.replan !== undefined || selection === null || doc === null) return outcome;
  const fallback = selection.selected;
  if (fallback === null) return outcome;
  const gates = openUserGatesInScope(doc, agentId);
  if (gates.length === 0) return outcome;
  if (selection.summary.blocking_gate_ids.length === 0 && !quota.safe_bypass_allowed) return outcome;
  const surfaced = gates.filter((id) => selection.summary.blocking_gate_ids.includes(id));
  return {
    ...outcome,
    should_run: true,
    decision: outcome.decision === 'skip' ? 'safe_bypass_user_gate_fallback' : outcome.decision,
    effective_action:
      outcome.effective_action === 'monitor_quiet_skip' ? 'scoped_user_gate_fallback' : outcome.effective_action,
    reason: `${outcome.reason}; user gate ${(surfaced.length > 0 ? surfaced : gates).join(', ')} is surfaced and ${fallback.todo_id}, which no gate holds, may run`,
    mode: 'deliver',
    notify: true,
    user_actions: gateActions(selection, surfaced.length > 0 ? surfaced : gates),
    quiet_noop_allowed: false,
    safe_bypass_kind: outcome.safe_bypass_kind ?? 'scoped_user_gate_fallback',
    scheduler: { action: 'run_now', cadence_class: 'active', next_eligible_at: null },
    selected: fallback,
  };
}

/** Open user gates that hold this agent: global ones, its own `blocks_agent`, and unscoped ones not claimed by another. */
function openUserGatesInScope(doc: StateDocument, agentId: string | null): string[] {
  return doc.todos
    .filter((t) => t.role === 'user' && t.meta['task_class'] === 'user_gate' && !TERMINAL_STATUSES.has(t.status))
    .filter((t) => {
      if (agentId === null || metaFlag(t.meta['global_gate'])) return true;
      const blocks = t.meta['blocks_agent'] ?? '';
      if (blocks !== '') return blocks === agentId;
      const claimed = t.meta['claimed_by'] ?? '';
      return claimed === '' || claimed === agentId;
    })
    .map((t) => t.todoId);
}

/**
 * A goal the slots and budgets leave runnable is still throttled when the next turn would not be
 * admitted: the same arithmetic as the turn's reservation (`admissionProblem`: spent + reserved +
 * this turn's estimate within every limit), so the guard never says "run" for a turn that admission
 * or the spend would then refuse. A turn that already holds its reservation (or has spent) was
 * admitted; `refusedBy` is a reservation's refusal the caller met (a race lost after the decision).
 */
function admissionChecked(
  goal: QuotaGoal,
  agentId: string | null,
  quota: QuotaStatus,
  view: QuotaView,
  options: DecisionOptions,
): QuotaStatus {
  // Slots the quota state already counts (spent + reserved against allowed, as the original); what it
  // cannot know is whether the next turn's budget estimate fits.
  const budgeted = Object.values(goal.config.budgets).some((limit) => limit !== null);
  if (quota.state !== 'eligible') return quota;
  const throttled = (reason: string): QuotaStatus => ({
    ...quota,
    state: 'throttled',
    reason: `quota refused: ${reason}`,
  });
  if (options.refusedBy !== undefined) return throttled(options.refusedBy);
  if (!budgeted) return quota;
  const admitted = options.admittedEffectId;
  if (
    admitted !== undefined &&
    (view.ledger.settled_effect_ids.has(admitted) || view.live.some((r) => r.effect_id === admitted))
  )
    return quota;
  const { problem } = admissionProblem(goal, view.ledger, view.reserved, profileEstimate(goal, agentId));
  return problem === null ? quota : throttled(problem);
}

/** What turns in flight hold, without the asking turn's own reservation (a retry is not held back by itself). */
function reservedBesides(view: QuotaView, effectId: string | undefined): QuotaView['reserved'] {
  const own = effectId === undefined ? undefined : view.live.find((r) => r.effect_id === effectId);
  if (own === undefined) return view.reserved;
  return {
    slots: view.reserved.slots - own.slots,
    tokens: view.reserved.tokens - (own.estimate.tokens ?? 0),
    cost_usd: view.reserved.cost_usd - (own.estimate.cost_usd ?? 0),
    minutes: view.reserved.minutes - (own.estimate.minutes ?? 0),
  };
}

/** What a decision reads from the run index. */
interface DecisionRuns {
  latestStatusRun: RunIndexEntry | null;
  /** Rows for the next-action warning (it picks the newest status run and the newest agent-lane run). */
  warningRows: readonly RunIndexEntry[];
  /** Rows for the replan scan (at least every row of the lane it can visit, newest first). */
  replanRows: readonly RunIndexEntry[];
}

function decisionRuns(snapshot: GoalSnapshot, agentId: string | null): DecisionRuns {
  const runs = snapshot.runs;
  if (runs.kind === 'rows') {
    return {
      latestStatusRun: latestStatusRun(runs.rows),
      warningRows: runs.rows,
      replanRows: runs.rows,
    };
  }
  return {
    latestStatusRun: runs.latestStatusRun,
    warningRows: runs.latestRuns,
    replanRows: replanRowsOf(runs.history, agentId, snapshot.goal.projectRoot),
  };
}

/**
 * Open user gates put the whole goal at the operator gate; when every one of them names another agent's
 * lane (`blocks_agent`) or is a merge-lane gate, the asking agent is not held: its quota state is the one the slots give.
 */
function agentScopedGateOverride(
  quota: QuotaStatus,
  attention: GoalAttention,
  selection: SelectionResult | null,
  agentId: string | null,
): QuotaStatus {
  if (quota.state !== 'operator_gate' || agentId === null || selection === null) return quota;
  if (attention.status !== 'active_state_user_gate') return quota;
  const open = selection.gates.open_gates;
  // A merge-lane gate waits for a person's review of a lane's commits; it holds no agent (docs/lanes.md).
  const gates = open.filter((g) => mergeGateLaneOf(g.title) === null);
  if (open.length === 0 || !gates.every((g) => g.blocks_agent !== null && g.blocks_agent !== agentId)) return quota;
  // The original lifts the gate only for an agent with in-scope work: an executable todo or an open monitor.
  if (selection.firstExecutable === null && !selection.hasOpenMonitor) return quota;
  const slotsOut = quota.spent_slots + quota.reserved_slots >= quota.allowed_slots;
  return {
    ...quota,
    state: slotsOut ? 'throttled' : 'eligible',
    reason: `the open user gates hold other agents' lanes, not ${agentId}; ${slotsOut ? 'throttled' : 'eligible'} by slots`,
  };
}

/** A goal with a roster must be asked with `--agent-id`: an unscoped heartbeat prompt is out of date. */
function promptUpgradeRequired(goal: QuotaGoal, agentId: string | null): boolean {
  if (agentId !== null) return false;
  const coordination = asRecord(goal.goal['coordination']);
  const roster = coordination['registered_agents'];
  return Array.isArray(roster) && roster.some((a) => typeof a === 'string' && a.trim() !== '');
}

function quietWait(state: Outcome['state'], action: string, reason: string, extra: Partial<Outcome> = {}): Outcome {
  return {
    should_run: false,
    decision: 'skip',
    state,
    effective_action: action,
    reason,
    mode: 'quiet_wait',
    notify: false,
    user_actions: [],
    quiet_noop_allowed: true,
    safe_bypass_kind: null,
    scheduler: { action: 'poll_later', cadence_class: 'idle', next_eligible_at: null },
    recommended_mode: 'quiet_wait',
    selected: null,
    ...extra,
  };
}

function userAction(
  state: Outcome['state'],
  action: string,
  reason: string,
  actions: string[],
  extra: Partial<Outcome> = {},
): Outcome {
  return {
    should_run: false,
    decision: 'skip',
    state,
    effective_action: action,
    reason,
    mode: 'user_action',
    notify: true,
    user_actions: actions,
    quiet_noop_allowed: false,
    safe_bypass_kind: null,
    scheduler: { action: 'wait_for_user', cadence_class: 'user_gate', next_eligible_at: null },
    recommended_mode: 'notify_user',
    selected: null,
    ...extra,
  };
}

function run(
  state: Outcome['state'],
  action: string,
  reason: string,
  selected: SelectedTodo | null,
  extra: Partial<Outcome> = {},
): Outcome {
  return {
    should_run: true,
    decision: 'run',
    state,
    effective_action: action,
    reason,
    mode: 'deliver',
    notify: false,
    user_actions: [],
    quiet_noop_allowed: false,
    safe_bypass_kind: null,
    scheduler: { action: 'run_now', cadence_class: 'active', next_eligible_at: null },
    recommended_mode: 'run',
    selected,
    ...extra,
  };
}

function gateActions(selection: SelectionResult, gateIds: readonly string[]): string[] {
  return gateIds.map((id) => {
    const gate = selection.gates.open_gates.find((g) => g.todo_id === id);
    return gate === undefined ? `resolve user gate ${id}` : `resolve user gate ${id}: ${gate.title}`;
  });
}

interface DecisionContext {
  attention: GoalAttention;
  statusHealthOk: boolean;
  todoContract: readonly TodoContractDiagnostic[];
  nextActionWarning: ShouldRunDecision['next_action_projection_warning'];
}

interface GuardContext {
  agentId: string | null;
  statusHealthOk: boolean;
  todoContract: readonly TodoContractDiagnostic[];
  /** The replan obligation the lane's run history owes, if any. */
  replan: ReplanObligation | null;
  /** The goal's terminal and succession state from its todos (null without a state file). */
  frontier: GoalFrontier | null;
  /** Open user gates of a multi-agent goal with neither `blocks_agent` nor `global_gate=true`. */
  unscopedGates: readonly string[];
  /** The goal's status has a state projection gap and no user or agent todo is open in this agent's scope. */
  projectionGapUnbacked: boolean;
}

function promptUpgrade(state: Outcome['state'], goalId: string): Outcome {
  return userAction(
    state,
    'automation_prompt_upgrade_required',
    `goal '${goalId}' has registered agents: the heartbeat must name one with --agent-id`,
    [`update the automation prompt of goal '${goalId}' to pass --agent-id <registered agent>`],
    { decision: 'automation_prompt_upgrade' },
  );
}

function applyGuards(
  goal: QuotaGoal,
  quota: QuotaStatus,
  selection: SelectionResult | null,
  options: DecisionOptions,
  context: GuardContext,
): Outcome {
  const upgrade = promptUpgradeRequired(goal, context.agentId);
  const firstExecutable = selection?.selected ?? null;
  const firstOpen = selection?.firstExecutable ?? null;
  // The gate-scope projection repair outranks the quota state (the original's self-repair, which only an
  // out-of-date prompt disables): the agent makes the gate's authority explicit before anything else.
  if (context.unscopedGates.length > 0 && !upgrade)
    return run(
      quota.state,
      'todo_decision_scope_projection_repair',
      `user gate ${context.unscopedGates.join(', ')} of this multi-agent goal has neither blocks_agent nor global_gate=true, so its blocking authority is ambiguous: set blocks_agent to one registered agent, set global_gate=true, or make it a user_action`,
      firstOpen,
      { decision: 'self_repair', recommended_mode: 'repair_user_gate_scope_projection' },
    );
  switch (quota.state) {
    case 'blocked_health':
      // An out-of-date prompt is named before the health blocker (the original's guard order).
      if (upgrade && context.frontier?.terminal !== true) return promptUpgrade('blocked_health', goal.goalId);
      return userAction('blocked_health', 'blocked_health', quota.reason, [quota.reason], { mode: 'blocked' });
    case 'operator_gate': {
      if (upgrade) return promptUpgrade('operator_gate', goal.goalId);
      const actions = [`answer the goal's open question (waiting_on ${quota.waiting_on})`];
      // The safe bypass is the original's scoped user-gate fallback: it exists only beside an open user gate
      // (a registry `waiting_on` or an operator question alone holds every todo).
      if (context.statusHealthOk && firstExecutable !== null && (selection?.gates.open_gates.length ?? 0) > 0)
        return run(
          'operator_gate',
          'operator_gate_notify',
          `${quota.reason}; the gate is surfaced and ${firstExecutable.todo_id}, which it does not block, may run`,
          firstExecutable,
          {
            decision: 'safe_bypass_user_gate_fallback',
            notify: true,
            user_actions: actions,
            safe_bypass_kind: 'operator_gate',
          },
        );
      return userAction(
        'operator_gate',
        'operator_gate_notify',
        `${quota.reason}; the controller must act before normal delivery resumes`,
        actions,
        { safe_bypass_kind: 'operator_gate' },
      );
    }
    case 'focus_wait':
      return quietWait('focus_wait', 'focus_wait', quota.reason);
    case 'throttled':
      if (upgrade) return promptUpgrade('throttled', goal.goalId);
      return quietWait('throttled', 'throttled_skip', quota.reason, {
        scheduler: { action: 'wait_until', cadence_class: 'throttled', next_eligible_at: quota.next_slot_frees_at },
        recommended_mode: 'quota_throttled',
      });
    default:
      break;
  }
  if (selection === null) return quietWait(quota.state, 'no_runnable_todo', 'no state file was read');
  const { selected, successor, summary } = selection;
  const terminal = context.frontier?.terminal === true;

  // Two stalled turns on the lane owe a replan: it outranks normal work and monitors, but not an
  // out-of-date prompt, unsound records or a finished frontier (spec §3.1 step 4).
  if (context.replan !== null && !terminal && context.statusHealthOk && !upgrade) {
    const trigger = context.replan.triggers[0];
    return run(
      quota.state,
      'autonomous_replan_required',
      `replan obligation ${context.replan.obligation_id}: ${trigger?.text ?? 'the lane stalled'}; replan before another turn repeats it`,
      null,
      { decision: 'autonomous_replan_required', recommended_mode: 'autonomous_replan', replan: context.replan },
    );
  }
  // A completed advancement todo without a successor or a no-follow-up rationale, and no advancement
  // work left: the goal owes a replan (the original's todo succession gap rule; open user gates and a
  // resumable deferred todo own the frontier first).
  const gaps = context.frontier?.successionGaps ?? [];
  if (
    gaps.length > 0 &&
    context.frontier?.openAdvancementCount === 0 &&
    successor === null &&
    selection.gates.open_gates.length === 0 &&
    context.statusHealthOk &&
    !upgrade
  ) {
    return run(
      quota.state,
      'autonomous_replan_required',
      `todo ${gaps.join(', ')} was completed without a successor or a no-follow-up rationale: add or link a successor todo, or complete it with --no-follow-up`,
      null,
      { decision: 'autonomous_replan_required', recommended_mode: 'autonomous_replan' },
    );
  }

  if (quota.state === 'waiting') {
    if (quota.waiting_on === 'external_evidence') {
      const monitor = selected !== null && selected.task_class === 'continuous_monitor' ? selected : null;
      return run(
        'waiting',
        'external_evidence_observe',
        monitor === null
          ? 'waiting on external evidence: one read-only observation (or a compact blocker) before a quiet no-op'
          : `monitor ${monitor.todo_id} is due: one read-only poll for external evidence`,
        monitor,
        { decision: 'observe', recommended_mode: 'external_evidence_observe_or_blocker' },
      );
    }
    return quietWait('waiting', 'quiet_wait', quota.reason);
  }

  // Terminal frontier: no open agent work and nothing to resume (a waiting goal still observes first).
  if (terminal) {
    return {
      ...quietWait(
        'terminal_no_followup',
        'terminal_no_followup',
        'every agent todo is done and none has a follow-up; add a todo to continue the goal',
      ),
      scheduler: { action: 'stop', cadence_class: 'terminal', next_eligible_at: null },
      recommended_mode: 'terminal',
    };
  }

  // quota.state === 'eligible' from here. An out-of-date prompt is named before unsound records (the original's order).
  if (upgrade) return promptUpgrade('eligible', goal.goalId);
  if (!context.statusHealthOk)
    return quietWait(
      'eligible',
      'quota_skip',
      context.todoContract.length > 0
        ? `the goal's todo contract is broken (${context.todoContract[0]?.code ?? ''}: ${context.todoContract[0]?.message ?? ''}); repair the todo metadata, then automatic compute resumes`
        : "the goal's run records are not sound (an agent lane's run artifacts are missing); skip automatic compute",
      { quiet_noop_allowed: false },
    );
  if (context.projectionGapUnbacked)
    return run(
      'eligible',
      'state_projection_gap_repair',
      'active state has actionable Next Action / gate prose but no open User Todo or Agent Todo projection',
      null,
      { decision: 'self_repair', recommended_mode: 'repair_state_projection_gap' },
    );
  if (selected === null) {
    if (successor !== null)
      return run(
        'eligible',
        'successor_replan_required',
        `${successor.selection_reason}: replan it into runnable work`,
        successor,
      );
    const notDue = summary.excluded.filter(
      (e) => e.reason === 'monitor_not_due' || e.reason === 'monitor_missing_capability',
    );
    if (notDue.length > 0 && notDue.length === summary.open_agent_todo_count)
      return quietWait(
        'eligible',
        'monitor_quiet_skip',
        `only monitors remain and none is due (${notDue.map((e) => e.todo_id).join(', ')})`,
      );
    // The original's first executable todo (its selection ignores the gate metadata our selection reads) is
    // what the answer names then: say so rather than "no todo is runnable" beside a selected todo.
    return run(
      'eligible',
      'normal_run',
      firstOpen !== null
        ? `${quota.reason}; ${firstOpen.todo_id} is this agent's first executable todo`
        : `${quota.reason}; no agent todo is runnable for this agent: advance the goal's Next Action or write the next todos`,
      null,
    );
  }

  const missing = selected.required_capabilities.filter((c) => !(options.availableCapabilities ?? []).includes(c));
  if (missing.length > 0) {
    return {
      ...userAction(
        'eligible',
        'capability_gate_blocked',
        `todo ${selected.todo_id} needs ${missing.join(', ')}, which this agent did not declare (--available-capability)`,
        [`give the agent ${missing.join(', ')} or let another agent take ${selected.todo_id}`],
      ),
      mode: 'blocked',
      selected,
    };
  }
  if (selected.task_class === 'continuous_monitor') {
    return run(
      'eligible',
      'external_evidence_observe',
      `monitor ${selected.todo_id} is due: one read-only poll`,
      selected,
    );
  }
  const gatesForMe = [...new Set([...summary.blocking_gate_ids, ...summary.lane_gate_ids])];
  if (gatesForMe.length > 0) {
    return run(
      'eligible',
      'scoped_user_gate_fallback',
      `user gate ${gatesForMe.join(', ')} holds back part of the work; run ${selected.todo_id}, which it does not block`,
      selected,
      {
        notify: true,
        user_actions: gateActions(selection, gatesForMe),
        safe_bypass_kind: 'scoped_user_gate_fallback',
      },
    );
  }
  const action =
    compactOrchestrationPolicy(goal.goal['spawn_policy']).mode === 'multi_subagent'
      ? 'coordinate_task_bundle'
      : 'normal_run';
  return run(
    'eligible',
    action,
    `${quota.reason}; selected ${selected.todo_id} (${selected.selection_reason})`,
    selected,
  );
}

/** The settlement plan's spend: bound like the turn, with the turn's usage (the heartbeat prompt's spend step). */
export function spendCommand(
  goalId: string,
  agentId: string | null,
  todoId: string | null,
  replanId: string | null,
): string {
  const parts = ['loopx quota spend-slot', `--goal-id ${goalId}`, '--slots 1', '--source heartbeat', '--execute'];
  if (todoId !== null) parts.push(`--todo-id ${todoId}`);
  else if (replanId !== null) parts.push(`--replan-obligation-id ${replanId}`);
  parts.push(`--turn-instance-id ${TURN_ID_PLACEHOLDER}`);
  if (agentId !== null) parts.push(`--agent-id ${agentId}`);
  // The turn's usage, as the heartbeat prompt's spend step asks for it (or --usage-unknown).
  parts.push(SPEND_USAGE_FLAGS);
  return parts.join(' ');
}

function assemble(
  goal: QuotaGoal,
  agentId: string | null,
  quota: QuotaStatus,
  outcome: Outcome,
  selection: SelectionResult | null,
  options: DecisionOptions,
  generatedAt: string,
  context: DecisionContext,
): ShouldRunDecision {
  const delivery = outcome.should_run;
  const firstExecutable = selection?.firstExecutable ?? null;
  const todoId = outcome.selected?.todo_id ?? null;
  const replan = outcome.replan ?? null;
  const replanId = replan?.obligation_id ?? null;
  const identity =
    delivery && agentId !== null && options.turnInstanceId !== undefined
      ? settlementIdentity({
          goalId: goal.goalId,
          agentId,
          turnInstanceId: options.turnInstanceId,
          todoId,
          replanObligationId: replanId,
        })
      : null;
  const settlementPlan = delivery ? [spendCommand(goal.goalId, agentId, todoId, replanId)] : [];
  const decision: ShouldRunDecision = {
    // The original's `ok`: sound records, or a repair the agent may run (a self-repair answers ok).
    ok: context.statusHealthOk || outcome.decision === 'self_repair',
    status: context.attention.status,
    status_health_ok: context.statusHealthOk,
    todo_contract_errors: [...context.todoContract],
    goal_id: goal.goalId,
    agent_id: agentId,
    generated_at: generatedAt,
    should_run: outcome.should_run,
    decision: outcome.decision,
    state: outcome.state,
    effective_action: outcome.effective_action,
    reason: outcome.reason,
    pause_cause: null,
    quota,
    // LoopX names the todo only to a named agent; an unscoped heartbeat reads the summary. Without a todo of its own
    // the decision names the first executable one, else the due monitor (the original's work-lane selected todo).
    selected_todo:
      agentId === null || replan !== null ? null : (outcome.selected ?? firstExecutable ?? selection?.selected ?? null),
    agent_todo_summary: { first_executable_items: firstExecutable === null ? [] : [firstExecutable] },
    next_action_projection_warning: context.nextActionWarning,
    safe_bypass_allowed: quota.safe_bypass_allowed || outcome.safe_bypass_kind !== null,
    safe_bypass_kind: outcome.safe_bypass_kind,
    permissions: { ...NO_PERMISSIONS, normal_delivery_allowed: quota.state === 'eligible' && replan === null },
    execution_obligation: { must_attempt_work: delivery, delivery_allowed: delivery },
    interaction_contract: {
      mode: outcome.mode,
      user_channel: {
        notify: outcome.notify ? 'NOTIFY' : 'DONT_NOTIFY',
        action_required: outcome.user_actions.length > 0,
        actions: outcome.user_actions,
      },
      agent_channel: {
        must_attempt: delivery,
        delivery_allowed: delivery,
        quiet_noop_allowed: outcome.quiet_noop_allowed,
        primary_action: outcome.effective_action,
      },
      cli_channel: {
        next_cli_actions:
          replan !== null
            ? [`replan (${replan.guidance_actions.join(', ')}), then record the result: ${replan.discharge_command}`]
            : delivery && todoId !== null
              ? [`work on ${todoId}, validate, record it with loopx refresh-state, then spend`]
              : [],
        settlement_plan: settlementPlan,
        spend_after_validation: delivery,
      },
    },
    scheduler_hint: outcome.scheduler,
    heartbeat_recommendation: { recommended_mode: outcome.recommended_mode },
    route: 'blocked',
    settlement_identity: identity,
  };
  decision.route = planRoute({
    should_run: decision.should_run,
    delivery_allowed: delivery,
    must_attempt: delivery,
    effective_action: decision.effective_action,
    user_action_required: decision.interaction_contract.user_channel.action_required,
    quiet_noop_allowed: outcome.quiet_noop_allowed,
  });
  if (selection !== null) decision.selection = selection.summary;
  if (replan !== null) decision.replan_obligation = replan;
  if (outcome.effective_action === 'capability_gate_blocked' && outcome.selected !== null) {
    const required = outcome.selected.required_capabilities;
    decision.capability_gate = {
      todo_id: outcome.selected.todo_id,
      required,
      missing: required.filter((c) => !(options.availableCapabilities ?? []).includes(c)),
    };
  }
  return decision;
}

/** The canonical paused contract: nothing may run, nothing is owed, the scheduler stops until resumed. */
function pausedContract(
  goal: QuotaGoal,
  agentId: string | null,
  quota: QuotaStatus,
  generatedAt: string,
  context: DecisionContext,
): ShouldRunDecision {
  return {
    ok: context.statusHealthOk,
    status: context.attention.status,
    status_health_ok: context.statusHealthOk,
    todo_contract_errors: [...context.todoContract],
    goal_id: goal.goalId,
    agent_id: agentId,
    generated_at: generatedAt,
    should_run: false,
    decision: 'skip',
    state: 'paused',
    effective_action: 'quota_skip',
    reason: quota.reason,
    pause_cause: quota.pause_cause,
    // Nothing may be spent while paused, but the slots already spent in the window still show, as in the
    // original (its quota_status keeps the window's runtime spend count whatever the pause cause).
    quota: { ...quota, remaining_slots: 0 },
    selected_todo: null,
    agent_todo_summary: { first_executable_items: [] },
    next_action_projection_warning: null,
    safe_bypass_allowed: false,
    safe_bypass_kind: null,
    permissions: { ...NO_PERMISSIONS },
    execution_obligation: { must_attempt_work: false, delivery_allowed: false },
    interaction_contract: {
      mode: 'paused',
      user_channel: { notify: 'DONT_NOTIFY', action_required: false, actions: [] },
      agent_channel: {
        must_attempt: false,
        delivery_allowed: false,
        quiet_noop_allowed: true,
        primary_action: 'quota_skip',
      },
      cli_channel: { next_cli_actions: [], settlement_plan: [], spend_after_validation: false },
    },
    scheduler_hint: { action: 'stop_until_explicit_resume', cadence_class: 'paused', next_eligible_at: null },
    heartbeat_recommendation: { recommended_mode: 'quota_paused' },
    route: 'wait',
    settlement_identity: null,
  };
}

function goalNotFound(goalId: string, agentId: string | null, generatedAt: string): ShouldRunDecision {
  return {
    ok: false,
    status: 'goal_not_found',
    status_health_ok: false,
    goal_id: goalId,
    agent_id: agentId,
    generated_at: generatedAt,
    should_run: false,
    decision: 'skip',
    state: 'unknown',
    effective_action: 'quota_skip',
    reason: `goal '${goalId}' is not in the quota plan (registry); check --goal-id`,
    pause_cause: null,
    quota: null,
    selected_todo: null,
    agent_todo_summary: { first_executable_items: [] },
    next_action_projection_warning: null,
    safe_bypass_allowed: false,
    safe_bypass_kind: null,
    permissions: { ...NO_PERMISSIONS },
    execution_obligation: { must_attempt_work: false, delivery_allowed: false },
    interaction_contract: {
      mode: 'blocked',
      user_channel: {
        notify: 'NOTIFY',
        action_required: true,
        actions: [`register goal '${goalId}' or fix --goal-id`],
      },
      agent_channel: {
        must_attempt: false,
        delivery_allowed: false,
        quiet_noop_allowed: false,
        primary_action: 'quota_skip',
      },
      cli_channel: { next_cli_actions: [], settlement_plan: [], spend_after_validation: false },
    },
    scheduler_hint: { action: 'stop_until_explicit_resume', cadence_class: 'unknown', next_eligible_at: null },
    heartbeat_recommendation: { recommended_mode: 'goal_not_found' },
    route: 'user_action_required',
    settlement_identity: null,
  };
}

/**
 * The answer when no decision can be made (LoopX's refusal payload): an unknown goal
 * (`goal_not_found`, state unknown) or an agent that may not ask (`quota_identity_precondition_failed`,
 * state blocked_health, with the identity error's code and details). No action, quota or bypass is
 * named, so nothing can be mistaken for permission; `ok` is false and the CLI exits 1.
 */
export const ShouldRunRefusalSchema = z.object({
  ok: z.literal(false),
  status: z.enum(['goal_not_found', 'quota_identity_precondition_failed']),
  goal_id: z.string(),
  agent_id: z.string().nullable(),
  should_run: z.literal(false),
  decision: z.literal('skip'),
  state: z.enum(['unknown', 'blocked_health']),
  reason: z.string(),
  recommended_action: z.string(),
  error_code: z.string().optional(),
  error_details: z.record(z.string(), z.unknown()).optional(),
});
export type ShouldRunRefusal = z.infer<typeof ShouldRunRefusalSchema>;

export function shouldRunRefusal(
  notFound: ShouldRunDecision | null,
  identity?: { goalId: string; agentId: string | null; error: LoopxError },
): ShouldRunRefusal {
  if (identity !== undefined)
    return {
      ok: false,
      status: 'quota_identity_precondition_failed',
      goal_id: identity.goalId,
      agent_id: identity.agentId,
      should_run: false,
      decision: 'skip',
      state: 'blocked_health',
      reason: identity.error.message,
      recommended_action: `register the agent on goal '${identity.goalId}' or pass a registered --agent-id`,
      error_code: identity.error.code,
      error_details: { ...identity.error.details },
    };
  return {
    ok: false,
    status: 'goal_not_found',
    goal_id: notFound?.goal_id ?? '',
    agent_id: notFound?.agent_id ?? null,
    should_run: false,
    decision: 'skip',
    state: 'unknown',
    reason: notFound?.reason ?? 'the goal is not in the registry',
    recommended_action: 'run `loopx registry` and connect or sync the goal before spending compute',
  };
}

/** Open user gates of a goal with several registered agents that name neither `blocks_agent` nor `global_gate=true`. */
function unscopedMultiAgentGates(doc: StateDocument, roster: readonly string[]): string[] {
  if (roster.length <= 1) return [];
  return doc.todos
    .filter(
      (t) =>
        t.role === 'user' &&
        t.meta['task_class'] === 'user_gate' &&
        (t.status === 'open' || t.status === 'blocked') &&
        (t.meta['blocks_agent'] ?? '') === '' &&
        !metaFlag(t.meta['global_gate']),
    )
    .map((t) => t.todoId);
}

/**
 * Nothing open in the asking agent's scope (the original's scoped todo summaries, `open_count` 0): no open agent
 * todo but those claimed by or excluding another agent's lane, no open user todo but those scoped to another agent.
 */
function nothingOpenInScope(doc: StateDocument, selection: SelectionResult, agentId: string | null): boolean {
  const outOfScope = selection.summary.excluded.filter(
    (e) => e.reason === 'claimed_by_other_agent' || e.reason === 'excluded_agent',
  ).length;
  if (selection.summary.open_agent_todo_count - outOfScope > 0) return false;
  const other = (value: string | undefined): boolean =>
    agentId !== null && value !== undefined && value !== '' && value !== agentId;
  return !doc.todos.some(
    (t) =>
      t.role === 'user' &&
      t.status !== 'done' &&
      t.status !== 'deferred' &&
      !other(t.meta['blocks_agent']) &&
      !other(t.meta['bound_agent']),
  );
}
