import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import {
  applyGoalConfig,
  configureGoal,
  parseGoalConfigChanges,
  type GoalConfigInput,
} from '../../../src/core/agents/goalConfig';
import { fixedClock } from '../../../src/core/clock';
import { LoopxError } from '../../../src/core/errors';
import { connectedProject, goalOf, goalRefOf } from './helpers';

const clock = fixedClock('2026-01-15T10:00:00Z');

function rejection(input: GoalConfigInput): string {
  try {
    parseGoalConfigChanges(input);
  } catch (error) {
    assert.ok(error instanceof LoopxError);
    assert.equal(error.code, 'invalid_argument');
    return error.message;
  }
  assert.fail(`accepted ${JSON.stringify(input)}`);
}

describe('configure-goal', () => {
  it("rejects invalid values with the original's messages", () => {
    assert.match(rejection({ quotaCompute: '-0.1' }), /^quota_compute must be greater than or equal to 0/);
    assert.match(rejection({ quotaCompute: 'abc' }), /^--quota-compute must be a number/);
    assert.match(rejection({ quotaWindowHours: '0' }), /^quota_window_hours must be greater than 0/);
    assert.match(rejection({ quotaWindowHours: '-2' }), /^quota_window_hours must be greater than 0/);
    assert.match(
      rejection({ registeredAgents: ['a,9x'] }),
      /^registered agents must be public-safe tokens such as codex-main-control \(got '9x'/,
    );
    assert.match(rejection({ maxChildren: '2.5' }), /^--max-children must be a whole number/);
    assert.match(
      rejection({ exploreHarnessProfile: 'turbo' }),
      /^--explore-harness-profile must be one of generic, adaptive-resilient, moe-router/,
    );
    assert.match(rejection({ writeScope: ['/etc/**'] }), /relative to the goal's repo/);
    assert.match(rejection({ writeScope: ['src/../../x'] }), /relative to the goal's repo/);
    assert.match(rejection({}), /^nothing to configure/);
  });

  it('rejects what the original silently clamped or truncated', () => {
    assert.match(rejection({ quotaCompute: '1.5' }), /^--quota-compute must be less than or equal to 1/);
    assert.match(rejection({ quotaWindowHours: '0.5' }), /^--quota-window-hours must be a whole number of hours/);
  });

  it('parses and normalizes accepted values', () => {
    assert.deepEqual(
      parseGoalConfigChanges({
        quotaCompute: '0',
        quotaWindowHours: '12',
        registeredAgents: ['Codex Main, b', 'b'],
        maxChildren: '3',
        exploreHarnessProfile: 'MoE_Router',
      }),
      {
        quotaCompute: 0,
        quotaWindowHours: 12,
        registeredAgents: ['codex-main', 'b'],
        maxChildren: 3,
        exploreHarnessProfile: 'moe-router',
      },
    );
  });

  it('reports before, after and the changed fields', () => {
    const goal: Record<string, unknown> = {
      id: 'g',
      quota: { compute: 1 },
      spawn_policy: { spawn_allowed: true, max_children: 2 },
      coordination: { registered_agents: ['a'] },
    };
    const diff = applyGoalConfig(goal, {
      quotaCompute: 1,
      spawnAllowed: false,
      registeredAgents: ['a', 'b'],
      exploreHarness: true,
    });
    // The original's setting groups, in its order; the stored paths beside them.
    assert.deepEqual(diff.changed_fields, ['orchestration', 'registered_agents', 'configured_agent_model']);
    assert.deepEqual(diff.changed_paths, [
      'coordination.registered_agents',
      'coordination.agent_model',
      'spawn_policy.allowed',
      'spawn_policy.spawn_allowed',
      'spawn_policy.explore_harness.enabled',
    ]);
    assert.deepEqual(diff.before, {
      'quota.compute': 1,
      'coordination.registered_agents': ['a'],
      'coordination.agent_model': null,
      'spawn_policy.allowed': null,
      'spawn_policy.spawn_allowed': true,
      'spawn_policy.explore_harness.enabled': null,
    });
    assert.equal(
      diff.after['spawn_policy.spawn_allowed'],
      null,
      'the legacy spawn_allowed is removed so it cannot contradict allowed',
    );
    assert.deepEqual(goal['spawn_policy'], { max_children: 2, allowed: false, explore_harness: { enabled: true } });
  });

  it('previews without writing, then writes atomically under the lock and verifies', async () => {
    const { registry } = connectedProject({ quota: { compute: 1, slot_minutes: 1 } });
    const before = fs.readFileSync(registry, 'utf8');
    const changes = parseGoalConfigChanges({
      quotaCompute: '0',
      registeredAgents: ['codex-a'],
      writeScope: ['src/**'],
      spawnAllowed: true,
      maxChildren: '3',
      exploreHarnessProfile: 'generic',
    });

    const preview = await configureGoal(await goalRefOf(registry), {
      changes,
      execute: false,
      clock,
      env: {},
    });
    assert.deepEqual([preview.ok, preview.dry_run, preview.changed, preview.written], [true, true, true, false]);
    assert.equal(preview.orchestration.before, 'mode=default spawn_allowed=False max_children=0');
    assert.equal(
      preview.orchestration.after,
      'mode=multi_subagent spawn_allowed=True max_children=3 explore_harness=off',
    );
    assert.match(preview.preview_id, /^[0-9a-f]{24}$/);
    assert.equal(fs.readFileSync(registry, 'utf8'), before);

    const applied = await configureGoal(await goalRefOf(registry), {
      changes,
      execute: true,
      clock,
      env: {},
    });
    assert.deepEqual(
      [applied.ok, applied.dry_run, applied.changed, applied.written, applied.verified],
      [true, false, true, true, true],
    );
    assert.equal(applied.preview_id, preview.preview_id, 'the same change has the same preview id');
    const goal = goalOf(registry);
    assert.deepEqual(goal['quota'], { compute: 0, slot_minutes: 1 });
    assert.deepEqual(goal['coordination'], {
      registered_agents: ['codex-a'],
      agent_model: 'peer_v1',
      write_scope: ['src/**'],
    });
    assert.deepEqual(goal['spawn_policy'], { allowed: true, max_children: 3, explore_harness: { profile: 'generic' } });
    assert.deepEqual(goal['x_unknown'], [1, 2]);

    const again = await configureGoal(await goalRefOf(registry), {
      changes,
      execute: true,
      clock: fixedClock('2026-02-01T00:00:00Z'),
      env: {},
    });
    assert.deepEqual([again.changed, again.written, again.verified], [false, false, true]);
    assert.equal(
      (JSON.parse(fs.readFileSync(registry, 'utf8')) as Record<string, unknown>)['updated_at'],
      '2026-01-15T10:00:00Z',
    );
  });
});
