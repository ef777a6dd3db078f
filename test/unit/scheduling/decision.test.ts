import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { ShouldRunDecisionSchema, type ShouldRunDecision } from '../../../src/core/scheduling/decisionContract';
import { shouldRunFor } from '../../support/goalRef';
import { planRoute } from '../../../src/core/scheduling/route';
import { reserveTurn } from '../../../src/core/quota/admission';
import { addRun, clockAt, hoursBefore, identityFor, loadGoal, makeWorkspace, type Workspace } from '../quota/helpers';

const head = '---\nstatus: active\n---\n# Goal\n';
function state(userTodos: string[], agentTodos: string[]): string {
  return `${head}\n## User Todo\n${userTodos.join('\n')}\n\n## Agent Todo\n${agentTodos.join('\n')}\n`;
}
function todo(text: string, meta: string, marker = ' '): string {
  return `- [${marker}] ${text}\n  <!-- loopx:todo ${meta} -->`;
}

async function decide(
  ws: Workspace,
  agentId: string | null = 'agent-a',
  extra: { availableCapabilities?: string[]; turnInstanceId?: string } = {},
): Promise<ShouldRunDecision> {
  const decision = await shouldRunFor({
    registryPath: ws.registryPath,
    goalId: ws.goalId,
    agentId,
    clock: clockAt(),
    homeDir: ws.dir,
    ...extra,
  });
  ShouldRunDecisionSchema.parse(decision);
  return decision;
}

/** Every nested value of an object, with its key. */
function* entries(value: unknown): Generator<[string, unknown]> {
  if (typeof value !== 'object' || value === null) return;
  for (const [key, inner] of Object.entries(value)) {
    yield [key, inner];
    yield* entries(inner);
  }
}

