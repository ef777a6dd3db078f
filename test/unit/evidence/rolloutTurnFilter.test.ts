import assert from 'node:assert/strict';
import { buildRolloutEvent, ofTurn, parseRolloutEvents } from '../../../src/core/evidence/rolloutLog';

/**
 * The turn filter's pre-check (issue 19): a turn's lookups skip, without parsing, lines that cannot
 * be its rows. The events they return must equal a filter that parses every line.
 */

const event = (runId: string, summary = 'x') =>
  buildRolloutEvent({
    goalId: 'g',
    eventKind: 'quota_should_run',
    recordedAt: '2026-12-01T00:00:00Z',
    agentId: 'a',
    runId,
    summary,
  });

/** The same filter without the pre-check: parses every line. */
const parseAll = (turn: string) => {
  const keep = ofTurn(turn);
  return (raw: Record<string, unknown>) => keep(raw);
};

describe('ofTurn: lines that cannot be the turn are not parsed, the events are the same', () => {
  it('finds rows written with JSON escapes, and keeps rows of other turns out', () => {
    const mine = JSON.stringify(event('turn-1'));
    // The same row with its run id written as escapes: no literal "turn-1" in the line.
    const escaped = mine.replace('"run_id":"turn-1"', '"run_id":"\\u0074urn\\u002d1"');
    assert.ok(!escaped.includes('turn-1') && escaped !== mine);
    const lines = [
      JSON.stringify(event('turn-10')), // holds "turn-1" as text, another turn
      mine,
      '{"torn": "turn-1',
      JSON.stringify(event('turn-2', 'mentions turn-1 in the summary')),
      escaped,
      '',
      JSON.stringify(event('turn-3')),
    ];
    const text = lines.join('\n');
    const fast = parseRolloutEvents(text, ofTurn('turn-1'));
    const slow = parseRolloutEvents(text, parseAll('turn-1'));
    assert.deepEqual(fast.events, slow.events);
    assert.equal(fast.events.length, 2);
    assert.ok(fast.events.every((e) => e.run_id === 'turn-1'));
  });

  it('randomized logs: the filtered events equal those of the filter that parses everything', () => {
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 40; round++) {
      const lines: string[] = [];
      for (let i = 0; i < 60; i++) {
        const run = `t-${rand(12)}`;
        const line = JSON.stringify(event(run, `about t-${rand(12)}`));
        const kind = rand(10);
        if (kind === 0)
          lines.push(line.slice(0, rand(line.length))); // torn
        else if (kind === 1)
          lines.push(line.replace(/"run_id":"t-/, '"run_id":"\\u0074-')); // escaped
        else if (kind === 2) lines.push('[1,2]');
        else lines.push(line);
      }
      const text = lines.join(rand(2) === 0 ? '\n' : '\r\n');
      const turn = `t-${rand(12)}`;
      assert.deepEqual(parseRolloutEvents(text, ofTurn(turn)).events, parseRolloutEvents(text, parseAll(turn)).events);
    }
  });
});
