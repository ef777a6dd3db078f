import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import type * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomicWrite';
import { readFileBytesSafeSync, readFilePartsSafeSync, type FileIdentity } from '../fs/safeRead';
import { isCredentialClean, markCredentialClean } from '../privacy/scrub';
import { digestRunIndex, type IndexDigest, type LedgerFacts, type LedgerMemo } from '../quota/ledger';
import { readRunIndex, readRunIndexSync, type RunIndexRead } from '../runtime/runIndex';
import { LOOPX_VERSION } from '../version';
import type { FileStamp } from './files';
import { packJson, unpackJson } from './packedJson';
import { keptRecentRunRows, recentRunRows, type RecentRunRow } from './recentRuns';
import { keptReportFacts, reportFactsOfRows, type GoalReportFacts } from './runSample';

/**
 * LoopX's one persistent cache: what `status`, `should-run`'s quota summary and the status server
 * derive from a goal's files (each goal's status item; each run index's clock-free ledger facts,
 * newest status run and newest runs), kept between processes in `<runtime_root>/cache/status-cache.json`
 * so a warm call stats the files and reads this one file instead of parsing every run index and
 * spend record. No other file caches what LoopX read (the architecture test keeps it so):
 * the decision's incremental run-index reader (`cache.ts`) keeps its state in memory only, since the
 * decision trusts only what its own process read. `LOOPX_STATUS_CACHE=off` turns it off
 * ({@link persistentCacheEnabled}).
 *
 * Trust rules (docs/benchmarks.md, "The persistent cache"):
 * - Every entry names the files it was derived from with their stamp (size, mtime, inode); an
 *   entry is used only when every stamp is identical now. A rename replaces the inode, an append
 *   or truncation the size, an in-place rewrite the mtime.
 * - A rewrite of the same size within the file system's mtime granularity keeps the stamp. So a
 *   file whose mtime is within RACY_MS of the cache file's own mtime (or later: clock skew) is
 *   "racy": its entry carries the file's SHA-256, checked on use, or it is not trusted at all.
 * - The file is ours alone: a format tag, a version (schema and LoopX version), the SHA-256 of the
 *   body line and the length of the segments after it (checked on open), and per segment its own
 *   SHA-256 (checked when that segment is first read). A missing, torn, corrupt, edited or foreign
 *   file is ignored (and rebuilt on save); a segment that fails its check is never used: its facts
 *   are read again from the run index, as without a cache. Deleting the file is always safe. It is
 *   written atomically; losing a race to another writer only loses that writer's entries (misses,
 *   never wrong answers).
 * - Layout (schema 8, 23): the header line, the body line (items, each with the parts a reader derived
 *   from it when answering (`itemParts`); per run index its file entry, its newest status run's facts,
 *   its newest runs as the editor lists them, its ledger memo and where its packed facts are, with
 *   their hash; where each item and its parts are in the line, so a save writes unchanged ones as
 *   loaded), then the packed facts of every index back to back, hashed and parsed only when read (the
 *   memo answers a warm `status` without them).
 */

export type { IndexDigest } from '../quota/ledger';

