import { mergeGateLaneOf } from '../lanes/gate';
import { compactOrchestrationPolicy } from '../registry/orchestration';
import { TERMINAL_STATUSES, type StateDocument } from '../state/document';
import { metaFlag } from '../state/gates';
import type { TodoContractDiagnostic } from '../todo/contract';
import type { GoalRef } from '../registry/goalRef';
import type { QuotaRefKeys } from '../quota/goal';
import { asRecord, type QuotaStatus } from '../quota/state';
import type { GoalAttention } from '../todo/attention';
import type { GoalFrontier } from './goalFrontier';
import type { ReplanObligation } from './replanObligation';
import type { SelectedTodo, SelectionResult } from '../todo/runnable';
import type { DecisionOptions, DecisionWord, ShouldRunDecision } from './decisionContract';

/**
 * Route planning: the guards, in the original's order, that turn the quota state and the todo selection into
 * the decision's outcome (run, quiet wait, user action), before the contract is assembled from it.
 */

export interface Outcome {
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
 * The original's scoped user-gate fallback (`apply_scoped_user_gate_fallback_projection`), applied last, whatever
 * the quota state: beside an open user gate in this agent's scope, the first executable todo no gate holds runs
 * when a gate holds another of its candidates or the quota allows a safe bypass. It keeps a named decision and
 * action (an out-of-date prompt stays `automation_prompt_upgrade`), turns a `skip` into
 * `safe_bypass_user_gate_fallback`, and never overrides a replan. A run the slots do not allow is still refused
 * by the turn's reservation (docs/compatibility.md, "Kit: quota").
 */
export function scopedUserGateFallback(
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
export function openUserGatesInScope(doc: StateDocument, agentId: string | null): string[] {
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
 * Open user gates put the whole goal at the operator gate; when every one of them names another agent's
 * lane (`blocks_agent`) or is a merge-lane gate, the asking agent is not held: its quota state is the one the slots give.
 */
export function agentScopedGateOverride(
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
function promptUpgradeRequired(goal: Pick<GoalRef, QuotaRefKeys>, agentId: string | null): boolean {
  if (agentId !== null) return false;
  const coordination = asRecord(goal.rawEntry['coordination']);
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

export interface GuardContext {
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

export function applyGuards(
  goal: Pick<GoalRef, QuotaRefKeys>,
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
    compactOrchestrationPolicy(goal.rawEntry['spawn_policy']).mode === 'multi_subagent'
      ? 'coordinate_task_bundle'
      : 'normal_run';
  return run(
    'eligible',
    action,
    `${quota.reason}; selected ${selected.todo_id} (${selected.selection_reason})`,
    selected,
  );
}

/** Open user gates of a goal with several registered agents that name neither `blocks_agent` nor `global_gate=true`. */
export function unscopedMultiAgentGates(doc: StateDocument, roster: readonly string[]): string[] {
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
export function nothingOpenInScope(doc: StateDocument, selection: SelectionResult, agentId: string | null): boolean {
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
