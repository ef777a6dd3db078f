import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { RunIndexEntry, readRunIndex } from '../../../src/core/runtime/runIndex';
import { removeTempDirs, tempDir } from '../../support/tempDir';

after(() => {
  removeTempDirs();
});

/** A project with `count` runs, one per minute, each with its .json (and .md for even rows). */
function project(count: number): { dir: string; index: string } {
  const dir = tempDir();
  fs.mkdirSync(path.join(dir, 'runs'));
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const stamp = `2026-01-01T00:${String(i).padStart(2, '0')}:00Z`;
    fs.writeFileSync(path.join(dir, 'runs', `${i}.json`), '{}');
    if (i % 2 === 0) fs.writeFileSync(path.join(dir, 'runs', `${i}.md`), '# run\n');
    lines.push(
      JSON.stringify({
        generated_at: stamp,
        classification: 'state_refreshed',
        json_path: `runs/${i}.json`,
        markdown_path: `runs/${i}.md`,
        n: i,
      }),
    );
  }
  const index = path.join(dir, 'index.jsonl');
  fs.writeFileSync(index, `${lines.join('\n')}\n`);
  return { dir, index };
}

describe('run index reading', () => {
  it('with artifactChecks N, every row still reports its artifacts correctly, the older ones when read', async () => {
    const { dir, index } = project(12);
    const eager = await readRunIndex(index, { projectRoot: dir });
    const lazy = await readRunIndex(index, { projectRoot: dir, artifactChecks: 3 });
    assert.deepEqual(
      lazy.rows.map((r) => r['n']),
      eager.rows.map((r) => r['n']),
    );
    assert.deepEqual(
      lazy.rows.map((r) => [r.json_exists, r.markdown_exists]),
      eager.rows.map((r) => [r.json_exists, r.markdown_exists]),
    );
    assert.deepEqual(
      eager.rows.slice(0, 2).map((r) => r.markdown_exists),
      [false, true],
      'odd rows have no .md',
    );
  });

  it('checks an older row when its flag is first read, not when the index is read', async () => {
    const { dir, index } = project(6);
    const read = await readRunIndex(index, { projectRoot: dir, artifactChecks: 1 });
    const oldest = read.rows[5];
    assert.equal(oldest?.['n'], 0);
    fs.rmSync(path.join(dir, 'runs', '0.json'));
    assert.equal(oldest?.json_exists, false, 'stat at first read, after the file went away');
    assert.equal(oldest?.markdown_exists, true);
    fs.writeFileSync(path.join(dir, 'runs', '0.json'), '{}');
    assert.equal(oldest?.json_exists, false, 'the answer is kept once read');
    assert.equal(read.rows[0]?.json_exists, true);
  });

  it('keeps lazy flags out of copies but in the schema view', async () => {
    const { dir, index } = project(4);
    const read = await readRunIndex(index, { projectRoot: dir, artifactChecks: 0 });
    const row = read.rows[0];
    assert.ok(row !== undefined);
    assert.equal(Object.keys(row).includes('json_exists'), false, 'not enumerable: spreads and JSON do not stat');
    assert.equal(JSON.stringify(row).includes('_exists'), false);
    const parsed = RunIndexEntry.parse(row);
    assert.equal(parsed.json_exists, true);
    assert.equal(parsed.markdown_exists, false);
  });

  it('merges duplicates and orders newest first whatever the line order; CRLF lines read like LF ones', async () => {
    const dir = tempDir();
    const index = path.join(dir, 'index.jsonl');
    const row = (at: string, extra: Record<string, unknown>): string =>
      JSON.stringify({ generated_at: at, json_path: `${at}.json`, ...extra });
    fs.writeFileSync(
      index,
      [
        row('2026-01-01T02:00:00Z', { classification: 'b' }),
        row('2026-01-01T01:00:00Z', { classification: 'a' }),
        row('2026-01-01T03:00:00Z', { classification: 'c' }),
        row('2026-01-01T01:00:00Z', { classification: 'a2', extra: true }),
        JSON.stringify({
          generated_at: '2026-01-01T02:00:00+00:00',
          json_path: 'other.json',
          classification: 'same_instant_other_run',
        }),
        JSON.stringify({ classification: 'no_time_1' }),
        JSON.stringify({ classification: 'no_time_2' }),
        JSON.stringify({ classification: 'no_time_1_again' }),
        '',
      ].join('\r\n'),
    );
    const read = await readRunIndex(index, { projectRoot: dir });
    assert.equal(read.raw_count, 8);
    assert.deepEqual(read.skipped, []);
    assert.deepEqual(
      read.rows.map((r) => r.classification),
      ['c', 'same_instant_other_run', 'b', 'a2', 'no_time_1_again'],
    );
    assert.equal(read.rows[3]?.['extra'], true, 'the later copy overlays the earlier one');
  });

  it('rows appended in time order come back reversed, a tie keeping the later line first', async () => {
    const dir = tempDir();
    const index = path.join(dir, 'index.jsonl');
    fs.writeFileSync(
      index,
      [
        JSON.stringify({ generated_at: '2026-01-01T00:00:00Z', classification: 'first' }),
        JSON.stringify({ generated_at: '2026-01-01T00:00:00+00:00', classification: 'same_instant_later' }),
        JSON.stringify({ generated_at: '2026-01-01T00:00:01Z', classification: 'newest' }),
      ].join('\n'),
    );
    const read = await readRunIndex(index, { projectRoot: dir });
    assert.deepEqual(
      read.rows.map((r) => r.classification),
      ['newest', 'same_instant_later', 'first'],
    );
  });

  it('names the wrongly typed field of a row it skips, and skips whitespace-only lines', async () => {
    const dir = tempDir();
    const index = path.join(dir, 'index.jsonl');
    fs.writeFileSync(
      index,
      [
        '\t ',
        JSON.stringify({ generated_at: 'x', agent_id: 7 }),
        JSON.stringify({ generated_at: 'y', agent_id: null }),
      ].join('\n'),
    );
    const read = await readRunIndex(index, { projectRoot: dir });
    assert.equal(read.raw_count, 2);
    assert.deepEqual(read.skipped, [{ line: 2, reason: 'field agent_id has the wrong type' }]);
    assert.deepEqual(
      read.rows.map((r) => r.generated_at),
      ['y'],
    );
  });
});