export const STATUS_CACHE_FORMAT = 'loopx-vscode-status-cache';
// 7: open gates carry `due_at` and `updated_at`. 8: the header's hash covers the body line only
// (with the segments' length); each facts segment carries its own hash, checked when it is read.
// 9: items carry the original's lifecycle, handoff readiness, cadence hint, backlog hygiene warning and agent-lane
// recommendation; todo summaries their `schema_version` and the projection order (issue 30).
// 10: items carry the original's `standing_decision_authority` (issue 30). 11: summary todos carry its
// `schema_version`, `role`, `archive_state` and `source_section`, summaries its claimed counts. 12: summaries carry
// the original's lists (`first_open_items`, `backlog_items`, …; projection/todoLists.ts). 13: summaries' `items` are
// the original's (up to 12, open, deferred, then done) and each listed todo has every `compact_todo_item` key
// (projection/compactTodoItem.ts). 14: each index digest keeps the run-history reports' facts (`report_facts`). 15: items carry the original's `project_asset` block (projection/projectAsset.ts).
// 16: summaries carry the closure and succession reports (projection/todoSuccession.ts), listed todos their monitor
// metadata (the monitor-due fields are derived from it when status answers, never kept: projection/monitorDue.ts).
// 17: items carry the original's `goal_channel_projection` (channelProjection.ts).
// 18: items carry their part of the todo index (reports/todoIndex.ts) and name the goal's rollout event log among
// their files. 19: summaries carry the original's `task_orchestration_authority` for goals whose spawn policy allows
// sub-agents, and the item cache's entry key names it (`subAgents`; projection/taskOrchestrationAuthority.ts).
// 20: summaries' todos carry their `review_materials` (projection/reviewMaterials.ts), items name the files their
// todos link among their files, and `pr_merged:` resume conditions are read against the rollout event log.
// 21: the todo index's rows are the summaries' structured todos compacted (projection/compactTodoItem.ts: the resume
// condition of every kind, the metadata normalized once), its budgeted todos those todos as they are.
// 22: the item cache key holds the registry entry's own `operator_question`/`next_handoff_condition` (a registry
// wait over a run carries them: projection/projectAsset.ts `itemAttentionFields`); items carry
// `completed_todo_archive_warning` (projection/completedTodoArchive.ts) and `issue_meta_surface` (issueMetaSurface.ts).
// 23: an item's entry may carry `parts`, what status derived from the item when answering (the dashboards' blocks
// without their time-dependent parts, the agent-management rows: statusPayload.ts `goalParts`), with their key and
// whether they are clean.
export const STATUS_CACHE_SCHEMA = 23;
export const STATUS_CACHE_DIR = 'cache';
export const STATUS_CACHE_FILE = 'status-cache.json';
/** Files modified this close to (or after) the cache's own write need their content hash to be trusted. */
export const RACY_MS = 3_000;

/**
 * The one switch: `LOOPX_STATUS_CACHE=off` (or `0`, `false`) turns the caches off, so every call reads
 * from scratch: no persistent cache is read or written, and `quota should-run` reads the run index
 * in full rather than incrementally. `LOOPX_INDEX_CACHE`, the run-index cache's switch before the
 * two caches were merged, is still read as the same switch.
 */
export function persistentCacheEnabled(env: NodeJS.ProcessEnv): boolean {
  for (const name of ['LOOPX_STATUS_CACHE', 'LOOPX_INDEX_CACHE']) {
    const value = env[name]?.trim().toLowerCase();
    if (value === 'off' || value === '0' || value === 'false') return false;
  }
  return true;
}

/** The goal id of `<runtime>/goals/<id>/runs/index.jsonl`. */
function goalIdOfIndex(indexFile: string): string {
  return path.basename(path.dirname(path.dirname(indexFile)));
}

export function statusCachePath(runtimeRoot: string): string {
  return path.join(runtimeRoot, STATUS_CACHE_DIR, STATUS_CACHE_FILE);
}

interface FileEntry {
  path: string;
  stamp: FileStamp | null;
  sha256?: string;
}

const HeaderSchema = z.object({
  format: z.literal(STATUS_CACHE_FORMAT),
  schema: z.literal(STATUS_CACHE_SCHEMA),
  loopx_version: z.string(),
  /** Of the body line (without its newline). */
  sha256: z.string(),
  /** The bytes after the body line's newline: the segments, back to back. */
  segments: z.number().int().nonnegative(),
});

/**
 * A run index's entry as the file holds it. The facts (most of the file) are not in the body line:
 * `facts` is the byte offset and length of their packed JSON in the segment part after it, parsed
 * only when a caller reads them (a warm `status` gets the ledger from `memo` instead).
 */
interface IndexRecord {
  file: FileEntry;
  latest_waiting_on: unknown;
  has_latest: boolean;
  memo?: LedgerMemo;
  /** The index's newest runs (recentRuns.ts): the editor's Recent runs without reading the index. */
  recent_runs?: RecentRunRow[];
  /** The index's newest runs and readiness run as the status reports take them (runSample.ts). */
  report_facts?: GoalReportFacts;
  facts: [number, number];
  /** The SHA-256 of the facts' packed bytes, checked when they are first read. */
  facts_sha256: string;
}

/** What a reader derived from a kept item when answering, kept with it (`PersistentCache.itemParts`). */
interface PartsEntry {
  key: string;
  value: unknown;
  /** Holds nothing `redactCredentials` would change. */
  clean?: true;
}

interface Body {
  /** `clean`: the item holds nothing `redactCredentials` would change (so a warm `status` redacts nothing). */
  items: Record<string, { key: string; files: FileEntry[]; item: unknown; clean?: true; parts?: PartsEntry }>;
  indexes: Record<string, IndexRecord>;
}

