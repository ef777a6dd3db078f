import assert from 'node:assert/strict';
import { isLoopxError } from '../../../src/core/errors';
import { planRoute } from '../../../src/core/scheduling/route';
import { budgetOf, loadTurnGoal, planGoalTurn, recentRuns } from '../../../src/core/turn/context';
import { TURN_PHASES } from '../../../src/core/protocol/contract';
import { loopDisposition } from '../../../src/core/turn/disposition';
import {
  lineageOf,
  planSession,
  planTurn,
  SESSION_BINDING_SCHEMA,
  turnKeyOf,
  type TurnPlanInputs,
} from '../../../src/core/turn/plan';
import { readStateFile } from '../../../src/core/state/stateFile';
import { removeTempDirs, clock, demo, goalOf, NOW } from './helpers';

after(removeTempDirs);

/** The real inputs of the demo goal's next turn for `demo`, to vary one field at a time. */
async function demoInputs(turnInstanceId = 'turn-1'): Promise<TurnPlanInputs> {
  const d = demo();
  const turnGoal = loadTurnGoal({ goal: goalOf(d.registryPath), agentId: 'demo', clock });
  const { decision } = await planGoalTurn(turnGoal, { clock, turnInstanceId });
  return {
    goalId: 'tidy-notes',
    agentId: 'demo',
    goal: turnGoal.goal.rawEntry,
    decision,
    doc: (await readStateFile(d.statePath)).document,
    runs: await recentRuns(turnGoal.goal),
    budget: budgetOf(decision.quota, decision.state),
    executor: { kind: 'demo', timeoutMinutes: 2 },
    executorProblem: null,
    validationCommand: ['node', 'scripts/check-notes.js'],
    validationProblem: null,
    inFlightTodoIds: new Set(),
    sessionBinding: null,
    turnInstanceId,
    generatedAt: NOW,
    now: Date.parse(NOW),
  };
}

function withDecision(
  inputs: TurnPlanInputs,
  changes: { should_run: boolean; effective_action: string; user_action?: boolean; quiet?: boolean },
): TurnPlanInputs {
  const route = planRoute({
    should_run: changes.should_run,
    delivery_allowed: changes.should_run,
    must_attempt: changes.should_run,
    effective_action: changes.effective_action,
    user_action_required: changes.user_action ?? false,
    quiet_noop_allowed: changes.quiet ?? false,
  });
  return {
    ...inputs,
    decision: {
      ...inputs.decision,
      should_run: changes.should_run,
      effective_action: changes.effective_action,
      route,
      selected_todo: changes.should_run ? inputs.decision.selected_todo : null,
    },
  };
}

