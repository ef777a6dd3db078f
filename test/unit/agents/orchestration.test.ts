import assert from 'node:assert/strict';
import {
  coerceInt,
  compactOrchestrationPolicy,
  exploreHarnessGate,
  maxConcurrentTurns,
  normalizeExploreHarnessProfile,
  orchestrationSummary,
  peerCoordinator,
} from '../../../src/core/registry/orchestration';

describe('orchestration policy', () => {
  it('coerces integers like the original', () => {
    assert.equal(coerceInt(true), 0);
    assert.equal(coerceInt(2.9), 2);
    assert.equal(coerceInt(-2.9), -2);
    assert.equal(coerceInt(' 3 '), 3);
    assert.equal(coerceInt('3.5'), 0);
    assert.equal(coerceInt(null), 0);
    assert.equal(coerceInt(Number.NaN), 0);
  });

  it('case 14 (fixed): the string "false" does not allow spawning', () => {
    assert.deepEqual(compactOrchestrationPolicy(null), { mode: 'default', spawn_allowed: false, max_children: 0 });
    // The original gave {multi_subagent, true, 3}.
    assert.deepEqual(compactOrchestrationPolicy({ allowed: 'false', max_children: '3' }), {
      mode: 'default',
      spawn_allowed: false,
      max_children: 3,
    });
    assert.deepEqual(compactOrchestrationPolicy({ allowed: 'true', max_children: 3 }), {
      mode: 'default',
      spawn_allowed: false,
      max_children: 3,
    });
    assert.deepEqual(compactOrchestrationPolicy({ allowed: true, max_children: '3' }), {
      mode: 'multi_subagent',
      spawn_allowed: true,
      max_children: 3,
    });
  });

  it('reads the legacy spawn_allowed only when allowed is absent', () => {
    assert.equal(compactOrchestrationPolicy({ spawn_allowed: true, max_children: 2 }).spawn_allowed, true);
    assert.equal(
      compactOrchestrationPolicy({ allowed: false, spawn_allowed: true, max_children: 2 }).spawn_allowed,
      false,
    );
  });

  it('case 15 (fixed): an explicit multi_subagent mode without spawning is reported as default', () => {
    // The original gave {multi_subagent, false, 0}.
    assert.deepEqual(compactOrchestrationPolicy({ mode: 'multi_subagent' }), {
      mode: 'default',
      spawn_allowed: false,
      max_children: 0,
    });
    assert.deepEqual(compactOrchestrationPolicy({ mode: 'bogus', spawn_allowed: true, max_children: 2.9 }), {
      mode: 'multi_subagent',
      spawn_allowed: true,
      max_children: 2,
    });
    assert.equal(compactOrchestrationPolicy({ mode: ' default ', allowed: true, max_children: 2 }).mode, 'default');
    assert.equal(
      compactOrchestrationPolicy({ orchestration_mode: 'multi_subagent', allowed: true, max_children: 1 }).mode,
      'multi_subagent',
    );
  });

  it('case 16 (fixed): allowed_domains drops null instead of keeping "None"', () => {
    // The original gave {default, true, 0, ["a", "None", "5"]}.
    assert.deepEqual(
      compactOrchestrationPolicy({ allowed: true, max_children: -4, allowed_domains: ['a', ' ', null, 5] }),
      {
        mode: 'default',
        spawn_allowed: true,
        max_children: 0,
        allowed_domains: ['a', '5'],
      },
    );
    assert.equal(compactOrchestrationPolicy({ allowed_domains: [null, ' '] }).allowed_domains, undefined);
    assert.equal(compactOrchestrationPolicy({ allowed_domains: 'a' }).allowed_domains, undefined);
  });

  it('case 17: the explore harness opts in only with a real boolean true', () => {
    assert.deepEqual(
      compactOrchestrationPolicy({ explore_harness: { enabled: 'true', profile: ' moe-router ' } }).explore_harness,
      { enabled: false, profile: 'moe-router' },
    );
    assert.deepEqual(compactOrchestrationPolicy({ explore_harness: { enabled: true } }).explore_harness, {
      enabled: true,
    });
    assert.equal('explore_harness' in compactOrchestrationPolicy({ explore_harness: true }), false);
  });

  it('case 18: summary line', () => {
    assert.equal(
      orchestrationSummary({
        allowed: true,
        max_children: 3,
        explore_harness: { enabled: true, profile: 'moe-router' },
      }),
      'mode=multi_subagent spawn_allowed=True max_children=3 explore_harness=on(moe-router)',
    );
    assert.equal(
      orchestrationSummary({ allowed: true, max_children: 3, explore_harness: { enabled: true } }),
      'mode=multi_subagent spawn_allowed=True max_children=3 explore_harness=on',
    );
    assert.equal(
      orchestrationSummary({ allowed: true, max_children: 3, explore_harness: { enabled: false } }),
      'mode=multi_subagent spawn_allowed=True max_children=3 explore_harness=off',
    );
    assert.equal(
      orchestrationSummary({ allowed: true, max_children: 3 }),
      'mode=multi_subagent spawn_allowed=True max_children=3',
    );
  });

  it('normalizes explore-harness profiles', () => {
    assert.equal(normalizeExploreHarnessProfile(' Adaptive_Resilient '), 'adaptive-resilient');
    assert.equal(normalizeExploreHarnessProfile('MoE Router'), 'moe-router');
    assert.equal(normalizeExploreHarnessProfile('fast'), null);
  });

  it('case 19: explore-harness gate states and width caps', () => {
    for (const policy of [
      null,
      {},
      { spawn_allowed: true, max_children: 5 },
      { explore_harness: { enabled: 'true' } },
      { explore_harness: { enabled: 1 } },
    ]) {
      const gate = exploreHarnessGate(policy);
      assert.equal(gate.state, 'disabled', JSON.stringify(policy));
      assert.equal(gate.reason, 'explore_harness_opt_in_required');
      assert.equal(gate.width, 0);
    }
    const harness = { enabled: true };
    const noSpawn = exploreHarnessGate({ explore_harness: harness });
    assert.deepEqual(
      [noSpawn.state, noSpawn.reason, noSpawn.width],
      ['analysis_only', 'spawn_not_allowed_by_goal_boundary', 0],
    );
    const noChildren = exploreHarnessGate({ explore_harness: harness, spawn_allowed: true });
    assert.deepEqual([noChildren.state, noChildren.reason], ['analysis_only', 'spawn_allowed_without_child_capacity']);

    const open = exploreHarnessGate(
      { explore_harness: harness, spawn_allowed: true, max_children: 3 },
      { requestedWidth: 10 },
    );
    assert.deepEqual(
      [open.state, open.reason, open.width, open.width_cap_source],
      ['commands_suggested', 'goal_boundary_opt_in', 3, 'max_children'],
    );
    const wide = exploreHarnessGate(
      { explore_harness: harness, spawn_allowed: true, max_children: 99 },
      { requestedWidth: 99 },
    );
    assert.deepEqual([wide.width, wide.width_cap_source], [16, 'max_worker_lanes']);
    const branches = exploreHarnessGate(
      { explore_harness: harness, allowed: true, max_children: 99 },
      { requestedWidth: 99, fanout: 'todo_branches' },
    );
    assert.deepEqual([branches.width, branches.width_cap_source], [8, 'max_todo_branches']);
    const tie = exploreHarnessGate({ explore_harness: harness, allowed: true, max_children: 4 }, { requestedWidth: 4 });
    assert.equal(tie.width_cap_source, 'max_children');
    const requested = exploreHarnessGate(
      { explore_harness: harness, allowed: true, max_children: 9 },
      { requestedWidth: 2 },
    );
    assert.deepEqual([requested.width, requested.width_cap_source], [2, 'requested']);
  });

  it('case 19: a goal-pinned profile overrides the request, and a bad pinned profile fails the gate', () => {
    const pinned = exploreHarnessGate(
      { explore_harness: { enabled: true, profile: 'moe-router' }, allowed: true, max_children: 2 },
      { requestedProfile: 'generic' },
    );
    assert.deepEqual([pinned.ok, pinned.profile, pinned.profile_source], [true, 'moe-router', 'goal_pinned']);
    const requested = exploreHarnessGate(
      { explore_harness: { enabled: true }, allowed: true, max_children: 2 },
      { requestedProfile: 'adaptive-resilient' },
    );
    assert.deepEqual([requested.profile, requested.profile_source], ['adaptive-resilient', 'requested']);
    assert.deepEqual([exploreHarnessGate({}).profile, exploreHarnessGate({}).profile_source], ['generic', 'default']);
    const bad = exploreHarnessGate({
      explore_harness: { enabled: true, profile: 'turbo' },
      allowed: true,
      max_children: 2,
    });
    assert.equal(bad.ok, false);
    assert.match(bad.error ?? '', /'turbo' is not one of generic, adaptive-resilient, moe-router/);
  });

  it('case 20: the peer coordinator is opt-in by a valid agent id', () => {
    assert.deepEqual(
      peerCoordinator({ id: 'g', coordination: { peer_task_coordination: { coordinator_agent_id: 'Codex Alpha' } } }),
      { enabled: true, coordinator_agent_id: 'codex-alpha' },
    );
    assert.equal(
      peerCoordinator({ id: 'g', coordination: { peer_task_coordination: { coordinator_agent_id: '9x' } } }),
      null,
    );
    assert.equal(peerCoordinator({ id: 'g', coordination: { registered_agents: ['a'] } }), null);
  });

  it('runs turns one at a time unless spawning is allowed with child capacity', () => {
    assert.equal(maxConcurrentTurns(null), 1);
    assert.equal(maxConcurrentTurns({ allowed: 'true', max_children: 3 }), 1);
    assert.equal(maxConcurrentTurns({ allowed: true, max_children: 0 }), 1);
    assert.equal(maxConcurrentTurns({ allowed: true, max_children: 3 }), 3);
    assert.equal(maxConcurrentTurns({ allowed: true, max_children: 3 }, 2), 2);
    assert.equal(maxConcurrentTurns({ allowed: true, max_children: 3 }, 0), 1);
    assert.equal(maxConcurrentTurns({ mode: 'default', allowed: true, max_children: 3 }), 1);
  });
});