/** A run index's entry in memory: its digest (facts unpacked on first read) and their packed bytes once known. */
interface IndexEntry {
  file: FileEntry;
  digest: IndexDigest;
  /** The packed JSON of the facts (as loaded, or encoded at the first save), so a save need not encode them again. */
  packed: Buffer | undefined;
  /** Where a loaded entry's packed bytes are in the file, read when first needed (`packed` then holds them). */
  packedAt?: { segments: LazySegments; at: [number, number] } | undefined;
  /** The memo as last loaded or saved: a different one on the digest makes the cache dirty. */
  savedMemo: LedgerMemo | undefined;
  /** Its newest runs, when known (computed from a read of the index, or loaded and well-formed). */
  recentRuns: RecentRunRow[] | undefined;
  /** Its report facts (runSample.ts), when known. */
  reportFacts: GoalReportFacts | undefined;
  /** The SHA-256 of `packed` (as loaded, or computed at the first save that writes them). */
  packedSha256?: string | undefined;
  /** The project its spend records resolve against, once a caller named it (a damaged segment is re-read with it). */
  projectRoot: string | undefined;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isBody(value: unknown, segmentBytes: number): value is Body {
  if (!isObject(value) || !isObject(value['items']) || !isObject(value['indexes'])) return false;
  for (const record of Object.values(value['indexes'])) {
    if (!isObject(record) || !isObject(record['file']) || typeof record['has_latest'] !== 'boolean') return false;
    if (typeof record['facts_sha256'] !== 'string') return false;
    const at = record['facts'];
    if (!Array.isArray(at) || at.length !== 2) return false;
    const [offset, length] = at as unknown[];
    if (!Number.isInteger(offset) || !Number.isInteger(length)) return false;
    if ((offset as number) < 0 || (length as number) < 0 || (offset as number) + (length as number) > segmentBytes)
      return false;
  }
  return true;
}

/**
 * Makes `digest.facts` a getter over their packed bytes: parsed on read, and kept only while someone
 * holds them (a WeakRef). A kept ledger memo answers most calls without the facts, so between the
 * calls that need them every goal's spends (most of the host's memory on L) need not stay parsed.
 *
 * `check`, for bytes loaded from the file: their expected SHA-256 and what to do when they do not
 * match (read the facts again from the run index). Checked on the first read only; bytes this
 * process encoded itself have none.
 */
function readFactsFromPacked(
  digest: Partial<IndexDigest>,
  packedBytes: Buffer | (() => Buffer | undefined),
  check?: { sha256: string; mismatch: () => LedgerFacts },
): void {
  let held: WeakRef<LedgerFacts> | undefined;
  let pending = check;
  let packed = typeof packedBytes === 'function' ? undefined : packedBytes;
  const facts = (): LedgerFacts => {
    if (pending !== undefined) {
      const expected = pending;
      pending = undefined;
      // Loaded bytes are read from the file now (undefined: it is no longer the file opened).
      packed ??= typeof packedBytes === 'function' ? packedBytes() : packedBytes;
      if (packed === undefined || createHash('sha256').update(packed).digest('hex') !== expected.sha256) {
        // Never trusted: the facts as the index gives them now, kept for this process (and the next save).
        const value = expected.mismatch();
        Object.defineProperty(digest, 'facts', { value, enumerable: true, configurable: true, writable: true });
        return value;
      }
    }
    let value = held?.deref();
    if (value === undefined) {
      packed ??= typeof packedBytes === 'function' ? packedBytes() : packedBytes;
      if (packed === undefined) throw new Error('persistent cache: packed facts read without their check');
      value = unpackJson(JSON.parse(packed.toString('utf8'))) as LedgerFacts;
      held = new WeakRef(value);
    }
    return value;
  };
  Object.defineProperty(digest, 'facts', { get: facts, enumerable: true, configurable: true });
}

/**
 * The segment part of a cache file (every index's packed facts, most of its bytes), read only when a
 * caller first needs any of them: a warm `status` answers from the body line's ledger memos and never
 * does. Read from the file as it was opened (its identity checked again: any other file at the path
 * gives none, and each entry's facts are then read from its run index, as for a damaged segment).
 */
class LazySegments {
  private bytes: Buffer | null | undefined;

  constructor(
    private readonly file: string,
    private readonly opened: FileIdentity,
    private readonly position: number,
    private readonly length: number,
  ) {}

