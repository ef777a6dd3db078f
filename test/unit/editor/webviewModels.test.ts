import assert from 'node:assert/strict';
import type { GoalQuotaSummary } from '../../../src/core/ops/quota';
import type { GoalStatusItem } from '../../../src/core/status/goalStatus';
import {
  NEXT_ACTION_WARNING_TEXT,
  projectionWarningSchema,
  type ProjectionWarning,
} from '../../../src/core/status/projection/schemas';
import {
  headroomRatio,
  leastHeadroom,
  presentIndicator,
  type IndicatorInput,
} from '../../../src/statusBar/presentation';
import { cumulativeSpend, hostToDetailSchema, type GoalDetail } from '../../../src/webviews/goalDetail/protocol';
import type { RolloutEvent } from '../../../src/core/evidence/rolloutLog';
import { eventTimeline, TIMELINE_EVENTS_PER_TURN, TIMELINE_TURNS } from '../../../src/webviews/goalDetail/timeline';
import { ReplanObligationSchema } from '../../../src/core/scheduling/replanObligation';
import { buildCards } from '../../../src/webviews/warnings/cards';
import { hostToWarningsSchema, warningsToHostSchema } from '../../../src/webviews/warnings/protocol';

const HOSTILE = 'Fix <script>alert(1)</script> & <img src=x onerror=alert(2)>';

function mismatch(): ProjectionWarning {
  return projectionWarningSchema.parse({
    schema_version: 'next_action_projection_warning_v0',
    kind: 'next_action_projection_mismatch',
    severity: 'warning',
    requires_state_writeback: true,
    active_state_next_action: 'Write the parser',
    latest_run_recommended_action: HOSTILE,
    reason: NEXT_ACTION_WARNING_TEXT.warning.reason,
    recommended_action: NEXT_ACTION_WARNING_TEXT.warning.recommended_action,
    message: 'The latest run recommends other work than the Next Action',
    id: 'lxw_0123456789abcdef',
    goal_id: 'g1',
    compared: [
      { field: 'active_state_next_action', value: 'Write the parser' },
      { field: 'latest_run_recommended_action', value: HOSTILE },
    ],
    actions: [{ kind: 'set_next_action', text: HOSTILE }, { kind: 'refresh_state' }],
  });
}

function statusItem(warnings: ProjectionWarning[], extra: Partial<GoalStatusItem> = {}): GoalStatusItem {
  return {
    active_state_next_action: 'Write the parser',
    active_state: {
      available: true,
      status: 'active',
      updated_at: '2026-01-02T00:00:00Z',
      sha256_16: null,
      error: null,
    },
    latest_runs: [{ generated_at: '2026-01-01T00:00:00Z' }],
    state_diagnostics: null,
    projection_warnings: warnings,
    ...extra,
  } as unknown as GoalStatusItem;
}

function quota(extra: Partial<GoalQuotaSummary> = {}): GoalQuotaSummary {
  const none = { used: 0, reserved: 0, limit: null, ratio: null, estimated: false };
  return {
    goal_id: 'g1',
    state: 'eligible',
    reason: 'eligible for the next turn',
    compute: 1,
    window_hours: 5,
    slot_minutes: 30,
    allowed_slots: 10,
    spent_slots: 3,
    reserved_slots: 0,
    remaining_slots: 7,
    budgets: { max_cost_usd: none, max_tokens: none, max_turn_minutes: none },
    warn: false,
    exceeded: false,
    next_slot_frees_at: null,
    config_warnings: [],
    ...extra,
  };
}