describe('quota should-run decision', () => {
  it('case 8: a paused goal returns the canonical paused contract whatever its lanes', async () => {
    const lanes = [
      state([], [todo('[P0] Needs GPU.', 'todo_id=todo_gpu status=open required_capabilities=gpu')]),
      state([], [todo('[P0] Watch CI.', 'todo_id=todo_watch status=open task_class=continuous_monitor')]),
      state(
        [todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true')],
        [todo('Work.', 'todo_id=todo_work status=open')],
      ),
      state([], []),
    ];
    for (const [goal, cause] of [
      [{ quota: { compute: 0 } }, 'compute_quota_zero'],
      [{ status: 'stopped' }, 'goal_stopped'],
    ] as const) {
      for (const text of lanes) {
        const ws = makeWorkspace(goal, text);
        const decision = await decide(ws);
        assert.deepEqual(
          [decision.state, decision.decision, decision.should_run, decision.effective_action, decision.pause_cause],
          ['paused', 'skip', false, 'quota_skip', cause],
        );
        assert.ok(Object.values(decision.permissions).every((allowed) => !allowed));
        assert.equal(decision.heartbeat_recommendation.recommended_mode, 'quota_paused');
        assert.equal(decision.scheduler_hint.action, 'stop_until_explicit_resume');
        assert.equal(decision.interaction_contract.user_channel.notify, 'DONT_NOTIFY');
        for (const key of ['capability_gate', 'workspace_guard', 'work_lane_contract', 'replan', 'selection'])
          assert.ok(!(key in decision), `${key} present`);
        for (const [key, value] of entries(decision)) {
          assert.ok(!(key === 'must_attempt_work' && value === true), 'must_attempt_work=true');
          assert.ok(!(key === 'delivery_allowed' && value === true), 'delivery_allowed=true');
          assert.notEqual(value, 'run_now');
        }
        assert.equal(decision.quota?.compute, 0);
        assert.equal(decision.quota?.configured_compute, cause === 'goal_stopped' ? 1 : 0);
      }
    }
  });

  it('case 10: eligible base selects normal_run; an orchestration contract makes it coordinate_task_bundle', async () => {
    const base = await decide(makeWorkspace());
    assert.deepEqual(
      [base.should_run, base.decision, base.state, base.effective_action, base.route],
      [true, 'run', 'eligible', 'normal_run', 'ready_for_host'],
    );
    assert.equal(base.selected_todo?.todo_id, 'todo_parser');
    assert.deepEqual(base.execution_obligation, { must_attempt_work: true, delivery_allowed: true });
    assert.match(
      base.interaction_contract.cli_channel.settlement_plan[0] ?? '',
      /quota spend-slot --goal-id g --slots 1 --source heartbeat --execute --todo-id todo_parser/,
    );
    const bundle = await decide(
      makeWorkspace({ spawn_policy: { mode: 'multi_subagent', allowed: true, max_children: 2 } }),
    );
    assert.equal(bundle.effective_action, 'coordinate_task_bundle');
    assert.equal(bundle.route, 'ready_for_host');
  });

  it('case 10: a terminal frontier (no open agent work) is terminal_no_followup with should_run false', async () => {
    const ws = makeWorkspace(
      {},
      state(
        [],
        [todo('Done.', 'todo_id=todo_done status=done completion_continuation=no_followup no_followup=true', 'x')],
      ),
    );
    const decision = await decide(ws);
    assert.deepEqual(
      [decision.should_run, decision.state, decision.effective_action, decision.route],
      [false, 'terminal_no_followup', 'terminal_no_followup', 'wait'],
    );
  });

  it('case 11: agent identity — invalid id, goal without roster, agent not on the roster', async () => {
    await assert.rejects(decide(makeWorkspace(), '../private-agent'), { code: 'quota_agent_id_invalid' });
    await assert.rejects(decide(makeWorkspace({ coordination: {} }), 'agent-a'), {
      code: 'quota_agent_registry_roster_missing',
    });
    await assert.rejects(decide(makeWorkspace(), 'agent-z'), { code: 'quota_agent_not_registered' });
  });

  it('a goal missing from the registry: ok=false, state unknown, status goal_not_found', async () => {
    const decision = await shouldRunFor({
      registryPath: makeWorkspace().registryPath,
      goalId: 'nope',
      clock: clockAt(),
    });
    assert.deepEqual(
      [decision.ok, decision.should_run, decision.state, decision.status],
      [false, false, 'unknown', 'goal_not_found'],
    );
  });

  it('selection: claimed-by-me first, then priority, then document order; skips other claims, exclusions, gates and blocked todos', async () => {
    const text = state(
      [
        todo(
          'Approve deploy.',
          'todo_id=todo_gate status=open task_class=user_gate blocks_agent=agent-a unblocks_todo_id=todo_deploy',
        ),
      ],
      [
        todo('[P2] Later.', 'todo_id=todo_later status=open'),
        todo('[P0] Theirs.', 'todo_id=todo_theirs status=open claimed_by=agent-b'),
        todo('[P0] Not for me.', 'todo_id=todo_excluded status=open excluded_agents=agent-a'),
        todo('[P0] Deploy.', 'todo_id=todo_deploy status=open'),
        todo('[P0] Stuck.', 'todo_id=todo_stuck status=blocked'),
        todo('[P1] First P1.', 'todo_id=todo_p1a status=open'),
        todo('[P1] Second P1.', 'todo_id=todo_p1b status=open'),
        todo('No priority, mine.', 'todo_id=todo_mine status=open claimed_by=agent-a'),
      ],
    );
    const mine = await decide(makeWorkspace({}, text));
    assert.equal(mine.selected_todo?.todo_id, 'todo_mine');
    // An open user gate puts the goal at the operator gate; work it does not block still runs (safe bypass).
    assert.equal(mine.state, 'operator_gate');
    assert.equal(mine.decision, 'safe_bypass_user_gate_fallback', 'a gate holds back part of the work');
    assert.equal(mine.effective_action, 'operator_gate_notify');
    assert.equal(mine.safe_bypass_allowed, true);
    assert.equal(mine.interaction_contract.user_channel.notify, 'NOTIFY');
    assert.equal(mine.route, 'ready_for_host');
    assert.deepEqual(
      new Map(mine.selection?.excluded.map((e) => [e.todo_id, e.reason])),
      new Map([
        ['todo_theirs', 'claimed_by_other_agent'],
        ['todo_excluded', 'excluded_agent'],
        ['todo_deploy', 'gate_blocked'],
        ['todo_stuck', 'status_blocked'],
      ]),
    );
    const other = await decide(makeWorkspace({}, text), 'agent-b');
    assert.equal(other.selected_todo?.todo_id, 'todo_theirs');
    const noGate = await decide(makeWorkspace({}, text.replace(/- \[ \] Approve deploy\.\n.*\n/, '')), 'agent-b');
    assert.equal(noGate.effective_action, 'normal_run');
    const ordered = await decide(
      makeWorkspace(
        {},
        state(
          [],
          [
            todo('[P2] Later.', 'todo_id=todo_later status=open'),
            todo('[P1] A.', 'todo_id=todo_p1a status=open'),
            todo('[P1] B.', 'todo_id=todo_p1b status=open'),
          ],
        ),
      ),
    );
    assert.equal(ordered.selected_todo?.todo_id, 'todo_p1a');
  });

  it('selection: a priority= metadata token counts (the original ignored it)', async () => {
    const decision = await decide(
      makeWorkspace(
        {},
        state(
          [],
          [
            todo('Plain.', 'todo_id=todo_plain status=open'),
            todo('Urgent.', 'todo_id=todo_urgent status=open priority=P0'),
          ],
        ),
      ),
    );
    assert.equal(decision.selected_todo?.todo_id, 'todo_urgent');
  });

  it('every runnable todo behind a user gate: should_run false, the user is asked', async () => {
    const ws = makeWorkspace(
      {},
      state(
        [todo('Approve.', 'todo_id=todo_gate status=open task_class=user_gate global_gate=true')],
        [todo('Work.', 'todo_id=todo_work status=open')],
      ),
    );
    const decision = await decide(ws);
    assert.deepEqual(
      [decision.should_run, decision.effective_action, decision.route],
      [false, 'operator_gate_notify', 'user_action_required'],
    );
    assert.equal(decision.interaction_contract.user_channel.notify, 'NOTIFY');
  });

  it('monitors: a due monitor is a read-only observe run; a monitor-only lane with nothing due is a quiet skip', async () => {
    const due = await decide(
      makeWorkspace(
        {},
        state(
          [],
          [
            todo(
              'Watch CI.',
              'todo_id=todo_watch status=open task_class=continuous_monitor next_due_at=2026-01-15T09:00:00Z',
            ),
          ],
        ),
      ),
    );
    assert.deepEqual([due.should_run, due.effective_action], [true, 'external_evidence_observe']);
    const later = await decide(
      makeWorkspace(
        {},
        state(
          [],
          [
            todo(
              'Watch CI.',
              'todo_id=todo_watch status=open task_class=continuous_monitor next_due_at=2026-01-15T11:00:00Z',
            ),
          ],
        ),
      ),
    );
    assert.deepEqual([later.should_run, later.effective_action, later.route], [false, 'monitor_quiet_skip', 'wait']);
  });

  it('capability gate: a selected todo needing an undeclared capability is not delivered', async () => {
    const ws = makeWorkspace(
      {},
      state([], [todo('[P0] Train.', 'todo_id=todo_gpu status=open required_capabilities=gpu')]),
    );
    const blocked = await decide(ws);
    assert.deepEqual([blocked.should_run, blocked.effective_action], [false, 'capability_gate_blocked']);
    assert.deepEqual(blocked.capability_gate, { todo_id: 'todo_gpu', required: ['gpu'], missing: ['gpu'] });
    assert.equal((await decide(ws, 'agent-a', { availableCapabilities: ['gpu'] })).effective_action, 'normal_run');
  });

  it('a deferred todo whose resume condition is met is selected as successor_replan_required', async () => {
    const ws = makeWorkspace(
      {},
      state(
        [],
        [
          todo('Base.', 'todo_id=todo_base status=done', 'x'),
          todo('Follow up.', 'todo_id=todo_follow status=deferred reason=wait resume_when=todo_done%3Atodo_base', '-'),
        ],
      ),
    );
    const decision = await decide(ws);
    assert.deepEqual(
      [decision.should_run, decision.effective_action, decision.route, decision.selected_todo?.todo_id],
      [true, 'successor_replan_required', 'replan_required', 'todo_follow'],
    );
  });

  it('throttled by reserved slots: in-flight turns count, the scheduler waits until a slot frees', async () => {
    const ws = makeWorkspace({ quota: { allowed_slots: 2 } });
    await addRun(ws, hoursBefore(3), { classification: 'quota_slot_spent' });
    await reserveTurn(await loadGoal(ws), clockAt(), { identity: identityFor(ws, 'agent-b', 'in-flight') });
    const decision = await decide(ws);
    assert.deepEqual(
      [decision.should_run, decision.state, decision.effective_action, decision.route],
      [false, 'throttled', 'throttled_skip', 'wait'],
    );
    assert.equal(decision.quota?.reserved_slots, 1);
    assert.equal(decision.scheduler_hint.next_eligible_at, '2026-01-16T07:00:00.000Z');
  });

  it('waiting_on controller is an operator gate; a missing state file blocks on health', async () => {
    // The registry's waiting_on speaks once the goal has a status run (before it, a connected goal waits on
    // the agents: connected_without_run). Without an open user gate nothing may bypass it (the original's
    // scoped user-gate fallback needs a gate: kit seed 2 quota-018); the bypass is still reported as allowed.
    const gated = makeWorkspace({ waiting_on: 'controller' });
    await addRun(gated, hoursBefore(2), { classification: 'validated_progress' });
    const gate = await decide(gated);
    assert.deepEqual(
      [
        gate.state,
        gate.status,
        gate.should_run,
        gate.decision,
        gate.effective_action,
        gate.safe_bypass_allowed,
        gate.route,
      ],
      ['operator_gate', 'validated_progress', false, 'skip', 'operator_gate_notify', true, 'user_action_required'],
    );
    const ws = makeWorkspace({});
    fs.rmSync(ws.statePath);
    const health = await decide(ws);
    assert.deepEqual(
      [health.state, health.should_run, health.route],
      ['blocked_health', false, 'user_action_required'],
    );
  });

  it('names the settlement identity of the turn when a turn id is given', async () => {
    const decision = await decide(makeWorkspace(), 'agent-a', { turnInstanceId: 'turn-7' });
    assert.equal(decision.settlement_identity?.effect_id, 'g:agent-a:todo_parser:turn-7');
  });

  it('is read-only: deciding writes nothing', async () => {
    const ws = makeWorkspace();
    await decide(ws, 'agent-a', { turnInstanceId: 'turn-7' });
    assert.equal(fs.existsSync(ws.runtimeRoot), false);
  });
});

describe('plan routes (§4.1)', () => {
  const base = {
    should_run: true,
    delivery_allowed: true,
    must_attempt: true,
    effective_action: 'normal_run',
    user_action_required: false,
    quiet_noop_allowed: false,
  };

  it('case 26: capability_repair → repair_required; autonomous_replan / successor_replan_required → replan_required', () => {
    assert.equal(planRoute({ ...base, effective_action: 'capability_repair' }), 'repair_required');
    assert.equal(planRoute({ ...base, effective_action: 'agent_workspace_repair' }), 'repair_required');
    assert.equal(planRoute({ ...base, effective_action: 'autonomous_replan' }), 'replan_required');
    assert.equal(planRoute({ ...base, effective_action: 'successor_replan_required' }), 'replan_required');
    assert.equal(planRoute(base), 'ready_for_host');
  });

  it('case 27: should_run=false maps (action_required, quiet_noop) to user_action_required, wait or blocked', () => {
    const off = { ...base, should_run: false };
    assert.equal(planRoute({ ...off, user_action_required: true, quiet_noop_allowed: false }), 'user_action_required');
    assert.equal(planRoute({ ...off, user_action_required: false, quiet_noop_allowed: true }), 'wait');
    assert.equal(planRoute({ ...off, user_action_required: false, quiet_noop_allowed: false }), 'blocked');
  });

  it('case 28: should_run with a visible user action is still ready_for_host; without delivery it is blocked', () => {
    assert.equal(planRoute({ ...base, user_action_required: true }), 'ready_for_host');
    assert.equal(planRoute({ ...base, delivery_allowed: false }), 'blocked');
  });

  it('case 29: any contract problem is contract_error', () => {
    assert.equal(planRoute({ ...base, contract_problems: ['action_signature.matches=false'] }), 'contract_error');
  });
});