  /** The bytes at `[offset, offset + length)` of the segment part; undefined when the file is no longer the one opened. */
  slice([offset, length]: [number, number]): Buffer | undefined {
    if (this.bytes === undefined) {
      try {
        this.bytes = readFilePartsSafeSync(this.file, (_stat, readAt) => readAt(this.position, this.length), {
          expected: this.opened,
        });
      } catch {
        this.bytes = null;
      }
      if (this.bytes !== null && this.bytes.length !== this.length) this.bytes = null;
    }
    return this.bytes === null ? undefined : this.bytes.subarray(offset, offset + length);
  }
}

/**
 * UTF-8 bytes as text: an ASCII-only buffer (the usual body line: JSON.stringify escapes no character, but status
 * texts are mostly ASCII) through the faster one-byte decoder, which gives the same text for ASCII.
 */
function decodeText(bytes: Buffer): string {
  return typeof isAscii === 'function' && isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
}

/** The header line is short (a format tag, two numbers, a hash): read with the first bytes of the file. */
const HEAD_BYTES = 64 * 1024;

/** How the file looked when opened (for tests and the benchmarks). */
export type DiskCacheOrigin = 'loaded' | 'missing' | 'corrupt' | 'foreign';

function sha256Of(file: string): string | null {
  try {
    return createHash('sha256').update(readFileBytesSafeSync(file)).digest('hex');
  } catch {
    return null;
  }
}

/**
 * Each kept item's JSON as UTF-8, by item object: a status item is never changed once made (a new
 * one replaces it), so a save re-encodes only the items that are new since the last one.
 */
const itemJsonBytes = new WeakMap<object, Buffer | string>();

function itemJson(item: object): Buffer {
  const kept = itemJsonBytes.get(item);
  if (kept !== undefined && typeof kept !== 'string') return kept;
  const bytes = Buffer.from(kept ?? JSON.stringify(item), 'utf8');
  itemJsonBytes.set(item, bytes);
  return bytes;
}

/**
 * The body line, `JSON.stringify({ items, indexes, spans })` and a newline, as chunks: every entry's small
 * fields are encoded each time (they change: `clean`, a verified file's hash dropped), its item's and its parts'
 * bytes come from {@link itemJson}. `spans` says where each goal's item and parts are in the line (byte offset and
 * length; -1 for parts it has none of), so a cache opened from the file keeps each one's bytes
 * (`keepLoadedBytes`) and a save writes an unchanged one without encoding it again.
 */
function bodyLine(items: Body['items'], indexes: Record<string, IndexRecord>): Buffer[] {
  const chunks: Buffer[] = [];
  let size = 0;
  const push = (bytes: Buffer): void => {
    chunks.push(bytes);
    size += bytes.length;
  };
  const spans: Record<string, [number, number, number, number]> = {};
  let text = '{"items":{';
  let firstItem = true;
  for (const [goalId, entry] of Object.entries(items)) {
    text += `${firstItem ? '' : ','}${JSON.stringify(goalId)}:{`;
    firstItem = false;
    let firstField = true;
    const span: [number, number, number, number] = [-1, -1, -1, -1];
    for (const [field, value] of Object.entries(entry)) {
      if (value === undefined) continue;
      text += `${firstField ? '' : ','}${JSON.stringify(field)}:`;
      firstField = false;
      if (field === 'item' && typeof value === 'object' && value !== null) {
        push(Buffer.from(text, 'utf8'));
        const bytes = itemJson(value);
        span[0] = size;
        span[1] = bytes.length;
        push(bytes);
        text = '';
      } else if (field === 'parts' && typeof value === 'object' && value !== null) {
        // Like the item: the value's bytes kept from the last save (or the file).
        const parts = value as PartsEntry;
        text += `{"key":${JSON.stringify(parts.key)}${parts.clean === true ? ',"clean":true' : ''},"value":`;
        push(Buffer.from(text, 'utf8'));
        const bytes = itemJson(parts.value as object);
        span[2] = size;
        span[3] = bytes.length;
        push(bytes);
        text = '}';
      } else {
        text += JSON.stringify(value);
      }
    }
    text += '}';
    spans[goalId] = span;
  }
  push(Buffer.from(`${text}},"indexes":${JSON.stringify(indexes)},"spans":${JSON.stringify(spans)}}\n`, 'utf8'));
  return chunks;
}

/**
 * Keeps the bytes of each loaded item and parts value as the body line holds them (`spans`, checked to lie in the
 * line), so a save writes them as they are: they are `JSON.stringify` of what was parsed from them (the writer wrote
 * that, and JSON text parsed and written again is the same text), and kept items are never changed.
 */
function keepLoadedBytes(items: Body['items'], spans: unknown, line: Buffer): void {
  if (!isObject(spans)) return;
  const slice = (at: unknown, length: unknown): Buffer | undefined =>
    Number.isInteger(at) &&
    Number.isInteger(length) &&
    (at as number) >= 0 &&
    (length as number) > 0 &&
    (at as number) + (length as number) <= line.length
      ? line.subarray(at as number, (at as number) + (length as number))
      : undefined;
  for (const [goalId, entry] of Object.entries(items)) {
    const span = spans[goalId];
    if (!Array.isArray(span) || !isObject(entry)) continue;
    const item = slice(span[0], span[1]);
    if (item !== undefined && isObject(entry.item) && !itemJsonBytes.has(entry.item))
      itemJsonBytes.set(entry.item, item);
    const parts = slice(span[2], span[3]);
    const value = isObject(entry.parts) ? entry.parts.value : undefined;
    if (parts !== undefined && isObject(value) && !itemJsonBytes.has(value)) itemJsonBytes.set(value, parts);
  }
}

function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** An entry's packed facts: as held, or read from where a loaded entry's are in the file (undefined: neither). */
function packedBytes(entry: IndexEntry): Buffer | undefined {
  if (entry.packed === undefined && entry.packedAt !== undefined) {
    entry.packed = entry.packedAt.segments.slice(entry.packedAt.at);
    entry.packedAt = undefined;
  }
  return entry.packed;
}

export class PersistentCache {
  private dirty = false;

