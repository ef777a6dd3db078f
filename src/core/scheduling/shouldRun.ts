import { z } from 'zod';
import { normalizeAgentId, requireRegisteredAgent } from '../registry/agentIds';
import { compactOrchestrationPolicy } from '../registry/orchestration';
import { isoSeconds, type Clock } from '../clock';
import { errorMessage, LoopxError } from '../errors';
import { latestStatusRun, type RunIndexRead } from '../runtime/runIndex';
import { readStateFile, type StateFileSnapshot } from '../state/stateFile';
import { findQuotaGoal, quotaGoalFromRegistry, type QuotaGoal } from '../quota/goal';
import { settlementIdentity } from '../quota/identity';
import type { IndexDigest } from '../quota/ledger';
import { readQuotaView } from '../quota/reservations';
import {
  SelectedTodoSchema,
  selectTodo,
  SelectionSummarySchema,
  type SelectedTodo,
  type SelectionResult,
} from './todoSelection';
import {
  asRecord,
  computeQuotaStatus,
  deriveWaitingOn,
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
 *      capability gate, terminal no-follow-up frontier, orchestration contract
 *      (`coordinate_task_bundle`), due monitor (`external_evidence_observe`), monitor-only lane
 *      (`monitor_quiet_skip`), partial user gate (`scoped_user_gate_fallback`, safe bypass).
 * Unlike the original, the guard never writes (no receipt, no stall record): it is a pure read.
 */

export const ROUTES = [
  'contract_error',
  'blocked',
  'replan_required',
  'repair_required',
  'ready_for_host',
  'user_action_required',
  'wait',
] as const;
export const RouteSchema = z.enum(ROUTES);
export type Route = z.infer<typeof RouteSchema>;

export const REPLAN_ACTIONS: ReadonlySet<string> = new Set([
  'autonomous_replan',
  'autonomous_replan_required',
  'successor_replan_required',
]);
export const REPAIR_ACTIONS: ReadonlySet<string> = new Set([
  'capability_repair',
  'projection_repair',
  'self_repair',
  'state_projection_repair',
  'workspace_repair',
]);

export interface RouteInput {
  should_run: boolean;
  delivery_allowed: boolean;
  must_attempt: boolean;
  effective_action: string;
  user_action_required: boolean;
  quiet_noop_allowed: boolean;
  /** Problems found by the caller (envelope, signature, scheduler context, session binding): any → contract_error. */
  contract_problems?: readonly string[];
}

/** The plan route (docs/turns.md), evaluated in the table's order. */
export function planRoute(input: RouteInput): Route {
  if ((input.contract_problems ?? []).length > 0) return 'contract_error';
  if (input.should_run) {
    if (!input.delivery_allowed || !input.must_attempt) return 'blocked';
    if (REPLAN_ACTIONS.has(input.effective_action)) return 'replan_required';
    const action = input.effective_action;
    if (REPAIR_ACTIONS.has(action) || action.endsWith('_repair') || action.endsWith('_repair_required'))
      return 'repair_required';
    // A visible user action does not stop a run that is allowed (safe bypass).
    return 'ready_for_host';
  }
  if (input.user_action_required) return 'user_action_required';
  if (input.quiet_noop_allowed) return 'wait';
  return 'blocked';
}

export const DecisionStateSchema = z.union([
  QuotaStatusSchema.shape.state,
  z.literal('terminal_no_followup'),
  z.literal('unknown'),
]);

const PermissionsSchema = z.object({
  normal_delivery_allowed: z.boolean(),
  recovery_allowed: z.boolean(),
  self_repair_allowed: z.boolean(),
  capability_repair_allowed: z.boolean(),
  workspace_repair_allowed: z.boolean(),
});

export const ShouldRunDecisionSchema = z.object({
  ok: z.boolean(),
  status: z.enum(['decided', 'goal_not_found']),
  goal_id: z.string(),
  agent_id: z.string().nullable(),
  generated_at: z.string(),
  should_run: z.boolean(),
  decision: z.enum(['run', 'skip']),
  state: DecisionStateSchema,
  effective_action: z.string(),
  reason: z.string(),
  pause_cause: z.string().nullable(),
  quota: QuotaStatusSchema.nullable(),
  selected_todo: SelectedTodoSchema.nullable(),
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
});
export type ShouldRunDecision = z.infer<typeof ShouldRunDecisionSchema>;

export interface ShouldRunOptions {
  registryPath: string;
  goalId: string;
  agentId?: string | null | undefined;
  clock: Clock;
  runtimeRootOverride?: string | undefined;
  homeDir?: string | undefined;
  /** Capabilities the agent declared (`--available-capability`). */
  availableCapabilities?: readonly string[];
  /** `--turn-instance-id`: with an agent, the decision names the settlement identity of the turn. */
  turnInstanceId?: string | undefined;
  /** The goal as the caller already resolved it (its goal handle): the registry is not read again. */
  goal?: QuotaGoal | undefined;
  /** The goal's state file as the caller already read it: not read again. */
  state?: StateFileSnapshot | undefined;
}

const NO_PERMISSIONS = {
  normal_delivery_allowed: false,
  recovery_allowed: false,
  self_repair_allowed: false,
  capability_repair_allowed: false,
  workspace_repair_allowed: false,
};

interface Outcome {
  should_run: boolean;
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
}

export async function shouldRun(options: ShouldRunOptions): Promise<ShouldRunDecision> {
  const goal = options.goal ?? (await findQuotaGoal(options));
  const generatedAt = isoSeconds(options.clock.now());
  const requested = options.agentId ?? null;
  if (goal === null)
    return goalNotFound(
      options.goalId,
      requested === null ? null : (normalizeAgentId(requested) ?? requested),
      generatedAt,
    );
  const agentId =
    requested === null
      ? null
      : requireRegisteredAgent(goal.goal, requested, { field: 'agent_id', codePrefix: 'quota_' });
  return decide(goal, agentId, options, generatedAt);
}

async function decide(
  goal: QuotaGoal,
  agentId: string | null,
  options: ShouldRunOptions,
  generatedAt: string,
): Promise<ShouldRunDecision> {
  const view = await readQuotaView(goal, options.clock);
  const stopped = goalStopped(goal.goal);
  const latest = latestStatusRun(view.rows);
  const facts = {
    stopped,
    health: { ok: true, reason: '' },
    waitingOn: deriveWaitingOn(goal.goal, latest === null ? null : asRecord(latest)),
    focusMarker: focusMarkerOf(goal.goal),
  };
  const preliminary = computeQuotaStatus(goal.config, view.ledger, view.reserved, facts);
  if (preliminary.state === 'paused') return pausedContract(goal, agentId, preliminary, generatedAt);

  let selection: SelectionResult | null = null;
  if (goal.statePath === null) {
    facts.health = {
      ok: false,
      reason: `goal '${goal.goalId}' has no state file LoopX can find; set state_file (and an absolute repo) in the registry`,
    };
  } else {
    try {
      const snapshot = options.state ?? (await readStateFile(goal.statePath));
      selection = selectTodo({
        doc: snapshot.document,
        agentId,
        availableCapabilities: options.availableCapabilities ?? [],
        now: options.clock.now().getTime(),
      });
    } catch (error) {
      facts.health = { ok: false, reason: `the goal's state file cannot be read: ${errorMessage(error)}` };
    }
  }
  const quota = computeQuotaStatus(goal.config, view.ledger, view.reserved, facts);
  const outcome = applyGuards(goal, quota, selection, options);
  return assemble(goal, agentId, quota, outcome, selection, options, generatedAt);
}

function quietWait(state: Outcome['state'], action: string, reason: string, extra: Partial<Outcome> = {}): Outcome {
  return {
    should_run: false,
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
  selected: SelectedTodo,
  extra: Partial<Outcome> = {},
): Outcome {
  return {
    should_run: true,
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

function applyGuards(
  goal: QuotaGoal,
  quota: QuotaStatus,
  selection: SelectionResult | null,
  options: ShouldRunOptions,
): Outcome {
  switch (quota.state) {
    case 'blocked_health':
      return userAction('blocked_health', 'health_blocked', quota.reason, [quota.reason], { mode: 'blocked' });
    case 'operator_gate':
      return userAction(
        'operator_gate',
        'operator_gate_wait',
        `${quota.reason}; the controller must act before normal delivery resumes`,
        [`answer the goal's open question (waiting_on ${quota.waiting_on})`],
        { safe_bypass_kind: 'operator_gate' },
      );
    case 'focus_wait':
      return quietWait('focus_wait', 'focus_wait', quota.reason);
    case 'throttled':
      return quietWait('throttled', 'quota_skip', quota.reason, {
        scheduler: { action: 'wait_until', cadence_class: 'throttled', next_eligible_at: quota.next_slot_frees_at },
        recommended_mode: 'quota_throttled',
      });
    default:
      break;
  }
  if (selection === null) return quietWait(quota.state, 'no_runnable_todo', 'no state file was read');
  const { selected, successor, summary } = selection;

  // Terminal frontier: no open agent work and nothing to resume.
  if (summary.open_agent_todo_count === 0 && successor === null && selection.gates.open_gates.length === 0) {
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

  if (quota.state === 'waiting') {
    if (selected !== null && selected.task_class === 'continuous_monitor' && quota.waiting_on === 'external_evidence') {
      return run(
        'waiting',
        'external_evidence_observe',
        `monitor ${selected.todo_id} is due: one read-only poll for external evidence`,
        selected,
      );
    }
    return quietWait(
      'waiting',
      quota.waiting_on === 'external_evidence' ? 'external_evidence_wait' : 'quiet_wait',
      quota.reason,
    );
  }

  // quota.state === 'eligible' from here.
  if (selected === null) {
    if (successor !== null)
      return run(
        'eligible',
        'successor_replan_required',
        `${successor.selection_reason}: replan it into runnable work`,
        successor,
      );
    if (summary.blocking_gate_ids.length > 0) {
      return userAction(
        'eligible',
        'user_gate_wait',
        `every runnable todo for this agent waits on a user gate (${summary.blocking_gate_ids.join(', ')})`,
        gateActions(selection, summary.blocking_gate_ids),
      );
    }
    const notDue = summary.excluded.filter(
      (e) => e.reason === 'monitor_not_due' || e.reason === 'monitor_missing_capability',
    );
    if (notDue.length > 0)
      return quietWait(
        'eligible',
        'monitor_quiet_skip',
        `only monitors remain and none is due (${notDue.map((e) => e.todo_id).join(', ')})`,
      );
    const claimed = summary.excluded.filter(
      (e) => e.reason === 'claimed_by_other_agent' || e.reason === 'excluded_agent',
    );
    if (claimed.length > 0)
      return quietWait(
        'eligible',
        'peer_claims_wait',
        `the open todos are claimed by or reserved for other agents (${claimed.map((e) => e.todo_id).join(', ')})`,
      );
    return userAction(
      'eligible',
      'no_runnable_todo',
      'open agent todos exist but none is runnable (blocked or not work); update or unblock them',
      ['unblock or update the open agent todos'],
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

function spendCommand(goalId: string, agentId: string | null, todoId: string | null): string {
  const parts = ['loopx quota spend-slot', `--goal-id ${goalId}`, '--slots 1', '--source heartbeat', '--execute'];
  if (todoId !== null) parts.push(`--todo-id ${todoId}`);
  parts.push('--turn-instance-id "$LOOPX_TURN"');
  if (agentId !== null) parts.push(`--agent-id ${agentId}`);
  return parts.join(' ');
}

function assemble(
  goal: QuotaGoal,
  agentId: string | null,
  quota: QuotaStatus,
  outcome: Outcome,
  selection: SelectionResult | null,
  options: ShouldRunOptions,
  generatedAt: string,
): ShouldRunDecision {
  const delivery = outcome.should_run;
  const todoId = outcome.selected?.todo_id ?? null;
  const identity =
    delivery && agentId !== null && options.turnInstanceId !== undefined
      ? settlementIdentity({ goalId: goal.goalId, agentId, turnInstanceId: options.turnInstanceId, todoId })
      : null;
  const settlementPlan = delivery ? [spendCommand(goal.goalId, agentId, todoId)] : [];
  const decision: ShouldRunDecision = {
    ok: true,
    status: 'decided',
    goal_id: goal.goalId,
    agent_id: agentId,
    generated_at: generatedAt,
    should_run: outcome.should_run,
    decision: outcome.should_run ? 'run' : 'skip',
    state: outcome.state,
    effective_action: outcome.effective_action,
    reason: outcome.reason,
    pause_cause: null,
    quota,
    selected_todo: outcome.selected,
    safe_bypass_allowed: quota.safe_bypass_allowed || outcome.safe_bypass_kind !== null,
    safe_bypass_kind: outcome.safe_bypass_kind,
    permissions: { ...NO_PERMISSIONS, normal_delivery_allowed: quota.state === 'eligible' },
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
          delivery && todoId !== null
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
): ShouldRunDecision {
  return {
    ok: true,
    status: 'decided',
    goal_id: goal.goalId,
    agent_id: agentId,
    generated_at: generatedAt,
    should_run: false,
    decision: 'skip',
    state: 'paused',
    effective_action: 'quota_skip',
    reason: quota.reason,
    pause_cause: quota.pause_cause,
    quota,
    selected_todo: null,
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

/** The quota numbers of one goal for status views (tree items, status bar); numbers are numbers. */
export interface GoalQuotaSummary {
  goal_id: string;
  state: QuotaStatus['state'];
  reason: string;
  compute: number;
  window_hours: number;
  slot_minutes: number;
  allowed_slots: number;
  spent_slots: number;
  reserved_slots: number;
  remaining_slots: number;
  budgets: QuotaStatus['budgets'];
  warn: boolean;
  exceeded: boolean;
  next_slot_frees_at: string | null;
  config_warnings: QuotaStatus['config_warnings'];
}

export interface GoalQuotaSummaryOptions {
  registryPath: string;
  goalId: string;
  clock: Clock;
  runtimeRootOverride?: string | undefined;
  homeDir?: string | undefined;
  /** The registry document as the caller already read it from `registryPath`: not read again. */
  registry?: Record<string, unknown>;
  /** The goal as the caller already resolved it from the registry it read (see `quotaGoalFromEntry`); wins over `registry`. */
  goal?: QuotaGoal;
  /** The goal's run index as the caller already read it (null: it does not exist): not read again. */
  runIndex?: RunIndexRead | null;
  /** The digest of the goal's run index (persistent cache): wins over `runIndex`, nothing is read but reservations. */
  indexDigest?: IndexDigest;
}

/** Quota state and usage of a goal without reading its todos (cheap enough for every refresh). */
export async function goalQuotaSummary(options: GoalQuotaSummaryOptions): Promise<GoalQuotaSummary> {
  const goal =
    options.goal ??
    (options.registry === undefined ? await findQuotaGoal(options) : quotaGoalFromRegistry(options.registry, options));
  if (goal === null)
    throw new LoopxError('goal_not_found', `goal '${options.goalId}' is not in the registry ${options.registryPath}`, {
      goal_id: options.goalId,
    });
  const view = await readQuotaView(
    goal,
    options.clock,
    options.indexDigest !== undefined
      ? { facts: options.indexDigest.facts }
      : options.runIndex === undefined
        ? {}
        : { runIndex: options.runIndex },
  );
  const latest =
    options.indexDigest !== undefined
      ? options.indexDigest.has_latest
        ? { waiting_on: options.indexDigest.latest_waiting_on }
        : null
      : latestStatusRun(view.rows);
  const quota = computeQuotaStatus(goal.config, view.ledger, view.reserved, {
    stopped: goalStopped(goal.goal),
    health: { ok: true, reason: '' },
    waitingOn: deriveWaitingOn(goal.goal, latest === null ? null : asRecord(latest)),
    focusMarker: focusMarkerOf(goal.goal),
  });
  return {
    goal_id: goal.goalId,
    state: quota.state,
    reason: quota.reason,
    compute: quota.compute,
    window_hours: quota.window_hours,
    slot_minutes: quota.slot_minutes,
    allowed_slots: quota.allowed_slots,
    spent_slots: quota.spent_slots,
    reserved_slots: quota.reserved_slots,
    remaining_slots: quota.remaining_slots,
    budgets: quota.budgets,
    warn: quota.warn,
    exceeded: quota.exceeded,
    next_slot_frees_at: quota.next_slot_frees_at,
    config_warnings: quota.config_warnings,
  };
}
