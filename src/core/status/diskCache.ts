import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { writeFileAtomic } from '../fs/atomicWrite';
import { readFileBytesSafeSync } from '../fs/safeRead';
import { isCredentialClean, markCredentialClean } from '../privacy/scrub';
import { digestRunIndex, type IndexDigest } from '../quota/ledger';
import { readRunIndex, type RunIndexRead } from '../runtime/runIndex';
import { LOOPX_VERSION } from '../version';
import type { FileStamp, GoalStatusItem } from './goalStatus';
import { packJson, unpackJson } from './packedJson';

/**
 * The persistent status cache: what `status`, `should-run` and the status server derive from a
 * goal's files, kept between processes in `<runtime_root>/cache/status-cache.json` so a warm call
 * stats the files and reads this one file instead of parsing every run index and spend record.
 *
 * Trust rules (docs/benchmarks.md, "The persistent cache"):
 * - Every entry names the files it was derived from with their stamp (size, mtime, inode); an
 *   entry is used only when every stamp is identical now. A rename replaces the inode, an append
 *   or truncation the size, an in-place rewrite the mtime.
 * - A rewrite of the same size within the file system's mtime granularity keeps the stamp. So a
 *   file whose mtime is within RACY_MS of the cache file's own mtime (or later: clock skew) is
 *   "racy": its entry carries the file's SHA-256, checked on use, or it is not trusted at all.
 * - The file is ours alone: a format tag, a version (schema and LoopX version), and a SHA-256 of
 *   the body. A missing, torn, corrupt, edited or foreign file is ignored (and rebuilt on save).
 *   Deleting it is always safe. It is written atomically; losing a race to another writer only
 *   loses that writer's entries (misses, never wrong answers).
 */

export type { IndexDigest } from '../quota/ledger';

export const STATUS_CACHE_FORMAT = 'loopx-vscode-status-cache';
export const STATUS_CACHE_SCHEMA = 4;
export const STATUS_CACHE_DIR = 'cache';
export const STATUS_CACHE_FILE = 'status-cache.json';
/** Files modified this close to (or after) the cache's own write need their content hash to be trusted. */
export const RACY_MS = 3_000;

/** `LOOPX_STATUS_CACHE=off` (or `0`) turns the persistent cache off: every call reads from scratch. */
export function statusCacheEnabled(env: NodeJS.ProcessEnv): boolean {
  const value = env['LOOPX_STATUS_CACHE']?.trim().toLowerCase();
  return value !== 'off' && value !== '0' && value !== 'false';
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
  sha256: z.string(),
});

interface Body {
  /** `clean`: the item holds nothing `redactCredentials` would change (so a warm `status` redacts nothing). */
  items: Record<string, { key: string; files: FileEntry[]; item: unknown; clean?: true }>;
  indexes: Record<string, { file: FileEntry; digest: unknown }>;
}

function isBody(value: unknown): value is Body {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    typeof v === 'object' && v !== null && !Array.isArray(v);
  return isObject(value) && isObject(value['items']) && isObject(value['indexes']);
}

/** How the file looked when opened (for tests and the benchmarks). */
export type DiskCacheOrigin = 'loaded' | 'missing' | 'corrupt' | 'foreign';

function sha256Of(file: string): string | null {
  try {
    return createHash('sha256').update(readFileBytesSafeSync(file)).digest('hex');
  } catch {
    return null;
  }
}

function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

export class StatusDiskCache {
  private dirty = false;
  /** Digests unpacked by this process, per entry (a long-lived model asks for them on every refresh). */
  private readonly unpacked = new WeakMap<object, IndexDigest>();

  private constructor(
    readonly file: string,
    readonly origin: DiskCacheOrigin,
    private body: Body,
    /** The cache file's own mtime when loaded (0: none): files modified after it minus RACY_MS are racy. */
    private readonly loadedMtimeMs: number,
  ) {}

  /** An empty cache that will be written to `file` (nothing is read). */
  static empty(file: string): StatusDiskCache {
    return new StatusDiskCache(file, 'missing', { items: {}, indexes: {} }, 0);
  }