  private constructor(
    readonly file: string,
    readonly origin: DiskCacheOrigin,
    private body: Pick<Body, 'items'>,
    private readonly indexes: Map<string, IndexEntry>,
    /** The cache file's own mtime when loaded (0: none): files modified after it minus RACY_MS are racy. */
    private readonly loadedMtimeMs: number,
  ) {}

  /** An empty cache that will be written to `file` (nothing is read). */
  static empty(file: string, origin: DiskCacheOrigin = 'missing'): PersistentCache {
    return new PersistentCache(file, origin, { items: {} }, new Map(), 0);
  }

  /**
   * Loads the cache file's header and body line (its segments are read when first needed: see
   * `LazySegments`); never throws: whatever cannot be trusted starts empty.
   */
  static open(file: string): PersistentCache {
    let opened: { stat: fs.Stats; head: Buffer; segmentsAt: number } | null;
    try {
      opened = readFilePartsSafeSync(file, (stat, readAt) => {
        const head = readAt(0, Math.min(stat.size, HEAD_BYTES));
        const newline = head.indexOf(0x0a);
        // Where the segments start, as the header says (the whole file when it cannot say).
        let segmentsAt = stat.size;
        try {
          const segments = (
            JSON.parse(head.subarray(0, newline < 0 ? 0 : newline).toString('utf8')) as {
              segments?: unknown;
            }
          ).segments;
          if (
            Number.isInteger(segments) &&
            (segments as number) >= 0 &&
            (segments as number) <= stat.size - newline - 2
          )
            segmentsAt = stat.size - (segments as number);
        } catch {
          // Not a header: checked (and refused) below.
        }
        return {
          stat,
          head: segmentsAt <= head.length ? head.subarray(0, segmentsAt) : readAt(0, segmentsAt),
          segmentsAt,
        };
      });
    } catch {
      return PersistentCache.empty(file);
    }
    if (opened === null) return PersistentCache.empty(file);
    const { stat, head: bytes, segmentsAt } = opened;
    const newline = bytes.indexOf(0x0a);
    try {
      const header = HeaderSchema.safeParse(JSON.parse(bytes.subarray(0, newline < 0 ? 0 : newline).toString('utf8')));
      if (!header.success || header.data.loopx_version !== LOOPX_VERSION) return PersistentCache.empty(file, 'foreign');
      const rest = bytes.subarray(newline + 1);
      const end = rest.indexOf(0x0a);
      // A torn file (or one with bytes added) has segments of another length: its body line does not end
      // where they start.
      if (end < 0 || end !== rest.length - 1 || stat.size - segmentsAt !== header.data.segments)
        return PersistentCache.empty(file, 'corrupt');
      const bodyBytes = rest.subarray(0, end);
      if (createHash('sha256').update(bodyBytes).digest('hex') !== header.data.sha256)
        return PersistentCache.empty(file, 'corrupt');
      // The checksum proves the body is as this code wrote it: only its envelope is checked here
      // (validating every kept item again would cost what the cache saves). Each segment is checked
      // against its own hash when it is read.
      const body: unknown = JSON.parse(decodeText(bodyBytes));
      if (!isBody(body, header.data.segments)) return PersistentCache.empty(file, 'corrupt');
      keepLoadedBytes(body.items, (body as { spans?: unknown }).spans, bodyBytes);
      const cache = new PersistentCache(file, 'loaded', { items: body.items }, new Map(), stat.mtimeMs);
      const segments = new LazySegments(file, stat, segmentsAt, header.data.segments);
      for (const [indexFile, record] of Object.entries(body.indexes))
        cache.indexes.set(indexFile, cache.loadedEntry(indexFile, record, segments));
      return cache;
    } catch {
      return PersistentCache.empty(file, 'corrupt');
    }
  }

