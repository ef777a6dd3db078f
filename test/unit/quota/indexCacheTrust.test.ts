import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { goalRuntimeDir, runIndexPath } from '../../../src/core/runtime/layout';
import { readRunIndex } from '../../../src/core/runtime/runIndex';
import { settlementIdentity } from '../../../src/core/quota/identity';
import { reserveTurn } from '../../../src/core/quota/admission';
import {
  RunHistoryReader,
  summarizeRunRows,
  type HistoryVerification,
  type RunHistory,
} from '../../../src/core/quota/runHistory';
import { processGoalCache } from '../../../src/core/goal/cache';
import { runLoopx } from '../cli/run';
import { LOOPX_VERSION } from '../../../src/core/version';
import { clockAt, loadGoal, makeWorkspace, type Workspace } from './helpers';

/**
 * Issue 34, defect 3: the incremental run-index cache speeds admission up but never decides alone.
 * Admission and spend check what it kept against the whole prefix of the index, and trust only what
 * their own process read: the reader keeps nothing on disk (issue 31 merged its cache file into the
 * one persistent cache), so a run-index cache file an older version left, forged or not, is never read.
 */

const BASE = Date.parse('2026-01-15T06:00:00Z');
let serial = 0;

function row(kind: 'spend' | 'void' | 'run', slots = 1): string {
  serial++;
  const generated_at = new Date(BASE + serial * 1000).toISOString().replace('.000Z', 'Z');
  if (kind === 'spend')
    return JSON.stringify({
      generated_at,
      classification: 'quota_slot_spent',
      agent_id: 'agent-a',
      slots,
      settlement_identity: { effect_id: `g:agent-a:todo_parser:t${serial}` },
      usage: { cost_usd: 0.001, tokens: 10, estimated: false },
    });
  if (kind === 'void')
    return JSON.stringify({ generated_at, classification: 'quota_slot_voided', slots: 1, voided_effect_id: 'none' });
  return JSON.stringify({
    generated_at,
    classification: 'validated_progress',
    agent_id: 'agent-b',
    summary: 'a run row that pads the index past the stamped ends '.repeat(3),
  });
}

/** Rows enough to pass the first and last 4 KB the cheap stamps hash: an edit between them is only seen by the content hash. */
function padding(rows = 30): string {
  return Array.from({ length: rows }, () => `${row('run')}\n`).join('');
}

function indexFile(ws: Workspace): string {
  return runIndexPath(ws.runtimeRoot, ws.goalId);
}

/** What admission reads of a history: every spend's identity, slots and cost, and the voids. */
function admissionFacts(history: RunHistory): unknown {
  return {
    spends: history.facts.spends.map((s) => [s.effect_id, s.slots, s.usage?.cost_usd ?? null, s.time]),
    voids: history.facts.voids.map((v) => [v.targetEffectId, v.slots, v.targetTime]),
  };
}

async function uncachedFacts(ws: Workspace): Promise<unknown> {
  const read = await readRunIndex(indexFile(ws), { projectRoot: ws.dir, artifactChecks: 0 });
  return admissionFacts(summarizeRunRows(read.rows, ws.dir));
}

type Edit =
  | { kind: 'append'; rows: ('spend' | 'void' | 'run')[] }
  | { kind: 'slots'; nth: number; digit: number }
  | { kind: 'flip'; nth: number }
  | { kind: 'byte'; at: number; char: number }
  | { kind: 'truncate'; fraction: number }
  | { kind: 'replace'; rows: ('spend' | 'void' | 'run')[] };

const rowKinds = fc.array(fc.constantFrom<'spend' | 'void' | 'run'>('spend', 'spend', 'void', 'run'), {
  minLength: 1,
  maxLength: 4,
});
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), rows: rowKinds }),
  fc.record({ kind: fc.constant('slots' as const), nth: fc.nat(40), digit: fc.integer({ min: 0, max: 9 }) }),
  fc.record({ kind: fc.constant('flip' as const), nth: fc.nat(40) }),
  fc.record({ kind: fc.constant('byte' as const), at: fc.nat(), char: fc.integer({ min: 0x20, max: 0x7e }) }),
  fc.record({ kind: fc.constant('truncate' as const), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ kind: fc.constant('replace' as const), rows: rowKinds }),
);

/** Replaces the bytes at `at` with `bytes` of the same length, in place (same inode, same size: an editor's save). */
function overwriteInPlace(file: string, at: number, bytes: Buffer): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.writeSync(fd, bytes, 0, bytes.length, at);
  } finally {
    fs.closeSync(fd);
  }
}

function nthIndex(text: string, needle: string, nth: number): number {
  const hits: number[] = [];
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + 1)) hits.push(i);
  return hits.length === 0 ? -1 : (hits[nth % hits.length] as number);
}