describe('the warnings webview model', () => {
  it('puts the compared texts side by side with when each was written, and keeps hostile text as data', () => {
    const { cards, targets } = buildCards([
      { key: 'r#g1', goalId: 'g1', displayName: HOSTILE, status: statusItem([mismatch()]) },
    ]);
    assert.equal(cards.length, 1);
    const card = cards[0]!;
    assert.equal(card.goal_name, HOSTILE, 'text is carried verbatim; the webview writes it as text nodes');
    assert.deepEqual(
      card.compared.map((c) => [c.label, c.value, c.written_at]),
      [
        ['Durable Next Action', 'Write the parser', '2026-01-02T00:00:00Z'],
        ["Latest run's recommended action", HOSTILE, '2026-01-01T00:00:00Z'],
      ],
    );
    assert.deepEqual(
      card.actions.map((a) => a.kind),
      ['set_next_action', 'refresh_state', 'keep_route', 'open_state'],
    );
    const target = targets.get(card.key);
    assert.equal(target?.proposedNextAction, HOSTILE);
    assert.equal(target?.currentNextAction, 'Write the parser');
    assert.ok(hostToWarningsSchema.safeParse({ type: 'render', cards, goal_count: 1 }).success);
  });

  it('shows state-file errors and diagnostics as cards, errors first', () => {
    const { cards } = buildCards([
      {
        key: 'r#g1',
        goalId: 'g1',
        displayName: 'g1',
        status: statusItem([mismatch()], {
          state_diagnostics: {
            parseable: true,
            migration_ready: false,
            warning_count: 1,
            error_count: 0,
            warnings: [{ kind: 'duplicate_todo_id', line: 12, message: 'todo_a appears twice' }],
            errors: [],
          },
          active_state: {
            available: false,
            status: null,
            updated_at: null,
            sha256_16: null,
            error: { code: 'x', message: 'bad front matter' },
          },
        }),
      },
    ]);
    assert.deepEqual(
      cards.map((c) => [c.severity, c.kind]),
      [
        ['error', 'state_file_error'],
        ['warning', 'state_diagnostic:duplicate_todo_id'],
        ['warning', 'next_action_projection_mismatch'],
      ],
    );
    assert.equal(cards[1]?.actions[0]?.detail, 'line 12');
  });

  it('shows an open replan obligation as a card with its stalled turns and the action that discharges it', () => {
    const obligation = ReplanObligationSchema.parse({
      schema_version: 'autonomous_replan_obligation_v0',
      obligation_id: 'replan-0123456789abcdef',
      required: true,
      stall_threshold: 2,
      trigger_count: 1,
      triggers: [
        {
          kind: 'run_history_no_progress_repeat',
          section: 'run_history',
          text: `the latest 2 runs repeated ${HOSTILE} without material progress`,
          run_count: 2,
          latest_generated_at: '2026-01-02T00:00:00Z',
          agent_id: 'agent-a',
        },
      ],
      guidance_actions: ['keep', 'split'],
      stop_condition: 'stop if private',
      recommended_action: 'replan before another turn repeats the stalled action',
      agent_id: 'agent-a',
      discharge_command: 'loopx refresh-state …',
    });
    const run = (at: string, turn: string) => ({
      generated_at: at,
      classification: 'monitor_no_progress',
      recommended_action: HOSTILE,
      todo_id: null,
      turn_instance_id: turn,
    });
    const { cards, targets } = buildCards([
      {
        key: 'r#g1',
        goalId: 'g1',
        displayName: 'g1',
        status: statusItem([mismatch()], {
          replan_obligations: [
            {
              agent_id: 'agent-a',
              obligation,
              stalled_runs: [run('2026-01-02T00:00:00Z', 'T2'), run('2026-01-01T00:00:00Z', 'T1')],
              since: '2026-01-01T00:00:00Z',
            },
          ],
        }),
      },
    ]);
    const card = cards.find((c) => c.kind === 'autonomous_replan_required');
    assert.ok(card);
    assert.equal(card.title, 'Replan required: lane agent-a stalled');
    assert.match(card.message, /since 2026-01-01T00:00:00Z/);
    assert.ok(card.message.includes(HOSTILE), 'hostile text stays data; the webview writes text nodes');
    assert.deepEqual(
      card.compared.map((c) => [c.label, c.written_at]),
      [
        ['Stalled turn 2 (T2)', '2026-01-02T00:00:00Z'],
        ['Stalled turn 1 (T1)', '2026-01-01T00:00:00Z'],
      ],
    );
    assert.deepEqual(
      card.actions.map((a) => a.kind),
      ['record_replan', 'open_state'],
    );
    assert.deepEqual(targets.get(card.key)?.replan, { obligationId: 'replan-0123456789abcdef', agentId: 'agent-a' });
    assert.ok(hostToWarningsSchema.safeParse({ type: 'render', cards, goal_count: 1 }).success);
  });

  it('accepts only well-formed messages from the webview (no texts, only a card key and a known action)', () => {
    assert.ok(warningsToHostSchema.safeParse({ type: 'ready' }).success);
    assert.ok(warningsToHostSchema.safeParse({ type: 'act', key: 'k', action: 'refresh_state' }).success);
    for (const bad of [
      null,
      'ready',
      { type: 'act', key: 'k', action: 'rm -rf' },
      { type: 'act', key: '', action: 'refresh_state' },
      { type: 'act', key: 'k', action: 'set_next_action', text: 'smuggled' },
      { type: 'ready', extra: 1 },
    ])
      assert.equal(warningsToHostSchema.safeParse(bad).success, false, JSON.stringify(bad));
  });
});

