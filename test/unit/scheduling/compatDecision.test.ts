import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { quotaShouldRun } from '../../../src/core/ops/quota';
import { ShouldRunDecisionSchema, type ShouldRunDecision } from '../../../src/core/scheduling/decisionContract';
import { shouldRunFor } from '../../support/goalRef';
import { addRun, clockAt, hoursBefore, makeWorkspace, type Workspace } from '../quota/helpers';

/** One fixture per rule of LoopX's should-run contract (docs/compatibility.md, "Kit: quota"). */

const head = '---\nstatus: active\n---\n# Goal\n';
function state(userTodos: string[], agentTodos: string[]): string {
  return `${head}\n## User Todo\n${userTodos.join('\n')}\n\n## Agent Todo\n${agentTodos.join('\n')}\n`;
}
function todo(text: string, meta: string, marker = ' '): string {
  return `- [${marker}] ${text}\n  <!-- loopx:todo ${meta} -->`;
}
const WORK = todo('[P1] Work.', 'todo_id=todo_work status=open task_class=advancement_task');

async function decide(ws: Workspace, agentId: string | null = 'agent-a'): Promise<ShouldRunDecision> {
  const decision = await shouldRunFor({ registryPath: ws.registryPath, goalId: ws.goalId, agentId, clock: clockAt() });
  ShouldRunDecisionSchema.parse(decision);
  return decision;
}
function fields(d: ShouldRunDecision): unknown[] {
  return [d.status, d.state, d.decision, d.should_run, d.effective_action];
}

