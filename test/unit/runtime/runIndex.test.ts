import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { isLoopxError } from '../../../src/core/errors';
import { withFileLock } from '../../../src/core/fs/fileLock';
import {
  goalRunsDir,
  goalRuntimeDir,
  listRuntimeGoalIds,
  runIndexPath,
  unionGoalListing,
  validateGoalId,
} from '../../../src/core/runtime/layout';
import {
  latestAgentLaneRun,
  latestStatusRun,
  readGoalRuns,
  readRunIndex,
  type RunIndexRow,
} from '../../../src/core/runtime/runIndex';
import {
  appendRun,
  nextFreeArtifactPair,
  reserveArtifactPair,
  runArtifactStem,
} from '../../../src/core/runtime/runIndexWrite';
import { compactUtcStamp, formatLocalIsoSeconds } from '../../../src/core/runtime/time';
import { expectSuccess, startTogether } from '../../support/barrier';
import { waitUntil } from '../../support/waitFor';
import { removeTempDirs, tempDir } from '../../support/tempDir';

const APPEND_WORKER = path.join(__dirname, 'workers', 'appendWorker.ts');

after(() => {
  removeTempDirs();
});

function writeIndex(runtimeRoot: string, goalId: string, lines: string[]): string {
  const file = runIndexPath(runtimeRoot, goalId);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, lines.join('\n'));
  return file;
}

const record = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  classification: 'state_refreshed',
  recommended_action: 'continue',
  health_check: 'state_file 1/1',
  ...extra,
});

describe('runtime goal ids and layout', () => {
  it('case 22: goal id must be a single path segment', () => {
    assert.equal(validateGoalId('  spaced  '), 'spaced');
    for (const empty of ['', '  ']) assert.throws(() => validateGoalId(empty), /goal id is required/);
    for (const bad of ['.', '..', 'a/b', 'a\\b', '../x']) {
      assert.throws(
        () => validateGoalId(bad),
        (error: unknown) => isLoopxError(error, 'invalid_goal_id') && /single path segment/.test(error.message),
        bad,
      );
    }
    assert.throws(() => validateGoalId('C:x'), /path traversal/);
    assert.equal(validateGoalId('goal.v1'), 'goal.v1');
    assert.equal(validateGoalId('~'), '~');
    assert.equal(goalRuntimeDir('/rt', ' g '), path.join('/rt', 'goals', 'g'));
    assert.throws(() => goalRunsDir('/rt', '..'), /single path segment/);
  });

  it('runIndexPath: the same path on every call (kept), and an invalid id refused on every call', () => {
    for (let i = 0; i < 2; i++) {
      assert.equal(runIndexPath('/rt', ' g '), path.join('/rt', 'goals', 'g', 'runs', 'index.jsonl'));
      assert.equal(runIndexPath('/rt2', ' g '), path.join('/rt2', 'goals', 'g', 'runs', 'index.jsonl'));
      assert.equal(runIndexPath('/rt', 'g'), path.join('/rt', 'goals', 'g', 'runs', 'index.jsonl'));
      assert.throws(() => runIndexPath('/rt', '../x'), /single path segment/);
      assert.throws(() => runIndexPath('/rt', ' '), /goal id is required/);
    }
  });

  it('lists runtime goal folders and marks those without a registry entry as legacy-runtime', async () => {
    const rt = tempDir();
    for (const id of ['b-goal', 'a-goal', 'legacy']) fs.mkdirSync(path.join(rt, 'goals', id), { recursive: true });
    fs.writeFileSync(path.join(rt, 'goals', 'stray-file'), '');
    assert.deepEqual(await listRuntimeGoalIds(rt), ['a-goal', 'b-goal', 'legacy']);
    assert.deepEqual(await listRuntimeGoalIds(path.join(rt, 'none')), []);
    assert.deepEqual(unionGoalListing(['b-goal', 'registered-only', 'a-goal'], ['a-goal', 'b-goal', 'legacy']), [
      { goal_id: 'a-goal', registered: true, has_runtime_dir: true, runtime_status: null },
      { goal_id: 'b-goal', registered: true, has_runtime_dir: true, runtime_status: null },
      { goal_id: 'legacy', registered: false, has_runtime_dir: true, runtime_status: 'legacy-runtime' },
      { goal_id: 'registered-only', registered: true, has_runtime_dir: false, runtime_status: null },
    ]);
  });
});

