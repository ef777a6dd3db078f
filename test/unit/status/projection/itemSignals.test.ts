import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadGoalStatus } from '../../../../src/core/status/goalStatus';
import { statusRef } from '../../../support/status';
import { agentLaneRecommendation } from '../../../../src/core/status/projection/agentLaneRecommendation';
import { backlogHygieneWarning } from '../../../../src/core/status/projection/backlogHygiene';
import { dependencyBlockers } from '../../../../src/core/status/projection/dependencyBlockers';
import {
  deliveryBatchScale,
  handoffReadiness,
  handoffRunState,
  longTaskCadenceHint,
} from '../../../../src/core/status/projection/handoffReadiness';
import { lifecycleFields } from '../../../../src/core/status/projection/lifecycle';
import { routeOwnAction } from '../../../../src/core/status/projection/routeAction';
import { withQuotaSignals } from '../../../../src/core/status/projection/quotaSignals';
import type { GoalStatusItem } from '../../../../src/core/status/goalStatusSchema';

/**
 * The status item fields of the original LoopX that ours carries since issue 30 (the mixed tier compares them with
 * the original's on five workspaces; these pin each rule on fixtures of our own).
 */

describe('status item: lifecycle_phase / lifecycle_flags', () => {
  it('from the latest status run: classification, then reward, operator gate and controller readiness, in priority order', () => {
    assert.deepEqual(
      lifecycleFields({
        latestStatusRun: { classification: 'validated_progress' },
        adapterStatus: 'connected',
        goalStatus: 'active',
      }),
      {
        lifecycle_phase: 'adapter_inspected',
        lifecycle_flags: ['adapter_inspected'],
      },
    );
    assert.deepEqual(
      lifecycleFields({
        latestStatusRun: {
          classification: 'state_refreshed',
          operator_gate: { decision: 'approve' },
          controller_readiness: { read_only_observer_ready: true },
          human_reward: { reward: 1 },
        },
        adapterStatus: null,
        goalStatus: 'active',
      }),
      {
        lifecycle_phase: 'reward_judged',
        lifecycle_flags: ['reward_judged', 'operator_approved', 'controller_gated', 'refreshed'],
      },
    );
    assert.equal(
      lifecycleFields({ latestStatusRun: { project_map: {} }, adapterStatus: null, goalStatus: 'active' })
        .lifecycle_phase,
      'mapped',
    );
    // A block without any of the original's known fields does not count.
    assert.deepEqual(
      lifecycleFields({
        latestStatusRun: { classification: '', operator_gate: { other: 1 } },
        adapterStatus: null,
        goalStatus: 'a',
      }).lifecycle_flags,
      ['run_recorded'],
    );
  });

  it('without a run: connected adapter, planned, else registered', () => {
    const phase = (adapterStatus: string | null, goalStatus: string): string =>
      lifecycleFields({ latestStatusRun: null, adapterStatus, goalStatus }).lifecycle_phase;
    assert.equal(phase('connected', 'active'), 'connected');
    assert.equal(phase('pre-tick-runnable', 'active'), 'connected');
    assert.equal(phase(null, 'planned_later'), 'planned');
    assert.equal(phase('planned', 'active'), 'planned');
    assert.equal(phase('connected-delivery', 'active'), 'registered');
  });
});

const STATE = (nextAction: string, lessons = ''): string =>
  `---\nstatus: active\n---\n\n## Agent Todo\n\n- [x] [P0] Done\n\n## Next Action\n\n${nextAction}\n\n## Operating Lessons\n\n${lessons}\n`;