describe('quota should-run: LoopX decision rules', () => {
  it('a connected goal without runs waits on the agents whatever the registry waiting_on says', async () => {
    const d = await decide(makeWorkspace({ waiting_on: 'controller' }, state([], [WORK])));
    assert.deepEqual(fields(d), ['connected_without_run', 'eligible', 'run', true, 'normal_run']);
    assert.equal(d.selected_todo?.todo_id, 'todo_work');
    assert.equal(d.agent_todo_summary.first_executable_items[0]?.todo_id, 'todo_work');
  });

  it('without a connected adapter and without runs the goal waits on the controller', async () => {
    const d = await decide(makeWorkspace({ adapter: { kind: 'x', status: 'planned' } }, state([], [WORK])));
    assert.deepEqual([d.status, d.state], ['active', 'operator_gate']);
  });

  it('eligible with nothing runnable still runs normal_run without a todo', async () => {
    const blocker = todo('[P2] Blocker.', 'todo_id=todo_b status=open task_class=blocker');
    const d = await decide(makeWorkspace({}, state([], [blocker])));
    assert.deepEqual(fields(d), ['connected_without_run', 'eligible', 'run', true, 'normal_run']);
    assert.equal(d.selected_todo, null);
  });

  it('an unscoped heartbeat is told the first executable todo but not given it as selected', async () => {
    const d = await decide(makeWorkspace({ coordination: {} }, state([], [WORK])), null);
    assert.deepEqual(fields(d), ['connected_without_run', 'eligible', 'run', true, 'normal_run']);
    assert.equal(d.selected_todo, null);
    assert.equal(d.agent_todo_summary.first_executable_items[0]?.todo_id, 'todo_work');
  });

  it('a goal with registered agents asked without --agent-id needs the automation prompt upgrade', async () => {
    const d = await decide(makeWorkspace({}, state([], [WORK])), null);
    assert.deepEqual(fields(d), [
      'connected_without_run',
      'eligible',
      'automation_prompt_upgrade',
      false,
      'automation_prompt_upgrade_required',
    ]);
  });

  it('throttled: throttled_skip, the selected todo still named', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } }, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent' });
    const d = await decide(ws);
    assert.deepEqual(fields(d), ['connected_without_run', 'throttled', 'skip', false, 'throttled_skip']);
    assert.equal(d.selected_todo?.todo_id, 'todo_work');
  });

  it('an open user gate: operator gate; a todo it does not block runs as safe bypass', async () => {
    const gate = todo(
      'Approve.',
      'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-a unblocks_todo_id=todo_other',
    );
    const d = await decide(makeWorkspace({}, state([gate], [WORK])));
    assert.deepEqual(fields(d), [
      'active_state_user_gate',
      'operator_gate',
      'safe_bypass_user_gate_fallback',
      true,
      'operator_gate_notify',
    ]);
    assert.equal(d.safe_bypass_allowed, true);
    const global = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true');
    const held = await decide(makeWorkspace({}, state([global], [WORK])));
    assert.deepEqual(fields(held), ['active_state_user_gate', 'operator_gate', 'skip', false, 'operator_gate_notify']);
  });

  it("gates that hold only other agents' lanes leave the asking agent eligible (bypass still shown)", async () => {
    const gate = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b');
    const d = await decide(makeWorkspace({}, state([gate], [WORK])));
    assert.deepEqual(fields(d), ['active_state_user_gate', 'eligible', 'run', true, 'normal_run']);
    assert.equal(d.safe_bypass_allowed, true);
  });

  it('waiting on external evidence: one read-only observation', async () => {
    const ws = makeWorkspace({ waiting_on: 'external_evidence' }, state([], []));
    await addRun(ws, hoursBefore(2), { classification: 'validated_progress' });
    const d = await decide(ws);
    assert.deepEqual(fields(d), ['validated_progress', 'waiting', 'observe', true, 'external_evidence_observe']);
  });

  it("an agent lane's run with missing artifacts does not fail the goal's health: ok, normal_run", async () => {
    const ws = makeWorkspace({}, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'validated_progress' });
    await addRun(
      ws,
      hoursBefore(1),
      { classification: 'validated_progress', agent_id: 'agent-b' },
      { progress_scope: 'agent_lane', agent_id: 'agent-b' },
    );
    const runs = path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs');
    for (const name of fs.readdirSync(runs)) if (name.startsWith('2026-01-15T09')) fs.rmSync(path.join(runs, name));
    const d = await decide(ws);
    assert.deepEqual([d.ok, ...fields(d)], [true, 'validated_progress', 'eligible', 'run', true, 'normal_run']);
  });

  it("paused: the canonical contract, the window's spent slots still shown", async () => {
    const ws = makeWorkspace({ quota: { compute: 0 } }, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent' });
    const d = await decide(ws);
    assert.deepEqual(fields(d), ['connected_without_run', 'paused', 'skip', false, 'quota_skip']);
    assert.deepEqual([d.quota?.spent_slots, d.quota?.allowed_slots, d.quota?.compute], [1, 0, 0]);
  });

  it('the op answers an unregistered agent and an unknown goal with a refusal that grants nothing', async () => {
    const ws = makeWorkspace({}, state([], [WORK]));
    const env = { cwd: ws.dir, env: {}, registryPath: ws.registryPath, homeDir: ws.dir, clock: clockAt() };
    for (const [goalId, agentId, status, st] of [
      [ws.goalId, 'agent-z', 'quota_identity_precondition_failed', 'blocked_health'],
      [ws.goalId, '../private', 'quota_identity_precondition_failed', 'blocked_health'],
      ['nope', undefined, 'goal_not_found', 'unknown'],
    ] as const) {
      const out = (await quotaShouldRun.run(
        quotaShouldRun.args.parse({ goalId, ...(agentId === undefined ? {} : { agentId }) }),
        env as never,
      )) as Record<string, unknown>;
      assert.deepEqual(
        [out['ok'], out['status'], out['state'], out['should_run'], out['decision']],
        [false, status, st, false, 'skip'],
      );
      for (const key of ['effective_action', 'quota', 'safe_bypass_allowed', 'error'])
        assert.equal(key in out, false, `${key} is absent`);
    }
  });

  it("a broken todo contract (an agent-scoped gate that is also goal_bound) fails the goal's health: quota_skip, ok false", async () => {
    const gate = todo(
      'Approve.',
      'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b goal_bound=true',
    );
    const broken = await decide(makeWorkspace({}, state([gate], [WORK])));
    // The gate holds agent-b's lane only, so agent-a is eligible by slots; the broken metadata still stops it.
    assert.deepEqual(fields(broken), ['active_state_user_gate', 'eligible', 'skip', false, 'quota_skip']);
    assert.deepEqual([broken.ok, broken.status_health_ok, broken.safe_bypass_allowed], [false, false, true]);
    assert.equal(broken.selected_todo?.todo_id, 'todo_work');
    assert.deepEqual(
      broken.todo_contract_errors?.map((e) => [e.code, e.todo_id]),
      [['agent_user_gate_goal_binding_invalid', 'todo_gate']],
    );
    // Repaired (goal_bound removed): the same goal runs.
    const repaired = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b');
    const ok = await decide(makeWorkspace({}, state([repaired], [WORK])));
    assert.deepEqual(fields(ok), ['active_state_user_gate', 'eligible', 'run', true, 'normal_run']);
    assert.deepEqual([ok.ok, ok.todo_contract_errors], [true, []]);
  });

  it('an unscoped user gate on a multi-agent goal is a self repair before the operator gate', async () => {
    const gate = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate goal_bound=true');
    const d = await decide(makeWorkspace({}, state([gate], [WORK])));
    assert.deepEqual(fields(d), [
      'active_state_user_gate',
      'operator_gate',
      'self_repair',
      true,
      'todo_decision_scope_projection_repair',
    ]);
    assert.equal(d.ok, true, 'the repair is the answer, not a broken contract');
    // Scoped to one agent: no repair.
    const scoped = todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-b');
    assert.notEqual((await decide(makeWorkspace({}, state([scoped], [WORK])))).decision, 'self_repair');
  });

  it('a latest run whose artifacts are missing is blocked_health (severity high), even when throttled', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 1 } }, state([], [WORK]));
    await addRun(ws, hoursBefore(2), { classification: 'quota_slot_spent' });
    await addRun(ws, hoursBefore(1), { classification: 'validated_progress', recommended_action: 'x' });
    for (const file of fs.readdirSync(path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs')))
      if (file.endsWith('.md')) fs.rmSync(path.join(ws.runtimeRoot, 'goals', ws.goalId, 'runs', file));
    const d = await decide(ws);
    assert.deepEqual(fields(d), ['run_artifact_missing', 'blocked_health', 'skip', false, 'blocked_health']);
  });

  it('terminal_no_followup needs every todo done and one done with no_followup=true; a goal without todos runs', async () => {
    const final = todo('[P1] Ship.', 'todo_id=todo_ship status=done claimed_by=agent-a no_followup=true', 'x');
    const terminal = await decide(makeWorkspace({}, state([], [final])));
    assert.deepEqual(fields(terminal), [
      'connected_without_run',
      'terminal_no_followup',
      'skip',
      false,
      'terminal_no_followup',
    ]);
    // No todos at all: nothing says the goal is finished, so it runs to write its first todos.
    const empty = await decide(makeWorkspace({}, state([], [])));
    assert.deepEqual(fields(empty), ['connected_without_run', 'eligible', 'run', true, 'normal_run']);
    // An open user todo keeps the goal from being finished.
    const ask = todo('Read the report.', 'todo_id=todo_read status=open task_class=user_action goal_bound=true');
    const open = await decide(makeWorkspace({}, state([ask], [final])));
    assert.notEqual(open.state, 'terminal_no_followup');
  });

  it('a done advancement todo without a successor or no_followup, and no work left, owes an autonomous replan', async () => {
    const gap = todo('[P1] Ship.', 'todo_id=todo_ship status=done claimed_by=agent-a', 'x');
    const replan = await decide(makeWorkspace({}, state([], [gap])));
    assert.deepEqual(fields(replan), [
      'connected_without_run',
      'eligible',
      'autonomous_replan_required',
      true,
      'autonomous_replan_required',
    ]);
    assert.equal(replan.route, 'replan_required');
    // Linked to a successor: no gap, and the successor is the work.
    const linked = todo(
      '[P1] Ship.',
      'todo_id=todo_ship status=done claimed_by=agent-a successor_todo_ids=todo_work',
      'x',
    );
    const next = await decide(makeWorkspace({}, state([], [linked, WORK])));
    assert.deepEqual(fields(next), ['connected_without_run', 'eligible', 'run', true, 'normal_run']);
    // A done todo without lifecycle metadata is not tracked for succession (nor final): it runs.
    const bare = todo('[P1] Ship.', 'todo_id=todo_ship status=done', 'x');
    assert.equal((await decide(makeWorkspace({}, state([], [bare])))).effective_action, 'normal_run');
  });

  it('next_action_projection_warning: the latest run recommends another action than the Next Action', async () => {
    const withNext = (text: string) => `${state([], [WORK])}\n## Next Action\n\n- ${text}\n`;
    const warningOf = async (ws: Workspace, agentId: string | undefined) => {
      const op = await quotaShouldRun.run(
        { goalId: ws.goalId, agentId, availableCapabilities: undefined, turnInstanceId: undefined },
        { cwd: ws.dir, env: {}, clock: clockAt(), homeDir: ws.dir, registryPath: ws.registryPath },
      );
      assert.ok('next_action_projection_warning' in op);
      const w = op.next_action_projection_warning;
      return w === null ? null : [w.kind, w.severity, w.requires_state_writeback];
    };
    const mismatch = ['next_action_projection_mismatch', 'warning', true];
    const ws = makeWorkspace({}, withNext('Write the parser.'));
    await addRun(ws, hoursBefore(2), { classification: 'validated_progress', recommended_action: 'Ship the release.' });
    assert.deepEqual(await warningOf(ws, undefined), mismatch, "unscoped: the goal's latest status run");
    // Scoped to an agent, the latest recommendation is that agent's own newest lane run, or none
    // (the original's scope_status_item_to_agent_lane): another agent's lane does not count.
    assert.equal(await warningOf(ws, 'agent-a'), null, 'agent-a has no lane run');
    await addRun(ws, hoursBefore(1), {
      classification: 'validated_progress',
      recommended_action: 'Tidy the docs.',
      progress_scope: 'agent_lane',
      agent_id: 'agent-b',
    });
    assert.equal(await warningOf(ws, 'agent-a'), null, "agent-b's lane is not agent-a's");
    // agent-b's first executable todo keeps the durable route: info, no writeback (kit seed 5 quota-006).
    assert.deepEqual(
      await warningOf(ws, 'agent-b'),
      ['next_action_projection_mismatch', 'info', false],
      "agent-b's own lane run disagrees",
    );
    // Aligned: no warning.
    const aligned = makeWorkspace({}, withNext('Ship the release.'));
    await addRun(aligned, hoursBefore(2), {
      classification: 'validated_progress',
      recommended_action: 'Ship the release.',
    });
    assert.equal(await warningOf(aligned, undefined), null);
  });
});