describe('runtime timestamps', () => {
  it('formats generated_at as local ISO time with offset at seconds precision', () => {
    const instant = new Date('2026-01-01T04:00:00.789Z');
    assert.equal(formatLocalIsoSeconds(instant, 480), '2026-01-01T12:00:00+08:00');
    assert.equal(formatLocalIsoSeconds(instant, -330), '2025-12-31T22:30:00-05:30');
    assert.equal(formatLocalIsoSeconds(instant, 0), '2026-01-01T04:00:00+00:00');
    assert.match(formatLocalIsoSeconds(instant), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/);
    assert.equal(compactUtcStamp(instant), '20260101T040000Z');
  });
});

describe('run artifacts and index', function () {
  this.timeout(300_000);

  it('names artifacts after generated_at', () => {
    assert.equal(runArtifactStem('2026-01-01T12:00:00+08:00'), '2026-01-01T12-00-00-08-00');
    assert.equal(runArtifactStem('2026-06-22T00:01:00+00:00'), '2026-06-22T00-01-00-00-00');
    assert.equal(runArtifactStem('  ::x::  '), 'x');
  });

  it('reserves the next free pair exclusively, skipping taken .json or .md names, and never overwrites', () => {
    const runs = path.join(tempDir(), 'runs');
    const at = '2026-01-01T12:00:00+08:00';
    const first = reserveArtifactPair(runs, at, 'quota-slot-spent');
    assert.equal(path.basename(first.jsonPath), '2026-01-01T12-00-00-08-00-quota-slot-spent.json');
    assert.equal(fs.readFileSync(first.jsonPath, 'utf8'), '', 'the sentinel exists');
    fs.writeFileSync(path.join(runs, '2026-01-01T12-00-00-08-00-quota-slot-spent-2.md'), 'someone else');
    const preview = nextFreeArtifactPair(runs, at, 'quota-slot-spent');
    assert.equal(path.basename(preview.jsonPath), '2026-01-01T12-00-00-08-00-quota-slot-spent-3.json');
    assert.ok(!fs.existsSync(preview.jsonPath), 'a dry run creates nothing');
    const third = reserveArtifactPair(runs, at, 'quota-slot-spent');
    assert.equal(path.basename(third.markdownPath), '2026-01-01T12-00-00-08-00-quota-slot-spent-3.md');
    assert.equal(
      fs.readFileSync(path.join(runs, '2026-01-01T12-00-00-08-00-quota-slot-spent-2.md'), 'utf8'),
      'someone else',
    );
    assert.ok(!fs.existsSync(path.join(runs, '2026-01-01T12-00-00-08-00-quota-slot-spent-2.json')));
  });

  it('appends a run: JSON record, Markdown and one index line with paths relative to the project', async () => {
    const project = tempDir();
    const rt = path.join(project, 'runtime');
    const clock = fixedClock('2026-01-01T04:00:00Z');
    const result = await appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      projectRoot: project,
      clock,
      suffix: 'state-refreshed',
      record: {
        ...record({ generated_at: '2026-01-01T12:00:00+08:00', agent_id: 'codex-a', progress_scope: 'goal' }),
        state: { sha256_16: 'abc' },
      },
      markdown: '# run',
      indexFields: { state: { sha256_16: 'abc' } },
    });
    assert.equal(result.appended, true);
    const stem = '2026-01-01T12-00-00-08-00-state-refreshed';
    assert.equal(result.json_file, path.join(rt, 'goals', 'g', 'runs', `${stem}.json`));
    assert.deepEqual(result.row, {
      generated_at: '2026-01-01T12:00:00+08:00',
      goal_id: 'g',
      classification: 'state_refreshed',
      recommended_action: 'continue',
      health_check: 'state_file 1/1',
      json_path: path.join('runtime', 'goals', 'g', 'runs', `${stem}.json`),
      markdown_path: path.join('runtime', 'goals', 'g', 'runs', `${stem}.md`),
      agent_id: 'codex-a',
      progress_scope: 'goal',
      state: { sha256_16: 'abc' },
    });
    const json = fs.readFileSync(result.json_file, 'utf8');
    assert.ok(json.startsWith('{\n  "generated_at": "2026-01-01T12:00:00+08:00",\n  "goal_id": "g",\n'), json);
    assert.equal(fs.readFileSync(result.markdown_file, 'utf8'), '# run\n');
    const lines = fs.readFileSync(result.index_file, 'utf8').split('\n');
    assert.equal(lines.length, 2);
    assert.deepEqual(JSON.parse(lines[0] ?? ''), result.row);

    const read = await readGoalRuns(rt, 'g', { projectRoot: project });
    assert.equal(read.rows.length, 1);
    assert.equal(read.rows[0]?.json_exists, true);
    assert.equal(read.rows[0]?.markdown_exists, true);
  });

  it('fills generated_at from the clock as local time and refuses a record without the required fields', async () => {
    const rt = tempDir();
    const result = await appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      clock: fixedClock('2026-01-01T04:00:00Z'),
      record: record(),
      markdown: 'x',
    });
    assert.equal(result.row.generated_at, formatLocalIsoSeconds(new Date('2026-01-01T04:00:00Z')));
    assert.ok(path.isAbsolute(result.row.json_path ?? ''), 'absolute without a project root');
    await assert.rejects(
      appendRun({
        runtimeRoot: rt,
        goalId: 'g',
        clock: fixedClock('2026-01-01T04:00:00Z'),
        record: { classification: 'x' },
        markdown: 'x',
      }),
      (error: unknown) => isLoopxError(error, 'invalid_run_record') && /recommended_action/.test(error.message),
    );
    await assert.rejects(
      appendRun({
        runtimeRoot: rt,
        goalId: 'g',
        clock: fixedClock('2026-01-01T04:00:00Z'),
        record: record({ goal_id: 'other' }),
        markdown: 'x',
      }),
      /does not match/,
    );
  });

  it('a dry run computes the row and names but writes nothing', async () => {
    const rt = tempDir();
    const result = await appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      clock: fixedClock('2026-01-01T04:00:00Z'),
      record: record(),
      markdown: 'x',
      dryRun: true,
    });
    assert.equal(result.appended, false);
    assert.equal(result.dry_run, true);
    assert.ok(!fs.existsSync(path.join(rt, 'goals')));
  });

  it('starts a new line after a torn last line, so the torn row cannot swallow the next one', async () => {
    const rt = tempDir();
    writeIndex(rt, 'g', [
      '{"generated_at":"2026-01-01T00:00:00Z","goal_id":"g"',
      '{"generated_at":"2026-01-01T00:00:0',
    ]);
    await appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      clock: fixedClock('2026-01-02T00:00:00Z'),
      record: record({ generated_at: '2026-01-02T00:00:00+00:00' }),
      markdown: 'x',
    });
    const read = await readGoalRuns(rt, 'g', { projectRoot: rt });
    assert.equal(read.rows.length, 1);
    assert.equal(read.rows[0]?.generated_at, '2026-01-02T00:00:00+00:00');
    assert.equal(read.skipped.length, 2);
  });

  it('reads the index: skips blanks and bad lines, merges duplicates, orders newest first', async () => {
    const project = tempDir();
    const rt = path.join(project, 'rt');
    fs.mkdirSync(path.join(project, 'arts'));
    fs.writeFileSync(path.join(project, 'arts', 'a.json'), '{}');
    const file = writeIndex(rt, 'g', [
      JSON.stringify({
        generated_at: '2026-01-01T12:00:00+08:00',
        classification: 'state_refreshed',
        json_path: 'arts/a.json',
        markdown_path: 'arts/a.md',
        recommended_action: 'old',
      }),
      '',
      '   ',
      'not json',
      '[1,2]',
      '"text"',
      JSON.stringify({ generated_at: 'yesterday', classification: 'unparsable_time' }),
      JSON.stringify({ classification: 'no_time' }),
      JSON.stringify({ generated_at: '2026-01-01T05:00:00+00:00', classification: 'later_instant' }),
      JSON.stringify({
        generated_at: '2026-01-01T12:00:00+08:00',
        classification: 'state_refreshed',
        json_path: 'arts/a.json',
        markdown_path: 'arts/a.md',
        recommended_action: 'overlaid',
        extra: 1,
      }),
      JSON.stringify({ generated_at: '2026-01-01T04:00:00Z', classification: 'same_instant_later_line' }),
      JSON.stringify({ generated_at: 5 }),
    ]);
    const read = await readRunIndex(file, { projectRoot: project });
    assert.equal(read.raw_count, 10);
    assert.deepEqual(
      read.skipped.map((s) => s.line),
      [4, 5, 6, 12],
    );
    assert.deepEqual(
      read.rows.map((r) => r.classification),
      ['later_instant', 'same_instant_later_line', 'state_refreshed', 'no_time', 'unparsable_time'],
    );
    const merged = read.rows[2];
    assert.equal(merged?.recommended_action, 'overlaid');
    assert.equal(merged?.['extra'], 1, 'unknown fields pass through');
    assert.equal(merged?.json_exists, true, 'relative paths resolve against the project root');
    assert.equal(merged?.markdown_exists, false);
    assert.equal(read.rows[0]?.json_exists, false);

    const missing = await readRunIndex(path.join(rt, 'none.jsonl'), { projectRoot: project });
    assert.deepEqual(missing, {
      index_file: path.join(rt, 'none.jsonl'),
      exists: false,
      raw_count: 0,
      skipped: [],
      rows: [],
    });
  });

  it('picks the latest status run, skipping status-neutral and agent-lane runs', () => {
    const rows: RunIndexRow[] = [
      { classification: 'quota_slot_spent' },
      { classification: 'state_refreshed', progress_scope: 'agent_lane', agent_id: 'b' },
      { classification: 'quota_monitor_poll' },
      { classification: 'quota_slot_voided' },
      { classification: 'canary_promotion_readiness_smoke_group' },
      { classification: 'validated_progress', progress_scope: 'goal' },
      { classification: 'state_refreshed' },
    ];
    assert.equal(latestStatusRun(rows)?.classification, 'validated_progress');
    assert.equal(latestAgentLaneRun(rows)?.agent_id, 'b');
    assert.equal(latestStatusRun(rows.slice(0, 5)), null);
  });

  it('4 processes appending 2,000 rows at once (behind a start barrier): every row exactly once, unique artifact names', async () => {
    const rt = tempDir();
    const agents = ['agent-a', 'agent-b', 'agent-c', 'agent-d'];
    const workers = await startTogether(
      agents.map((agent) => ({ script: APPEND_WORKER, args: [rt, 'g', '500', agent] })),
    );
    try {
      await Promise.all(workers.map(expectSuccess));
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
    const indexText = fs.readFileSync(runIndexPath(rt, 'g'), 'utf8');
    const lines = indexText.trimEnd().split('\n');
    assert.equal(lines.length, 2000);
    const rows = lines.map((line) => JSON.parse(line) as RunIndexRow);
    const actions = new Set(rows.map((r) => r.recommended_action));
    assert.equal(actions.size, 2000);
    for (const agent of agents) for (let i = 0; i < 500; i++) assert.ok(actions.has(`${agent}#${i}`), `${agent}#${i}`);
    assert.equal(new Set(rows.map((r) => r.json_path)).size, 2000);
    assert.equal(new Set(rows.map((r) => r.markdown_path)).size, 2000);

    const runs = goalRunsDir(rt, 'g');
    const files = fs.readdirSync(runs);
    assert.equal(files.filter((f) => f.endsWith('.json')).length, 2000);
    assert.equal(files.filter((f) => f.endsWith('.md')).length, 2000);
    for (const row of rows.slice(0, 50)) {
      const detail = JSON.parse(fs.readFileSync(row.json_path ?? '', 'utf8')) as Record<string, unknown>;
      assert.equal(detail['recommended_action'], row.recommended_action, 'each index row points at its own record');
    }
    const read = await readGoalRuns(rt, 'g', { projectRoot: rt });
    assert.equal(read.rows.length, 2000);
    assert.ok(read.rows.every((r) => r.json_exists && r.markdown_exists));
  });

  it('4 processes appending rows larger than one write (600 KB) at once: every line parses, none is lost or torn', async function () {
    // Node writes a long line in 512 KiB chunks, so without the index lock another writer's line can
    // land between two chunks of ours (and the torn-line repair then splits both).
    this.timeout(180_000);
    const rt = tempDir();
    const agents = ['agent-a', 'agent-b', 'agent-c', 'agent-d'];
    const perAgent = 10;
    const workers = await startTogether(
      agents.map((agent) => ({ script: APPEND_WORKER, args: [rt, 'g', String(perAgent), agent, String(600 * 1024)] })),
    );
    try {
      await Promise.all(workers.map(expectSuccess));
    } finally {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
    }
    const lines = fs.readFileSync(runIndexPath(rt, 'g'), 'utf8').trimEnd().split('\n');
    const rows = lines.map((line, i) => {
      try {
        return JSON.parse(line) as RunIndexRow;
      } catch {
        throw new assert.AssertionError({
          message: `index line ${i + 1} of ${lines.length} is not JSON (torn or interleaved)`,
        });
      }
    });
    assert.equal(rows.length, agents.length * perAgent);
    const actions = rows.map((r) => r.recommended_action ?? '');
    for (const agent of agents)
      for (let i = 0; i < perAgent; i++) {
        const mine = actions.filter((a) => a.startsWith(`${agent}#${i} `));
        assert.equal(mine.length, 1, `${agent}#${i}`);
        assert.equal(mine[0]?.length, `${agent}#${i}`.length + 600 * 1024, `${agent}#${i} arrived whole`);
      }
  });
});

