import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseRolloutEvents, ROLLOUT_EVENT_LOG_FILE } from '../../../src/core/evidence/rolloutLog';
import { runOnce } from '../../../src/core/turn/runOnce';
import { removeTempDirs, demo, fixtureRun, type Demo } from './helpers';

after(removeTempDirs);

/** A LoopX-driven turn appends its phases to the rollout event log, once each (docs/turns.md#the-rollout-event-log). */

function turnEvents(d: Demo, turn: string) {
  const file = path.join(d.runtimeGoalDir, ROLLOUT_EVENT_LOG_FILE);
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  return parseRolloutEvents(text).events.filter((e) => e.run_id === turn);
}

describe('turn run-once: rollout events', () => {
  it('admission, writeback and spend each append one event bound to the settlement effect id', async () => {
    const d = demo();
    const result = await runOnce(fixtureRun(d, 'complete', { turnInstanceId: 'turn-ev' }));
    assert.equal(result.status, 'committed', result.message);
    const events = turnEvents(d, 'turn-ev');
    assert.deepEqual(
      events.map((e) => e.event_kind),
      ['quota_should_run', 'refresh_state', 'quota_spend'],
    );
    const effect = `tidy-notes:demo:${result.todo_id ?? ''}:turn-ev`;
    for (const event of events) {
      assert.equal(event.agent_id, 'demo');
      assert.equal(event.details?.['settlement_effect_id'], effect);
      assert.equal(event.details?.['driver'], 'loopx_turn');
    }
    // A crash at each phase and its resume append each event once: test/unit/turn/crash.test.ts.
  });

  it('a turn that stops before admission (preview) appends nothing', async () => {
    const d = demo();
    await runOnce({ ...fixtureRun(d, 'complete', { turnInstanceId: 'turn-pv' }), execute: false });
    assert.equal(turnEvents(d, 'turn-pv').length, 0);
  });
});