describe('status item: backlog_hygiene_warning', () => {
  it('Next Action bullets, and Operating Lessons bullets that read as backlog, when no agent todo is open', () => {
    const warning = backlogHygieneWarning(
      STATE('- Ship the parser.\n- Then the docs.', '- Keep a regression smoke for the parser.\n- Be kind.'),
      0,
    );
    assert.deepEqual(warning, {
      kind: 'hidden_backlog_without_agent_todo',
      requires_agent_todo: true,
      source_sections: ['Next Action', 'Operating Lessons'],
      agent_open_count: 0,
      evidence_count: 3,
      first_evidence: [
        { section: 'Next Action', text: 'Ship the parser.' },
        { section: 'Next Action', text: 'Then the docs.' },
        { section: 'Operating Lessons', text: 'Keep a regression smoke for the parser.' },
      ],
      recommended_action:
        'mirror durable follow-up work into Agent Todo before heartbeat scheduling relies on Next Action or Operating Lessons',
    });
  });

  it('none with an open agent todo, without bullets, or for a lesson that names no backlog', () => {
    assert.equal(backlogHygieneWarning(STATE('- Ship the parser.'), 1), null);
    assert.equal(backlogHygieneWarning(STATE('Ship the parser.'), 0), null);
    assert.equal(backlogHygieneWarning(STATE('', '- Be kind.'), 0), null);
    // A bullet naming a local path is not public-safe: no evidence.
    assert.equal(backlogHygieneWarning(STATE('- Edit /home/me/secret.txt'), 0), null);
  });
});

const RUN = (at: string, classification: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  generated_at: at,
  classification,
  json_exists: true,
  markdown_exists: true,
  ...extra,
});

describe('status item: handoff_readiness and long_task_cadence_hint', () => {
  it('a custom work run is the post-handoff run; the quota decides codex_ready and ready', () => {
    const state = handoffRunState({
      goalId: 'g',
      recommendedAction: 'Do it.',
      latestRuns: [RUN('2026-01-01T00:02:00Z', 'quota_slot_spent'), RUN('2026-01-01T00:01:00Z', 'validated_progress')],
      latestValidation: null,
    });
    const eligible = handoffReadiness(state, { state: 'eligible' }, 'codex');
    assert.equal(eligible.ready, true);
    assert.equal(eligible.codex_ready, true);
    assert.equal(eligible.handoff_status, 'post_handoff_run_seen');
    assert.deepEqual(eligible.post_handoff_latest_run, {
      generated_at: '2026-01-01T00:01:00Z',
      classification: 'validated_progress',
      json_exists: true,
      markdown_exists: true,
      delivery_batch_scale: 'single_surface',
      delivery_turn_kind: 'unknown',
    });
    assert.equal(eligible.post_handoff_small_scale_streak, 1);
    assert.equal(eligible.next_probe, 'loopx review-packet --goal-id g --handoff-only');
    const gated = handoffReadiness(state, { state: 'operator_gate' }, 'controller');
    assert.deepEqual([gated.ready, gated.codex_ready, gated.quota_state], [false, false, 'operator_gate']);
    const none = handoffReadiness(state, undefined, 'codex');
    assert.deepEqual([none.quota_state, none.checks.same_source_should_run], ['unknown', false]);
  });

  it('a handoff-ready run starts the handoff; later runs are after it', () => {
    const state = handoffRunState({
      goalId: 'g',
      recommendedAction: 'Do it.',
      latestRuns: [
        RUN('2026-01-01T00:03:00Z', 'state_refreshed'),
        RUN('2026-01-01T00:02:00Z', 'operator_gate_approved'),
        RUN('2026-01-01T00:01:00Z', 'validated_progress'),
      ],
      latestValidation: null,
    });
    assert.equal(state.handoff_ready_at, '2026-01-01T00:02:00Z');
    assert.equal(state.handoff_ready_classification, 'operator_gate_approved');
    assert.deepEqual(
      state.post_handoff_recent_runs?.map((run) => run.classification),
      ['state_refreshed'],
    );
  });

  it('batch scale from the run, else its classification', () => {
    assert.equal(deliveryBatchScale({ delivery_batch_scale: 'bounded_segment' }), 'single_surface');
    assert.equal(deliveryBatchScale({ delivery_batch_scale: 'huge' }), 'unknown');
    assert.equal(deliveryBatchScale({ classification: 'parser_smoke' }), 'test_only');
    assert.equal(deliveryBatchScale({ classification: 'matrix_run' }), 'multi_surface');
    assert.equal(deliveryBatchScale({ classification: 'runner_added' }), 'implementation');
    assert.equal(deliveryBatchScale({}), 'unknown');
  });

  it('cadence: blocked by the quota state, else thin, widened after two small steps, material, or unknown', () => {
    const hint = (quotaState: string | null, runs: Record<string, unknown>[], userOpen = 0) =>
      longTaskCadenceHint({ quotaState, userOpenCount: userOpen, handoff: null, latestRuns: runs });
    assert.deepEqual(hint('operator_gate', [], 2), {
      schema_version: 'cadence_hint_v0',
      signal: 'blocked',
      recommendation: 'wait',
      reason_codes: ['quota_state_operator_gate', 'open_user_todos_visible'],
    });
    assert.deepEqual(hint('eligible', []).reason_codes, ['missing_recent_runs']);
    const small = { delivery_batch_scale: 'single_surface' };
    assert.deepEqual(
      [hint('eligible', [small]).recommendation, hint('eligible', [small]).reason_codes],
      ['keep', ['single_surface_latest_turn']],
    );
    assert.deepEqual(
      [hint('eligible', [small, small]).recommendation, hint('eligible', [small, small]).reason_codes],
      ['widen', ['repeated_surface_only']],
    );
    assert.equal(hint('eligible', [{ delivery_outcome: 'primary_goal_outcome' }]).signal, 'material_progress');
    assert.deepEqual(hint('eligible', [{ classification: 'x' }]).reason_codes, ['status_only_latest_turn']);
  });
});

