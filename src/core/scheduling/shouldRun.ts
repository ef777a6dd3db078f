import { registeredAgentsForGoal, requireRegisteredAgent } from '../registry/agentIds';
import type { GoalRef } from '../registry/goalRef';
import { isoSeconds, type Clock } from '../clock';
import { errorMessage } from '../errors';
import { goalAttention } from '../todo/attention';
import type { StateFileSnapshot } from '../state/stateFile';
import { GoalLoader, type LoadOptions } from '../goal/loader';
import type { GoalSnapshot } from '../goal/snapshot';
import { todoContractDiagnostics } from '../todo/contract';
import { quotaConfigOf } from '../quota/goal';
import { computeQuotaStatus, focusMarkerOf, goalStopped } from '../quota/state';
import { selectTodo, type SelectionResult } from '../todo/runnable';
import { replanObligationFromRuns } from './replanObligation';
import { goalFrontier } from './goalFrontier';
import type { DecisionOptions, ShouldRunDecision } from './decisionContract';
import { admissionChecked, decisionRuns, reservedBesides } from './decisionQuota';
import {
  agentScopedGateOverride,
  applyGuards,
  nothingOpenInScope,
  openUserGatesInScope,
  scopedUserGateFallback,
  unscopedMultiAgentGates,
} from './outcomeGuards';
import { assemble, pausedContract } from './decisionAssembly';

/**
 * `quota should-run` (docs/quota.md, docs/turns.md): one read-only decision per turn. Order:
 *   1. goal lookup, by the operation (missing → `goalNotFoundDecision`: ok=false, state unknown);
 *   2. the agent must be registered on the goal's roster (codes `quota_agent_*`);
 *   3. hard pause short-circuit (owner-stopped or compute 0): the canonical paused contract,
 *      returned before any todo is read, with every permission false;
 *   4. quota state (quota/state.ts) with goal health = the state file can be read;
 *   5. todo selection (todo/runnable.ts) and the guards that apply here, each overriding the earlier ones:
 *      capability gate, prompt upgrade, autonomous replan obligation (replanObligation.ts: two stalled
 *      turns on the lane → `autonomous_replan_required`), terminal no-follow-up frontier, orchestration contract
 *      (`coordinate_task_bundle`), due monitor (`external_evidence_observe`), monitor-only lane
 *      (`monitor_quiet_skip`), partial user gate (`scoped_user_gate_fallback`, safe bypass).
 * Unlike the original, the guard never writes (no receipt, no stall record): it is a pure read.
 *
 * This file holds the decision itself; beside it: its contract (`decisionContract.ts`), the guards that pick its
 * outcome (`outcomeGuards.ts`), the contract's assembly from the outcome (`decisionAssembly.ts`) and its quota
 * read model (`decisionQuota.ts`).
 */

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
export async function shouldRunOnGoal(goal: GoalRef, options: GoalDecisionOptions): Promise<ShouldRunDecision> {
  const requested = options.agentId ?? null;
  if (requested !== null) requireRegisteredAgent(goal.rawEntry, requested, { field: 'agent_id', codePrefix: 'quota_' });
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
      : requireRegisteredAgent(goal.rawEntry, requested, { field: 'agent_id', codePrefix: 'quota_' });
  const generatedAt = isoSeconds(now);
  const runs = decisionRuns(snapshot, agentId);
  const view = snapshot.quota;
  const stopped = goalStopped(goal.rawEntry);
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
  const attention = goalAttention({ goal: goal.rawEntry, latestRun: latest, doc: stateFile?.document ?? null });
  if (attention.severity === 'high' && health.ok)
    health = {
      ok: false,
      reason: `health or contract blocker must clear before compute is spent (${attention.status})`,
    };
  // LoopX's scoped contract health: its todos' metadata routable.
  const roster = registeredAgentsForGoal(goal.rawEntry);
  // An open user gate whose scope is ambiguous on a multi-agent goal is repaired by the agent (the
  // original's `todo_decision_scope_projection_repair`): its diagnostics fail the goal's health, and the repair
  // answers ok (an out-of-date prompt, which disables the repair, leaves ok false: kit seed 6 quota-012).
  const unscopedGates = stateFile === null ? [] : unscopedMultiAgentGates(stateFile.document, roster);
  const todoContract = stateFile === null ? [] : todoContractDiagnostics(stateFile.document, roster);
  // A run record whose artifacts are gone does not fail it (an agent lane's included, whatever lane asks: kit seeds 8
  // quota-026, 9 quota-017/-020); a latest status run without them is the attention's severity high (blocked_health).
  const statusHealthOk = todoContract.length === 0;
  const facts = { stopped, health, waitingOn: attention.waiting_on, focusMarker: focusMarkerOf(goal.rawEntry) };
  const quota = admissionChecked(
    goal,
    agentId,
    computeQuotaStatus(quotaConfigOf(goal), view.ledger, reservedBesides(view, options.admittedEffectId), facts),
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