  /** Loads the cache file; never throws: whatever cannot be trusted starts empty. */
  static open(file: string): StatusDiskCache {
    let bytes: Buffer;
    let mtimeMs: number;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
      bytes = readFileBytesSafeSync(file);
    } catch {
      return StatusDiskCache.empty(file);
    }
    const newline = bytes.indexOf(0x0a);
    try {
      const header = HeaderSchema.safeParse(JSON.parse(bytes.subarray(0, newline < 0 ? 0 : newline).toString('utf8')));
      if (!header.success || header.data.loopx_version !== LOOPX_VERSION)
        return new StatusDiskCache(file, 'foreign', { items: {}, indexes: {} }, 0);
      const bodyBytes = bytes.subarray(newline + 1);
      if (createHash('sha256').update(bodyBytes).digest('hex') !== header.data.sha256)
        return new StatusDiskCache(file, 'corrupt', { items: {}, indexes: {} }, 0);
      // The checksum proves the body is as this code wrote it: only its envelope is checked here
      // (validating every kept item again would cost what the cache saves).
      const body: unknown = JSON.parse(bodyBytes.toString('utf8'));
      if (!isBody(body)) return new StatusDiskCache(file, 'corrupt', { items: {}, indexes: {} }, 0);
      return new StatusDiskCache(file, 'loaded', body, mtimeMs);
    } catch {
      return new StatusDiskCache(file, 'corrupt', { items: {}, indexes: {} }, 0);
    }
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

  /** The kept status item of a goal for `key`, if every file it came from is unchanged. */
  item(goalId: string, key: string, files: readonly [string, FileStamp | null][]): GoalStatusItem | undefined {
    const entry = this.body.items[goalId];
    if (entry === undefined || entry.key !== key || entry.files.length !== files.length) return undefined;
    for (let i = 0; i < files.length; i++) {
      const [file, stamp] = files[i] as [string, FileStamp | null];
      if (!this.trusted(entry.files[i] as FileEntry, file, stamp)) return undefined;
    }
    if (entry.clean === true) markCredentialClean(entry.item);
    return entry.item as GoalStatusItem;
  }

  setItem(goalId: string, key: string, files: readonly [string, FileStamp | null][], item: GoalStatusItem): void {
    this.body.items[goalId] = { key, files: files.map(([file, stamp]) => this.fileEntry(file, stamp)), item };
    this.dirty = true;
  }

  /** The kept digest of a run index, if the index is unchanged. */
  indexDigest(indexFile: string, stamp: FileStamp | null): IndexDigest | undefined {
    const entry = this.body.indexes[indexFile];
    if (entry === undefined || !this.trusted(entry.file, indexFile, stamp)) return undefined;
    // Kept packed (packedJson.ts: the spend facts as columns, a third of their size as objects).
    let digest = this.unpacked.get(entry);
    if (digest === undefined) {
      digest = unpackJson(entry.digest) as IndexDigest;
      this.unpacked.set(entry, digest);
    }
    return digest;
  }

  setIndexDigest(indexFile: string, stamp: FileStamp | null, digest: IndexDigest): void {
    const entry = { file: this.fileEntry(indexFile, stamp), digest: packJson(digest) };
    this.unpacked.set(entry, digest);
    this.body.indexes[indexFile] = entry;
    this.dirty = true;
  }

  /** The digest of a run index: kept, or computed from `held` (or a read) and kept. */
  async digestOf(
    indexFile: string,
    projectRoot: string,
    stamp: FileStamp | null,
    held: RunIndexRead | null | undefined,
  ): Promise<IndexDigest> {
    const kept = this.indexDigest(indexFile, stamp);
    if (kept !== undefined) return kept;
    const runs =
      held !== undefined
        ? held
        : stamp === null
          ? null
          : await readRunIndex(indexFile, { projectRoot, artifactChecks: 0 });
    const digest = digestRunIndex(runs, projectRoot);
    this.setIndexDigest(indexFile, stamp, digest);
    return digest;
  }

  /** Forgets entries of goals and indexes no longer listed (so the file does not grow forever). */
  retain(goalIds: ReadonlySet<string>, indexFiles: ReadonlySet<string>): void {
    for (const goalId of Object.keys(this.body.items))
      if (!goalIds.has(goalId)) {
        delete this.body.items[goalId];
        this.dirty = true;
      }
    for (const file of Object.keys(this.body.indexes))
      if (!indexFiles.has(file)) {
        delete this.body.indexes[file];
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
    if (!this.dirty) return false;
    const body = Buffer.from(JSON.stringify(this.body), 'utf8');
    const header = JSON.stringify({
      format: STATUS_CACHE_FORMAT,
      schema: STATUS_CACHE_SCHEMA,
      loopx_version: LOOPX_VERSION,
      sha256: createHash('sha256').update(body).digest('hex'),
    });
    // Clean from the moment the body is taken: a change made while the write is under way marks it dirty again.
    this.dirty = false;
    try {
      await writeFileAtomic(this.file, Buffer.concat([Buffer.from(`${header}\n`, 'utf8'), body]), {
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
