import assert from 'node:assert/strict';
import {
  DEFAULT_REFRESH_ACTION,
  deriveRecommendedAction,
} from '../../../../src/core/status/projection/recommendedAction';
import { recommendedActionDerivationSchema } from '../../../../src/core/status/projection/schemas';

// The entries and todos below are what the state parser reads from each spec fixture.
describe('deriveRecommendedAction: refresh-state derivation chain (§5)', () => {
  it('case R1: the first Next Action item wins, with its bullet/checkbox stripped and continuation joined', () => {
    // "## Next Action\n\n- [ ] First\n  more\n- Second\n"
    const derived = deriveRecommendedAction({ nextActionEntries: ['[ ] First\n  more', 'Second'] });
    assert.deepEqual(derived, {
      recommended_action: 'First more',
      recommended_action_source: 'active_state_next_action',
    });
    assert.equal(recommendedActionDerivationSchema.safeParse(derived).success, true);
  });

  it('case R1: a credential-bearing item is skipped for the next one', () => {
    // "## Next Action\n\n- token=abcdefghijkl secret\n- second safe\n"
    assert.deepEqual(deriveRecommendedAction({ nextActionEntries: ['- token=abcdefghijkl secret', '- second safe'] }), {
      recommended_action: 'second safe',
      recommended_action_source: 'active_state_next_action',
    });
  });

  it('case R2: Agent Todo fallback prefers open advancement tasks, then the lowest priority', () => {
    const derived = deriveRecommendedAction({
      nextActionEntries: [],
      agentTodos: [
        { text: 'done one', status: 'done' },
        { text: '[P2] plain fallback', status: 'open' },
        { text: '[P1] monitor', status: 'open', task_class: 'continuous_monitor' },
        { text: '[P3] advancement low', status: 'open', task_class: 'advancement_task' },
        { text: '[P0] deferred', status: 'deferred' },
      ],
    });
    assert.deepEqual(derived, {
      recommended_action: '[P3] advancement low',
      recommended_action_source: 'agent_todo_fallback',
    });
  });

  it('case R2: among unclassified items the lowest [P<n>] wins; a lone user gate gives no fallback', () => {
    assert.deepEqual(
      deriveRecommendedAction({
        agentTodos: [
          { text: '[P1] b unclassified', status: 'open' },
          { text: '[P0] a unclassified', status: 'open' },
        ],
      }),
      { recommended_action: '[P0] a unclassified', recommended_action_source: 'agent_todo_fallback' },
    );
    assert.deepEqual(
      deriveRecommendedAction({
        agentTodos: [{ text: '[P0] approve release', status: 'open', task_class: 'user_gate' }],
      }),
      {
        recommended_action: DEFAULT_REFRESH_ACTION,
        recommended_action_source: 'default_refresh_action',
      },
    );
    assert.equal(
      DEFAULT_REFRESH_ACTION,
      'inspect refreshed active goal state and continue the next bounded progress segment',
    );
  });

  it('an explicit argument beats everything; ties keep document order; no priority ranks last', () => {
    assert.deepEqual(
      deriveRecommendedAction({ explicitAction: '  Inspect   the run ', nextActionEntries: ['First'] }),
      {
        recommended_action: 'Inspect the run',
        recommended_action_source: 'explicit_arg',
      },
    );
    assert.equal(
      deriveRecommendedAction({
        agentTodos: [
          { text: 'no priority', status: 'open' },
          { text: '[P5] first p5', status: 'open' },
          { text: '[P5] second p5', status: 'open' },
        ],
      }).recommended_action,
      '[P5] first p5',
    );
    assert.equal(
      deriveRecommendedAction({ agentTodos: [{ text: '[P0] blocker', status: 'open', task_class: 'blocker' }] })
        .recommended_action_source,
      'default_refresh_action',
    );
  });
});
