import assert from 'node:assert/strict';
import {
  isStatusNeutralRun,
  pickLatestRuns,
  selectLatestRunRecommendedAction,
} from '../../../../src/core/status/projection/latestRunRecommendation';
import { runRowSchema } from '../../../../src/core/status/projection/inputs';
import { ACTIVE, RUN, SIDE } from './fixtures';

const statusRun = {
  generated_at: '2026-06-22T00:02:00+00:00',
  classification: 'state_refreshed',
  recommended_action: RUN,
};
const laneRun = (text: string, at: string, agent = 'codex-side') => ({
  generated_at: at,
  classification: 'lane_progress',
  progress_scope: 'agent_lane',
  agent_id: agent,
  recommended_action: text,
});

describe('latest run recommended action (§4.2)', () => {
  it('bookkeeping and agent-lane runs are status-neutral', () => {
    for (const classification of [
      'quota_slot_spent',
      'quota_slot_voided',
      'quota_monitor_poll',
      'canary_promotion_readiness_smoke_group',
    ]) {
      assert.equal(isStatusNeutralRun(runRowSchema.parse({ classification })), true, classification);
    }
    assert.equal(
      isStatusNeutralRun(runRowSchema.parse({ classification: 'state_refreshed', progress_scope: 'agent_lane' })),
      true,
    );
    assert.equal(
      isStatusNeutralRun(runRowSchema.parse({ classification: 'state_refreshed', progress_scope: 'goal' })),
      false,
    );
  });

  it('pickLatestRuns skips neutral runs for the status run and collects the lane runs', () => {
    const rows = [
      { classification: 'quota_slot_spent', generated_at: '2026-06-22T00:05:00Z' },
      laneRun(SIDE, '2026-06-22T00:04:00Z'),
      'not an object',
      statusRun,
      laneRun(ACTIVE, '2026-06-22T00:01:00Z'),
    ];
    const picked = pickLatestRuns(rows);
    assert.equal(picked.latestStatusRun?.generated_at, statusRun.generated_at);
    assert.deepEqual(
      picked.agentLaneRuns.map((row) => row.recommended_action),
      [SIDE, ACTIVE],
    );
  });

  it('without a lane run the status run is used; a path-bearing action is hidden', () => {
    assert.deepEqual(selectLatestRunRecommendedAction({ activeStateNextAction: ACTIVE, latestStatusRun: statusRun }), {
      latest_run_recommended_action: RUN,
      latest_run_recommended_action_source: 'latest_status_run',
    });
    assert.deepEqual(
      selectLatestRunRecommendedAction({
        latestStatusRun: { ...statusRun, recommended_action: 'open /home/me/plan.md' },
      }),
      {
        latest_run_recommended_action: null,
        latest_run_recommended_action_source: null,
      },
    );
  });

  it("the preferred agent's lane wins when at least as new as the status run", () => {
    const input = {
      activeStateNextAction: ACTIVE,
      latestStatusRun: statusRun,
      latestAgentLaneRun: laneRun(SIDE, '2026-06-22T00:02:00+00:00'),
      preferredAgentId: 'codex-side',
    };
    assert.deepEqual(selectLatestRunRecommendedAction(input), {
      latest_run_recommended_action: SIDE,
      latest_run_recommended_action_source: 'agent_lane_recommendation',
    });
    const older = { ...input, latestAgentLaneRun: laneRun(SIDE, '2026-06-22T00:01:59+00:00') };
    assert.equal(selectLatestRunRecommendedAction(older).latest_run_recommended_action_source, 'latest_status_run');
  });

  it('otherwise the lane is used only when it agrees with the route and the status run does not', () => {
    const agreeingLane = laneRun(`[P1] ${ACTIVE}`, '2026-06-22T00:01:00Z');
    assert.deepEqual(
      selectLatestRunRecommendedAction({
        activeStateNextAction: ACTIVE,
        latestStatusRun: statusRun,
        latestAgentLaneRun: agreeingLane,
      }),
      {
        latest_run_recommended_action: `[P1] ${ACTIVE}`,
        latest_run_recommended_action_source: 'agent_lane_recommendation',
      },
    );
    assert.equal(
      selectLatestRunRecommendedAction({
        activeStateNextAction: ACTIVE,
        latestStatusRun: statusRun,
        latestAgentLaneRun: laneRun(SIDE, '2026-06-22T00:03:00Z'),
      }).latest_run_recommended_action,
      RUN,
    );
    assert.equal(
      selectLatestRunRecommendedAction({
        activeStateNextAction: null,
        latestStatusRun: statusRun,
        latestAgentLaneRun: agreeingLane,
      }).latest_run_recommended_action,
      RUN,
    );
    const statusAgrees = { ...statusRun, recommended_action: ACTIVE };
    assert.equal(
      selectLatestRunRecommendedAction({
        activeStateNextAction: ACTIVE,
        latestStatusRun: statusAgrees,
        latestAgentLaneRun: agreeingLane,
      }).latest_run_recommended_action_source,
      'latest_status_run',
    );
  });
});