  /**
   * A run index's entry as loaded: its digest's facts are parsed from their packed bytes when read, after
   * their hash is checked; bytes that fail it (or no longer there to read) are never used (the facts are
   * read from the index again, and the entry is written anew at the next save).
   */
  private loadedEntry(indexFile: string, record: IndexRecord, segments: LazySegments): IndexEntry {
    const digest: Partial<IndexDigest> = { latest_waiting_on: record.latest_waiting_on, has_latest: record.has_latest };
    if (record.memo !== undefined) digest.ledger_memo = record.memo;
    const entry: IndexEntry = {
      file: record.file,
      digest: digest as IndexDigest,
      packed: undefined,
      packedAt: { segments, at: record.facts },
      packedSha256: record.facts_sha256,
      savedMemo: record.memo,
      recentRuns: keptRecentRunRows(record.recent_runs),
      reportFacts: keptReportFacts(record.report_facts),
      projectRoot: undefined,
    };
    readFactsFromPacked(digest, () => packedBytes(entry), {
      sha256: record.facts_sha256,
      mismatch: () => {
        entry.packed = undefined;
        entry.packedAt = undefined;
        this.dirty = true;
        const runs = readRunIndexSync(indexFile, { projectRoot: entry.projectRoot ?? '', artifactChecks: 0 });
        return digestRunIndex(runs, entry.projectRoot ?? '').facts;
      },
    });
    return entry;
  }

  /** Whether an entry's view of `file` holds for the file as it is now (`stamp`: its stat now). */
  private trusted(entry: FileEntry, file: string, stamp: FileStamp | null): boolean {
    if (entry.path !== file || !sameStamp(entry.stamp, stamp)) return false;
    if (stamp === null) return true;
    const settled = stamp.mtimeMs < this.loadedMtimeMs - RACY_MS;
    if (entry.sha256 !== undefined) {
      if (sha256Of(file) !== entry.sha256) return false;
      // Verified now, well after the file's last change: any later change moves its mtime, so the
      // stamp alone will do from here on (the hash is not paid again).
      if (settled) {
        delete entry.sha256;
        this.dirty = true;
      }
      return true;
    }
    // Not hashed when saved: trusted only if it was modified well before this cache was written.
    return settled;
  }

  private fileEntry(file: string, stamp: FileStamp | null): FileEntry {
    const entry: FileEntry = { path: file, stamp };
    // A file modified this recently could be rewritten at the same size and mtime: keep its hash.
    if (stamp !== null && stamp.mtimeMs >= Date.now() - RACY_MS) {
      const sha = sha256Of(file);
      if (sha !== null) entry.sha256 = sha;
      else entry.stamp = { ...stamp, mtimeMs: Number.NaN }; // Never matches: unhashable racy file.
    }
    return entry;
  }

  /**
   * The kept status item of a goal for `key`, if every file it came from is unchanged. An item recorded
   * clean is marked clean with `markClean` (default: the item and its parts, its texts to its members');
   * a caller that knows where the redaction meets the item's parts can mark fewer.
   */
  item<T extends object>(
    goalId: string,
    key: string,
    files: readonly [string, FileStamp | null][],
    markClean: (item: T) => void = (item) => markCredentialClean(item, 1),
  ): T | undefined {
    const entry = this.body.items[goalId];
    if (entry === undefined || entry.key !== key || entry.files.length !== files.length) return undefined;
    for (let i = 0; i < files.length; i++) {
      const [file, stamp] = files[i] as [string, FileStamp | null];
      if (!this.trusted(entry.files[i] as FileEntry, file, stamp)) return undefined;
    }
    // Texts below the item's fields and their direct children are met again only inside marked copies.
    if (entry.clean === true) markClean(entry.item as T);
    return entry.item as T;
  }

