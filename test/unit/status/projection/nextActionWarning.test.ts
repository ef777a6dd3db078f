import assert from 'node:assert/strict';
import { isLoopxError } from '../../../../src/core/errors';
import { nextActionProjectionWarning } from '../../../../src/core/status/projection/nextActionWarning';
import { nextActionProjectionWarningSchema } from '../../../../src/core/status/projection/schemas';
import { ACTIVE, RUN, SIDE } from './fixtures';

const WARNING_REASON = 'latest run recommended_action differs from the durable active-state Next Action';
const WARNING_RECOMMENDED_ACTION =
  'if the latest run action is the intended durable route, write it back explicitly with refresh-state --next-action; otherwise keep treating the run recommendation and active-state Next Action as separate signals';

describe('nextActionProjectionWarning (§4.5)', () => {
  it('case W1: active and latest differ with no lane → warning that requires write-back', () => {
    const warning = nextActionProjectionWarning({
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
      agentLaneNextAction: null,
    });
    assert.deepEqual(warning, {
      schema_version: 'next_action_projection_warning_v0',
      kind: 'next_action_projection_mismatch',
      severity: 'warning',
      requires_state_writeback: true,
      active_state_next_action: ACTIVE,
      latest_run_recommended_action: RUN,
      reason: WARNING_REASON,
      recommended_action: WARNING_RECOMMENDED_ACTION,
      message:
        'The latest run recommends a different action than the durable Next Action. Adopt it as the new route, or refresh the state to record the current route.',
      id: 'lxw_1bb4c9ece1f9af56',
      compared: [
        { field: 'active_state_next_action', value: ACTIVE },
        { field: 'latest_run_recommended_action', value: RUN },
      ],
      actions: [{ kind: 'set_next_action', text: RUN }, { kind: 'refresh_state' }, { kind: 'dismiss' }],
    });
    assert.equal(Object.hasOwn(warning ?? {}, 'agent_lane_next_action'), false);
    // The original's fields come first and in the original's order; ours follow.
    assert.deepEqual(Object.keys(warning ?? {}).slice(0, 8), [
      'schema_version',
      'kind',
      'severity',
      'requires_state_writeback',
      'active_state_next_action',
      'latest_run_recommended_action',
      'reason',
      'recommended_action',
    ]);
    assert.equal(nextActionProjectionWarningSchema.safeParse(warning).success, true);
  });

  it('case W2: a lane that preserves the durable route downgrades the mismatch to info', () => {
    const warning = nextActionProjectionWarning({
      goalId: 'g1',
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
      agentLaneNextAction: { text: `[P1] ${SIDE}`, preserves_goal_next_action: true },
    });
    assert.deepEqual(warning, {
      schema_version: 'next_action_projection_warning_v0',
      kind: 'next_action_projection_mismatch',
      severity: 'info',
      requires_state_writeback: false,
      active_state_next_action: ACTIVE,
      latest_run_recommended_action: RUN,
      reason:
        'current agent lane action differs from the durable goal route while explicitly preserving the active-state Next Action',
      recommended_action:
        'run the agent-lane action without mutating active-state Next Action; only the primary/goal route should write a new durable Next Action',
      agent_lane_next_action: '[P1] Polish the hosted frontstage public case card.',
      message:
        'The latest run recommends a different action than the durable Next Action; the agent lane keeps the durable route, so nothing needs writing back.',
      id: 'lxw_b44fddcd033ad580',
      goal_id: 'g1',
      compared: [
        { field: 'active_state_next_action', value: ACTIVE },
        { field: 'latest_run_recommended_action', value: RUN },
        { field: 'agent_lane_next_action', value: '[P1] Polish the hosted frontstage public case card.' },
      ],
      actions: [{ kind: 'refresh_state' }, { kind: 'dismiss' }],
    });
    assert.equal(nextActionProjectionWarningSchema.safeParse(warning).success, true);
  });

  it('case W3: a plain-string lane, or a lane whose flag is the string "true", stays a warning', () => {
    const plain = nextActionProjectionWarning({
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
      agentLaneNextAction: 'plain string lane',
    });
    assert.equal(plain?.severity, 'warning');
    assert.equal(plain?.requires_state_writeback, true);
    assert.equal(plain?.agent_lane_next_action, 'plain string lane');
    assert.equal(plain?.reason, WARNING_REASON);
    assert.equal(plain?.id, 'lxw_107cc8c279f166f8');

    const stringFlag = nextActionProjectionWarning({
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
      agentLaneNextAction: { text: SIDE, preserves_goal_next_action: 'true' },
    });
    assert.equal(stringFlag?.severity, 'warning');
    assert.equal(stringFlag?.requires_state_writeback, true);
    assert.equal(stringFlag?.agent_lane_next_action, SIDE);
  });

  it('case W4: no warning when a text is missing or blank, or the two are aligned', () => {
    assert.equal(
      nextActionProjectionWarning({ activeStateNextAction: ACTIVE, latestRunRecommendedAction: null }),
      null,
    );
    assert.equal(nextActionProjectionWarning({ activeStateNextAction: '  ', latestRunRecommendedAction: RUN }), null);
    assert.equal(
      nextActionProjectionWarning({
        activeStateNextAction: `[P0] Agent: ${ACTIVE}`,
        latestRunRecommendedAction: ACTIVE.toUpperCase(),
      }),
      null,
    );
  });

  it('the id is stable for the same texts and changes when a compared text changes', () => {
    const first = nextActionProjectionWarning({
      goalId: 'g1',
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
    });
    const again = nextActionProjectionWarning({
      goalId: 'g1',
      activeStateNextAction: `  ${ACTIVE}  `,
      latestRunRecommendedAction: RUN,
    });
    const otherGoal = nextActionProjectionWarning({
      goalId: 'g2',
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: RUN,
    });
    const otherRun = nextActionProjectionWarning({
      goalId: 'g1',
      activeStateNextAction: ACTIVE,
      latestRunRecommendedAction: SIDE,
    });
    assert.equal(first?.id, again?.id);
    assert.notEqual(first?.id, otherGoal?.id);
    assert.notEqual(first?.id, otherRun?.id);
  });

  it('does not offer to adopt a latest action that was cut for display', () => {
    const long = `Inspect ${'the very long run output '.repeat(20)}`;
    const warning = nextActionProjectionWarning({ activeStateNextAction: ACTIVE, latestRunRecommendedAction: long });
    assert.ok(warning?.latest_run_recommended_action.endsWith('…'));
    assert.deepEqual(warning?.actions, [{ kind: 'refresh_state' }, { kind: 'dismiss' }]);
  });

  it('rejects input of the wrong shape with a LoopxError naming the field', () => {
    assert.throws(
      () => nextActionProjectionWarning({ activeStateNextAction: 42 } as never),
      (error: unknown) =>
        isLoopxError(error, 'invalid_projection_input') && /activeStateNextAction/.test(error.message),
    );
  });
});