describe('run artifact reservation', () => {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-reserve-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('creates the record with its content in one step: never an empty file, no temp file left, a taken name skipped', () => {
    const at = '2026-11-29T10:00:00+00:00';
    const first = reserveArtifactPair(dir, at, undefined, '{"n":1}\n');
    const second = reserveArtifactPair(dir, at, undefined, '{"n":2}\n');
    assert.notEqual(first.jsonPath, second.jsonPath);
    assert.equal(fs.readFileSync(first.jsonPath, 'utf8'), '{"n":1}\n');
    assert.equal(fs.readFileSync(second.jsonPath, 'utf8'), '{"n":2}\n');
    assert.deepEqual(
      fs.readdirSync(dir).filter((name) => name.endsWith('.tmp')),
      [],
    );
    // A file already at the next name (another writer's) is skipped, not overwritten.
    const taken = reserveArtifactPair(dir, '2026-11-29T11:00:00+00:00', undefined, '{"n":3}\n');
    fs.rmSync(taken.jsonPath);
    fs.writeFileSync(taken.jsonPath, 'theirs');
    const next = reserveArtifactPair(dir, '2026-11-29T11:00:00+00:00', undefined, '{"n":4}\n');
    assert.notEqual(next.jsonPath, taken.jsonPath);
    assert.equal(fs.readFileSync(taken.jsonPath, 'utf8'), 'theirs');
  });
});

