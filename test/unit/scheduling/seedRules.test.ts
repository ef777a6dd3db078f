import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quotaShouldRun } from '../../../src/core/ops/quota';
import { ShouldRunDecisionSchema, type ShouldRunDecision } from '../../../src/core/scheduling/decisionContract';
import { shouldRunFor } from '../../support/goalRef';
import { addRun, clockAt, hoursBefore, makeWorkspace, type Workspace } from '../quota/helpers';

/**
 * The should-run rules other draws of the compatibility kit showed (docs/compatibility.md, "Kit: other seeds",
 * fourth pass): one fixture of our own per rule, each with the shape of the kit case it came from.
 */

const head = '---\nstatus: active\n---\n# Goal\n';
function state(userTodos: string[], agentTodos: string[], nextAction?: string): string {
  const next = nextAction === undefined ? '' : `\n## Next Action\n\n- ${nextAction}\n`;
  return `${head}\n## User Todo\n${userTodos.join('\n')}\n\n## Agent Todo\n${agentTodos.join('\n')}\n${next}`;
}
function todo(text: string, meta: string, marker = ' '): string {
  return `- [${marker}] ${text}\n  <!-- loopx:todo ${meta} -->`;
}
const WORK = todo('[P1] Work.', 'todo_id=todo_work status=open task_class=advancement_task');
const MONITOR = todo('[P0] Watch CI.', 'todo_id=todo_watch status=open task_class=continuous_monitor');

/** The library's decision (no status projectors). */
async function decide(ws: Workspace, agentId: string | null = 'agent-a'): Promise<ShouldRunDecision> {
  const decision = await shouldRunFor({ registryPath: ws.registryPath, goalId: ws.goalId, agentId, clock: clockAt() });
  ShouldRunDecisionSchema.parse(decision);
  return decision;
}
/** The CLI's operation: the decision with status's next-action warning and state projection gap handed in. */
async function decideOp(ws: Workspace, agentId?: string): Promise<ShouldRunDecision> {
  const out = await quotaShouldRun.run(
    { goalId: ws.goalId, agentId, availableCapabilities: undefined, turnInstanceId: undefined },
    { cwd: ws.dir, env: {}, clock: clockAt(), homeDir: ws.dir, registryPath: ws.registryPath },
  );
  return ShouldRunDecisionSchema.parse(out);
}
function fields(d: ShouldRunDecision): unknown[] {
  return [d.state, d.decision, d.should_run, d.effective_action];
}
const firstExecutable = (d: ShouldRunDecision): string | null =>
  d.agent_todo_summary.first_executable_items[0]?.todo_id ?? null;

