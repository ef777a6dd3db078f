import assert from 'node:assert/strict';
import * as loopx from '../../../src/core/index';
import { AGENT, removeTempDirs, demo, NOW, newSpends } from './helpers';

after(removeTempDirs);

describe('turns in the public API', () => {
  it('planTurn, runTurnOnce, runTurnLoop and inspectTurnJournal work on the demo goal and return schema-valid results', async () => {
    const d = demo();
    const common = { registryPath: d.registryPath, goalId: 'tidy-notes', now: NOW };
    const plan = loopx.TurnPlanSchema.parse(
      await loopx.planTurn({ ...common, agentId: 'demo', turnInstanceId: 'api-1' }),
    );
    assert.equal(plan.settlement_identity?.effect_id, 'tidy-notes:demo:todo_related:api-1');

    const emitter = new loopx.TurnEventEmitter();
    const events: loopx.TurnEvent[] = [];
    emitter.on((e) => events.push(loopx.TurnEventSchema.parse(e)));
    const hostAdapterCommand = [process.execPath, AGENT, 'complete'];
    const once = loopx.TurnRunResultSchema.parse(
      await loopx.runTurnOnce({
        ...common,
        agentId: 'demo',
        execute: true,
        hostAdapterCommand,
        onEvent: emitter.emit,
        env: {},
      }),
    );
    assert.equal(once.status, 'committed');
    assert.ok(events.some((e) => e.type === 'turn_ended'));

    const loop = loopx.LoopResultSchema.parse(
      await loopx.runTurnLoop({ ...common, agentIds: ['demo'], hostAdapterCommand, env: {} }),
    );
    assert.equal(loop.stop_reason, 'user_action');
    assert.equal((await newSpends(d)).length, 2);

    const inspection = loopx.JournalInspectionSchema.parse(
      await loopx.inspectTurnJournal({ registryPath: d.registryPath, goalId: 'tidy-notes' }),
    );
    assert.equal(inspection.turns.length, 2);
  });

  it('refuses bad arguments before touching anything', async () => {
    await assert.rejects(
      () => loopx.runTurnLoop({ registryPath: 'x', goalId: 'g', agentIds: [] }),
      (e: unknown) => loopx.isLoopxError(e, loopx.INVALID_ARGUMENT),
    );
    await assert.rejects(
      () => loopx.planTurn({ registryPath: 'x', goalId: '../g', agentId: 'demo' }),
      (e: unknown) => loopx.isLoopxError(e, loopx.INVALID_ARGUMENT),
    );
    await assert.rejects(
      () => loopx.runTurnOnce({ registryPath: 'x', goalId: 'g', agentId: 'demo', maxTurns: 3 } as never),
      (e: unknown) => loopx.isLoopxError(e, loopx.INVALID_ARGUMENT),
    );
  });
});
