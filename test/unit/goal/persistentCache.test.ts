import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fixedClock } from '../../../src/core/clock';
import { observeSafeReads } from '../../../src/core/fs/safeRead';
import {
  persistentCacheEnabled,
  STATUS_CACHE_SCHEMA,
  PersistentCache,
  statusCachePath,
} from '../../../src/core/goal/persistentCache';
import { fileSystemGoalReader, type FileStamp, type GoalFileReader } from '../../../src/core/goal/files';
import { GoalStatusCache, type GoalStatusItem } from '../../../src/core/status/goalStatus';
import { goalItems, type StatusPayload } from '../../../src/core/status/statusPayload';
import { loadStatusAt } from '../../support/status';
import { statusQuotaSummaries } from '../../../src/core/status/statusQuota';
import { ageFiles, materializeDemoWorkspace } from '../../support/demoWorkspace';
import { isCredentialClean, redactCredentials, redactCredentialsShared } from '../../../src/core/privacy/scrub';
import { runLoopx } from '../cli/run';

const CLOCK = fixedClock('2026-11-28T12:00:00Z');
const HOUR_AGO = new Date(Date.now() - 3_600_000);

interface Demo {
  dir: string;
  registryPath: string;
  stateFile: string;
  indexFile: string;
  cacheFile: string;
}

