import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  buildRolloutEvent,
  ofTurn,
  parseRolloutEvents,
  pythonJson,
  readRolloutEvents,
} from '../../../src/core/evidence/rolloutLog';

/**
 * The per-turn read of the rollout event log (`ofTurn(T)` with its needle): it JSON-parses only the
 * lines holding `"T"` or a backslash, and must return exactly the rows a parse of every line returns.
 */

const TURNS = ['t1', 't10', 'tü', 'turn-ü-2', 'a/b', 'x y'];

/** A deterministic pseudo-random generator (mulberry32), so a failure reproduces. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(next: () => number, items: readonly T[]): T {
  return items[Math.floor(next() * items.length)] as T;
}

/** One line as some writer could have laid it out: ours, the original's ensure_ascii dump, a hand edit, a torn tail. */
function line(next: () => number, i: number): string {
  const runId = pick(next, TURNS);
  const event = buildRolloutEvent({
    goalId: 'g',
    eventKind: pick(next, ['quota_should_run', 'refresh_state', 'quota_spend'] as const),
    recordedAt: `2026-12-01T06:${String(i % 60).padStart(2, '0')}:00Z`,
    agentId: pick(next, ['agent-a', 'agent-b']),
    runId,
    summary: pick(next, ['plain', `mentions "${pick(next, TURNS)}" in text`, 'a quote " and a slash \\', 'ü']),
    details: { settlement_effect_id: `g:agent-a:todo:${runId}` },
  });
  const json = JSON.stringify(event);
  switch (Math.floor(next() * 9)) {
    case 0:
      return pythonJson(event); // ensure_ascii: ü as \u00fc
    case 1:
      // Every character of run_id escaped: the line holds no `"T"` at all, only backslashes.
      return json.replace(
        JSON.stringify(runId),
        `"${[...runId].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`,
      );
    case 2:
      return json.slice(0, Math.floor(json.length / 2)); // torn
    case 3:
      return '';
    case 4:
      return `${json}\r`;
    case 5:
      return JSON.stringify({ run_id: runId, note: 'not a rollout row' });
    case 6:
      return `[${JSON.stringify(runId)}]`;
    default:
      return json;
  }
}

function tempLog(text: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-turn-read-'));
  const file = path.join(dir, 'rollout-event-log.jsonl');
  fs.writeFileSync(file, text);
  return file;
}

describe('rollout event log: the per-turn read', () => {
  it('uses a needle for plain turn ids and none for ids that need escaping in JSON', () => {
    assert.equal(ofTurn('t1').needle, '"t1"');
    assert.equal(ofTurn('tü').needle, '"tü"');
    assert.equal(ofTurn('a"b').needle, undefined);
    assert.equal(ofTurn('a\\b').needle, undefined);
    assert.equal(ofTurn('a\nb').needle, undefined);
  });

  it('returns exactly the rows of a full parse, on 300 random logs of every writer shape', async () => {
    const next = random(18);
    for (let round = 0; round < 300; round++) {
      const lines = Array.from({ length: 1 + Math.floor(next() * 40) }, (_, i) => line(next, i));
      const text = lines.join('\n') + (next() < 0.5 ? '\n' : '');
      const file = tempLog(text);
      for (const turn of TURNS) {
        const keep = ofTurn(turn);
        const fast = await readRolloutEvents(file, keep);
        const full = parseRolloutEvents(text, (raw) => raw['run_id'] === turn);
        assert.deepEqual(fast.events, full.events, `round ${round}, turn ${turn}:\n${text}`);
        // The needle path reports bad lines only among those it parsed, with the same line number and reason.
        for (const bad of fast.skipped)
          assert.ok(full.skipped.some((f) => f.line === bad.line && f.reason === bad.reason));
      }
      fs.rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('finds a row whose run_id is written only with escapes (no verbatim "T" on the line)', async () => {
    const event = buildRolloutEvent({
      goalId: 'g',
      eventKind: 'quota_should_run',
      recordedAt: '2026-12-01T06:00:00Z',
      runId: 't1',
    });
    const escaped = JSON.stringify(event).replace('"t1"', '"\\u0074\\u0031"');
    const file = tempLog(`${JSON.stringify({ ...event, run_id: 't2' })}\n${escaped}\n`);
    const read = await readRolloutEvents(file, ofTurn('t1'));
    assert.equal(read.events.length, 1);
    assert.equal(read.events[0]?.run_id, 't1');
  });

  it('searches the log for the needle once when every line holds a backslash and none the turn', async () => {
    const rows = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify(
        buildRolloutEvent({
          goalId: 'g',
          eventKind: 'refresh_state',
          recordedAt: '2026-12-01T06:00:00Z',
          runId: `other-${i}`,
          summary: `said "done" ${i}`,
        }),
      ),
    );
    const file = tempLog(`${rows.join('\n')}\n`);
    const original = Buffer.prototype.indexOf;
    let needleSearches = 0;
    Buffer.prototype.indexOf = function (this: Buffer, ...args: Parameters<Buffer['indexOf']>) {
      if (Buffer.isBuffer(args[0])) needleSearches++;
      return original.apply(this, args);
    };
    try {
      const read = await readRolloutEvents(file, ofTurn('t1'));
      assert.equal(read.events.length, 0);
    } finally {
      Buffer.prototype.indexOf = original;
    }
    // One search that finds nothing; a search per line would make a long log quadratic.
    assert.equal(needleSearches, 1);
  });

  it('reports a bad line of the turn with its line number', async () => {
    const file = tempLog(`\n${'{"x": 1}\n'.repeat(3)}{"run_id": "t1", "schema_version": "nope"}\n`);
    const read = await readRolloutEvents(file, ofTurn('t1'));
    assert.deepEqual(
      read.skipped.map((s) => s.line),
      [5],
    );
    assert.equal(read.events.length, 0);
  });
});