describe('status item: route action, agent_lane_recommendation, dependency_blockers', () => {
  it("a goal without a status run keeps its route's own words, or its first open agent todo when connected", () => {
    const connected = { status: 'connected_without_run', waiting_on: 'codex', attention_source: 'run_history' };
    assert.equal(
      routeOwnAction(connected, { hasStatusRun: false, firstOpenAgentTodoText: '[P0] Do the work' }),
      '[P0] Do the work',
    );
    assert.equal(
      routeOwnAction(connected, { hasStatusRun: false, firstOpenAgentTodoText: null }),
      'run the first read-only adapter tick and save a compact run record',
    );
    assert.equal(
      routeOwnAction(
        { status: 'active', waiting_on: 'controller', attention_source: 'registry' },
        { hasStatusRun: false, firstOpenAgentTodoText: 'x' },
      ),
      'connect an adapter or run a read-only map before expecting runtime status',
    );
    assert.equal(
      routeOwnAction(
        { status: 'validated_progress', waiting_on: 'codex', attention_source: 'latest_run' },
        { hasStatusRun: true, firstOpenAgentTodoText: 'x' },
      ),
      null,
    );
  });

  it('the newest listed agent-lane run, compacted', () => {
    assert.deepEqual(
      agentLaneRecommendation([
        { classification: 'validated_progress', recommended_action: 'Not a lane run.' },
        { progress_scope: 'agent_lane', agent_id: 'codex-a', recommended_action: '  Next   step. ', agent_lane: null },
      ]),
      {
        schema_version: 'agent_lane_recommendation_v0',
        progress_scope: 'agent_lane',
        recommended_action: 'Next step.',
        agent_id: 'codex-a',
      },
    );
    assert.equal(agentLaneRecommendation([{ progress_scope: 'agent_lane', recommended_action: '' }]), null);
  });

  it("each goal lists the other goals' open user todos, goals by id, four at most", () => {
    const goal = (id: string, texts: string[]) => ({
      goal_id: id,
      status: 'active_state_user_gate',
      waiting_on: 'controller',
      severity: 'action',
      user_todos: { items: texts.map((text, i) => ({ index: i + 1, done: false, text })) },
    });
    const blockers = dependencyBlockers([goal('b', ['B1']), goal('a', ['A1', 'A2', 'A3', 'A4']), goal('c', [])]);
    assert.deepEqual(
      blockers.get('c')?.items.map((item) => `${item.goal_id}:${item.text}`),
      ['a:A1', 'a:A2', 'a:A3', 'a:A4'],
    );
    assert.equal(blockers.get('c')?.open_count, 5);
    assert.deepEqual(
      blockers.get('a')?.items.map((item) => item.text),
      ['B1'],
    );
    assert.equal(dependencyBlockers([goal('solo', ['S1'])]).size, 0);
  });
});