  /**
   * What a reader derived from the kept item `item` of a goal (the object `item()` returned) for `key`, kept with it:
   * gone with the item (a new item, or none). Marked clean with `markClean` when it was recorded clean. Its value is
   * shared: never mutated.
   */
  itemParts<T extends object>(
    goalId: string,
    item: object,
    key: string,
    markClean: (value: T) => void = (value) => markCredentialClean(value, 1),
  ): { value: T; clean: boolean } | undefined {
    const entry = this.body.items[goalId];
    const parts = entry?.parts;
    if (entry?.item !== item || !isObject(parts) || parts.key !== key || !isObject(parts.value)) return undefined;
    if (parts.clean === true) markClean(parts.value as T);
    return { value: parts.value as T, clean: parts.clean === true };
  }

  /** Keeps `value`, derived from the kept item `item` of a goal for `key` (nothing when the goal keeps another item). */
  setItemParts(goalId: string, item: object, key: string, value: object, clean: boolean): void {
    const entry = this.body.items[goalId];
    if (entry?.item !== item) return;
    entry.parts = { key, value, ...(clean ? { clean: true as const } : {}) };
    this.dirty = true;
  }

  /** Records the parts kept with the item `item` of a goal as holding nothing to redact. */
  setItemPartsClean(goalId: string, item: object): void {
    const parts = this.body.items[goalId]?.item === item ? this.body.items[goalId]?.parts : undefined;
    if (parts === undefined || parts.clean === true) return;
    parts.clean = true;
    this.dirty = true;
  }

  /** The files a goal's kept item came from after its first `from` (the files its todos link), to stat for `item`. */
  itemFiles(goalId: string, from: number): string[] {
    return (this.body.items[goalId]?.files ?? []).slice(from).map((entry) => entry.path);
  }

  /** `json`: the item's JSON when the caller has it (it is what a save writes). */
  setItem(
    goalId: string,
    key: string,
    files: readonly [string, FileStamp | null][],
    item: object,
    json?: string,
  ): void {
    if (json !== undefined && !itemJsonBytes.has(item)) itemJsonBytes.set(item, json);
    this.body.items[goalId] = { key, files: files.map(([file, stamp]) => this.fileEntry(file, stamp)), item };
    this.dirty = true;
  }

  /** The kept digest of a run index, if the index is unchanged (`projectRoot`: the project its spend records are in). */
  indexDigest(indexFile: string, stamp: FileStamp | null, projectRoot: string): IndexDigest | undefined {
    const entry = this.indexes.get(indexFile);
    if (entry === undefined || !this.trusted(entry.file, indexFile, stamp)) return undefined;
    entry.projectRoot = projectRoot;
    // Its facts stay packed (packedJson.ts) until read: the ledger memo usually answers without them.
    return entry.digest;
  }

  setIndexDigest(
    indexFile: string,
    stamp: FileStamp | null,
    digest: IndexDigest,
    recentRuns: RecentRunRow[] | undefined = undefined,
    reportFacts: GoalReportFacts | undefined = undefined,
  ): void {
    this.indexes.set(indexFile, {
      file: this.fileEntry(indexFile, stamp),
      digest,
      packed: undefined,
      savedMemo: undefined,
      recentRuns,
      reportFacts,
      projectRoot: undefined,
    });
    this.dirty = true;
  }

  /**
   * The digest of a run index and its newest runs: kept, or computed from `held` (or a read) and
   * kept. `recentRuns` is undefined only for an entry loaded without them (then the caller reads).
   */
  async digestOf(
    indexFile: string,
    projectRoot: string,
    stamp: FileStamp | null,
    held: RunIndexRead | null | undefined,
  ): Promise<{
    digest: IndexDigest;
    recentRuns: RecentRunRow[] | undefined;
    reportFacts: GoalReportFacts | undefined;
  }> {
    const kept = this.indexDigest(indexFile, stamp, projectRoot);
    if (kept !== undefined) {
      const entry = this.indexes.get(indexFile);
      return { digest: kept, recentRuns: entry?.recentRuns, reportFacts: entry?.reportFacts };
    }
    const runs =
      held !== undefined
        ? held
        : stamp === null
          ? null
          : await readRunIndex(indexFile, { projectRoot, artifactChecks: 0 });
    const digest = digestRunIndex(runs, projectRoot);
    const recentRuns = recentRunRows(runs?.rows ?? []);
    const reportFacts = reportFactsOfRows(runs?.rows ?? [], goalIdOfIndex(indexFile), projectRoot);
    this.setIndexDigest(indexFile, stamp, digest, recentRuns, reportFacts);
    return { digest, recentRuns, reportFacts };
  }