describe('turn plan (spec §3.3, §4.1)', () => {
  it('case 25: a ready decision plans a host turn: route, session, 7 phases, receipt seed, settlement steps, no effects', async () => {
    const plan = planTurn(await demoInputs());
    assert.equal(plan.ok, true);
    assert.equal(plan.route, 'ready_for_host');
    assert.equal(plan.would_invoke_host, true);
    assert.equal(plan.host_invocation_allowed, false);
    assert.equal(plan.session.action, 'start_new');
    assert.deepEqual(plan.transaction, { status: 'planned', phases: [...TURN_PHASES] });
    assert.equal(plan.receipt_seed?.next_phase, 'host_execute');
    assert.deepEqual(
      plan.settlement_steps.map((s) => s.step_kind),
      ['validation', 'durable_writeback', 'quota_spend', 'terminal_closeout'],
    );
    assert.ok(plan.settlement_steps.every((s) => s.idempotency_key_ref === '$.identity.effect_id'));
    assert.deepEqual(plan.effects, {
      host_invoked: false,
      state_written: false,
      quota_spent: false,
      scheduler_acknowledged: false,
    });
    assert.equal(plan.selected_todo?.todo_id, 'todo_related');
    assert.equal(plan.settlement_identity?.effect_id, 'tidy-notes:demo:todo_related:turn-1');
    assert.equal(plan.host_request?.turn_key, plan.turn_key);
    assert.equal(plan.host_request?.identity.effect_id, 'tidy-notes:demo:todo_related:turn-1');
    assert.deepEqual(plan.host_request?.validation_command, ['node', 'scripts/check-notes.js']);
    // todo_links is claimed by codex-main: the plan says why demo does not take it.
    assert.ok(plan.skipped_todos.some((s) => s.todo_id === 'todo_links' && s.reason === 'claimed_by_other_agent'));
  });

  it('case 26: repair and replan actions route to repair_required / replan_required', async () => {
    const inputs = await demoInputs();
    assert.equal(
      planTurn(withDecision(inputs, { should_run: true, effective_action: 'capability_repair' })).route,
      'repair_required',
    );
    assert.equal(
      planTurn(withDecision(inputs, { should_run: true, effective_action: 'autonomous_replan' })).route,
      'replan_required',
    );
    assert.equal(
      planTurn(withDecision(inputs, { should_run: true, effective_action: 'successor_replan_required' })).route,
      'replan_required',
    );
    const plan = planTurn(inputs);
    assert.equal(plan.scheduler_owner, 'outer_controller');
    assert.equal(plan.execution_mode, 'isolated-headless');
  });

  it('case 27: should_run=false routes to user_action_required / wait / blocked, with no session and no transaction', async () => {
    const inputs = await demoInputs();
    const cases: [boolean, boolean, string][] = [
      [true, false, 'user_action_required'],
      [false, true, 'wait'],
      [false, false, 'blocked'],
    ];
    for (const [userAction, quiet, route] of cases) {
      const plan = planTurn(
        withDecision(inputs, { should_run: false, effective_action: 'quiet_wait', user_action: userAction, quiet }),
      );
      assert.equal(plan.route, route);
      assert.equal(plan.session.action, 'none');
      assert.deepEqual(plan.transaction, { status: 'not_applicable', phases: [] });
      assert.equal(plan.host_request, null);
      assert.equal(plan.settlement_identity, null);
    }
  });

  it('case 28: should_run with a visible user action still plans a host turn (and bug 6: the loop agrees)', async () => {
    const inputs = await demoInputs();
    // The demo's publish gate is visible to demo (scoped gate fallback) while todo_related runs.
    const plan = planTurn(inputs);
    assert.equal(plan.decision.notify, true);
    assert.equal(plan.route, 'ready_for_host');
    const disposition = loopDisposition(null, {
      goal_id: 'tidy-notes',
      agent_id: 'demo',
      route: plan.route,
      state: plan.decision.state,
    });
    assert.equal(disposition.disposition, 'run_now');
  });

  it('a missing executor or an invalid validator is a contract_error that invokes nothing', async () => {
    const inputs = await demoInputs();
    const noExecutor = planTurn({ ...inputs, executor: null, executorProblem: 'agent demo has no executor' });
    assert.equal(noExecutor.route, 'contract_error');
    assert.equal(noExecutor.ok, false);
    assert.equal(noExecutor.would_invoke_host, false);
    assert.deepEqual(noExecutor.contract_problems, ['agent demo has no executor']);
    const badValidator = planTurn({
      ...inputs,
      validationCommand: null,
      validationProblem: 'validation_command must be an argv',
    });
    assert.equal(badValidator.route, 'contract_error');
  });

  it('a todo another turn is working on is not selected twice', async () => {
    const inputs = await demoInputs();
    const other = planTurn({ ...inputs, inFlightTodoIds: new Set(['todo_related']) });
    assert.equal(other.selected_todo?.todo_id, 'todo_index');
    const none = planTurn({ ...inputs, inFlightTodoIds: new Set(['todo_related', 'todo_index']) });
    assert.equal(none.route, 'wait');
    assert.equal(none.decision.effective_action, 'peer_turn_in_flight');
    assert.ok(none.skipped_todos.some((s) => s.todo_id === 'todo_index' && s.reason === 'in_flight'));
  });

  it('case 30: a matching session binding resumes; a foreign one is rejected as identity_mismatch (contract_error)', async () => {
    const lineage = lineageOf('g', 'a', 'todo_x1', 'ready_for_host', 'normal_run');
    const binding = {
      schema_version: SESSION_BINDING_SCHEMA,
      goal_id: 'g',
      agent_id: 'a',
      todo_id: 'todo_x1',
      session_id: 's-1',
      updated_at: NOW,
    };
    assert.deepEqual(planSession(lineage, true, binding), { action: 'resume', session_id: 's-1', reason: null });
    assert.deepEqual(planSession(lineage, true, { ...binding, goal_id: 'other' }), {
      action: 'reject',
      session_id: null,
      reason: 'identity_mismatch',
    });
    assert.deepEqual(planSession(lineage, true, null), { action: 'start_new', session_id: null, reason: null });
    assert.deepEqual(planSession(lineage, false, binding), { action: 'none', session_id: null, reason: null });
    assert.equal(planSession(lineage, true, { nope: true }).reason, 'invalid_session_binding');
    assert.equal(
      planSession(lineageOf('g', 'a', null, 'ready_for_host', 'normal_run'), true, null).reason,
      'missing_turn_lineage',
    );
    // A replan turn has no todo: the obligation it discharges is its binding, and it starts afresh.
    const replanLineage = lineageOf(
      'g',
      'a',
      null,
      'replan_required',
      'autonomous_replan_required',
      'replan-0123456789abcdef',
    );
    assert.deepEqual(planSession(replanLineage, true, binding), {
      action: 'start_new',
      session_id: null,
      reason: null,
    });
    // A todo turn's lineage (and so its turn key) is what it was before replan turns existed.
    assert.equal(Object.hasOwn(lineage, 'replan_obligation_id'), false);

    const inputs = await demoInputs();
    const resumed = planTurn({
      ...inputs,
      sessionBinding: { ...binding, goal_id: 'tidy-notes', agent_id: 'demo', todo_id: 'todo_related' },
    });
    assert.equal(resumed.session.action, 'resume');
    assert.deepEqual(resumed.host_request?.session, { action: 'resume', session_id: 's-1' });
    const foreign = planTurn({
      ...inputs,
      sessionBinding: { ...binding, goal_id: 'elsewhere', agent_id: 'demo', todo_id: 'todo_related' },
    });
    assert.equal(foreign.route, 'contract_error');
    assert.match(foreign.contract_problems.join(), /identity_mismatch/);
  });

  it('case 31: the turn key is stable per instance id, differs per todo and instance, and refuses bad instance ids', async () => {
    const key = (todo: string, turn: string): string =>
      turnKeyOf({
        lineage: lineageOf('g', 'a', todo, 'ready_for_host', 'normal_run'),
        host: 'codex',
        executionMode: 'isolated-headless',
        schedulerOwner: 'outer_controller',
        sessionAction: 'start_new',
        turnInstanceId: turn,
      });
    assert.equal(key('todo_a1', 'batch-42:turn-1'), key('todo_a1', 'batch-42:turn-1'));
    assert.notEqual(key('todo_a1', 'batch-42:turn-1'), key('todo_a1', 'batch-42:turn-2'));
    assert.notEqual(key('todo_a1', 'batch-42:turn-1'), key('todo_b1', 'batch-42:turn-1'));
    assert.match(key('todo_a1', 't'), /^sha256:[0-9a-f]{64}$/);
    for (const bad of ['', 'contains space', 'private/path', 'x'.repeat(129)]) {
      assert.throws(
        () => key('todo_a1', bad),
        (error: unknown) => isLoopxError(error, 'quota_turn_instance_id_invalid'),
      );
    }
    const a = planTurn(await demoInputs('same'));
    const b = planTurn(await demoInputs('same'));
    assert.equal(a.turn_key, b.turn_key);
    const other = planTurn({ ...(await demoInputs('same')), inFlightTodoIds: new Set(['todo_related']) });
    assert.notEqual(other.turn_key, a.turn_key);
    assert.notEqual(other.settlement_identity?.effect_id, a.settlement_identity?.effect_id);
  });
});

