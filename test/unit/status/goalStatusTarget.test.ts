import * as assert from 'node:assert/strict';
import {
  GoalStatusTargetSchema,
  parseGoalStatusTarget,
  type GoalStatusTarget,
} from '../../../src/core/status/goalStatusSchema';

const TARGET = {
  goalId: 'g1',
  displayName: 'Goal one',
  status: 'active',
  domain: null,
  projectRoot: '/p',
  runtimeRoot: '/p/.loopx/runtime',
  stateFile: '/p/STATE.md',
  agents: ['codex'],
  registryMember: true,
  adapterStatus: null,
  adapterKind: 'loopx',
  registryWaitingOn: null,
  attentionStatus: null,
} satisfies GoalStatusTarget;

/** Same fields, same order, same values: what printing or keying the target would show. */
function sameAsSchema(goal: GoalStatusTarget): void {
  assert.equal(JSON.stringify(parseGoalStatusTarget(goal)), JSON.stringify(GoalStatusTargetSchema.parse(goal)));
}

describe('parseGoalStatusTarget: GoalStatusTargetSchema.parse without zod for well-formed targets', () => {
  it('gives what the schema gives: well-formed, fields in another order, extra fields, defaults left out', () => {
    sameAsSchema(TARGET);
    const reversed = Object.fromEntries(Object.entries(TARGET).reverse()) as GoalStatusTarget;
    sameAsSchema(reversed);
    sameAsSchema({ ...TARGET, extra: 1 } as GoalStatusTarget);
    const { registryMember: _member, adapterKind: _kind, ...withoutDefaults } = TARGET;
    sameAsSchema(withoutDefaults);
  });

  it('copies the agents (as zod does) and leaves the input alone', () => {
    const parsed = parseGoalStatusTarget(TARGET);
    assert.notEqual(parsed.agents, TARGET.agents);
    assert.notEqual(parsed, TARGET);
  });

  it('throws what the schema throws for a malformed target (an empty id, a number for a name, a hole in the agents)', () => {
    for (const bad of [
      { ...TARGET, goalId: '' },
      { ...TARGET, displayName: 7 },
      { ...TARGET, registryMember: 'yes' },
      // eslint-disable-next-line no-sparse-arrays
      { ...TARGET, agents: ['a', , 'b'] },
    ] as GoalStatusTarget[]) {
      assert.throws(() => GoalStatusTargetSchema.parse(bad));
      assert.throws(() => parseGoalStatusTarget(bad));
    }
  });
});
