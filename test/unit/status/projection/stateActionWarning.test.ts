import assert from 'node:assert/strict';
import { stateActionProjectionWarningSchema } from '../../../../src/core/status/projection/schemas';
import { stateActionProjectionWarning } from '../../../../src/core/status/projection/stateActionWarning';
import { ACTIVE, SIDE } from './fixtures';

const BACKLOG_CONTRACT = { lane: 'advancement_task', reason_codes: ['open_agent_todo'] };

describe('stateActionProjectionWarning (§4.5)', () => {
  it('case S1: quota selected backlog that differs from the active Next Action → warning', () => {
    const warning = stateActionProjectionWarning({
      activeStateNextAction: ACTIVE,
      quotaSummary: null,
      selectedRecommendedAction: SIDE,
      workLaneContract: BACKLOG_CONTRACT,
    });
    assert.deepEqual(warning, {
      schema_version: 'state_action_projection_warning_v0',
      kind: 'state_action_projection_mismatch',
      severity: 'warning',
      requires_state_writeback: true,
      active_state_next_action: ACTIVE,
      selected_recommended_action: SIDE,
      reason: 'quota selected executable backlog while active Next Action differs',
      recommended_action: 'run primary_action; sync active route only on route change',
      message:
        'Quota selected a backlog todo that differs from the durable Next Action. Run the selected todo; write it back as the Next Action only if the route itself changed.',
      id: 'lxw_965cedba6acd76fe',
      compared: [
        { field: 'active_state_next_action', value: ACTIVE },
        { field: 'selected_recommended_action', value: SIDE },
      ],
      actions: [{ kind: 'set_next_action', text: SIDE }, { kind: 'dismiss' }],
    });
    assert.equal(stateActionProjectionWarningSchema.safeParse(warning).success, true);
  });

  it("case S2: no warning when the first executable item is the claiming agent's own, or outside the backlog lane", () => {
    assert.equal(
      stateActionProjectionWarning({
        activeStateNextAction: ACTIVE,
        quotaSummary: {
          claim_scope: { agent_id: 'codex-side-bypass' },
          first_executable_items: [{ claimed_by: 'codex-side-bypass' }],
        },
        selectedRecommendedAction: SIDE,
        workLaneContract: BACKLOG_CONTRACT,
      }),
      null,
    );
    assert.equal(
      stateActionProjectionWarning({
        activeStateNextAction: ACTIVE,
        selectedRecommendedAction: SIDE,
        workLaneContract: { lane: 'continuous_monitor', reason_codes: ['open_agent_todo'] },
      }),
      null,
    );
  });

  it('needs open_agent_todo among the reason codes, and falls back to project_asset.next_action', () => {
    assert.equal(
      stateActionProjectionWarning({
        activeStateNextAction: ACTIVE,
        selectedRecommendedAction: SIDE,
        workLaneContract: { lane: 'advancement_task', reason_codes: [] },
      }),
      null,
    );
    const fallback = stateActionProjectionWarning({
      projectAssetNextAction: ACTIVE,
      selectedRecommendedAction: SIDE,
      workLaneContract: BACKLOG_CONTRACT,
    });
    assert.equal(fallback?.active_state_next_action, ACTIVE);
    assert.equal(
      stateActionProjectionWarning({
        activeStateNextAction: ACTIVE,
        selectedRecommendedAction: `[P1] ${ACTIVE}`,
        workLaneContract: BACKLOG_CONTRACT,
      }),
      null,
    );
  });

  it("a different agent's claim does not suppress the warning", () => {
    const warning = stateActionProjectionWarning({
      activeStateNextAction: ACTIVE,
      quotaSummary: {
        claim_scope: { agent_id: 'codex-main' },
        first_executable_items: [{ claimed_by: 'codex-side-bypass' }],
      },
      selectedRecommendedAction: SIDE,
      workLaneContract: BACKLOG_CONTRACT,
    });
    assert.equal(warning?.kind, 'state_action_projection_mismatch');
  });
});