describe('status item: the quota decides its handoff and cadence fields (one rule for status and /status.json)', () => {
  it('withQuotaSignals: quota_state, codex_ready and a blocked cadence follow the attached quota', () => {
    const state = handoffRunState({ goalId: 'g', recommendedAction: 'Do it.', latestRuns: [], latestValidation: null });
    const projected = {
      waiting_on: 'codex',
      user_todos: { open_count: 0 },
      handoff_readiness: handoffReadiness(state, undefined, 'codex'),
      long_task_cadence_hint: longTaskCadenceHint({
        quotaState: null,
        userOpenCount: 0,
        handoff: null,
        latestRuns: [],
      }),
    } as unknown as GoalStatusItem;
    const eligible = withQuotaSignals(projected, { state: 'eligible' });
    assert.deepEqual(
      [
        eligible.handoff_readiness.quota_state,
        eligible.handoff_readiness.codex_ready,
        eligible.handoff_readiness.ready,
      ],
      ['eligible', true, true],
    );
    assert.equal(eligible.long_task_cadence_hint.signal, 'unknown');
    const throttled = withQuotaSignals(projected, { state: 'throttled' });
    assert.deepEqual(
      [throttled.handoff_readiness.codex_ready, throttled.long_task_cadence_hint.reason_codes],
      [false, ['quota_state_throttled']],
    );
  });
});

describe('status item: open todos in the projection order (priority, then position)', () => {
  it('the summary lists P0 before P1 and the item recommends the P0 gate, whatever their order in the file', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-priority-')));
    try {
      const stateFile = path.join(dir, 'ACTIVE_GOAL_STATE.md');
      fs.writeFileSync(
        stateFile,
        '---\nstatus: active\n---\n## User Todo\n' +
          '- [ ] [P1] Approve step one\n  <!-- loopx:todo todo_id=todo_one status=open task_class=user_gate -->\n' +
          '- [ ] [P0] Approve step two\n  <!-- loopx:todo todo_id=todo_two status=open task_class=user_gate -->\n' +
          '## Agent Todo\n' +
          '- [ ] Unranked work\n  <!-- loopx:todo todo_id=todo_three status=open task_class=advancement_task -->\n' +
          '- [ ] [P2] Ranked work\n  <!-- loopx:todo todo_id=todo_four status=open task_class=advancement_task -->\n',
      );
      const item = await loadGoalStatus(
        statusRef({
          goalId: 'g',
          projectRoot: dir,
          runtimeRoot: path.join(dir, 'runtime'),
          entry: { status: 'active', state_file: stateFile, adapter: { status: 'connected' } },
        }),
        { homeDir: dir },
      );
      assert.deepEqual(
        item.user_todos?.items.map((todo) => todo.todo_id),
        ['todo_two', 'todo_one'],
      );
      assert.deepEqual(
        item.agent_todos?.items.map((todo) => todo.todo_id),
        ['todo_four', 'todo_three'],
      );
      assert.equal(item.recommended_action, '[P0] Approve step two');
      assert.equal(item.user_todos?.schema_version, 'todo_summary_v0');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
