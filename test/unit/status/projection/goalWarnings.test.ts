import assert from 'node:assert/strict';
import { projectGoalWarnings } from '../../../../src/core/status/projection/goalWarnings';
import type { GoalWarningsInput } from '../../../../src/core/status/projection/inputs';
import { goalProjectionWarningsSchema } from '../../../../src/core/status/projection/schemas';
import { ACTIVE, RUN, SIDE } from './fixtures';

const STATUS_RUN = {
  generated_at: '2026-06-22T00:02:00+00:00',
  classification: 'state_refreshed',
  recommended_action: RUN,
  recommended_action_source: 'explicit_arg',
  state: { sha256_16: 'bbbbbbbbbbbbbbbb', frontmatter: { updated_at: '2026-06-22T00:01:00+00:00' } },
};

function goal(overrides: Partial<GoalWarningsInput> = {}): GoalWarningsInput {
  return {
    goalId: 'g1',
    activeState: { next_action: ACTIVE, updated_at: '2026-06-22T00:03:00+00:00', sha256_16: 'aaaaaaaaaaaaaaaa' },
    latestStatusRun: STATUS_RUN,
    ...overrides,
  };
}

describe('projectGoalWarnings', () => {
  it('a goal whose latest run is current and agrees with the route has no warnings', () => {
    const current = {
      ...STATUS_RUN,
      recommended_action: ACTIVE,
      state: { sha256_16: 'aaaaaaaaaaaaaaaa', frontmatter: { updated_at: '2026-06-22T00:03:00+00:00' } },
      generated_at: '2026-06-22T00:04:00Z',
    };
    assert.deepEqual(projectGoalWarnings(goal({ latestStatusRun: current })), []);
  });

  it('returns every drift warning, warnings before info, stale first, all valid against the exported schema', () => {
    const warnings = projectGoalWarnings(
      goal({
        activeState: {
          next_action: ACTIVE,
          next_action_entries: [ACTIVE, 'Wait for owner approval before uploading anything.'],
          updated_at: '2026-06-22T00:03:00+00:00',
          sha256_16: 'aaaaaaaaaaaaaaaa',
        },
        agentLaneNextAction: { text: SIDE, preserves_goal_next_action: true },
        todoCounts: { agent: { markdownOpenCount: 1 }, user: { summary: { open_count: 0 }, markdownOpenCount: 2 } },
        quotaSelection: {
          selectedRecommendedAction: SIDE,
          workLaneContract: { lane: 'advancement_task', reason_codes: ['open_agent_todo'] },
        },
      }),
    );
    assert.deepEqual(
      warnings.map((w) => [w.kind, w.severity]),
      [
        ['stale_latest_run_projection', 'warning'],
        ['state_action_projection_mismatch', 'warning'],
        ['state_projection_gap', 'warning'],
        ['next_action_projection_mismatch', 'info'],
      ],
    );
    assert.ok(warnings.every((w) => w.goal_id === 'g1'));
    assert.equal(goalProjectionWarningsSchema.safeParse(JSON.parse(JSON.stringify(warnings))).success, true);
    assert.equal(new Set(warnings.map((w) => w.id)).size, 4);
  });

  it('case W1 through status: an explicit run action that differs from the route is a warning', () => {
    const [mismatch] = projectGoalWarnings(
      goal({
        activeState: { next_action: ACTIVE, updated_at: '2026-06-22T00:00:00+00:00', sha256_16: 'bbbbbbbbbbbbbbbb' },
      }),
    );
    assert.equal(mismatch?.kind, 'next_action_projection_mismatch');
    assert.equal(mismatch?.severity, 'warning');
    assert.equal(mismatch?.kind === 'next_action_projection_mismatch' && mismatch.latest_run_recommended_action, RUN);
  });

  it('case L1 through status: an agent-lane run that saw the current digest suppresses the stale warning', () => {
    const lane = {
      generated_at: '2026-06-22T00:00:30+00:00',
      progress_scope: 'agent_lane',
      agent_id: 'codex-side',
      state: { sha256_16: 'aaaaaaaaaaaaaaaa' },
    };
    const kinds = projectGoalWarnings(goal({ agentLaneRuns: [lane] })).map((w) => w.kind);
    assert.deepEqual(kinds, ['next_action_projection_mismatch']);
    assert.deepEqual(
      projectGoalWarnings(goal({ registryMember: false })).map((w) => w.kind),
      ['next_action_projection_mismatch'],
    );
  });

  it('a goal without a readable state file or run history gets no warnings', () => {
    assert.deepEqual(
      projectGoalWarnings(
        goal({ activeState: null, todoCounts: { agent: { markdownOpenCount: 0 }, user: { markdownOpenCount: 0 } } }),
      ),
      [],
    );
    assert.deepEqual(projectGoalWarnings(goal({ latestStatusRun: null })), []);
  });

  it('a path-bearing run recommendation is hidden, so it cannot surface in a warning', () => {
    const leaky = {
      ...STATUS_RUN,
      recommended_action: 'open /Users/me/secret-plan.md',
      state: { sha256_16: 'aaaaaaaaaaaaaaaa' },
    };
    const warnings = projectGoalWarnings(
      goal({ latestStatusRun: leaky, activeState: { next_action: ACTIVE, sha256_16: 'aaaaaaaaaaaaaaaa' } }),
    );
    assert.deepEqual(warnings, []);
  });
});