describe('quota should-run: rules from other kit seeds', () => {
  it('the first executable todo is not held back by a user gate, and a monitor is never it (seed 1 quota-003)', async () => {
    const global = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true');
    const held = await decide(makeWorkspace({}, state([global], [MONITOR, WORK])));
    // The global gate holds the work: nothing runs, but the summary still names the first executable todo.
    assert.deepEqual(fields(held), ['operator_gate', 'skip', false, 'operator_gate_notify']);
    assert.equal(firstExecutable(held), 'todo_work');
    assert.equal(held.selected_todo?.todo_id, 'todo_work');
    // Without advancement work the summary is empty even though the due monitor is what runs.
    const monitorOnly = await decide(makeWorkspace({}, state([], [MONITOR])));
    assert.equal(monitorOnly.effective_action, 'external_evidence_observe');
    assert.equal(firstExecutable(monitorOnly), null);
    assert.equal(monitorOnly.selected_todo?.todo_id, 'todo_watch');
  });

  it('a self-repair answers ok even when the todo contract is broken (seed 1 quota-003)', async () => {
    // An unscoped gate on a multi-agent goal (self-repair) beside a global gate that wrongly names a bound agent.
    const unscoped = todo('Decide.', 'todo_id=todo_unscoped status=open task_class=user_gate');
    const invalid = todo(
      'Confirm.',
      'todo_id=todo_global status=open task_class=user_gate global_gate=true bound_agent=agent-b',
    );
    const d = await decide(makeWorkspace({}, state([unscoped, invalid], [WORK])));
    assert.deepEqual(
      [d.decision, d.effective_action, d.should_run],
      ['self_repair', 'todo_decision_scope_projection_repair', true],
    );
    assert.equal(d.status_health_ok, false, 'the contract error is still reported');
    assert.equal(d.ok, true, 'the repair the agent may run makes the answer ok');
    assert.equal(d.selected_todo?.todo_id, 'todo_work', 'the first executable todo, under the global gate');
    // Asked without --agent-id the prompt upgrade disables the repair: the broken contract leaves ok false (seed 6 quota-012).
    const unscopedOnly = await decide(makeWorkspace({}, state([unscoped], [WORK])), null);
    assert.deepEqual(
      [unscopedOnly.decision, unscopedOnly.ok, unscopedOnly.status_health_ok],
      ['automation_prompt_upgrade', false, false],
    );
  });

  it('the next-action warning compares the unscoped status item: an agent lane run alone is not a latest action (seed 1 quota-026)', async () => {
    const ws = makeWorkspace({}, state([], [WORK], 'Investigate the drift.'));
    await addRun(ws, hoursBefore(2), {
      classification: 'validated_progress',
      recommended_action: 'Implement the parser.',
      progress_scope: 'agent_lane',
      agent_id: 'agent-a',
    });
    assert.equal((await decideOp(ws, 'agent-a')).next_action_projection_warning, null);
    // With a status run the item has a latest action, and the agent's own lane run replaces it (its first
    // executable todo keeps the durable route: info, seed 5 quota-006).
    await addRun(ws, hoursBefore(3), { classification: 'validated_progress', recommended_action: 'Ship.' });
    const w = (await decideOp(ws, 'agent-a')).next_action_projection_warning;
    assert.deepEqual([w?.kind, w?.severity], ['next_action_projection_mismatch', 'info']);
  });

  it("a named agent's first executable todo keeps the durable route unless a user gate in its scope holds it (seed 5 quota-006, seed 8 quota-021)", async () => {
    // A status run that agrees with the Next Action, and the agent's own lane run that does not.
    const lane = {
      classification: 'validated_progress',
      recommended_action: 'Investigate the cadence drift.',
      progress_scope: 'agent_lane',
      agent_id: 'agent-a',
    };
    const status = { classification: 'state_refreshed', recommended_action: 'Celebrate.' };
    const withWork = makeWorkspace({}, state([], [WORK], 'Celebrate.'));
    await addRun(withWork, hoursBefore(3), lane);
    await addRun(withWork, hoursBefore(1), status);
    const info = (await decideOp(withWork, 'agent-a')).next_action_projection_warning;
    assert.deepEqual([info?.severity, info?.requires_state_writeback], ['info', false]);
    // Beside an open user gate in its scope the todo replaces the gated route: a warning (seed 8 quota-021).
    const gate = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true');
    const gated = makeWorkspace({}, state([gate], [WORK], 'Celebrate.'));
    await addRun(gated, hoursBefore(3), lane);
    await addRun(gated, hoursBefore(1), status);
    const gatedWarning = (await decideOp(gated, 'agent-a')).next_action_projection_warning;
    assert.deepEqual([gatedWarning?.severity, gatedWarning?.requires_state_writeback], ['warning', true]);
    // A gate that holds only another agent's lane is not in its scope: info.
    const other = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b');
    const otherLane = makeWorkspace({}, state([other], [WORK], 'Celebrate.'));
    await addRun(otherLane, hoursBefore(3), lane);
    await addRun(otherLane, hoursBefore(1), status);
    assert.equal((await decideOp(otherLane, 'agent-a')).next_action_projection_warning?.severity, 'info');
    // No executable todo for the agent (only a monitor): a warning that needs writing back.
    const monitorOnly = makeWorkspace({}, state([], [MONITOR], 'Celebrate.'));
    await addRun(monitorOnly, hoursBefore(3), lane);
    await addRun(monitorOnly, hoursBefore(1), status);
    const warning = (await decideOp(monitorOnly, 'agent-a')).next_action_projection_warning;
    assert.deepEqual([warning?.severity, warning?.requires_state_writeback], ['warning', true]);
  });

  it("without a Next Action the warning compares the open user gate's text, as status's recommended action (seed 1 quota-002)", async () => {
    const gate = todo('[P0] Confirm access.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true');
    const ws = makeWorkspace({ coordination: {} }, state([gate], []));
    await addRun(ws, hoursBefore(2), { classification: 'validated_progress', recommended_action: 'Implement it.' });
    const w = (await decideOp(ws)).next_action_projection_warning;
    assert.deepEqual([w?.kind, w?.requires_state_writeback], ['next_action_projection_mismatch', true]);
    // The run that recommends the gate's own text agrees with it.
    const same = makeWorkspace({ coordination: {} }, state([gate], []));
    await addRun(same, hoursBefore(2), {
      classification: 'validated_progress',
      recommended_action: '[P0] Confirm access.',
    });
    assert.equal((await decideOp(same)).next_action_projection_warning, null);
    // Without user todos there is nothing to compare: no warning.
    const none = makeWorkspace({ coordination: {} }, state([], [WORK]));
    await addRun(none, hoursBefore(2), { classification: 'validated_progress', recommended_action: 'Implement it.' });
    assert.equal((await decideOp(none)).next_action_projection_warning, null);
  });

  it('an out-of-date prompt is named before a health blocker (seed 2 quota-016)', async () => {
    const ws = makeWorkspace({}, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'blocked_by_safety' });
    const unscoped = await decide(ws, null);
    assert.deepEqual(fields(unscoped), [
      'blocked_health',
      'automation_prompt_upgrade',
      false,
      'automation_prompt_upgrade_required',
    ]);
    // Asked with an agent, the blocker is the answer.
    assert.deepEqual(fields(await decide(ws)), ['blocked_health', 'skip', false, 'blocked_health']);
  });

  it('at an operator gate without an open user gate nothing bypasses it (seed 2 quota-018)', async () => {
    const ws = makeWorkspace({ waiting_on: 'controller', coordination: {} }, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'state_refreshed' });
    const d = await decide(ws, null);
    assert.deepEqual(fields(d), ['operator_gate', 'skip', false, 'operator_gate_notify']);
    assert.equal(d.safe_bypass_allowed, true);
    assert.equal(firstExecutable(d), 'todo_work');
    // Beside an open user gate that does not hold the todo, the bypass runs it.
    const gate = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate unblocks_todo_id=todo_other');
    const beside = makeWorkspace({ waiting_on: 'controller', coordination: {} }, state([gate], [WORK]));
    await addRun(beside, hoursBefore(2), { classification: 'state_refreshed' });
    assert.deepEqual(fields(await decide(beside, null)), [
      'operator_gate',
      'safe_bypass_user_gate_fallback',
      true,
      'operator_gate_notify',
    ]);
  });

  it("another lane's gate lifts the operator gate only for an agent with in-scope work (seed 2 quota-008)", async () => {
    const gate = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b');
    const idle = await decide(makeWorkspace({}, state([gate], [])));
    assert.deepEqual(fields(idle), ['operator_gate', 'skip', false, 'operator_gate_notify']);
    // A monitor (due or not) is in-scope work too.
    const later = todo(
      '[P0] Watch CI.',
      'todo_id=todo_watch status=open task_class=continuous_monitor next_due_at=2026-01-16T00:00:00Z',
    );
    assert.equal((await decide(makeWorkspace({}, state([gate], [later])))).state, 'eligible');
    assert.deepEqual(fields(await decide(makeWorkspace({}, state([gate], [WORK])))), [
      'eligible',
      'run',
      true,
      'normal_run',
    ]);
  });

  it('the scoped user-gate fallback runs whatever the guard said before it, keeping a named decision (seed 3 quota-024)', async () => {
    // An unscoped heartbeat on a goal with a roster (prompt upgrade) at an operator gate that blocks only
    // agent-a; the open todo is held by a stale claim, which no gate holds: the original runs it.
    const gate = todo('[P0] Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-a');
    const stale = todo('[P4] Validate.', 'todo_id=todo_valid status=open claimed_by=agent-ghost');
    const ws = makeWorkspace({ waiting_on: 'codex' }, state([gate], [stale]));
    const d = await decide(ws, null);
    assert.deepEqual(fields(d), [
      'operator_gate',
      'automation_prompt_upgrade',
      true,
      'automation_prompt_upgrade_required',
    ]);
    // A global gate holds every todo: no fallback, the upgrade alone.
    const global = todo('[P0] Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true');
    const held = await decide(makeWorkspace({}, state([global], [stale])), null);
    assert.deepEqual(fields(held), [
      'operator_gate',
      'automation_prompt_upgrade',
      false,
      'automation_prompt_upgrade_required',
    ]);
    // Unsound todo metadata does not stop it either (the original's fallback reads no health): a gate bound to
    // another agent than the one it blocks breaks the contract, and the unheld todo still runs.
    const mismatched = todo(
      'Approve.',
      'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-a bound_agent=agent-b unblocks_todo_id=todo_work',
    );
    const other = todo('[P2] Other.', 'todo_id=todo_other status=open task_class=advancement_task');
    const broken = await decide(makeWorkspace({}, state([mismatched], [WORK, other])));
    assert.equal(broken.status_health_ok, false);
    assert.deepEqual(fields(broken), ['operator_gate', 'safe_bypass_user_gate_fallback', true, 'operator_gate_notify']);
    assert.equal(broken.selected_todo?.todo_id, 'todo_other');
  });

  it('an out-of-date prompt is named before unsound todo metadata (seed 10 quota-002)', async () => {
    // An open user todo of a multi-agent goal without a response binding breaks the contract.
    const unbound = todo('Decide.', 'todo_id=todo_decide status=open task_class=user_action');
    const ws = makeWorkspace({}, state([unbound], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'state_refreshed' });
    const unscoped = await decide(ws, null);
    assert.equal(unscoped.status_health_ok, false);
    assert.deepEqual(fields(unscoped), [
      'eligible',
      'automation_prompt_upgrade',
      false,
      'automation_prompt_upgrade_required',
    ]);
    assert.deepEqual(fields(await decide(ws)), ['eligible', 'skip', false, 'quota_skip']);
  });

  it('a throttled agent is told its due monitor when it has no executable todo (seed 10 quota-019)', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } }, state([], [MONITOR]));
    await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent' });
    const d = await decide(ws);
    assert.deepEqual(fields(d), ['throttled', 'skip', false, 'throttled_skip']);
    assert.equal(firstExecutable(d), null);
    assert.equal(d.selected_todo?.todo_id, 'todo_watch');
  });

  it('a Next Action no open todo backs is repaired before normal delivery (seed 2 quota-002)', async () => {
    const ws = makeWorkspace(
      { coordination: {} },
      state([], [], 'Inspect the suite result before changing the route.'),
    );
    await addRun(ws, hoursBefore(2), { classification: 'state_refreshed' });
    const d = await decideOp(ws);
    assert.deepEqual(fields(d), ['eligible', 'self_repair', true, 'state_projection_gap_repair']);
    // An open agent todo backs it: normal delivery.
    const backed = makeWorkspace({ coordination: {} }, state([], [WORK], 'Inspect the suite result.'));
    await addRun(backed, hoursBefore(2), { classification: 'state_refreshed' });
    assert.equal((await decideOp(backed)).effective_action, 'normal_run');
    // Prose that neither names executable work nor waits on a person is no gap.
    const prose = makeWorkspace({ coordination: {} }, state([], [], 'Celebrate.'));
    await addRun(prose, hoursBefore(2), { classification: 'state_refreshed' });
    assert.equal((await decideOp(prose)).effective_action, 'normal_run');
    // The gap is the goal's (an open todo of any lane backs the Next Action) …
    const claimed = todo(
      '[P1] Theirs.',
      'todo_id=todo_theirs status=open task_class=advancement_task claimed_by=agent-b',
    );
    const other = makeWorkspace({}, state([], [claimed], 'Inspect the suite result.'));
    await addRun(other, hoursBefore(2), { classification: 'state_refreshed' });
    assert.equal((await decideOp(other, 'agent-a')).effective_action, 'normal_run');
    // … while an open user todo counts only in its agent's scope.
    const action = todo(
      'Send the report.',
      'todo_id=todo_action status=open task_class=user_action bound_agent=agent-b',
    );
    const bound = makeWorkspace({}, state([action], [], 'Inspect the suite result.'));
    await addRun(bound, hoursBefore(2), { classification: 'state_refreshed' });
    assert.equal((await decideOp(bound, 'agent-a')).effective_action, 'state_projection_gap_repair');
    assert.equal((await decideOp(bound, 'agent-b')).effective_action, 'normal_run');
  });

  it("a paused goal still shows the window's spent slots (seed 5 quota-015, seed 6 quota-005, seed 9 quota-007)", async () => {
    for (const goal of [{ quota: { compute: 0 } }, { status: 'stopped' }]) {
      const ws = makeWorkspace(goal, state([], [WORK]));
      await addRun(ws, hoursBefore(20), { classification: 'quota_slot_spent', quota_event: { slots: 1 } });
      await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent', quota_event: { slots: 5 } });
      // Out of the window: not counted.
      await addRun(ws, hoursBefore(30), { classification: 'quota_slot_spent', quota_event: { slots: 3 } });
      const d = await decide(ws, null);
      assert.deepEqual(fields(d), ['paused', 'skip', false, 'quota_skip']);
      assert.deepEqual([d.quota?.spent_slots, d.quota?.allowed_slots, d.quota?.remaining_slots], [6, 0, 0]);
    }
  });

  it("an agent lane's run whose artifacts are gone does not fail the answer (seed 8 quota-026, seed 9 quota-017/-020)", async () => {
    const lanes = makeWorkspace({ coordination: { registered_agents: ['agent-a', 'agent-b'] } }, state([], [WORK]));
    await addRun(
      lanes,
      hoursBefore(5),
      { classification: 'validated_progress', agent_id: 'agent-a' },
      { progress_scope: 'agent_lane', agent_id: 'agent-a' },
    );
    await addRun(
      lanes,
      hoursBefore(4),
      { classification: 'validated_progress', agent_id: 'agent-b' },
      { progress_scope: 'agent_lane', agent_id: 'agent-b' },
    );
    await addRun(lanes, hoursBefore(2), { classification: 'state_refreshed' });
    const runs = path.join(lanes.runtimeRoot, 'goals', lanes.goalId, 'runs');
    // Both lane runs lose their records (the status run keeps its own).
    for (const name of fs.readdirSync(runs)) if (/T(05|06)-/.test(name)) fs.rmSync(path.join(runs, name));
    assert.equal(fs.readdirSync(runs).filter((n) => n.endsWith('.json')).length, 1);
    for (const agent of ['agent-a', 'agent-b']) {
      const d = await decide(lanes, agent);
      assert.deepEqual([d.ok, d.status_health_ok, ...fields(d)], [true, true, 'eligible', 'run', true, 'normal_run']);
    }
    // Paused: still ok.
    const paused = makeWorkspace({ quota: { compute: 0 } }, state([], [WORK]));
    await addRun(
      paused,
      hoursBefore(5),
      { classification: 'validated_progress', agent_id: 'agent-a' },
      { progress_scope: 'agent_lane', agent_id: 'agent-a' },
    );
    const pausedRuns = path.join(paused.runtimeRoot, 'goals', paused.goalId, 'runs');
    for (const name of fs.readdirSync(pausedRuns)) if (name !== 'index.jsonl') fs.rmSync(path.join(pausedRuns, name));
    const p = await decide(paused);
    assert.deepEqual([p.ok, ...fields(p)], [true, 'paused', 'skip', false, 'quota_skip']);
  });

  it("without a Next Action or user todo a named agent's lane run is compared with the status run's action (seed 7 quota-015, seed 4 quota-009)", async () => {
    const ws = makeWorkspace({}, state([], [WORK]));
    // The agent's own lane run (older) and a newer lane run of another agent, then the goal's status run.
    await addRun(ws, hoursBefore(5), {
      classification: 'validated_progress',
      recommended_action: 'Validate the control-plane lane.',
      progress_scope: 'agent_lane',
      agent_id: 'agent-a',
    });
    await addRun(ws, hoursBefore(4), {
      classification: 'validated_progress',
      recommended_action: 'Celebrate.',
      progress_scope: 'agent_lane',
      agent_id: 'agent-b',
    });
    await addRun(ws, hoursBefore(2), { classification: 'state_refreshed', recommended_action: 'Celebrate.' });
    const a = (await decideOp(ws, 'agent-a')).next_action_projection_warning;
    // agent-a's first executable todo keeps the durable route: info.
    assert.deepEqual([a?.kind, a?.severity], ['next_action_projection_mismatch', 'info']);
    // agent-b's lane agrees with the status run; unscoped, the status run agrees with itself.
    assert.equal((await decideOp(ws, 'agent-b')).next_action_projection_warning, null);
    assert.equal((await decideOp(ws)).next_action_projection_warning, null);
  });

  it('a latest status run that lost its artifacts is compared by the repair text status recommends (seed 4 quota-002)', async () => {
    const ws = makeWorkspace({ coordination: {} }, state([], [WORK]));
    await addRun(ws, hoursBefore(2), {
      classification: 'state_refreshed',
      recommended_action: 'Implement the parser.',
    });
    // Its records intact, the run agrees with itself: no warning.
    assert.equal((await decideOp(ws)).next_action_projection_warning, null);
    const runs = path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs');
    for (const name of fs.readdirSync(runs)) if (name !== 'index.jsonl') fs.rmSync(path.join(runs, name));
    const d = await decideOp(ws);
    assert.deepEqual(fields(d), ['blocked_health', 'skip', false, 'blocked_health']);
    const w = d.next_action_projection_warning;
    assert.deepEqual([w?.severity, w?.requires_state_writeback], ['warning', true]);
  });
});