function applyEdit(ws: Workspace, edit: Edit): void {
  const file = indexFile(ws);
  const text = fs.readFileSync(file, 'utf8');
  switch (edit.kind) {
    case 'append':
      fs.appendFileSync(file, edit.rows.map((k) => `${row(k)}\n`).join(''));
      return;
    case 'slots': {
      const at = nthIndex(text, '"slots":', edit.nth);
      if (at >= 0) overwriteInPlace(file, Buffer.byteLength(text.slice(0, at)) + 8, Buffer.from(String(edit.digit)));
      return;
    }
    case 'flip': {
      const at = nthIndex(text, 'quota_slot_spent', edit.nth);
      if (at >= 0) overwriteInPlace(file, Buffer.byteLength(text.slice(0, at)), Buffer.from('quota_slot_spenX'));
      return;
    }
    case 'byte': {
      const size = fs.statSync(file).size;
      if (size > 0) overwriteInPlace(file, edit.at % size, Buffer.from([edit.char]));
      return;
    }
    case 'truncate':
      fs.truncateSync(file, Math.floor(fs.statSync(file).size * edit.fraction));
      return;
    case 'replace':
      fs.writeFileSync(file, `${padding()}${edit.rows.map((k) => `${row(k)}\n`).join('')}${padding()}`);
      return;
  }
}

