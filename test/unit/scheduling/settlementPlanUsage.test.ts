import assert from 'node:assert/strict';
import { heartbeatSteps } from '../../../src/core/protocol/heartbeat';
import { shouldRunFor } from '../../support/goalRef';
import { cli, ONE_TODO } from '../evidence/helpers';
import { clockAt, makeWorkspace } from '../quota/helpers';

/**
 * Issue 34 leftover: the spend command of `quota should-run`'s settlement plan lacked the usage flags
 * the heartbeat prompt's spend step carries, so an agent following the plan never reported usage.
 * Both now print the same command (the plan adds the turn's binding, which the prompt's receipt supplies).
 */

const BINDING = / --(todo-id|replan-obligation-id) \S+/;

describe('the settlement plan spends like the heartbeat prompt: with the turn usage flags', () => {
  it('quota should-run (with and without a heartbeat receipt) prints the prompt step spend command, usage flags included', async () => {
    const ws = makeWorkspace({}, ONE_TODO);
    const step = heartbeatSteps({ goalId: 'g', agentId: 'agent-a', todoId: 'todo_parser' }).find((s) =>
      s.command.includes('quota spend-slot'),
    );
    assert.ok(step !== undefined);
    const prompt = step.command.replace('"${LOOPX_CLI:-loopx}"', 'loopx');
    assert.match(prompt, /--cost-usd <cost_usd> --tokens <tokens>$/);
    assert.match(step.when ?? '', /--usage-unknown/);

    const decision = await shouldRunFor({
      registryPath: ws.registryPath,
      goalId: 'g',
      agentId: 'agent-a',
      clock: clockAt(),
      homeDir: ws.dir,
      turnInstanceId: 'T-1',
    });
    const planned = decision.interaction_contract.cli_channel.settlement_plan[0] ?? '';
    assert.match(planned, / --todo-id todo_parser /);
    assert.equal(planned.replace(BINDING, ''), prompt);

    // Through the CLI, where the heartbeat receipt binds the turn and rewrites the plan.
    const run = await cli(ws, [
      'quota',
      'should-run',
      '--goal-id',
      'g',
      '--agent-id',
      'agent-a',
      '--turn-instance-id',
      'T-2',
    ]);
    assert.equal(run.code, 0, run.stderr);
    const bound = (run.json()['interaction_contract'] as { cli_channel: { settlement_plan: string[] } }).cli_channel
      .settlement_plan[0];
    assert.match(bound ?? '', / --todo-id todo_parser /);
    assert.equal((bound ?? '').replace(BINDING, ''), prompt);
  });
});
