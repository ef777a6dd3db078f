import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRunIndex } from '../../../src/core/runtime/runIndex';
import { runIndexPath } from '../../../src/core/runtime/layout';
import {
  RECENT_LANE_ROWS,
  RunHistoryReader,
  summarizeRunRows,
  type RunHistory,
} from '../../../src/core/quota/runHistory';
import { REPLAN_SCAN_DEPTH } from '../../../src/core/scheduling/replanObligation';
import { type ShouldRunDecision } from '../../../src/core/scheduling/decisionContract';
import { shouldRunFor } from '../../support/goalRef';
import { shouldRunNextActionWarning } from '../../../src/core/status/projection/shouldRunWarning';
import { clockAt, makeWorkspace, type Workspace } from './helpers';

/** A seeded PRNG (mulberry32), so a failure names a reproducible seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BASE = Date.parse('2026-01-15T06:00:00Z');
const AGENTS = ['agent-a', 'agent-b'];

/** Generates index lines: spends, voids, status runs, lane runs, stalls, replan results, duplicates, junk. */
class RowMaker {
  private time = BASE;
  private n = 0;
  private readonly written: string[] = [];
  constructor(
    private readonly random: () => number,
    private readonly ws: Workspace,
  ) {}

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }

  private artifact(kind: 'json' | 'md'): string {
    const rel = `.loopx/runtime/goals/${this.ws.goalId}/runs/r${this.n}.${kind}`;
    if (this.random() < 0.85) {
      fs.mkdirSync(path.dirname(path.join(this.ws.dir, rel)), { recursive: true });
      fs.writeFileSync(path.join(this.ws.dir, rel), kind === 'json' ? '{}' : '# run\n');
    }
    return rel;
  }

  line(): string {
    const r = this.random();
    this.n++;
    // Mostly ascending seconds, often the same second, sometimes older (an out-of-order row).
    const step = r < 0.3 ? 0 : r < 0.95 ? Math.floor(this.random() * 30) * 1000 : -600_000;
    this.time += step;
    const iso = new Date(this.time).toISOString().replace('.000Z', 'Z');
    const kind = this.random();
    if (kind < 0.03) return 'not json {';
    if (kind < 0.05) return '[1,2]';
    if (kind < 0.08 && this.written.length > 0) return this.pick(this.written); // a duplicate row
    const agent = this.pick([...AGENTS, null]);
    const row: Record<string, unknown> = {
      generated_at: this.random() < 0.02 ? 'not a time' : iso,
      goal_id: this.ws.goalId,
      json_path: this.artifact('json'),
      markdown_path: this.artifact('md'),
    };
    if (agent !== null) row['agent_id'] = agent;
    const c = this.random();
    if (c < 0.3) {
      row['classification'] = 'quota_slot_spent';
      row['slots'] = 1 + Math.floor(this.random() * 2);
      row['settlement_identity'] = { effect_id: `e${Math.floor(this.random() * 40)}` };
      if (this.random() < 0.5) row['usage'] = { tokens: 100, estimated: false };
    } else if (c < 0.38) {
      // Sometimes with stray whitespace: the ledger ignores such a row, the replan scan still skips it.
      row['classification'] = this.random() < 0.2 ? ' quota_slot_voided ' : 'quota_slot_voided';
      row['voided_effect_id'] = `e${Math.floor(this.random() * 40)}`;
    } else if (c < 0.55) {
      row['classification'] = 'quota_monitor_poll';
      row['recommended_action'] = 'poll the CI watch again';
      row['todo_id'] = 'todo_parser';
    } else if (c < 0.7) {
      row['classification'] = 'validated_progress';
      row['recommended_action'] = this.pick(['observe the queue', 'write the parser', 'no progress yet']);
      row['waiting_on'] = this.pick(['codex', 'user', 'external_evidence']);
      row['progress_scope'] = this.random() < 0.4 ? 'agent_lane' : undefined;
    } else if (c < 0.78) {
      row['classification'] = 'autonomous_replan';
      row['replan_obligation_id'] = 'replan-1';
    } else {
      row['classification'] = 'stalled';
      row['recommended_action'] = 'watch the dependency';
      row['progress_scope'] = this.random() < 0.5 ? 'agent_lane' : undefined;
    }
    const text = JSON.stringify(row);
    this.written.push(text);
    return this.random() < 0.05 ? `${text}\r` : text;
  }
}

function indexFile(ws: Workspace): string {
  return runIndexPath(ws.runtimeRoot, ws.goalId);
}