/** Races the edits against a long-lived reader and a fresh reader per step (a new process's), both verifying. */
async function cachedEqualsUncached(edits: Edit[], verify: HistoryVerification): Promise<void> {
  const ws = makeWorkspace();
  fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
  fs.writeFileSync(indexFile(ws), `${padding()}${row('spend')}\n${row('spend')}\n${padding()}`);
  const longLived = new RunHistoryReader();
  try {
    await longLived.read(ws.runtimeRoot, ws.goalId, ws.dir, { verify });
    for (const edit of edits) {
      applyEdit(ws, edit);
      // Any later append (the repro: an editor's save in the middle, then a turn's row) must not hide the edit.
      fs.appendFileSync(indexFile(ws), `${row('spend')}\n`);
      const truth = await uncachedFacts(ws);
      const kept = await longLived.read(ws.runtimeRoot, ws.goalId, ws.dir, { verify });
      assert.deepEqual(admissionFacts(kept.history), truth, `long-lived reader after ${JSON.stringify(edit)}`);
      const fresh = await new RunHistoryReader().read(ws.runtimeRoot, ws.goalId, ws.dir, { verify });
      assert.deepEqual(admissionFacts(fresh.history), truth, `fresh reader after ${JSON.stringify(edit)}`);
    }
  } finally {
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
}

/** Where LoopX for VS Code before issue 31 kept the run-index reader's state, one file per goal. */
function oldIndexCachePath(ws: Workspace): string {
  return path.join(goalRuntimeDir(ws.runtimeRoot, ws.goalId), '.loopx-index-cache.json');
}

/**
 * Writes a run-index cache file as the old versions did (format, schema, version and a checksum that
 * matches), describing the index as read now except for `change`: a forgery no check of the file
 * itself could catch. It must change nothing.
 */
function forgeOldCache(ws: Workspace, change: (body: Record<string, unknown>) => void): void {
  const stat = fs.statSync(indexFile(ws));
  const body: Record<string, unknown> = {
    index_file: path.resolve(indexFile(ws)),
    project_root: ws.dir,
    dev: stat.dev,
    ino: stat.ino,
    offset: stat.size,
    lines: 1,
    mtime_ms: stat.mtimeMs,
    ctime_ms: stat.ctimeMs,
    head_sha: '',
    tail_sha: '',
    prefix_blocks: [],
    own: true,
    ordered: true,
    last_time: null,
    last_keys: [],
    history: {
      facts: { spends: [], voids: [] },
      latest_status_run: null,
      newest_lane_run: null,
      recent_all: [],
      recent_by_agent: [],
    },
  };
  change(body);
  const text = JSON.stringify(body);
  const header = {
    format: 'loopx-vscode-index-cache',
    schema: 2,
    loopx_version: LOOPX_VERSION,
    sha256: createHash('sha256').update(text).digest('hex'),
  };
  fs.writeFileSync(oldIndexCachePath(ws), `${JSON.stringify(header)}\n${text}\n`);
}

describe('admission never trusts the run-index cache alone (issue 34, defect 3)', function () {
  this.timeout(120_000);

  for (const verify of ['content', 'own'] as const) {
    it(`property: random edits (in place, truncation, replacement, append) — the ${verify}-verified reader equals the uncached one`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(editArb, { minLength: 1, maxLength: 6 }), (edits) =>
          cachedEqualsUncached(edits, verify),
        ),
        { numRuns: 60, seed: 34 },
      );
    });
  }

  it('a same-length edit in the middle followed by an append is seen by admission (run-once at 4 of 3)', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 3 } });
    fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    fs.writeFileSync(indexFile(ws), `${padding()}${row('spend')}\n${row('spend', 0)}\n${padding()}`);
    processGoalCache().clear();
    const goal = await loadGoal(ws);
    const reserve = (turn: string) =>
      reserveTurn(goal, clockAt(), {
        identity: settlementIdentity({
          goalId: ws.goalId,
          agentId: 'agent-a',
          turnInstanceId: turn,
          todoId: 'todo_parser',
        }),
      });
    assert.equal((await reserve('warm')).status, 'reserved'); // 1 spent + 1 reserved of 3
    // An editor's save: the second spend's slots 0 → 2, same length; then any append.
    const text = fs.readFileSync(indexFile(ws), 'utf8');
    overwriteInPlace(
      indexFile(ws),
      Buffer.byteLength(text.slice(0, text.lastIndexOf('"slots":0'))) + 8,
      Buffer.from('2'),
    );
    fs.appendFileSync(indexFile(ws), `${row('run')}\n`);
    const refused = await reserve('next');
    assert.equal(refused.status, 'refused', refused.reason);
    assert.match(refused.reason, /3 spent \+ 1 reserved \+ 1 requested exceeds the 3 allowed/);
  });

  it('an old run-index cache file forged with its checksum recomputed does not hide spends from admission (2 of 1)', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 1 } });
    fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    fs.writeFileSync(indexFile(ws), `${row('spend')}\n`);
    forgeOldCache(ws, () => {});
    processGoalCache().clear(); // a new process: only the old cache file is there
    const result = await reserveTurn(await loadGoal(ws), clockAt(), {
      identity: settlementIdentity({
        goalId: ws.goalId,
        agentId: 'agent-a',
        turnInstanceId: 't-x',
        todoId: 'todo_parser',
      }),
    });
    assert.equal(result.status, 'refused', result.reason);
    assert.match(result.reason, /1 spent \+ 0 reserved \+ 1 requested exceeds the 1 allowed/);
  });

  it('quota should-run without a turn id over an old cache file forged with its checksum recomputed: the spend still counts (1 of 1, throttled)', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 1 } });
    fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    fs.writeFileSync(indexFile(ws), `${row('spend')}\n`);
    forgeOldCache(ws, () => {});
    for (const agent of [['--agent-id', 'agent-a'], []]) {
      processGoalCache().clear(); // a new process: only the old cache file is there
      const run = await runLoopx(
        ['quota', 'should-run', '--goal-id', ws.goalId, ...agent, '--registry', ws.registryPath, '--format', 'json'],
        { cwd: ws.dir },
      );
      const decision = run.json();
      const quota = decision['quota'] as Record<string, unknown>;
      assert.equal(quota['spent_slots'], 1, `${agent.join(' ')}: ${run.stdout}`);
      assert.equal(decision['should_run'], false, run.stdout);
      assert.equal(decision['state'], 'throttled', run.stdout);
    }
  });

  it('writes no cache file of its own: quota should-run, turn plan, run-once and spend-slot leave the goal folder free of one, and the one persistent cache is status-cache.json', async () => {
    const ws = makeWorkspace({ quota: { compute: 1, window_hours: 24, slot_minutes: 1, allowed_slots: 5 } });
    fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
    fs.writeFileSync(indexFile(ws), `${row('spend')}\n`);
    const commands = [
      ['quota', 'should-run', '--goal-id', ws.goalId, '--agent-id', 'agent-a'],
      ['turn', 'plan', '--goal-id', ws.goalId, '--agent-id', 'agent-a'],
      ['turn', 'run-once', '--goal-id', ws.goalId, '--agent-id', 'agent-a', '--execute'],
      ['quota', 'spend-slot', '--goal-id', ws.goalId, '--agent-id', 'agent-a', '--turn-instance-id', 't1', '--execute'],
      ['status'],
    ];
    for (const argv of commands) {
      processGoalCache().clear();
      const run = await runLoopx([...argv, '--registry', ws.registryPath, '--format', 'json'], { cwd: ws.dir });
      assert.notEqual(run.code, 2, `${argv.join(' ')}: ${run.stdout}${run.stderr}`);
      assert.doesNotMatch(run.stdout + run.stderr, /internal_error/, argv.join(' '));
    }
    const caches = (fs.readdirSync(ws.runtimeRoot, { recursive: true }) as string[]).filter((f) =>
      /cache[^/]*\.json$/.test(String(f)),
    );
    assert.deepEqual(caches, [path.join('cache', 'status-cache.json')]);
  });
});
