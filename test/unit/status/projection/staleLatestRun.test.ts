import assert from 'node:assert/strict';
import { staleLatestRunWarningSchema } from '../../../../src/core/status/projection/schemas';
import { staleLatestRunWarning } from '../../../../src/core/status/projection/staleLatestRun';

const STATE = { updated_at: '2026-06-22T00:03:00+00:00', sha256_16: 'aaaaaaaaaaaaaaaa' };
const STATUS_RUN = {
  generated_at: '2026-06-22T00:02:00+00:00',
  classification: 'state_refreshed',
  state: { sha256_16: 'bbbbbbbbbbbbbbbb', frontmatter: { updated_at: '2026-06-22T00:01:00+00:00' } },
};

describe('staleLatestRunWarning (§4.5)', () => {
  it('case L1: state updated after the run and its snapshot, with an old digest → all three reasons', () => {
    const warning = staleLatestRunWarning({
      goalId: 'g1',
      registryMember: true,
      activeState: STATE,
      latestStatusRun: STATUS_RUN,
    });
    assert.deepEqual(warning, {
      kind: 'stale_latest_run_projection',
      source: 'active_state_vs_latest_run',
      severity: 'warning',
      requires_refresh_state: true,
      reason:
        'active_state_updated_after_latest_run,active_state_updated_after_latest_run_snapshot,active_state_digest_differs_from_latest_run_snapshot',
      active_state_updated_at: '2026-06-22T00:03:00+00:00',
      latest_run_generated_at: '2026-06-22T00:02:00+00:00',
      latest_run_state_updated_at: '2026-06-22T00:01:00+00:00',
      latest_run_classification: 'state_refreshed',
      recommended_action: 'run refresh-state before trusting latest_run-derived routing',
      reason_codes: [
        'active_state_updated_after_latest_run',
        'active_state_updated_after_latest_run_snapshot',
        'active_state_digest_differs_from_latest_run_snapshot',
      ],
      message:
        'The state file changed after the latest run recorded it, so routing from that run may be out of date. Refresh the state to record a new snapshot.',
      id: 'lxw_5c0fc22b0ccefac4',
      goal_id: 'g1',
      compared: [
        { field: 'active_state_updated_at', value: '2026-06-22T00:03:00+00:00' },
        { field: 'active_state_sha256_16', value: 'aaaaaaaaaaaaaaaa' },
        { field: 'latest_run_generated_at', value: '2026-06-22T00:02:00+00:00' },
        { field: 'latest_run_state_updated_at', value: '2026-06-22T00:01:00+00:00' },
        { field: 'latest_run_state_sha256_16', value: 'bbbbbbbbbbbbbbbb' },
      ],
      actions: [{ kind: 'refresh_state' }, { kind: 'dismiss' }],
    });
    assert.equal(staleLatestRunWarningSchema.safeParse(warning).success, true);
  });

  it('case L1: an agent-lane run with the matching digest suppresses it; a non-registry goal gets none', () => {
    const laneRun = {
      generated_at: '2026-06-22T00:00:30+00:00',
      progress_scope: 'agent_lane',
      state: { sha256_16: 'aaaaaaaaaaaaaaaa' },
    };
    assert.equal(
      staleLatestRunWarning({
        registryMember: true,
        activeState: STATE,
        latestStatusRun: STATUS_RUN,
        agentLaneRuns: [laneRun],
      }),
      null,
    );
    assert.equal(
      staleLatestRunWarning({ registryMember: false, activeState: STATE, latestStatusRun: STATUS_RUN }),
      null,
    );
  });

  it('an agent-lane run that snapshotted the state at or after its updated_at suppresses it; an older one does not', () => {
    const sawIt = {
      progress_scope: 'agent_lane',
      generated_at: '2026-06-22T00:00:00Z',
      state: { sha256_16: 'cccccccccccccccc', frontmatter: { updated_at: '2026-06-22T00:03:00Z' } },
    };
    const generatedAfter = { progress_scope: 'agent_lane', generated_at: '2026-06-22T00:04:00+00:00' };
    const older = {
      progress_scope: 'agent_lane',
      generated_at: '2026-06-22T00:04:00+00:00',
      state: { frontmatter: { updated_at: '2026-06-22T00:02:59+00:00' } },
    };
    assert.equal(
      staleLatestRunWarning({
        registryMember: true,
        activeState: STATE,
        latestStatusRun: STATUS_RUN,
        agentLaneRuns: [sawIt],
      }),
      null,
    );
    assert.equal(
      staleLatestRunWarning({
        registryMember: true,
        activeState: STATE,
        latestStatusRun: STATUS_RUN,
        agentLaneRuns: [generatedAfter],
      }),
      null,
    );
    assert.equal(
      staleLatestRunWarning({
        registryMember: true,
        activeState: STATE,
        latestStatusRun: STATUS_RUN,
        agentLaneRuns: [older],
      })?.reason_codes.length,
      3,
    );
  });

  it('compares instants across offsets, and reports only the reasons that hold', () => {
    const current = {
      generated_at: '2026-06-22T08:05:00+08:00',
      state: { sha256_16: 'aaaaaaaaaaaaaaaa', frontmatter: { updated_at: '2026-06-22T00:03:00Z' } },
    };
    assert.equal(staleLatestRunWarning({ registryMember: true, activeState: STATE, latestStatusRun: current }), null);
    const digestOnly = staleLatestRunWarning({
      registryMember: true,
      activeState: STATE,
      latestStatusRun: { ...current, state: { ...current.state, sha256_16: 'dddddddddddddddd' } },
    });
    assert.equal(digestOnly?.reason, 'active_state_digest_differs_from_latest_run_snapshot');
  });

  it('no warning without a readable state file or a status run; unparseable times give no time reasons', () => {
    assert.equal(staleLatestRunWarning({ registryMember: true, activeState: null, latestStatusRun: STATUS_RUN }), null);
    assert.equal(staleLatestRunWarning({ registryMember: true, activeState: STATE, latestStatusRun: null }), null);
    const noTimes = staleLatestRunWarning({
      registryMember: true,
      activeState: { updated_at: 'yesterday', sha256_16: 'aaaaaaaaaaaaaaaa' },
      latestStatusRun: STATUS_RUN,
    });
    assert.deepEqual(noTimes?.reason_codes, ['active_state_digest_differs_from_latest_run_snapshot']);
  });

  it('reads a malformed run row tolerantly instead of failing the status read', () => {
    const warning = staleLatestRunWarning({
      registryMember: true,
      activeState: STATE,
      latestStatusRun: { generated_at: 12, classification: ['x'], state: 'broken' } as never,
    });
    assert.equal(warning, null);
  });
});