function demo(): Demo {
  const dir = materializeDemoWorkspace(
    path.join(fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-disk-cache-'))), 'demo'),
  );
  const runtimeRoot = path.join(dir, '.loopx', 'runtime');
  return {
    dir,
    registryPath: path.join(dir, '.loopx', 'registry.json'),
    stateFile: path.join(dir, '.codex', 'goals', 'tidy-notes', 'ACTIVE_GOAL_STATE.md'),
    indexFile: path.join(runtimeRoot, 'goals', 'tidy-notes', 'runs', 'index.jsonl'),
    cacheFile: statusCachePath(runtimeRoot),
  };
}

/** Every file of the demo (but the cache) last modified an hour ago: nothing is racy. */
function ageEverything(d: Demo): void {
  ageFiles(d.dir, HOUR_AGO, d.cacheFile);
}

interface Counted {
  payload: StatusPayload;
  stateReads: number;
  indexReads: number;
  /** Files read through the safe readers (index, spend records, cache). */
  safeReads: string[];
  disk: PersistentCache | undefined;
}

/** One status call as a fresh process makes it: a new in-memory cache, the disk cache on or off. */
async function status(d: Demo, persistentCache: boolean, clock = CLOCK): Promise<Counted> {
  let stateReads = 0;
  let indexReads = 0;
  const reader: GoalFileReader = {
    ...fileSystemGoalReader,
    readState: async (file) => {
      stateReads++;
      return fileSystemGoalReader.readState(file);
    },
    readRunIndex: async (file, options) => {
      indexReads++;
      return fileSystemGoalReader.readRunIndex(file, options);
    },
  };
  const safeReads: string[] = [];
  const previous = observeSafeReads((file) => safeReads.push(file));
  const cache = new GoalStatusCache(reader);
  try {
    const payload = await loadStatusAt({
      registryPath: d.registryPath,
      homeDir: d.dir,
      cache,
      persistentCache,
      clock,
      quotaSummary: statusQuotaSummaries({ registryPath: d.registryPath, clock, homeDir: d.dir }),
    });
    return { payload, stateReads, indexReads, safeReads, disk: cache.disk };
  } finally {
    observeSafeReads(previous);
  }
}

/** Rewrites `file` in place (same inode) with text of the same length, then puts its mtime back. */
function rewriteSameSizeSameMtime(file: string, edit: (text: string) => string): void {
  const before = fs.statSync(file);
  const text = fs.readFileSync(file, 'utf8');
  const next = edit(text);
  assert.equal(Buffer.byteLength(next), Buffer.byteLength(text), 'the edit keeps the size');
  assert.notEqual(next, text);
  const fd = fs.openSync(file, 'r+');
  fs.writeSync(fd, next, 0, 'utf8');
  fs.closeSync(fd);
  fs.utimesSync(file, before.atime, before.mtime);
  const after = fs.statSync(file);
  assert.deepEqual([after.size, after.mtimeMs, after.ino], [before.size, before.mtimeMs, before.ino], 'stamp kept');
}

/** A same-length edit of the demo's Next Action text (it shows in the status item). */
const editNextAction = (text: string): string => {
  const at = text.indexOf('## Next Action');
  assert.ok(at >= 0);
  const line = text.indexOf('\n', at) + 1;
  const end = text.indexOf('\n', line);
  const old = text.slice(line, end);
  const swapped = old.replace(/[a-z]/, (c) => (c === 'x' ? 'y' : 'x'));
  return text.slice(0, line) + swapped + text.slice(end);
};

describe('the one persistent cache switch', () => {
  it('is LOOPX_STATUS_CACHE, with the old run-index switch LOOPX_INDEX_CACHE read as the same', () => {
    assert.equal(persistentCacheEnabled({}), true);
    for (const off of ['off', 'OFF', ' 0 ', 'false'])
      for (const name of ['LOOPX_STATUS_CACHE', 'LOOPX_INDEX_CACHE'])
        assert.equal(persistentCacheEnabled({ [name]: off }), false, `${name}=${off}`);
    assert.equal(persistentCacheEnabled({ LOOPX_STATUS_CACHE: 'on', LOOPX_INDEX_CACHE: '1' }), true);
  });
});

describe('persistent status cache (runtime root)', () => {
  it('a warm call reads no state file, no run index and no spend record, and answers the same JSON as the uncached path', async () => {
    const d = demo();
    ageEverything(d);
    const cold = await status(d, true);
    assert.equal(cold.disk?.origin, 'missing');
    assert.ok(fs.existsSync(d.cacheFile), 'the cache is written into the runtime root');
    const warm = await status(d, true);
    assert.equal(warm.disk?.origin, 'loaded');
    assert.equal(warm.stateReads, 0);
    assert.equal(warm.indexReads, 0);
    assert.deepEqual(
      warm.safeReads.filter((file) => file !== d.cacheFile && file !== d.registryPath),
      [],
      'only the cache (and the registry) are read',
    );
    const uncached = await status(d, false);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify(uncached.payload));
    assert.equal(JSON.stringify(cold.payload), JSON.stringify(uncached.payload));
  });

  it('an appended run is seen: the index stamp changed (size), its item and ledger are rebuilt', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const rows = fs.readFileSync(d.indexFile, 'utf8').trim().split('\n');
    const spend = JSON.parse(rows.find((row) => row.includes('quota_slot_spent')) as string) as Record<string, unknown>;
    fs.appendFileSync(
      d.indexFile,
      `${JSON.stringify({ ...spend, generated_at: '2026-11-28T11:00:00+00:00', slots: 3, settlement_identity: { effect_id: 'new-effect' } })}\n`,
    );
    const warm = await status(d, true);
    const uncached = await status(d, false);
    assert.equal(warm.indexReads, 1);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify(uncached.payload));
    const before = goalItems((await status(d, false)).payload)[0]?.quota?.spent_slots;
    assert.equal(goalItems(warm.payload)[0]?.quota?.spent_slots, before);
    assert.equal(goalItems(warm.payload)[0]?.unique_runs, rows.length + 1);
  });

  it('a same-size rewrite within the mtime granularity is caught by the content hash of a racy file', async () => {
    const d = demo();
    // Modified just now, on a one-second granularity: racy, so its entry carries a hash.
    const now = Math.floor(Date.now() / 1000);
    fs.utimesSync(d.stateFile, now, now);
    await status(d, true);
    rewriteSameSizeSameMtime(d.stateFile, editNextAction);
    const warm = await status(d, true);
    const uncached = await status(d, false);
    assert.equal(warm.stateReads, 1, 'the state file is read again');
    assert.equal(
      goalItems(warm.payload)[0]?.active_state_next_action,
      goalItems(uncached.payload)[0]?.active_state_next_action,
    );
    assert.equal(JSON.stringify(warm.payload), JSON.stringify(uncached.payload));
  });

  it('a racy entry pays its hash until it is verified after the racy window, then the stamp alone serves', async () => {
    const d = demo(); // Files just written: racy, hashed.
    await status(d, true);
    const hashedPaths = (): string[] => {
      const text = fs.readFileSync(d.cacheFile, 'utf8');
      const body = JSON.parse(text.split('\n')[1] as string) as {
        items: Record<string, { files: { path: string; sha256?: string }[] }>;
      };
      return Object.values(body.items).flatMap((item) =>
        item.files.filter((f) => f.sha256 !== undefined).map((f) => f.path),
      );
    };
    assert.ok(hashedPaths().includes(d.stateFile));
    // The cache as written well after the files' last change (as an hour later would leave it).
    const later = new Date(Date.now() + 3_600_000);
    fs.utimesSync(d.cacheFile, later, later);
    const verified = await status(d, true);
    assert.equal(verified.stateReads, 0, 'verified by its hash, not re-parsed');
    assert.deepEqual(hashedPaths(), [], 'the hash is dropped once verified after the window');
    assert.equal(JSON.stringify(verified.payload), JSON.stringify((await status(d, false)).payload));
  });

  it('a truncated index is seen: its size changed, its item and ledger are rebuilt', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const text = fs.readFileSync(d.indexFile, 'utf8');
    const lines = text.trim().split('\n');
    fs.writeFileSync(d.indexFile, `${lines[0]}\n`);
    const truncated = await status(d, true);
    assert.equal(goalItems(truncated.payload)[0]?.unique_runs, 1);
    assert.equal(JSON.stringify(truncated.payload), JSON.stringify((await status(d, false)).payload));
  });

  it('a file replaced by rename (same size and mtime, new inode) is not trusted', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const before = fs.statSync(d.stateFile);
    const replacement = `${d.stateFile}.new`;
    fs.writeFileSync(replacement, editNextAction(fs.readFileSync(d.stateFile, 'utf8')));
    fs.utimesSync(replacement, before.atime, before.mtime);
    fs.renameSync(replacement, d.stateFile);
    const after = fs.statSync(d.stateFile);
    assert.deepEqual([after.size, after.mtimeMs], [before.size, before.mtimeMs]);
    assert.notEqual(after.ino, before.ino);
    const warm = await status(d, true);
    assert.equal(warm.stateReads, 1);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify((await status(d, false)).payload));
  });

  it('clock skew: a file stamped in the future is racy whatever the clock says, and a same-size rewrite is caught', async () => {
    const d = demo();
    ageEverything(d);
    const future = new Date(Date.now() + 3_600_000);
    fs.utimesSync(d.stateFile, future, future);
    await status(d, true);
    rewriteSameSizeSameMtime(d.stateFile, editNextAction);
    const warm = await status(d, true);
    assert.equal(warm.stateReads, 1);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify((await status(d, false)).payload));
  });

  it('clock skew: a cache file stamped earlier than the files it describes does not trust unhashed entries', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    // The cache now looks older than the files (the file system clock went back, or the cache was copied).
    const older = new Date(Date.now() - 2 * 3_600_000);
    fs.utimesSync(d.cacheFile, older, older);
    rewriteSameSizeSameMtime(d.stateFile, editNextAction);
    const warm = await status(d, true);
    assert.equal(warm.stateReads, 1);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify((await status(d, false)).payload));
  });

  it('a corrupt cache (a flipped byte of the body line, a torn file, not JSON) is ignored and rebuilt', async () => {
    for (const damage of [
      (bytes: Buffer) => {
        const body = bytes.indexOf(0x0a) + 1;
        const at = body + Math.floor((bytes.indexOf(0x0a, body) - body) / 2);
        bytes[at] = (bytes[at] as number) ^ 0x01;
        return bytes;
      },
      // Torn inside the segments (the body line whole): the segments' length tells.
      (bytes: Buffer) => bytes.subarray(0, bytes.length - 10),
      (bytes: Buffer) => bytes.subarray(0, Math.floor(bytes.length / 2)),
      () => Buffer.from('not json at all'),
      // Still valid JSON of the right shape, with an edited item: only the checksum tells.
      (bytes: Buffer) =>
        Buffer.from(bytes.toString('utf8').replaceAll('Tidy the notes folder', 'Tidy the notes f0lder')),
    ]) {
      const d = demo();
      ageEverything(d);
      const first = await status(d, true);
      fs.writeFileSync(d.cacheFile, damage(fs.readFileSync(d.cacheFile)));
      const again = await status(d, true);
      assert.equal(again.disk?.origin, 'corrupt');
      assert.equal(again.stateReads, 1, 'nothing is taken from it');
      assert.equal(JSON.stringify(again.payload), JSON.stringify(first.payload));
      assert.equal(PersistentCache.open(d.cacheFile).origin, 'loaded', 'rebuilt');
    }
  });

  it('a flipped byte in any facts segment is never trusted: the facts are read from the index, the answer is the uncached one, and the cache is rewritten', async () => {
    // Two days later the kept ledger memo no longer holds, so the facts segment is read.
    const later = fixedClock('2026-11-30T12:00:00Z');
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const pristine = fs.readFileSync(d.cacheFile);
    const bodyStart = pristine.indexOf(0x0a) + 1;
    const segmentsStart = pristine.indexOf(0x0a, bodyStart) + 1;
    const body = JSON.parse(pristine.subarray(bodyStart, segmentsStart - 1).toString('utf8')) as {
      indexes: Record<string, { facts: [number, number] }>;
    };
    const segments = Object.entries(body.indexes).map(([file, record]) => [file, ...record.facts] as const);
    // The facts as an intact cache gives them.
    const factsOf = async (file: string): Promise<string> => {
      const digest = PersistentCache.open(d.cacheFile).indexDigest(
        file,
        await fileSystemGoalReader.stat(file),
        path.dirname(path.dirname(d.registryPath)),
      );
      assert.ok(digest !== undefined, 'the index is unchanged: its entry is used');
      return JSON.stringify(digest.facts);
    };
    const facts = new Map<string, string>();
    for (const [file] of segments) facts.set(file, await factsOf(file));
    assert.ok(segments.length > 0 && segments.every(([, , length]) => length > 0), 'the demo has a facts segment');
    const uncached = JSON.stringify((await status(d, false, later)).payload);
    let flips = 0;
    for (const [file, offset, length] of segments) {
      const start = segmentsStart + offset;
      // Digits stay digits when flipped (0x30 ^ 1 = 0x31): the segment is still valid JSON, only its hash tells.
      const digits = [...pristine.subarray(start, start + length).keys()].filter((i) => {
        const byte = pristine[start + i] as number;
        return byte >= 0x30 && byte <= 0x38;
      });
      for (const i of [digits[0], digits[Math.floor(digits.length / 2)], digits[digits.length - 1]]) {
        assert.ok(i !== undefined);
        const damaged = Buffer.from(pristine);
        damaged[start + i] = (damaged[start + i] as number) ^ 0x01;
        fs.writeFileSync(d.cacheFile, damaged);
        assert.equal(await factsOf(file), facts.get(file), 'the damaged bytes are not parsed: the index is read');
        const again = await status(d, true, later);
        assert.equal(again.disk?.origin, 'loaded', 'the body line is intact: its items are used');
        assert.equal(JSON.stringify(again.payload), uncached, `byte ${i} of the segment at ${offset}`);
        // The rewritten file holds the facts as read from the index: they check, and give the same answer.
        const reread = await status(d, true, later);
        assert.equal(JSON.stringify(reread.payload), uncached);
        flips++;
      }
    }
    assert.ok(flips >= 3);
  });

  it('the facts segments are read only when facts are: a warm open reads the header and body line, a later read the file as opened', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const projectRoot = path.dirname(path.dirname(d.registryPath));
    const stamp = await fileSystemGoalReader.stat(d.indexFile);
    const factsNow = JSON.stringify(
      PersistentCache.open(d.cacheFile).indexDigest(d.indexFile, stamp, projectRoot)?.facts,
    );
    const reads: string[] = [];
    const previous = observeSafeReads((file) => reads.push(file));
    try {
      const cache = PersistentCache.open(d.cacheFile);
      const digest = cache.indexDigest(d.indexFile, stamp, projectRoot);
      assert.ok(digest?.ledger_memo !== undefined, 'the memo is in the body line');
      assert.deepEqual(reads, [d.cacheFile], 'one read: the header and body line');
      assert.equal(JSON.stringify(digest.facts), factsNow);
      assert.deepEqual(reads, [d.cacheFile, d.cacheFile], 'the segments when the facts are read');
      // Another file at the path since the open (a save by another process renames one over it): its
      // bytes are never taken for the opened file's segments, even equal ones; the facts are read from
      // the index (the segment's hash would refuse other bytes anyway).
      const replaced = PersistentCache.open(d.cacheFile);
      const kept = replaced.indexDigest(d.indexFile, stamp, projectRoot);
      const other = `${d.cacheFile}.other`;
      fs.copyFileSync(d.cacheFile, other);
      fs.renameSync(other, d.cacheFile);
      reads.length = 0;
      assert.equal(JSON.stringify(kept?.facts), factsNow, 'from the index, not the other file');
      assert.ok(reads.includes(d.indexFile), 'the index was read');
    } finally {
      observeSafeReads(previous);
    }
  });

  it('a foreign cache (another format, another version) is ignored, and never trusted for an entry', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const bytes = fs.readFileSync(d.cacheFile, 'utf8');
    const newline = bytes.indexOf('\n');
    const header = JSON.parse(bytes.slice(0, newline)) as Record<string, unknown>;
    fs.writeFileSync(
      d.cacheFile,
      `${JSON.stringify({ ...header, loopx_version: '0.0.0-other' })}${bytes.slice(newline)}`,
    );
    const again = await status(d, true);
    assert.equal(again.disk?.origin, 'foreign');
    assert.equal(again.stateReads, 1);
  });

  it('the run-index facts stay packed while the kept ledger memo holds; a later clock moves spends out of the window and is answered as uncached', async () => {
    const d = demo();
    ageEverything(d);
    // Demo spends at the clock's day: one hour before and two days after the window moves past them.
    const clocks = ['2026-11-28T12:00:00Z', '2026-11-28T12:00:00Z', '2026-11-28T13:00:00Z', '2026-11-30T12:00:00Z'];
    const memoOf = (): { from: number } | undefined => {
      const record = Object.values(
        (
          JSON.parse(fs.readFileSync(d.cacheFile, 'utf8').split('\n')[1] as string) as {
            indexes: Record<string, { memo?: { from: number } }>;
          }
        ).indexes,
      )[0];
      return record?.memo;
    };
    await status(d, true, fixedClock(clocks[0] as string));
    assert.equal(memoOf()?.from, Date.parse(clocks[0] as string), 'the cold call keeps the memo of its instant');
    let unpacked = 0;
    const parse = JSON.parse;
    for (const at of clocks.slice(1)) {
      const clock = fixedClock(at);
      const uncached = await status(d, false, clock);
      JSON.parse = (text: string, reviver?: Parameters<typeof parse>[1]) => {
        if (text.startsWith('{"spends":')) unpacked++;
        return parse(text, reviver) as unknown;
      };
      let warm: Counted;
      try {
        warm = await status(d, true, clock);
      } finally {
        JSON.parse = parse;
      }
      assert.equal(warm.indexReads, 0);
      assert.equal(JSON.stringify(warm.payload), JSON.stringify(uncached.payload), at);
      assert.equal(
        JSON.stringify(goalItems(warm.payload)[0]?.quota),
        JSON.stringify(goalItems(uncached.payload)[0]?.quota),
      );
    }
    assert.ok(unpacked >= 1, 'two days later the memo no longer held: the facts were unpacked');
    assert.ok(unpacked < clocks.length - 1, 'the same instant again: the memo answered without the facts');
    assert.equal(memoOf()?.from, Date.parse(clocks[3] as string), 'the new memo is saved');
  });

  it('a cache of the previous schema, or with a facts segment outside the file, is not used', async () => {
    const d = demo();
    ageEverything(d);
    await status(d, true);
    const text = fs.readFileSync(d.cacheFile, 'utf8');
    const lines = text.split('\n');
    const header = JSON.parse(lines[0] as string) as Record<string, unknown>;
    fs.writeFileSync(
      d.cacheFile,
      [JSON.stringify({ ...header, schema: STATUS_CACHE_SCHEMA - 1 }), ...lines.slice(1)].join('\n'),
    );
    assert.equal((await status(d, true)).disk?.origin, 'foreign');
    // A body whose segment reaches past the end, with a matching checksum (as a buggy writer would leave it).
    const body = JSON.parse(fs.readFileSync(d.cacheFile, 'utf8').split('\n')[1] as string) as {
      indexes: Record<string, { facts: [number, number] }>;
    };
    const record = Object.values(body.indexes)[0];
    assert.ok(record !== undefined);
    record.facts = [record.facts[0], record.facts[1] + 1_000_000];
    const rest = Buffer.from(
      `${JSON.stringify(body)}\n${fs.readFileSync(d.cacheFile, 'utf8').split('\n').slice(2).join('\n')}`,
    );
    const { createHash } = await import('node:crypto');
    const again = JSON.parse(fs.readFileSync(d.cacheFile, 'utf8').split('\n')[0] as string) as Record<string, unknown>;
    fs.writeFileSync(
      d.cacheFile,
      Buffer.concat([
        Buffer.from(`${JSON.stringify({ ...again, sha256: createHash('sha256').update(rest).digest('hex') })}\n`),
        rest,
      ]),
    );
    const corrupt = await status(d, true);
    assert.equal(corrupt.disk?.origin, 'corrupt');
    assert.equal(corrupt.stateReads, 1, 'nothing is taken from it');
  });

  it('deleting the cache is safe; with the cache off nothing is written', async () => {
    const d = demo();
    await status(d, false);
    assert.equal(fs.existsSync(d.cacheFile), false);
    await status(d, true);
    fs.rmSync(d.cacheFile);
    const again = await status(d, true);
    assert.equal(again.disk?.origin, 'missing');
    assert.equal(JSON.stringify(again.payload), JSON.stringify((await status(d, false)).payload));
  });
  it('a deferred save (the live model) writes nothing until the caller runs it, then the same cache as an awaited save', async () => {
    const d = demo();
    const saves: (() => Promise<boolean>)[] = [];
    const payload = await loadStatusAt({
      registryPath: d.registryPath,
      homeDir: d.dir,
      cache: new GoalStatusCache(),
      persistentCache: true,
      clock: CLOCK,
      deferCacheSave: (save) => saves.push(save),
      quotaSummary: statusQuotaSummaries({ registryPath: d.registryPath, clock: CLOCK, homeDir: d.dir }),
    });
    assert.equal(saves.length, 1);
    assert.equal(fs.existsSync(d.cacheFile), false, 'nothing written before the caller saves');
    assert.equal(await saves[0]?.(), true);
    const warm = await status(d, true);
    assert.equal(warm.disk?.origin, 'loaded');
    assert.equal(warm.stateReads, 0);
    assert.equal(JSON.stringify(warm.payload), JSON.stringify(payload));
  });

  it('the body line is the JSON of the kept items (as JSON.stringify writes it), a replaced item written anew', async () => {
    const d = demo();
    const disk = (await status(d, true)).disk;
    assert.ok(disk !== undefined);
    const within = path.dirname(path.dirname(d.cacheFile));
    const bodyOf = (): { line: string; items: Record<string, { key: string; item: Record<string, unknown> }> } => {
      const line = fs.readFileSync(d.cacheFile, 'utf8').split('\n')[1] as string;
      return {
        line,
        items: (JSON.parse(line) as { items: Record<string, { key: string; item: Record<string, unknown> }> }).items,
      };
    };
    const first = bodyOf();
    assert.equal(first.line, JSON.stringify(JSON.parse(first.line)));
    const entry = first.items['tidy-notes'];
    assert.ok(entry !== undefined);
    const files: [string, FileStamp | null][] = [
      [d.stateFile, await fileSystemGoalReader.stat(d.stateFile)],
      [d.indexFile, await fileSystemGoalReader.stat(d.indexFile)],
    ];
    const original = (disk as unknown as { body: { items: Record<string, { item: GoalStatusItem }> } }).body.items[
      'tidy-notes'
    ]?.item;
    assert.ok(original !== undefined);
    // Two goals (the separators between items), one of them a replaced item with "quotes" and a newline.
    disk.setItem('tidy-notes', entry.key, files, { ...original, display_name: 'renamed "goal"\n' });
    disk.setItem('10', 'other-key', files, original);
    assert.equal(await disk.save(within), true);
    const second = bodyOf();
    assert.equal(second.line, JSON.stringify(JSON.parse(second.line)));
    assert.equal(second.items['tidy-notes']?.item['display_name'], 'renamed "goal"\n');
    assert.deepEqual(second.items['10']?.item, JSON.parse(JSON.stringify(original)));
    // The first item object again: its kept bytes, the goal's old name.
    disk.setItem('tidy-notes', entry.key, files, original);
    assert.equal(await disk.save(within), true);
    assert.equal(bodyOf().items['tidy-notes']?.item['display_name'], original.display_name);
    assert.equal(PersistentCache.open(d.cacheFile).origin, 'loaded', 'the checksum covers the chunks as written');
  });

  it('a change made while a save is under way keeps the cache dirty: the next save writes it', async () => {
    const d = demo();
    const first = await status(d, true);
    const disk = first.disk;
    assert.ok(disk !== undefined);
    disk.retain(new Set(['tidy-notes']), new Set([d.indexFile]));
    assert.equal(await disk.save(path.dirname(path.dirname(d.cacheFile))), false, 'nothing changed: no write');
    // Dropping every item marks the cache dirty; do it while a save is writing.
    (disk as unknown as { dirty: boolean }).dirty = true;
    const writing = disk.save(path.dirname(path.dirname(d.cacheFile)));
    disk.retain(new Set(), new Set());
    assert.equal(await writing, true);
    assert.equal(
      await disk.save(path.dirname(path.dirname(d.cacheFile))),
      true,
      'the change during the write is saved',
    );
    const reopened = PersistentCache.open(d.cacheFile);
    assert.equal(reopened.origin, 'loaded');
    assert.deepEqual(Object.keys((reopened as unknown as { body: { items: object } }).body.items), []);
  });

  it('an item recorded clean is not redacted again; an item holding a secret is redacted on every warm call', async () => {
    const d = demo();
    const secretTitle = 'Write notes/index.md listing every note by tag. DB_PASSWORD=hunter2';
    const text = fs.readFileSync(d.stateFile, 'utf8');
    fs.writeFileSync(d.stateFile, text.replace('Write notes/index.md listing every note by tag.', secretTitle));
    ageEverything(d);
    const cli = (env: NodeJS.ProcessEnv = {}) =>
      runLoopx(['status', '--format', 'json'], {
        cwd: d.dir,
        env: { HOME: d.dir, ...env },
        now: '2026-11-28T10:00:00Z',
      });
    const uncached = await cli({ LOOPX_STATUS_CACHE: 'off' });
    assert.ok(uncached.stdout.includes('DB_PASSWORD=[redacted:password]'), 'the secret is in the status, redacted');
    assert.ok(!uncached.stdout.includes('hunter2'));
    const cold = await cli();
    const warm = await cli();
    assert.equal(cold.stdout, uncached.stdout);
    assert.equal(warm.stdout, uncached.stdout, 'the warm call redacts the kept item holding the secret');
    const readEntries = () =>
      JSON.parse(fs.readFileSync(d.cacheFile, 'utf8').split('\n')[1] as string).items as Record<
        string,
        { clean?: true }
      >;
    assert.equal(readEntries()['tidy-notes']?.clean, undefined, 'an item with a secret is never recorded clean');

    // Without the secret the item is recorded clean, and the warm answer is still the uncached one.
    fs.writeFileSync(d.stateFile, text);
    ageEverything(d);
    const clean = await cli();
    assert.equal(readEntries()['tidy-notes']?.clean, true);
    const warmClean = await cli();
    assert.equal(warmClean.stdout, clean.stdout);
    assert.equal(warmClean.stdout, (await cli({ LOOPX_STATUS_CACHE: 'off' })).stdout);
  });

  it("a clean kept item is marked where the answer meets it (its members and theirs, its summaries' todos), not in every object", async () => {
    const d = demo();
    ageEverything(d);
    // As `loopx status` asks: each item redacted as it is built, so the cache records it clean.
    const call = () =>
      loadStatusAt({
        registryPath: d.registryPath,
        homeDir: d.dir,
        cache: new GoalStatusCache(),
        persistentCache: true,
        redact: true,
        quotaSummary: statusQuotaSummaries({ registryPath: d.registryPath, clock: CLOCK, homeDir: d.dir }),
      });
    await call(); // Cold: projects, redacts (nothing to change) and saves the items clean.
    const warm = { payload: await call() };
    const item = goalItems(warm.payload).find((goal) => goal.goal_id === 'tidy-notes');
    assert.ok(item !== undefined);
    const summary = item.agent_todos;
    assert.ok(summary !== null && summary !== undefined && summary.items.length > 0);
    assert.equal(isCredentialClean(summary), true, 'a member of the kept item');
    assert.equal(isCredentialClean(summary.items), true, "a member's member");
    assert.equal(isCredentialClean(summary.items[0]), true, "a summary's todo (the goal channel copies it)");
    assert.equal(isCredentialClean(item.latest_runs[0]), true, 'a run (the run history copies it)');
    // The lists below the summaries are reached only through their marked arrays: not walked, not marked.
    const listed = [summary.first_open_items, summary.backlog_items, summary.claimed_open_items].find(
      (list) => list.length > 0,
    );
    assert.ok(listed !== undefined, 'the demo lists an agent todo');
    assert.equal(isCredentialClean(listed), true);
    assert.equal(isCredentialClean(listed[0]), false);
    // And the redaction keeps every part of the kept item as it is.
    const redacted = redactCredentialsShared(warm.payload);
    const again = goalItems(redacted).find((goal) => goal.goal_id === 'tidy-notes');
    assert.equal(again?.agent_todos, summary);
    assert.equal(JSON.stringify(redacted), JSON.stringify(redactCredentials(warm.payload)));
  });

  it('every object of a warm redacted payload that is marked clean is unchanged by the full redaction (copies of cached parts included)', async () => {
    const d = demo();
    // One todo holds a secret (its item is never recorded clean); the other goal parts are clean.
    const text = fs.readFileSync(d.stateFile, 'utf8');
    const secret = 'Write notes/index.md listing every note by tag. DB_PASSWORD=hunter2';
    fs.writeFileSync(d.stateFile, text.replace('Write notes/index.md listing every note by tag.', secret));
    ageEverything(d);
    const load = async (): Promise<StatusPayload> =>
      redactCredentialsShared(
        await loadStatusAt({
          registryPath: d.registryPath,
          homeDir: d.dir,
          cache: new GoalStatusCache(),
          persistentCache: true,
          redact: true,
          quotaSummary: statusQuotaSummaries({ registryPath: d.registryPath, clock: CLOCK, homeDir: d.dir }),
        }),
      );
    for (const round of ['with a secret', 'clean']) {
      await load();
      const warm = await load();
      const json = JSON.stringify(warm);
      assert.ok(!json.includes('hunter2'), `${round}: the secret never reaches the answer`);
      let checked = 0;
      const visit = (node: unknown, where: string): void => {
        if (node === null || typeof node !== 'object') return;
        if (isCredentialClean(node)) {
          assert.equal(JSON.stringify(redactCredentials(node)), JSON.stringify(node), `${round}: ${where}`);
          checked++;
        }
        for (const [key, child] of Object.entries(node)) visit(child, `${where}.${key}`);
      };
      visit(warm, 'payload');
      assert.ok(checked > 10, `${round}: clean objects were checked (${checked})`);
      fs.writeFileSync(d.stateFile, text);
      ageEverything(d);
    }
  });
});

