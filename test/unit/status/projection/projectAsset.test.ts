import assert from 'node:assert/strict';
import {
  attentionRunFields,
  compactExecutionProfile,
  itemAttentionFields,
  latestValidation,
  projectAsset,
  todoOverview,
  type ProjectAssetItem,
} from '../../../../src/core/status/projection/projectAsset';
import { structuredTodo } from '../../../../src/core/status/projection/compactTodoItem';
import { todoLists, type ListedTodo } from '../../../../src/core/status/projection/todoLists';
import type { StatusTodoSummary } from '../../../../src/core/status/goalStatusSchema';

/**
 * The original's `project_asset` block (loopx/control_plane/work_items/project_asset.py and monitor_display.py), rule
 * by rule, on items of every route: owner, gate code, support mode, stop condition, the approved command, a quiet
 * monitor, the execution profile and orchestration from the registry, the latest validation, the run attention fields,
 * the todo overviews and the quota summary. The mixed tier compares whole blocks with the original's.
 */

const CADENCE = { schema_version: 'cadence_hint_v0', signal: 'unknown', recommendation: 'keep', reason_codes: [] };

function item(over: Partial<ProjectAssetItem> = {}): ProjectAssetItem {
  return {
    status: 'active_state_agent_todo',
    waiting_on: 'codex',
    severity: 'action',
    recommended_action: 'Do the work',
    latest_run_recommended_action: null,
    latest_run_recommended_action_source: null,
    long_task_cadence_hint: CADENCE,
    user_todos: null,
    agent_todos: null,
    ...over,
  } as ProjectAssetItem;
}

let nextIndex = 1;
function todo(over: Partial<ListedTodo> = {}): ListedTodo {
  const index = over.index ?? nextIndex++;
  return {
    index,
    status: 'open',
    text: `Step ${index}`,
    todo_id: `todo_t${index}`,
    priority: null,
    title: `Step ${index}`,
    claimed_by: null,
    task_class: null,
    resumeHolds: true,
    hasResumeWhen: false,
    metadata: {},
    ...over,
    // Structured again for its summary's role and section (summary() below).
    structured: structuredTodo(
      { index, status: 'open', text: '', todo_id: '', priority: null, title: '', metadata: {} },
      'agent',
      null,
    ),
  };
}

/** The todo as its summary lists it: the class and claim in its metadata, structured for the role and section. */
function listed(t: ListedTodo, role: 'user' | 'agent', section: string | null): ListedTodo {
  const metadata = {
    ...(t.task_class !== null ? { task_class: t.task_class } : {}),
    ...(t.claimed_by !== null ? { claimed_by: t.claimed_by } : {}),
    ...t.metadata,
  };
  return { ...t, metadata, structured: structuredTodo({ ...t, metadata }, role, section) };
}

function summary(
  given: ListedTodo[],
  role: 'user' | 'agent',
  section: string | null = 'Agent Todo',
): StatusTodoSummary {
  const todos = given.map((t) => listed(t, role, section));
  const open = todos.filter((t) => t.status !== 'done' && t.status !== 'deferred');
  const deferred = todos.filter((t) => t.status === 'deferred').length;
  const claimed = open.filter((t) => t.claimed_by !== null).length;
  return {
    schema_version: 'todo_summary_v0',
    source_section: section,
    total_count: todos.length,
    open_count: open.length,
    done_count: todos.length - open.length,
    blocked_count: 0,
    deferred_count: deferred,
    items: [],
    ...(claimed > 0 ? { claimed_open_count: claimed, unclaimed_open_count: open.length - claimed } : {}),
    ...todoLists(todos),
  } as unknown as StatusTodoSummary;
}

