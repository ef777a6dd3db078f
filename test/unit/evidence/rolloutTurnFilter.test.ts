import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  buildRolloutEvent,
  ofTurn,
  parseRolloutEvents,
  readRolloutEvents,
} from '../../../src/core/evidence/rolloutLog';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rollout-turn-filter-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

/** The log read from a file with the turn filter (byte search) and with the filter that parses everything. */
async function bothReads(bytes: Buffer, turn: string): Promise<[unknown, unknown, unknown]> {
  const file = path.join(dir, 'rollout.jsonl');
  fs.writeFileSync(file, bytes);
  const fast = await readRolloutEvents(file, ofTurn(turn));
  const slow = await readRolloutEvents(file, parseAll(turn));
  // The byte search and the text pre-check skip the same lines (line numbers included).
  assert.deepEqual(fast.skipped, parseRolloutEvents(bytes.toString('utf8'), ofTurn(turn)).skipped);
  return [fast.events, slow.events, fast.skipped];
}

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

  it('reading the file: the byte search finds the same events, with escapes, CRLF, other scripts and broken UTF-8', async () => {
    let seed = 11;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
    for (let round = 0; round < 30; round++) {
      const parts: Buffer[] = [];
      for (let i = 0; i < 50; i++) {
        const run = `t-${rand(12)}`;
        const line = JSON.stringify(event(run, rand(3) === 0 ? `über t-${rand(12)} "quoted"` : `about t-${rand(12)}`));
        const kind = rand(12);
        let text = line;
        if (kind === 0) text = line.slice(0, rand(line.length));
        else if (kind === 1) text = line.replace(/"run_id":"t-/, '"run_id":"\\u0074-');
        else if (kind === 2) text = '[1,2]';
        else if (kind === 3) text = '';
        const eol = rand(4) === 0 ? '\r\n' : '\n';
        parts.push(Buffer.from(text + eol, 'utf8'));
        if (kind === 4) parts.push(Buffer.from([0xe2, 0x0a])); // a broken UTF-8 sequence cut by a newline
      }
      if (rand(2) === 0) parts.push(Buffer.from(JSON.stringify(event(`t-${rand(12)}`)).slice(0, 40), 'utf8'));
      const turn = `t-${rand(12)}`;
      const [fast, slow] = await bothReads(Buffer.concat(parts), turn);
      assert.deepEqual(fast, slow, `round ${round}`);
    }
  });

  it('an id with a slash or a quote falls back to any backslash; a non-ASCII id parses every line', () => {
    assert.equal(ofTurn('a/b').escapeMarker, '\\');
    assert.equal(ofTurn('turn-1').escapeMarker, '\\u');
    assert.equal(ofTurn('tür').mustContain, undefined);
    const line = JSON.stringify(event('a/b')).replace('"run_id":"a/b"', '"run_id":"a\\/b"');
    assert.ok(!line.includes('a/b'));
    assert.equal(parseRolloutEvents(line, ofTurn('a/b')).events.length, 1);
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