describe('loop dispositions (spec §4.3)', () => {
  const fresh = (route: Parameters<typeof loopDisposition>[1]['route'], state = 'eligible') => ({
    goal_id: 'g',
    agent_id: 'a',
    route,
    state,
  });
  const receipt = (kind: string, status = 'committed') => ({
    goal_id: 'g',
    agent_id: 'a',
    todo_id: 'todo_x1',
    turn_key: `sha256:${'a'.repeat(64)}`,
    status,
    result_kind: kind,
  });

  it('case 36: no receipt + ready → run_now; terminal → terminal; quiet wait → wait; replan → replan with delta rules; progress at budget 3/3 → replan', () => {
    const ready = loopDisposition(null, fresh('ready_for_host'));
    assert.deepEqual([ready.disposition, ready.spends, ready.launches], ['run_now', false, false]);
    assert.equal(loopDisposition(null, fresh('wait', 'terminal_no_followup')).disposition, 'terminal');
    assert.equal(loopDisposition(null, fresh('wait')).disposition, 'wait');
    assert.equal(
      loopDisposition(null, { ...fresh('replan_required'), replan_turn: true }).disposition,
      'run_now',
      'an owed replan the driver can run is the next turn',
    );
    assert.equal(
      loopDisposition(receipt('replan_required'), { ...fresh('replan_required'), replan_turn: true }).disposition,
      'replan',
      'a turn that itself asks for a replan still stops the loop',
    );
    const replan = loopDisposition(null, fresh('replan_required'));
    assert.equal(replan.disposition, 'replan');
    assert.deepEqual(replan.replan, {
      requires_bounded_delta: true,
      delta_kinds: ['todo_delta', 'vision_delta'],
      stale_todo_rerun_allowed: false,
      fresh_envelope_required: true,
    });
    assert.equal(
      loopDisposition(receipt('validated_progress'), fresh('ready_for_host'), { max_turns: 3, completed: 3 })
        .disposition,
      'replan',
    );
    assert.equal(
      loopDisposition(receipt('validated_progress'), fresh('ready_for_host'), { max_turns: 3, completed: 2 })
        .disposition,
      'run_now',
    );
  });

  it("the receipt's own kind wins; failures are repair; a fresh user action outranks all but terminal; stale input raises", () => {
    assert.equal(loopDisposition(receipt('repair_required'), fresh('ready_for_host')).disposition, 'repair');
    assert.equal(loopDisposition(receipt('wait', 'stopped'), fresh('ready_for_host')).disposition, 'wait');
    assert.equal(
      loopDisposition(receipt('user_action_required', 'stopped'), fresh('ready_for_host')).disposition,
      'user_action_required',
    );
    assert.equal(loopDisposition(receipt('host_failure', 'failed'), fresh('ready_for_host')).disposition, 'repair');
    assert.equal(
      loopDisposition(receipt('validated_completion'), fresh('user_action_required')).disposition,
      'user_action_required',
    );
    assert.equal(
      loopDisposition(receipt('validated_completion'), fresh('user_action_required', 'terminal_no_followup'))
        .disposition,
      'terminal',
    );
    assert.throws(
      () => loopDisposition({ ...receipt('validated_progress'), agent_id: 'b' }, fresh('ready_for_host')),
      (e: unknown) => isLoopxError(e, 'turn_disposition_stale_input'),
    );
    assert.throws(
      () => loopDisposition(receipt('validated_progress'), fresh('ready_for_host'), { max_turns: 0, completed: 0 }),
      (e: unknown) => isLoopxError(e, 'turn_budget_invalid'),
    );
  });
});