describe('the goal detail chart data', () => {
  const detail: GoalDetail = {
    goal_id: 'g1',
    goal_name: 'g1',
    quota: {
      state: 'eligible',
      reason: '',
      window_start: '2026-01-01T00:00:00Z',
      window_end: '2026-01-01T05:00:00Z',
      window_hours: 5,
      allowed_slots: 4,
      spent_slots: 3,
      warn: false,
      exceeded: false,
      cost: { used: 0.5, limit: 2 },
      tokens: null,
    },
    spends: [
      { at: '2026-01-01T01:00:00Z', slots: 1, tokens: 100, cost_usd: 0.2 },
      { at: '2026-01-01T02:00:00Z', slots: 2, tokens: null, cost_usd: 0.3 },
    ],
    frontier: { open: 1, claimed: 0, blocked: 1, done: 2 },
    runs: [],
    timeline: { log_exists: false, total_events: 0, turns: [], error: null },
  };

  it('plots running totals from 0 at the window start to the window end', () => {
    const s = cumulativeSpend(detail);
    const t0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
    assert.deepEqual(s.x, [t0, t0 + 3600, t0 + 7200, t0 + 18000]);
    assert.deepEqual(s.slots, [0, 1, 3, 3]);
    assert.deepEqual(s.cost, [0, 0.2, 0.5, 0.5]);
    assert.deepEqual(s.tokens, [0, 100, 100, 100]);
  });

  it('validates the render message', () => {
    assert.ok(
      hostToDetailSchema.safeParse({ type: 'render', detail, ref: { registryPath: '/r', goalId: 'g1' } }).success,
    );
    assert.equal(hostToDetailSchema.safeParse({ type: 'render', detail }).success, false);
  });
});

describe('the goal detail event timeline', () => {
  const event = (kind: string, at: string, run?: string, extra: Partial<RolloutEvent> = {}): RolloutEvent => ({
    schema_version: 'loopx_rollout_event_v0',
    goal_id: 'g1',
    event_kind: kind,
    recorded_at: at,
    agent_id: 'agent-a',
    ...(run === undefined ? {} : { run_id: run }),
    ...extra,
  });

  it('groups the events by turn, newest turn first, each in order, with no-turn events in their own groups', () => {
    const turns = eventTimeline([
      event('todo_add', '2026-01-01T00:00:00Z', undefined, { todo_id: 'todo_a', summary: HOSTILE }),
      event('quota_should_run', '2026-01-01T01:00:00Z', 'T1', { details: { effective_action: 'normal_run' } }),
      event('refresh_state', '2026-01-01T01:10:00Z', 'T1', { classification: 'validated_progress' }),
      event('quota_should_run', '2026-01-01T02:00:00Z', 'T2'),
      event('quota_spend', '2026-01-01T01:20:00Z', 'T1'),
      event('todo_complete', '2026-01-01T02:30:00Z', 'T2', { details: { todo_id: 'todo_a' } }),
    ]);
    assert.deepEqual(
      turns.map((t) => [t.turn_instance_id, t.event_count, t.first_at, t.last_at]),
      [
        ['T2', 2, '2026-01-01T02:00:00Z', '2026-01-01T02:30:00Z'],
        ['T1', 3, '2026-01-01T01:00:00Z', '2026-01-01T01:20:00Z'],
        [null, 1, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'],
      ],
    );
    assert.deepEqual(
      turns[1]?.events.map((e) => [e.kind, e.text]),
      [
        ['quota_should_run', 'normal_run'],
        ['refresh_state', 'validated_progress'],
        ['quota_spend', 'quota spend'],
      ],
    );
    assert.equal(turns[0]?.events[1]?.todo_id, 'todo_a', 'a todo named in the details counts');
    assert.equal(turns[2]?.events[0]?.text, HOSTILE, 'hostile text stays data; the webview writes text nodes');
  });

  it('keeps at most the newest events of a turn and the newest turns, and counts them all', () => {
    const many = Array.from({ length: TIMELINE_EVENTS_PER_TURN + 5 }, (_, i) =>
      event('quota_should_run', new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), 'T1'),
    );
    const [turn] = eventTimeline(many);
    assert.equal(turn?.event_count, TIMELINE_EVENTS_PER_TURN + 5);
    assert.equal(turn?.events.length, TIMELINE_EVENTS_PER_TURN);
    assert.equal(turn?.events[0]?.at, many[5]?.recorded_at);
    const turns = eventTimeline(
      Array.from({ length: TIMELINE_TURNS + 3 }, (_, i) =>
        event('quota_should_run', new Date(Date.UTC(2026, 0, 1, i)).toISOString(), `T${i}`),
      ),
    );
    assert.equal(turns.length, TIMELINE_TURNS);
    assert.equal(turns[0]?.turn_instance_id, `T${TIMELINE_TURNS + 2}`);
  });
});

