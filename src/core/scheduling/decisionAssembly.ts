import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from '../quota/goal';
import { settlementIdentity } from '../quota/identity';
import { SPEND_USAGE_FLAGS, TURN_ID_PLACEHOLDER } from '../quota/spend';
import type { QuotaStatus } from '../quota/state';
import type { LoopxError } from '../errors';
import type { TodoContractDiagnostic } from '../todo/contract';
import type { GoalAttention } from '../todo/attention';
import { planRoute } from './route';
import type { SelectionResult } from '../todo/runnable';
import type { DecisionOptions, ShouldRunDecision, ShouldRunRefusal } from './decisionContract';
import type { Outcome } from './outcomeGuards';

/** Contract assembly: the decision's answer (or the paused, not-found and refusal answers) from its outcome. */

const NO_PERMISSIONS = {
  normal_delivery_allowed: false,
  recovery_allowed: false,
  self_repair_allowed: false,
  capability_repair_allowed: false,
  workspace_repair_allowed: false,
};

export interface DecisionContext {
  attention: GoalAttention;
  statusHealthOk: boolean;
  todoContract: readonly TodoContractDiagnostic[];
  nextActionWarning: ShouldRunDecision['next_action_projection_warning'];
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

export function assemble(
  goal: Pick<GoalRef, QuotaRefKeys>,
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
export function pausedContract(
  goal: Pick<GoalRef, QuotaRefKeys>,
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

export function goalNotFoundDecision(goalId: string, agentId: string | null, generatedAt: string): ShouldRunDecision {
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