describe('status items: the project_asset block (the original project_asset.py, rule by rule)', () => {
  beforeEach(() => {
    nextIndex = 1;
  });

  it('owner is who the item waits on; the gate code, support mode and stop condition follow the wait', () => {
    const cases: [Partial<ProjectAssetItem>, string, string, string, string][] = [
      [
        { status: 'active_state_user_gate', waiting_on: 'controller' },
        'controller',
        'active_state_user_gate',
        'decision_support',
        'stop until the controller or owner resolves this gate',
      ],
      [
        { status: 'needs_operator_review', waiting_on: 'user_or_controller' },
        'user_or_controller',
        'needs_operator_review',
        'decision_support',
        'stop until the user or controller decision is recorded',
      ],
      [
        { status: 'await_ci', waiting_on: 'external_evidence', severity: 'watch' },
        'external_evidence',
        'external_evidence',
        'read_only_observer',
        'stop until external evidence changes',
      ],
      [
        {},
        'codex',
        'none',
        'selective_assist',
        'stop if the next action needs reward, gate approval, write control, or production access',
      ],
    ];
    for (const [over, owner, gate, support, stop] of cases) {
      const asset = projectAsset(item(over), undefined);
      assert.deepEqual(
        [asset.owner, asset.gate, asset.support_mode, asset.stop_condition, asset.next_action],
        [owner, gate, support, stop, 'Do the work'],
        JSON.stringify(over),
      );
    }
  });

  it('an operator question, then a missing gate, names the gate; a handoff condition is the stop; "reward" wins', () => {
    const asked = projectAsset(
      item({ waiting_on: 'user_or_controller', operator_question: 'Approve?', missing_gates: ['write_gate'] }),
      undefined,
    );
    assert.equal(asked.gate, 'operator_question');
    const missing = projectAsset(item({ missing_gates: ['write_gate', 'prod_gate'] }), undefined);
    assert.deepEqual([missing.gate, missing.support_mode], ['write_gate', 'decision_support']);
    const handoff = projectAsset(item({ next_handoff_condition: 'after the review' }), undefined);
    assert.equal(handoff.stop_condition, 'after the review');
    const reward = projectAsset(item({ recommended_action: 'Record the human Reward for the run' }), undefined);
    assert.equal(reward.support_mode, 'reward_capture');
    // A connected goal without runs: the mode was read from the route's words, before its todo became the action.
    const connected = projectAsset(
      item({ status: 'connected_without_run', recommended_action: 'Record the human Reward for the run' }),
      undefined,
    );
    assert.deepEqual(
      [connected.support_mode, connected.next_action],
      ['selective_assist', 'Record the human Reward for the run'],
    );
  });

  it('an approved agent command is the next safe command (public-safe) and changes the stop condition', () => {
    const asset = projectAsset(
      item({ waiting_on: 'controller', agent_command: 'loopx read-only-map --goal-id g --dry-run' }),
      undefined,
    );
    assert.equal(asset.next_safe_command, 'loopx read-only-map --goal-id g --dry-run');
    const codex = projectAsset(item({ agent_command: 'run it' }), undefined);
    assert.equal(codex.stop_condition, 'stop if the command fails or needs write, production, or additional approval');
    const leaky = projectAsset(item({ agent_command: 'cat /home/me/.secrets/key' }), undefined);
    assert.equal(leaky.next_safe_command, undefined);
    assert.equal(projectAsset(item(), undefined).next_safe_command, undefined);
  });

  it('a quiet monitor: owner monitor_signal, gate none, observer, the monitor stop and its display block', () => {
    const asset = projectAsset(
      item({
        waiting_on: 'monitor_signal',
        severity: 'watch',
        execution_waiting_on: 'codex',
        execution_severity: 'action',
        recommended_action: 'No immediate agent work; monitor quietly. Context: Watch',
      }),
      undefined,
    );
    assert.deepEqual(
      [asset.owner, asset.gate, asset.support_mode, asset.stop_condition],
      [
        'monitor_signal',
        'none',
        'read_only_observer',
        'stop until a material monitor transition, regression, or concrete blocker appears',
      ],
    );
    assert.deepEqual(asset.monitor_display?.['execution_waiting_on'], 'codex');
    assert.equal(projectAsset(item(), undefined).monitor_display, undefined);
  });

  it('copies the item signals when set, and only then', () => {
    const warning = { kind: 'stale_latest_run_projection' };
    const asset = projectAsset(
      item({
        latest_run_recommended_action: 'Next',
        latest_run_recommended_action_source: 'latest_status_run',
        active_state_next_action: 'Do it',
        stale_latest_run_warning: warning as never,
        completed_todo_archive_warning: { kind: 'completed_agent_todo_archive_required' } as never,
        issue_meta_surface: { schema_version: 'issue_meta_surface_v0' } as never,
      }),
      undefined,
    );
    assert.deepEqual(asset['completed_todo_archive_warning'], { kind: 'completed_agent_todo_archive_required' });
    assert.deepEqual(asset['issue_meta_surface'], { schema_version: 'issue_meta_surface_v0' });
    assert.equal(asset['latest_run_recommended_action'], 'Next');
    assert.equal(asset['latest_run_recommended_action_source'], 'latest_status_run');
    assert.equal(asset['active_state_next_action'], 'Do it');
    assert.deepEqual(asset['stale_latest_run_warning'], warning);
    assert.deepEqual(asset['long_task_cadence_hint'], CADENCE);
    const bare = projectAsset(item(), undefined);
    for (const key of [
      'latest_run_recommended_action',
      'active_state_next_action',
      'stale_latest_run_warning',
      'completed_todo_archive_warning',
      'issue_meta_surface',
    ])
      assert.equal(key in bare, false, key);
  });

  it('the execution profile is the default over the registry, labels and positive integers only; fine granularity', () => {
    const defaults = compactExecutionProfile(undefined);
    assert.equal(defaults['cadence'], 'bounded_progress_segment');
    assert.deepEqual(defaults['degradation_policy'], {
      small_scale_streak_threshold: 2,
      on_degradation: 'require_blocker_or_expand_next_batch',
    });
    const custom = compactExecutionProfile({
      cadence: 'has spaces',
      minimum_scale: 'single_surface',
      must_include: ['ok_label', 'bad label'],
      outcome_floor: { surface_streak_threshold: '4', outcome_markers: ['shipped'] },
      degradation_policy: { small_scale_streak_threshold: 0 },
    });
    assert.equal(custom['cadence'], 'bounded_progress_segment');
    assert.equal(custom['minimum_scale'], 'single_surface');
    assert.deepEqual(custom['must_include'], ['ok_label']);
    const floor = custom['outcome_floor'] as Record<string, unknown>;
    assert.deepEqual([floor['surface_streak_threshold'], floor['outcome_markers']], [4, ['shipped']]);
    assert.equal((custom['degradation_policy'] as Record<string, unknown>)['small_scale_streak_threshold'], 2);
    const fine = compactExecutionProfile({ turn_granularity: 'Fine' });
    assert.deepEqual(
      [fine['turn_granularity'], fine['minimum_scale'], fine['checkpoint_accounting']],
      ['fine', 'single_surface', 'advancement_only'],
    );
    assert.equal((fine['degradation_policy'] as Record<string, unknown>)['small_scale_streak_threshold'], 5);
    assert.equal('turn_granularity' in compactExecutionProfile({ turn_granularity: 'standard' }), false);
    // The block: the profile always, the orchestration only with a spawn policy.
    assert.deepEqual(projectAsset(item(), undefined).execution_profile, defaults);
    assert.equal(projectAsset(item(), {}).orchestration, undefined);
    assert.deepEqual(projectAsset(item(), { spawn_policy: { allowed: true, max_children: 2 } }).orchestration, {
      mode: 'multi_subagent',
      spawn_allowed: true,
      max_children: 2,
    });
  });

  it('the latest validation: time, classification, the health check (else the action) compacted; none when empty', () => {
    assert.deepEqual(
      latestValidation({
        generated_at: '2026-01-01T00:00:00Z',
        classification: 'validated_progress',
        health_check: 'tests   passed',
        recommended_action: 'next',
      }),
      { generated_at: '2026-01-01T00:00:00Z', classification: 'validated_progress', summary: 'tests passed' },
    );
    assert.deepEqual(latestValidation({ recommended_action: 'x'.repeat(300) })?.summary?.length, 260);
    assert.equal(latestValidation({ classification: '' }), null);
    assert.equal(latestValidation(null), null);
    // Ours: a summary naming a local path is left out.
    assert.deepEqual(latestValidation({ classification: 'c', recommended_action: 'see /home/me/notes.md' }), {
      classification: 'c',
    });
    assert.deepEqual(projectAsset(item({ latest_validation: { classification: 'c' } }), undefined).latest_validation, {
      classification: 'c',
    });
  });

  it("the run's attention fields: readiness stage, missing gates and handoff; an undecided gate's question", () => {
    assert.deepEqual(
      attentionRunFields(
        {
          goal_id: 'g',
          controller_readiness: { classification: 'gated', missing_gates: ['write', ''], next_handoff_condition: 'h' },
          operator_gate: { gate: 'g1', decision: 'defer', operator_question: 'Approve operator gate `g1` for `g`?' },
        },
        'g',
      ),
      {
        controller_stage: 'gated',
        missing_gates: ['write'],
        next_handoff_condition: 'h',
        operator_question: '是否同意 `g` 的 operator gate `g1`？',
      },
    );
    assert.deepEqual(
      attentionRunFields({ operator_gate: { decision: 'approve', agent_command: 'go', follow_up: 'then' } }, 'g'),
      { agent_command: 'go', next_handoff_condition: 'then' },
    );
    const run = { operator_gate: { decision: 'defer', operator_question: 'Q?' } };
    const route = (attentionSource: string, status = 's') =>
      itemAttentionFields({
        goalId: 'g',
        attentionSource,
        status,
        latestStatusRun: run,
        adapterStatus: null,
        adapterKind: null,
      });
    assert.deepEqual(route('latest_run'), { operator_question: 'Q?' });
    assert.deepEqual(route('registry'), { operator_question: 'Q?' });
    assert.deepEqual(route('run_history', 'run_artifact_missing'), { operator_question: 'Q?' });
    assert.deepEqual(route('active_state'), {});
    assert.deepEqual(route('run_history', 'connected_without_run'), {});
    // An approved gate asks nothing.
    assert.deepEqual(attentionRunFields({ operator_gate: { decision: 'approve', operator_question: 'Q?' } }, 'g'), {});
    assert.deepEqual(
      itemAttentionFields({
        goalId: 'g',
        attentionSource: 'registry',
        status: 'planned',
        latestStatusRun: null,
        adapterStatus: 'planned',
        adapterKind: 'x_read_only_map_v0',
      }),
      {
        operator_question: '是否同意 `g` 先执行 read-only map opt-in？',
        agent_command: 'loopx read-only-map --goal-id g --dry-run',
      },
    );
  });

  it("a registry wait over a run: the registry's own question (normalized) and handoff condition replace the run's", () => {
    const run = {
      operator_gate: { decision: 'defer', operator_question: 'Run Q?', follow_up: 'run follow-up' },
      controller_readiness: { classification: 'stage', missing_gates: ['g1'] },
    };
    const fields = (attentionSource: string, over: Record<string, string | null> = {}) =>
      itemAttentionFields({
        goalId: 'g',
        attentionSource,
        status: 's',
        latestStatusRun: run,
        adapterStatus: null,
        adapterKind: null,
        registryOperatorQuestion: 'Registry Q?',
        registryNextHandoffCondition: 'registry handoff',
        ...over,
      });
    assert.deepEqual(fields('registry'), {
      controller_stage: 'stage',
      missing_gates: ['g1'],
      operator_question: 'Registry Q?',
      next_handoff_condition: 'registry handoff',
    });
    // Only on the registry route; the run's own fields elsewhere, and when the entry has none.
    assert.deepEqual(fields('latest_run'), {
      controller_stage: 'stage',
      missing_gates: ['g1'],
      operator_question: 'Run Q?',
      next_handoff_condition: 'run follow-up',
    });
    assert.deepEqual(fields('registry', { registryOperatorQuestion: '', registryNextHandoffCondition: null }), {
      controller_stage: 'stage',
      missing_gates: ['g1'],
      operator_question: 'Run Q?',
      next_handoff_condition: 'run follow-up',
    });
    // A legacy default question reads as the default gate's question.
    assert.equal(
      fields('registry', { registryOperatorQuestion: 'Approve a read-only map opt-in for `g`?' }).operator_question,
      '是否同意 `g` 先执行 read-only map opt-in？',
    );
    // The block then asks the registry's question and stops at its handoff condition.
    const asset = projectAsset(item({ waiting_on: 'controller', status: 's', ...fields('registry') }), undefined);
    assert.deepEqual([asset.gate, asset.stop_condition], ['operator_question', 'registry handoff']);
  });

  it('a todo overview: counts, the first 3 open todos, next, claims, deferred and executable todos', () => {
    const todos = [
      todo({ claimed_by: 'codex-a' }),
      todo({ priority: 'P0', text: '[P0]   Urgent   one', title: 'Urgent one' }),
      todo({ task_class: 'continuous_monitor' }),
      todo({}),
      todo({ status: 'done' }),
      todo({ status: 'deferred', metadata: { reason: 'later' } }),
    ];
    const overview = todoOverview(summary(todos, 'agent'), 'agent');
    assert.deepEqual([overview.open, overview.done, overview.total], [4, 2, 6]);
    assert.equal(overview.projection_view['canonical_source'], 'attention_queue.items[].agent_todos');
    assert.deepEqual(
      overview.items?.map((t) => t['todo_id']),
      ['todo_t2', 'todo_t1', 'todo_t3'],
    );
    assert.equal(overview.next, '[P0] Urgent one');
    assert.equal(overview.next_index, 2);
    assert.equal(overview.next_claimed_by, undefined);
    assert.deepEqual([overview.claimed_open_count, overview.unclaimed_open_count], [1, 3]);
    assert.deepEqual(
      overview.first_executable_items?.map((t) => t['todo_id']),
      ['todo_t2', 'todo_t1', 'todo_t4'],
    );
    assert.deepEqual([overview.deferred_count, overview.deferred_visibility_limit], [1, 8]);
    assert.deepEqual(
      overview.deferred_items?.map((t) => [t['todo_id'], t['done'], 'reason' in t]),
      [['todo_t6', true, false]],
    );
    assert.equal(overview.claimed_advancement_open_count, 1);
    // The Next Action's todos (its lanes), 3 at most, only when the summary has some.
    assert.equal('active_next_action_items' in overview, false);
    const named = summary(todos, 'agent');
    named.active_next_action_items = [...named.backlog_items];
    named.active_next_action_executable_items = named.first_executable_items.slice(0, 1);
    const withLanes = todoOverview(named, 'agent');
    assert.deepEqual(
      withLanes.active_next_action_items?.map((t) => t['todo_id']),
      ['todo_t2', 'todo_t1', 'todo_t3'],
    );
    assert.deepEqual(
      withLanes.active_next_action_executable_items?.map((t) => t['todo_id']),
      ['todo_t2'],
    );
    // A todo shows only the display fields it has: no `null` claim, no note.
    const first = overview.items?.[0] ?? {};
    assert.equal('claimed_by' in first, false);
    // At most 3, whatever the list holds.
    const long = summary(todos, 'agent');
    long.first_open_items = [...long.first_open_items, ...long.backlog_items];
    assert.equal(todoOverview(long, 'agent').items?.length, 3);
    // Nothing open: no items, no next.
    const none = todoOverview(summary([todo({ status: 'done' })], 'user', 'User Todo'), 'user');
    assert.deepEqual([none.items, none.next, none.claimed_open_count], [undefined, undefined, undefined]);
  });

  it('both overviews when the state file has the sections; the projection gap names the roles without one', () => {
    const both = projectAsset(
      item({ user_todos: summary([], 'user', 'User Todo'), agent_todos: summary([todo({})], 'agent') }),
      undefined,
    );
    assert.ok(both.user_todos !== undefined && both.agent_todos !== undefined);
    assert.equal(both.todo_projection_gap, undefined);
    const noUserSection = projectAsset(
      item({ user_todos: summary([], 'user', null), agent_todos: summary([todo({})], 'agent') }),
      undefined,
    );
    assert.equal(noUserSection.user_todos, undefined);
    assert.deepEqual(noUserSection.todo_projection_gap?.missing_roles, ['user']);
    assert.deepEqual(projectAsset(item(), undefined).todo_projection_gap?.missing_roles, ['user', 'agent']);
  });

  it('the quota summary: compute, state, spent and allowed slots, the reason compacted to 220; none without a quota', () => {
    const asset = projectAsset(
      item({
        quota: { compute: 1, state: 'eligible', spent_slots: 2, allowed_slots: 48, reason: `a  ${'b'.repeat(300)}` },
      }),
      undefined,
    );
    assert.deepEqual(
      [asset.quota?.compute, asset.quota?.state, asset.quota?.spent_slots, asset.quota?.allowed_slots],
      [1, 'eligible', 2, 48],
    );
    assert.equal(asset.quota?.reason?.length, 220);
    assert.ok(asset.quota?.reason?.startsWith('a b'));
    assert.equal(projectAsset(item(), undefined).quota, undefined);
    assert.equal('reason' in (projectAsset(item({ quota: { state: 'eligible' } }), undefined).quota ?? {}), false);
  });
});