describe('the status-bar quota indicator', () => {
  const input = (q: GoalQuotaSummary | undefined, extra: Partial<IndicatorInput> = {}): IndicatorInput => ({
    goalId: 'g1',
    displayName: 'g1',
    quota: q,
    openGates: 0,
    error: null,
    ...extra,
  });

  it('has a distinct icon and word per state; a quiet wait is not a failure', () => {
    const cases: [IndicatorInput, string, string][] = [
      [input(quota()), 'eligible', 'play-circle'],
      [input(quota({ reserved_slots: 1 })), 'running', 'sync~spin'],
      [input(quota(), { openGates: 1, loopRunning: true }), 'running', 'sync~spin'],
      [input(quota({ state: 'waiting', reason: 'waiting on external evidence' })), 'waiting', 'watch'],
      [input(quota({ state: 'focus_wait' })), 'waiting', 'watch'],
      [input(quota(), { openGates: 2 }), 'needs_you', 'bell-dot'],
      [input(quota({ state: 'throttled', exceeded: true })), 'throttled', 'dashboard'],
      [input(quota({ state: 'paused', allowed_slots: 0 })), 'paused', 'debug-pause'],
      [input(undefined), 'error', 'error'],
      [input(quota({ state: 'blocked_health' })), 'error', 'error'],
    ];
    for (const [i, kind, icon] of cases) {
      const p = presentIndicator(i);
      assert.deepEqual([p.kind, p.icon], [kind, icon], JSON.stringify(i.quota?.state));
      assert.ok(p.text.startsWith(`$(${icon}) g1`), p.text);
    }
    assert.equal(presentIndicator(input(quota({ state: 'waiting' }))).background, null);
    assert.equal(new Set(cases.map(([i]) => presentIndicator(i).icon)).size, 7);
    assert.equal(presentIndicator(input(quota(), { openGates: 1, loopRunning: false })).kind, 'needs_you');
  });

  it('turns warning at warn_ratio and error at the limit, and shows the cost budget when set', () => {
    assert.equal(presentIndicator(input(quota({ warn: true }))).background, 'warning');
    assert.equal(
      presentIndicator(input(quota({ warn: true, exceeded: true, state: 'throttled' }))).background,
      'error',
    );
    const cost = { used: 1.5, reserved: 0, limit: 2, ratio: 0.75, estimated: false };
    const p = presentIndicator(input(quota({ budgets: { ...quota().budgets, max_cost_usd: cost } })));
    assert.equal(p.text, '$(play-circle) g1 3/10 · $1.50/$2.00 · eligible');
    assert.ok(p.details.includes('Cost: $1.50 of $2.00'));
  });

  it('escalates overdue gates of the workspace: a bell with the count, an error background, a detail line', () => {
    const p = presentIndicator(input(quota(), { overdueGates: 2 }));
    assert.equal(p.text, '$(play-circle) g1 3/10 · eligible · $(bell-dot) 2 overdue');
    assert.equal(p.background, 'error');
    assert.ok(p.details.includes('2 gates are past their due time'));
    assert.equal(presentIndicator(input(quota(), { overdueGates: 0 })).background, null);
  });

  it('ranks the goal with the least headroom first', () => {
    assert.ok(headroomRatio(quota({ spent_slots: 9 })) > headroomRatio(quota({ spent_slots: 1 })));
    const budget = { used: 9, reserved: 0, limit: 10, ratio: 0.9, estimated: false };
    assert.ok(headroomRatio(quota({ spent_slots: 1, budgets: { ...quota().budgets, max_tokens: budget } })) >= 0.9);
    const goals: [string, ReturnType<typeof quota> | undefined][] = [
      ['paused-full', quota({ spent_slots: 10, state: 'paused' })],
      ['roomy', quota({ spent_slots: 1 })],
      ['tight', quota({ spent_slots: 9 })],
      ['tight-too', quota({ spent_slots: 9 })],
    ];
    const quotaOf = (goal: (typeof goals)[number]) => goal[1];
    assert.equal(leastHeadroom(goals, quotaOf)?.[0], 'tight', 'least headroom first, the first listed on a tie');
    assert.equal(
      leastHeadroom(
        goals.filter(([name]) => name.startsWith('paused') || name === 'roomy'),
        quotaOf,
      )?.[0],
      'roomy',
      'a paused goal comes after any running one',
    );
    assert.equal(leastHeadroom([], quotaOf), undefined);
  });
});