  /** The report facts kept with an index's entry (ask `indexDigest` first: it checks the entry holds). */
  keptReportFacts(indexFile: string): GoalReportFacts | undefined {
    return this.indexes.get(indexFile)?.reportFacts;
  }

  /** Keeps report facts computed for a kept entry that had none (an index read for them). */
  setReportFacts(indexFile: string, stamp: FileStamp | null, facts: GoalReportFacts): void {
    const entry = this.indexes.get(indexFile);
    if (entry === undefined || !sameStamp(entry.file.stamp, stamp)) return;
    entry.reportFacts = facts;
    this.dirty = true;
  }

  /** Forgets entries of goals and indexes no longer listed (so the file does not grow forever). */
  retain(goalIds: ReadonlySet<string>, indexFiles: ReadonlySet<string>): void {
    for (const goalId of Object.keys(this.body.items))
      if (!goalIds.has(goalId)) {
        delete this.body.items[goalId];
        this.dirty = true;
      }
    for (const file of [...this.indexes.keys()])
      if (!indexFiles.has(file)) {
        this.indexes.delete(file);
        this.dirty = true;
      }
  }

  /**
   * Writes the cache atomically when something changed. `within` is the runtime root: the file never
   * lands outside it through a symlink. Failures are swallowed: a cache that cannot be written is a
   * cache miss next time, never an error of the command.
   */
  async save(within: string): Promise<boolean> {
    for (const entry of Object.values(this.body.items))
      if (entry.clean !== true && isCredentialClean(entry.item)) {
        entry.clean = true;
        this.dirty = true;
      }
    for (const entry of this.indexes.values()) if (entry.digest.ledger_memo !== entry.savedMemo) this.dirty = true;
    if (!this.dirty) return false;
    const indexes: Record<string, IndexRecord> = {};
    const segments: Buffer[] = [];
    let offset = 0;
    for (const [indexFile, entry] of this.indexes) {
      if (packedBytes(entry) === undefined) {
        // (A loaded entry whose bytes are gone reads its facts from the index here, through the facts' check.)
        const packed = Buffer.from(JSON.stringify(packJson(entry.digest.facts)), 'utf8');
        entry.packed = packed;
        entry.packedAt = undefined;
        entry.packedSha256 = undefined;
        // From now on the facts are read from their packed bytes, like those of a loaded cache.
        readFactsFromPacked(entry.digest, packed);
      }
      const packed = entry.packed as Buffer;
      entry.packedSha256 ??= createHash('sha256').update(packed).digest('hex');
      entry.savedMemo = entry.digest.ledger_memo;
      indexes[indexFile] = {
        file: entry.file,
        latest_waiting_on: entry.digest.latest_waiting_on,
        has_latest: entry.digest.has_latest,
        ...(entry.savedMemo !== undefined ? { memo: entry.savedMemo } : {}),
        ...(entry.recentRuns !== undefined ? { recent_runs: entry.recentRuns } : {}),
        ...(entry.reportFacts !== undefined ? { report_facts: entry.reportFacts } : {}),
        facts: [offset, packed.length],
        facts_sha256: entry.packedSha256,
      };
      segments.push(packed);
      offset += packed.length;
    }
    // The body line is the JSON of { items, indexes }, each item's bytes kept from the last save;
    // the checksum covers the body line (each segment has its own), and the file is written without joining them.
    const body = bodyLine(this.body.items, indexes);
    const checksum = createHash('sha256');
    // Up to the body line's newline (the last byte of its last chunk), as the reader hashes it.
    body.forEach((part, i) => checksum.update(i === body.length - 1 ? part.subarray(0, part.length - 1) : part));
    const rest = [...body, ...segments];
    const header = JSON.stringify({
      format: STATUS_CACHE_FORMAT,
      schema: STATUS_CACHE_SCHEMA,
      loopx_version: LOOPX_VERSION,
      sha256: checksum.digest('hex'),
      segments: offset,
    });
    // Clean from the moment the body is taken: a change made while the write is under way marks it dirty again.
    this.dirty = false;
    try {
      await writeFileAtomic(this.file, [Buffer.from(`${header}\n`, 'utf8'), ...rest], {
        within,
        syncDirectory: false,
      });
      return true;
    } catch {
      this.dirty = true;
      return false;
    }
  }
}