describe('run records written before the index lock', () => {
  const at = '2026-11-29T10:00:00+00:00';
  const clock = fixedClock(at);
  let rt = '';
  beforeEach(() => {
    rt = fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-early-'));
  });
  afterEach(() => fs.rmSync(rt, { recursive: true, force: true }));

  const records = (): string[] =>
    fs.existsSync(goalRunsDir(rt, 'g'))
      ? fs
          .readdirSync(goalRunsDir(rt, 'g'))
          .filter((name) => name.endsWith('.json') || name.endsWith('.md'))
          .sort()
      : [];

  /** Holds the index lock of goal g until the returned release is called. */
  async function holdIndexLock(): Promise<() => Promise<void>> {
    fs.mkdirSync(goalRunsDir(rt, 'g'), { recursive: true });
    let release: () => void = () => undefined;
    let held: () => void = () => undefined;
    const acquired = new Promise<void>((resolve) => (held = resolve));
    const hold = withFileLock(runIndexPath(rt, 'g'), { operation: 'test_hold' }, async () => {
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await acquired;
    return async () => {
      release();
      await hold;
    };
  }

  it('a run writes its records while another writer holds the lock, and names them once it has the lock', async () => {
    const release = await holdIndexLock();
    const append = appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      record: record({ generated_at: at }),
      markdown: '# early',
      clock,
    });
    await waitUntil(() => records().length === 2, 'both records');
    assert.ok(!fs.existsSync(runIndexPath(rt, 'g')), 'no index line while the lock is held');
    await release();
    const result = await append;
    assert.deepEqual(records(), ['2026-11-29T10-00-00-00-00.json', '2026-11-29T10-00-00-00-00.md']);
    assert.equal(fs.readFileSync(result.markdown_file, 'utf8'), '# early\n');
    const rows = (await readGoalRuns(rt, 'g', { projectRoot: rt })).rows;
    assert.equal(rows.length, 1);
    assert.ok(rows[0]?.json_exists && rows[0]?.markdown_exists);
  });

  it('a spend record is written only under the lock (the sweep judges unindexed spends there)', async () => {
    const release = await holdIndexLock();
    const append = appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      record: record({ generated_at: at, classification: 'quota_slot_spent' }),
      suffix: 'quota-slot-spent',
      markdown: '# spend',
      clock,
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.deepEqual(records(), [], 'nothing written before the lock');
    await release();
    await append;
    assert.deepEqual(records(), [
      '2026-11-29T10-00-00-00-00-quota-slot-spent.json',
      '2026-11-29T10-00-00-00-00-quota-slot-spent.md',
    ]);
  });

  it('a run that cannot get the lock leaves no record behind', async () => {
    const release = await holdIndexLock();
    try {
      await assert.rejects(
        appendRun({
          runtimeRoot: rt,
          goalId: 'g',
          record: record({ generated_at: at }),
          markdown: '# late',
          clock,
          lock: { timeoutMs: 100 },
        }),
        (error: unknown) => isLoopxError(error, 'lock_acquire_timeout'),
      );
      assert.deepEqual(records(), []);
    } finally {
      await release();
    }
  });

  it('records removed while the run waited for the lock are written again before the line names them', async () => {
    const release = await holdIndexLock();
    const append = appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      record: record({ generated_at: at }),
      markdown: '# again',
      clock,
    });
    await waitUntil(() => records().length === 2, 'both records');
    // What an archive of the runtime does meanwhile: the records go.
    for (const name of records()) fs.rmSync(path.join(goalRunsDir(rt, 'g'), name));
    await release();
    const result = await append;
    assert.equal(fs.readFileSync(result.markdown_file, 'utf8'), '# again\n');
    assert.ok(fs.existsSync(result.json_file));
    const rows = (await readGoalRuns(rt, 'g', { projectRoot: rt })).rows;
    assert.ok(rows[0]?.json_exists && rows[0]?.markdown_exists, 'the row names records that exist');
  });

  it('a dangling symlink at the Markdown name takes that name: the next one is used, the link is left alone', async () => {
    const runs = goalRunsDir(rt, 'g');
    fs.mkdirSync(runs, { recursive: true });
    const outside = path.join(os.tmpdir(), `loopx-outside-${process.pid}-${Date.now()}.md`);
    fs.symlinkSync(outside, path.join(runs, '2026-11-29T10-00-00-00-00.md'));
    const result = await appendRun({
      runtimeRoot: rt,
      goalId: 'g',
      record: record({ generated_at: at }),
      markdown: '# m',
      clock,
    });
    assert.equal(path.basename(result.markdown_file), '2026-11-29T10-00-00-00-00-2.md');
    assert.ok(!fs.existsSync(outside), 'nothing written through the link');
    assert.ok(fs.lstatSync(path.join(runs, '2026-11-29T10-00-00-00-00.md')).isSymbolicLink());
  });
});