describe('persistent cache: items and parts written again as loaded', () => {
  it('a save after a load writes the unchanged items and parts from their loaded bytes, byte for byte their JSON', async () => {
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'loopx-cache-spans-')));
    const file = path.join(dir, 'cache', 'status-cache.json');
    const input = path.join(dir, 'input.txt');
    fs.writeFileSync(input, 'x');
    fs.utimesSync(input, HOUR_AGO, HOUR_AGO);
    const files: [string, FileStamp | null][] = [[input, await fileSystemGoalReader.stat(input)]];
    const items: Record<string, Record<string, unknown>> = {
      a: { goal_id: 'a', text: 'with "quotes", a newline\n and ünïcödé …', list: [1, 2.5, null, { deep: true }] },
      b: { goal_id: 'b', text: 'plain' },
      c: { goal_id: 'c', nested: { '10': 'ten', '2': 'two', key: [] } },
    };
    const parts = { dashboard: { block: 'of a', values: [0, -1, 1e21] } };
    const written = PersistentCache.empty(file);
    for (const [id, item] of Object.entries(items)) written.setItem(id, `key-${id}`, files, item);
    written.setItemParts('a', items['a'] as object, 'parts-key', parts, true);
    assert.equal(await written.save(dir), true);

    const bodyOf = (): { line: string; body: Record<string, Record<string, Record<string, unknown>>> } => {
      const line = fs.readFileSync(file, 'utf8').split('\n')[1] as string;
      return { line, body: JSON.parse(line) as Record<string, Record<string, Record<string, unknown>>> };
    };
    const loaded = PersistentCache.open(file);
    assert.equal(loaded.origin, 'loaded');
    const kept = (id: string): object => {
      const item = loaded.item<object>(id, `key-${id}`, files);
      assert.ok(item, `${id} is kept`);
      return item;
    };
    // Each span names the item's (and the parts') JSON in the line as written.
    const { line, body } = bodyOf();
    const bytes = Buffer.from(line, 'utf8');
    for (const id of Object.keys(items)) {
      const span = body['spans']?.[id] as unknown as number[];
      assert.equal(bytes.subarray(span[0], span[0]! + span[1]!).toString('utf8'), JSON.stringify(items[id]), id);
    }
    const partsSpan = body['spans']?.['a'] as unknown as number[];
    assert.equal(bytes.subarray(partsSpan[2], partsSpan[2]! + partsSpan[3]!).toString('utf8'), JSON.stringify(parts));
    assert.deepEqual(loaded.itemParts('a', kept('a'), 'parts-key')?.value, parts);

    // One item replaced: the others (and a's parts) are written from their loaded bytes.
    kept('a');
    kept('c');
    const replaced = { goal_id: 'b', text: 'replaced' };
    loaded.setItem('b', 'key-b', files, replaced);
    const stringify = JSON.stringify;
    let itemsEncoded = 0;
    JSON.stringify = ((value: unknown, ...rest: unknown[]) => {
      if (typeof value === 'object' && value !== null && 'goal_id' in value) itemsEncoded++;
      return (stringify as (...args: unknown[]) => string)(value, ...rest);
    }) as typeof JSON.stringify;
    try {
      assert.equal(await loaded.save(dir), true);
    } finally {
      JSON.stringify = stringify;
    }
    assert.equal(itemsEncoded, 1, 'only the replaced item was encoded');
    const again = bodyOf();
    assert.equal(again.line, stringify(JSON.parse(again.line)), 'the line is the JSON of its values');
    assert.deepEqual(again.body['items']?.['a']?.['item'], items['a']);
    assert.deepEqual(again.body['items']?.['c']?.['item'], items['c']);
    assert.deepEqual(again.body['items']?.['b']?.['item'], replaced);
    assert.deepEqual((again.body['items']?.['a']?.['parts'] as { value: unknown }).value, parts);
    const reopened = PersistentCache.open(file);
    assert.equal(reopened.origin, 'loaded', 'the checksum covers the bytes as written');
    assert.deepEqual(reopened.item('c', 'key-c', files), items['c']);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