function append(ws: Workspace, text: string): void {
  fs.mkdirSync(path.dirname(indexFile(ws)), { recursive: true });
  fs.appendFileSync(indexFile(ws), text);
}

/** A history as plain data (Maps as sorted entries), for deep equality. */
function plainHistory(history: RunHistory): unknown {
  return JSON.parse(
    JSON.stringify({
      ...history,
      recent_by_agent: [...history.recent_by_agent].sort(([a], [b]) => a.localeCompare(b)),
    }),
  );
}

async function uncached(ws: Workspace): Promise<unknown> {
  const read = await readRunIndex(indexFile(ws), { projectRoot: ws.dir, artifactChecks: 0 });
  return plainHistory(summarizeRunRows(read.rows, ws.dir));
}

async function decide(ws: Workspace, agentId: string | null, indexCache: 'off' | 'memory'): Promise<ShouldRunDecision> {
  return (await shouldRunFor({
    registryPath: ws.registryPath,
    goalId: ws.goalId,
    agentId,
    clock: clockAt(),
    homeDir: ws.dir,
    nextActionWarning: shouldRunNextActionWarning,
    indexCache,
  })) as ShouldRunDecision;
}

describe('incremental run history (run index with tail offsets)', () => {
  it('keeps every row of a lane the replan scan can visit', () => {
    assert.ok(REPLAN_SCAN_DEPTH <= RECENT_LANE_ROWS);
  });

  it('randomized: every read equals the uncached reader, and should-run decides identically, with appends between calls', async function () {
    this.timeout(120_000);
    const kinds = new Map<string, number>();
    for (let seed = 1; seed <= 12; seed++) {
      const ws = makeWorkspace();
      const random = prng(seed);
      const maker = new RowMaker(random, ws);
      const memo = new RunHistoryReader();
      for (let round = 0; round < 14; round++) {
        const batch = Array.from({ length: 1 + Math.floor(random() * 12) }, () => maker.line());
        const torn = random() < 0.2;
        append(ws, `${batch.join('\n')}\n`);
        if (torn) append(ws, maker.line().slice(0, 20));
        const expected = await uncached(ws);
        const warm = await memo.read(ws.runtimeRoot, ws.goalId, ws.dir);
        kinds.set(warm.kind, (kinds.get(warm.kind) ?? 0) + 1);
        assert.deepEqual(plainHistory(warm.history), expected, `seed ${seed} round ${round}: in-memory reader`);
        // A new process: nothing carries over, it reads the index itself.
        const fresh = await new RunHistoryReader().read(ws.runtimeRoot, ws.goalId, ws.dir);
        assert.deepEqual(plainHistory(fresh.history), expected, `seed ${seed} round ${round}: fresh reader`);
        for (const agent of ['agent-a', 'agent-b', null])
          assert.deepEqual(
            await decide(ws, agent, 'memory'),
            await decide(ws, agent, 'off'),
            `seed ${seed} round ${round} agent ${agent}: decision`,
          );
        if (torn) append(ws, '\n');
      }
    }
    // The comparison covered every path: tail reads, torn tails and full re-reads (out-of-order rows).
    for (const kind of ['tail', 'torn', 'full']) assert.ok((kinds.get(kind) ?? 0) > 0, `${kind}: ${[...kinds]}`);
  });

  it('an in-order history is read by its tail: appended bytes only', async () => {
    const ws = makeWorkspace();
    const reader = new RunHistoryReader();
    const spend = (i: number): string =>
      JSON.stringify({
        generated_at: `2026-01-15T09:${String(i).padStart(2, '0')}:00Z`,
        classification: 'quota_slot_spent',
        slots: 1,
        agent_id: 'agent-a',
        settlement_identity: { effect_id: `e${i}` },
      });
    append(ws, `${spend(1)}\n${spend(2)}\n`);
    assert.equal((await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).kind, 'full');
    assert.equal((await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).kind, 'unchanged');
    append(ws, `${spend(3)}\n`);
    const tail = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.equal(tail.kind, 'tail');
    assert.deepEqual(
      tail.history.facts.spends.map((s) => s.effect_id),
      ['e3', 'e2', 'e1'],
    );
    // A fresh reader (another process) keeps nothing from this one: it reads the index in full.
    append(ws, `${spend(4)}\n`);
    const next = await new RunHistoryReader().read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.equal(next.kind, 'full');
    assert.deepEqual(plainHistory(next.history), await uncached(ws));
  });

  describe('stamps that lie', () => {
    /** An index of `rows` spends (about 160 bytes each) and a warmed reader. */
    async function warmed(rows: number): Promise<{ ws: Workspace; reader: RunHistoryReader; lines: string[] }> {
      const ws = makeWorkspace();
      const lines = Array.from({ length: rows }, (_, i) =>
        JSON.stringify({
          generated_at: new Date(BASE + i * 1000).toISOString(),
          classification: 'quota_slot_spent',
          slots: 1,
          agent_id: 'agent-a',
          settlement_identity: { effect_id: `effect-${String(i).padStart(5, '0')}` },
        }),
      );
      append(ws, `${lines.join('\n')}\n`);
      // A whole-second mtime, so a test can put it back exactly (as a coarse-mtime file system would keep it).
      fs.utimesSync(indexFile(ws), new Date(BASE), new Date(BASE));
      const reader = new RunHistoryReader();
      await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
      return { ws, reader, lines };
    }

    async function assertFresh(ws: Workspace, reader: RunHistoryReader, kind: string): Promise<void> {
      const read = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
      assert.deepEqual(plainHistory(read.history), await uncached(ws));
      assert.equal(read.kind, kind);
    }

    it('a same-size rewrite keeping the mtime (within its granularity) is caught by the hash of the bytes read', async () => {
      const { ws, reader, lines } = await warmed(100);
      const before = fs.statSync(indexFile(ws));
      // Same length, same inode, last row's identity changed, mtime put back.
      const last = lines.length - 1;
      lines[last] = (lines[last] as string).replace('effect-00099', 'effect-0009X');
      fs.writeFileSync(indexFile(ws), `${lines.join('\n')}\n`);
      fs.utimesSync(indexFile(ws), new Date(BASE), new Date(BASE));
      assert.equal(fs.statSync(indexFile(ws)).mtimeMs, before.mtimeMs);
      assert.equal(fs.statSync(indexFile(ws)).size, before.size);
      assert.equal(fs.statSync(indexFile(ws)).ino, before.ino);
      await assertFresh(ws, reader, 'full');
    });

    it('a same-size rewrite in the middle of the file is caught by its mtime', async () => {
      const { ws, reader, lines } = await warmed(200);
      const before = fs.statSync(indexFile(ws));
      lines[100] = (lines[100] as string).replace('effect-00100', 'effect-0010X');
      fs.writeFileSync(indexFile(ws), `${lines.join('\n')}\n`);
      fs.utimesSync(indexFile(ws), before.atime, new Date(before.mtimeMs + 5));
      await assertFresh(ws, reader, 'full');
    });

    it('truncation, and truncation then regrowth past the old offset, are re-read from scratch', async () => {
      const { ws, reader, lines } = await warmed(100);
      fs.writeFileSync(indexFile(ws), `${lines.slice(0, 50).join('\n')}\n`);
      await assertFresh(ws, reader, 'full');
      // Same inode, longer than before, different bytes before the old offset.
      const other = lines.map((line) => line.replace('agent-a', 'agent-b'));
      fs.writeFileSync(indexFile(ws), `${other.join('\n')}\n${other.join('\n')}\n`);
      await assertFresh(ws, reader, 'full');
    });

    it('replacement by rename (same first and last 4 KB, other middle, then an append) is caught by the inode', async () => {
      const { ws, reader, lines } = await warmed(200);
      const changed = [...lines];
      changed[100] = (changed[100] as string).replace('effect-00100', 'effect-0010X');
      const extra = JSON.stringify({
        generated_at: new Date(BASE + 500_000).toISOString(),
        classification: 'quota_slot_spent',
        slots: 1,
        settlement_identity: { effect_id: 'late' },
      });
      const temp = `${indexFile(ws)}.tmp`;
      fs.writeFileSync(temp, `${changed.join('\n')}\n${extra}\n`);
      fs.renameSync(temp, indexFile(ws));
      await assertFresh(ws, reader, 'full');
      assert.ok(
        reader &&
          (await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).history.facts.spends.some(
            (s) => s.effect_id === 'effect-0010X',
          ),
      );
    });

    it('clock skew: an index stamped far in the future or the past is still read by its tail, correctly', async () => {
      const { ws, reader } = await warmed(20);
      for (const mtime of [new Date('2099-01-01T00:00:00Z'), new Date('1990-01-01T00:00:00Z')]) {
        fs.utimesSync(indexFile(ws), mtime, mtime);
        await assertFresh(ws, reader, 'full');
        append(
          ws,
          `${JSON.stringify({ generated_at: new Date(BASE + 3_600_000 * (mtime.getFullYear() - 1980)).toISOString(), classification: 'quota_slot_spent', settlement_identity: { effect_id: `skew-${mtime.getFullYear()}` } })}\n`,
        );
        fs.utimesSync(indexFile(ws), mtime, mtime);
        await assertFresh(ws, reader, 'tail');
      }
    });
  });

  it('keeps what it read in memory only: no file is written beside the index', async () => {
    const ws = makeWorkspace();
    append(
      ws,
      `${JSON.stringify({ generated_at: '2026-01-15T09:00:00Z', classification: 'quota_slot_spent', slots: 2, settlement_identity: { effect_id: 'e1' } })}\n`,
    );
    const goalDir = path.dirname(path.dirname(indexFile(ws)));
    const before = fs.readdirSync(goalDir, { recursive: true }).map(String).sort();
    const reader = new RunHistoryReader();
    assert.equal((await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).kind, 'full');
    assert.equal((await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).kind, 'unchanged');
    assert.deepEqual(fs.readdirSync(goalDir, { recursive: true }).map(String).sort(), before);
  });

  it('a torn last line (an append in progress) is answered as the plain reader does, and never consumed', async () => {
    const ws = makeWorkspace();
    const reader = new RunHistoryReader();
    const row = (id: string): string =>
      JSON.stringify({
        generated_at: `2026-01-15T09:00:0${id.slice(1)}Z`,
        classification: 'quota_slot_spent',
        slots: 1,
        settlement_identity: { effect_id: id },
      });
    append(ws, `${row('e1')}\n`);
    await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    const second = row('e2');
    // A whole row without its newline yet: the plain reader counts it; the cache must not advance past it.
    append(ws, second);
    const torn = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.equal(torn.kind, 'torn');
    assert.deepEqual(plainHistory(torn.history), await uncached(ws));
    // Not consumed: asked again before the line ends, the read is torn again (never 'unchanged').
    assert.equal((await reader.read(ws.runtimeRoot, ws.goalId, ws.dir)).kind, 'torn');
    // The writer goes on: the line ends up longer than what was seen (a bigger row), then closed.
    fs.writeFileSync(indexFile(ws), `${row('e1')}\n${row('e2').replace('"slots":1', '"slots":3')}`);
    const half = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.deepEqual(plainHistory(half.history), await uncached(ws));
    append(ws, '\n');
    const done = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.deepEqual(plainHistory(done.history), await uncached(ws));
    assert.deepEqual(
      done.history.facts.spends.map((s) => [s.effect_id, s.slots]),
      [
        ['e2', 3],
        ['e1', 1],
      ],
    );
  });

  it('a concurrent appender (another process, partial writes) loses and doubles no row', async function () {
    this.timeout(60_000);
    const ws = makeWorkspace();
    append(ws, '');
    const rows = 400;
    const go = path.join(ws.dir, 'go');
    const script = `
      const fs = require('node:fs');
      const [file, go, rows] = process.argv.slice(1);
      while (!fs.existsSync(go)) {}
      for (let i = 0; i < Number(rows); i++) {
        const line = JSON.stringify({ generated_at: new Date(${BASE} + i * 1000).toISOString(), classification: 'quota_slot_spent', slots: 1, settlement_identity: { effect_id: 'c' + i } }) + '\\n';
        // Two writes per row: readers see torn lines.
        const cut = 1 + (i % (line.length - 1));
        fs.appendFileSync(file, line.slice(0, cut));
        fs.appendFileSync(file, line.slice(cut));
      }
    `;
    const child = spawn(process.execPath, ['-e', script, indexFile(ws), go, String(rows)], { stdio: 'inherit' });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    let done = false;
    void exited.then(() => (done = true));
    const reader = new RunHistoryReader();
    let reads = 0;
    fs.writeFileSync(go, '');
    while (!done) {
      const read = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
      // Whatever moment it caught, the answer is a prefix: newest first, no gap, no double.
      const ids = read.history.facts.spends.map((s) => s.effect_id);
      assert.deepEqual(
        ids,
        ids.map((_, i) => `c${ids.length - 1 - i}`),
      );
      reads++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.equal(await exited, 0);
    const final = await reader.read(ws.runtimeRoot, ws.goalId, ws.dir);
    assert.equal(final.history.facts.spends.length, rows);
    assert.deepEqual(plainHistory(final.history), await uncached(ws));
    assert.ok(reads > 0);
  });
});
