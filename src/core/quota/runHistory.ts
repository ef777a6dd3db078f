import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ledgerFacts, type LedgerFacts } from './ledger';
import {
  isStatusNeutralRun,
  mergeIndexEntries,
  parseIndexLines,
  readRunIndex,
  runMergeKey,
  isSettlementRun,
  withLazyArtifactFlags,
  type IndexLineEntry,
  type RunIndexEntry,
  type RunIndexRead,
  type RunIndexRow,
} from '../runtime/runIndex';
import { runIndexPath } from '../runtime/layout';

/**
 * What `quota should-run` (and the turn driver's decision) derive from a goal's run index, kept
 * small: the ledger facts, the newest status run, the newest agent-lane run (and each agent's), and for each lane
 * the few newest rows the replan scan can visit. {@link summarizeRunRows} computes it from rows as
 * the reader returns them; {@link mergeRunHistory} joins the summary of appended rows onto an older
 * one and gives the same answer as summarizing all rows at once (when the appended rows are newer).
 *
 * {@link RunHistoryReader} keeps it between calls in memory with the byte offset of the index it has
 * read (the goal loader's cache, one per process: a turn loop, the extension host), so a later call
 * stats the index, checks that the bytes it read are unchanged, and parses only the bytes appended
 * since. Nothing of it is written to disk: the decision trusts only what its own process read
 * (docs/quota.md#what-admission-reads), and the run-index facts a warm `status` needs are kept in the
 * one persistent cache (`goal/persistentCache.ts`).
 */
/**
 * Newest non-bookkeeping rows kept per lane: at least what the replan scan
 * (`scheduling/replanObligation.ts`, `RECENT_LANE_ROWS`) can visit.
 */
export const RECENT_LANE_ROWS = 7;

export interface RunHistory {
  facts: LedgerFacts;
  /** The newest run that is not status-neutral (enumerable fields only). */
  latest_status_run: RunIndexRow | null;
  /** The newest agent-lane run. */
  newest_lane_run: RunIndexRow | null;
  /**
   * Each agent's newest agent-lane run (by `agent_id`), newest first: the next-action warning of a named agent
   * compares its own lane run, which need not be the newest lane run of all.
   */
  newest_lane_run_by_agent: RunIndexRow[];
  /** Newest rows the replan scan does not skip, at most {@link RECENT_LANE_ROWS}: every row. */
  recent_all: RunIndexRow[];
  /** The same per `agent_id`. */
  recent_by_agent: Map<string, RunIndexRow[]>;
}

/** The summary of rows newest first (as {@link readRunIndex} returns them). */
export function summarizeRunRows(rowsNewestFirst: readonly RunIndexRow[], projectRoot: string): RunHistory {
  let latest: RunIndexRow | null = null;
  let lane: RunIndexRow | null = null;
  const laneByAgent: RunIndexRow[] = [];
  const laneAgents = new Set<string>();
  const recentAll: RunIndexRow[] = [];
  const recentByAgent = new Map<string, RunIndexRow[]>();
  for (const row of rowsNewestFirst) {
    if (row.progress_scope === 'agent_lane') {
      lane ??= plain(row);
      if (typeof row.agent_id === 'string') {
        if (!laneAgents.has(row.agent_id)) {
          laneAgents.add(row.agent_id);
          laneByAgent.push(plain(row));
        }
      }
    }
    if (latest === null && !isStatusNeutralRun(row)) latest = plain(row);
    if (isSettlementRun(row)) continue;
    if (recentAll.length < RECENT_LANE_ROWS) recentAll.push(plain(row));
    if (typeof row.agent_id === 'string') {
      let list = recentByAgent.get(row.agent_id);
      if (list === undefined) recentByAgent.set(row.agent_id, (list = []));
      if (list.length < RECENT_LANE_ROWS) list.push(plain(row));
    }
  }
  return {
    facts: ledgerFacts(rowsNewestFirst as readonly RunIndexEntry[], projectRoot),
    latest_status_run: latest,
    newest_lane_run: lane,
    newest_lane_run_by_agent: laneByAgent,
    recent_all: recentAll,
    recent_by_agent: recentByAgent,
  };
}

/** A copy with the row's own enumerable fields (no artifact flags, no prototype). */
function plain(row: RunIndexRow): RunIndexRow {
  return { ...row };
}

/** The summary of all rows from the summary of newer rows and that of the older ones. */
export function mergeRunHistory(newer: RunHistory, older: RunHistory): RunHistory {
  const recentByAgent = new Map(older.recent_by_agent);
  for (const [agent, rows] of newer.recent_by_agent)
    recentByAgent.set(agent, [...rows, ...(older.recent_by_agent.get(agent) ?? [])].slice(0, RECENT_LANE_ROWS));
  return {
    facts: {
      spends: [...newer.facts.spends, ...older.facts.spends],
      voids: [...newer.facts.voids, ...older.facts.voids],
    },
    latest_status_run: newer.latest_status_run ?? older.latest_status_run,
    newest_lane_run: newer.newest_lane_run ?? older.newest_lane_run,
    newest_lane_run_by_agent: [
      ...newer.newest_lane_run_by_agent,
      ...older.newest_lane_run_by_agent.filter(
        (row) => !newer.newest_lane_run_by_agent.some((mine) => mine.agent_id === row.agent_id),
      ),
    ],
    recent_all: [...newer.recent_all, ...older.recent_all].slice(0, RECENT_LANE_ROWS),
    recent_by_agent: recentByAgent,
  };
}

/**
 * The plain reader of a run index, in full from scratch and never from a cache (a cache file never decides
 * admission): what the incremental reader falls back to, and what reserving, settling and voiding read inside
 * their lock. No artifact flag is stat'ed unless a caller reads it on a row.
 */
export async function readIndexInFull(indexFile: string, projectRoot: string): Promise<RunIndexRead> {
  return readRunIndex(indexFile, { projectRoot, artifactChecks: 0 });
}

/** The rows a decision reads from the history, each with fresh lazy artifact flags. */
export interface RunHistoryRows {
  latestStatusRun: RunIndexEntry | null;
  /**
   * For `pickLatestRuns`: the newest status run, the newest agent-lane run and each agent's newest agent-lane run
   * (what the next-action warning picks from all rows).
   */
  latestRuns: RunIndexEntry[];
  /** For the replan scan: of every lane (`all`), and of each agent's lane (`byAgent`), newest first. */
  replanRows: { all: RunIndexEntry[]; byAgent: ReadonlyMap<string, RunIndexEntry[]> };
}

/** A history row with lazy artifact flags (`json_exists`/`markdown_exists` stat'ed when first read). */
function flaggedRow(row: RunIndexRow, projectRoot: string): RunIndexEntry {
  return withLazyArtifactFlags(row, projectRoot);
}

function runHistoryRows(history: RunHistory, projectRoot: string): RunHistoryRows {
  const latest = history.latest_status_run === null ? null : flaggedRow(history.latest_status_run, projectRoot);
  const latestRuns: RunIndexEntry[] = [];
  if (latest !== null) latestRuns.push(latest);
  if (history.newest_lane_run !== null) latestRuns.push(flaggedRow(history.newest_lane_run, projectRoot));
  // The newest lane run is already its agent's newest.
  for (const row of history.newest_lane_run_by_agent)
    if (row.agent_id !== history.newest_lane_run?.agent_id) latestRuns.push(flaggedRow(row, projectRoot));
  const byAgent = new Map<string, RunIndexEntry[]>();
  for (const [agentId, rows] of history.recent_by_agent)
    byAgent.set(
      agentId,
      rows.map((row) => flaggedRow(row, projectRoot)),
    );
  return {
    latestStatusRun: latest,
    latestRuns,
    replanRows: { all: history.recent_all.map((row) => flaggedRow(row, projectRoot)), byAgent },
  };
}

// ---------------------------------------------------------------------------------------------
// The incremental reader

/** How long a file must have been unchanged before its stamp alone is trusted (the file system's timestamp granularity). */
export const QUIET_FOLDER_MS = 3_000;

/** Bytes hashed at each end of the prefix read so far to tell an append from a rewrite. */
export const STAMP_BYTES = 4096;
/**
 * Block size of the prefix's content hash (a SHA-256 per block): an append rehashes only the last
 * block and the new bytes; a verified read rehashes every block and compares.
 */
export const PREFIX_BLOCK_BYTES = 256 * 1024;

/**
 * How much a read trusts what it kept (docs/quota.md#what-admission-reads):
 * - `'stamps'` (status views): identity, size, mtime and the first and last 4 KB of the prefix;
 * - `'content'` (the should-run decision): also the content hash of the whole prefix read, so an
 *   edit anywhere in it (an editor's same-length save) is seen, then the appended tail is parsed;
 * - `'own'`: as `'content'` (kept for callers that say so: the reader keeps only what its own
 *   process read from the index, never a file anyone could rewrite).
 */
export type HistoryVerification = 'stamps' | 'content' | 'own';

/** What the reader knows about the bytes `[0, offset)` of one index file. */
interface IndexState {
  index_file: string;
  project_root: string;
  dev: number;
  ino: number;
  /** Bytes read: always just after a newline (a torn last line is never consumed). */
  offset: number;
  /** Lines in `[0, offset)`. */
  lines: number;
  /** The index's mtime when `offset` was reached (equality only: tells a same-size rewrite from no change). */
  mtime_ms: number;
  /** The index's ctime then: with the mtime and the size, the full stamp of "nothing changed since". */
  ctime_ms: number;
  head_sha: string;
  tail_sha: string;
  /** SHA-256 of each {@link PREFIX_BLOCK_BYTES} block of `[0, offset)` (the last one may be short). */
  prefix_blocks: string[];
  /** Every row had a time and they ascend with the lines: appended rows can be summarized alone. */
  ordered: boolean;
  /** The newest time read, and the merge keys of the rows at that time. */
  last_time: number | null;
  last_keys: string[];
  history: RunHistory;
}

/** How a read was answered (tests and benchmarks). */
export type HistoryReadKind = 'missing' | 'full' | 'unchanged' | 'tail' | 'torn';

export interface HistoryRead {
  exists: boolean;
  history: RunHistory;
  kind: HistoryReadKind;
}

const EMPTY_FACTS = (): LedgerFacts => ({ spends: [], voids: [] });

function emptyHistory(): RunHistory {
  return {
    facts: EMPTY_FACTS(),
    latest_status_run: null,
    newest_lane_run: null,
    newest_lane_run_by_agent: [],
    recent_all: [],
    recent_by_agent: new Map(),
  };
}

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

function readRange(fd: number, start: number, end: number): Buffer {
  const buffer = Buffer.alloc(Math.max(0, end - start));
  let done = 0;
  while (done < buffer.length) {
    const n = fs.readSync(fd, buffer, done, buffer.length - done, start + done);
    if (n === 0) break;
    done += n;
  }
  return done === buffer.length ? buffer : buffer.subarray(0, done);
}

/** The block hashes of `[0, offset)`, keeping those of `kept` that lie wholly below `keptOffset`. */
function prefixBlocks(fd: number, offset: number, kept: readonly string[] = [], keptOffset = 0): string[] {
  const whole = Math.min(Math.floor(keptOffset / PREFIX_BLOCK_BYTES), kept.length);
  const blocks = kept.slice(0, whole);
  for (let start = whole * PREFIX_BLOCK_BYTES; start < offset; start += PREFIX_BLOCK_BYTES)
    blocks.push(sha(readRange(fd, start, Math.min(offset, start + PREFIX_BLOCK_BYTES))));
  return blocks;
}

/** Whether the bytes `[0, state.offset)` of the file are still those the state was made from. */
function prefixUnchanged(fd: number, state: IndexState): boolean {
  if (state.prefix_blocks.length !== Math.ceil(state.offset / PREFIX_BLOCK_BYTES)) return false;
  for (let i = 0; i < state.prefix_blocks.length; i++) {
    const start = i * PREFIX_BLOCK_BYTES;
    if (sha(readRange(fd, start, Math.min(state.offset, start + PREFIX_BLOCK_BYTES))) !== state.prefix_blocks[i])
      return false;
  }
  return true;
}

function stampsOf(fd: number, offset: number): { head: string; tail: string } {
  return {
    head: sha(readRange(fd, 0, Math.min(offset, STAMP_BYTES))),
    tail: sha(readRange(fd, Math.max(0, offset - STAMP_BYTES), offset)),
  };
}

/** Order facts of parsed lines: whether they ascend in time, the newest time and its merge keys. */
function orderOf(
  entries: readonly IndexLineEntry[],
  previous: { ordered: boolean; last_time: number | null; last_keys: string[] },
): { ordered: boolean; last_time: number | null; last_keys: string[] } {
  let ordered = previous.ordered;
  let lastTime = previous.last_time;
  let keys = previous.last_keys;
  for (const entry of entries) {
    if (!ordered) break;
    if (entry.time === null || (lastTime !== null && entry.time < lastTime)) {
      ordered = false;
      break;
    }
    const key = runMergeKey(entry.row);
    if (lastTime !== null && entry.time === lastTime) {
      // A row merging into one read earlier: the summary of the older rows would change.
      if (keys.includes(key)) {
        ordered = false;
        break;
      }
      keys = [...keys, key];
    } else {
      lastTime = entry.time;
      keys = [key];
    }
  }
  return ordered
    ? { ordered, last_time: lastTime, last_keys: keys }
    : { ordered: false, last_time: null, last_keys: [] };
}

const NO_ORDER = { ordered: true, last_time: null, last_keys: [] as string[] };

function summarizeEntries(entries: IndexLineEntry[], projectRoot: string): RunHistory {
  return summarizeRunRows(
    mergeIndexEntries(entries).map((entry) => entry.row),
    projectRoot,
  );
}

/**
 * Reads run histories incrementally. One instance per process is enough (the goal loader's cache, `goal/cache.ts`);
 * it keeps the state of each index it read in memory only.
 */
export class RunHistoryReader {
  private readonly memo = new Map<string, IndexState>();

  /** Forgets what this process read (the cache files stay). */
  clear(): void {
    this.memo.clear();
  }

  /**
   * `read`, with the rows a decision takes from the history (`RunHistoryRows`: the latest runs and every lane's
   * replan rows, with lazy artifact flags): what the goal loader keeps in a snapshot, so the decision reads nothing.
   */
  async readWithRows(
    runtimeRoot: string,
    goalId: string,
    projectRoot: string,
    options: { verify?: HistoryVerification } = {},
  ): Promise<HistoryRead & { rows: RunHistoryRows }> {
    const read = await this.read(runtimeRoot, goalId, projectRoot, options);
    return { ...read, rows: runHistoryRows(read.history, projectRoot) };
  }

  /**
   * `verify`: how much of what was kept is checked against the file (default `'stamps'`; see
   * {@link HistoryVerification}). A state that fails is dropped and the index read in full.
   */
  async read(
    runtimeRoot: string,
    goalId: string,
    projectRoot: string,
    options: { verify?: HistoryVerification } = {},
  ): Promise<HistoryRead> {
    const verify = options.verify ?? 'stamps';
    const indexFile = path.resolve(runIndexPath(runtimeRoot, goalId));
    let fd: number;
    try {
      fd = fs.openSync(indexFile, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        return { exists: false, history: emptyHistory(), kind: 'missing' };
      return this.uncached(indexFile, projectRoot);
    }
    try {
      const stat = fs.fstatSync(fd);
      // Not a regular file: the plain reader refuses it with its own error.
      if (!stat.isFile()) return await this.uncached(indexFile, projectRoot);
      const size = stat.size;
      let state = this.memo.get(indexFile) ?? null;
      let kind: HistoryReadKind = 'full';
      if (state !== null && !this.usable(state, indexFile, projectRoot, stat, fd)) state = null;
      // The content hash is skipped only when the full stamp says nothing touched the file since it was
      // read (size, mtime and ctime equal, and the ctime old enough that a change in the same
      // timestamp tick is ruled out): an unchanged index costs a stat, a changed one a hash.
      const untouched =
        state !== null &&
        size === state.offset &&
        stat.mtimeMs === state.mtime_ms &&
        stat.ctimeMs === state.ctime_ms &&
        Date.now() - stat.ctimeMs >= QUIET_FOLDER_MS;
      if (state !== null && verify !== 'stamps' && !untouched && !prefixUnchanged(fd, state)) state = null;
      // Nothing appended: an in-place rewrite of the same size still changes the mtime (compared for
      // equality only, so a skewed clock does not matter).
      if (state !== null && size === state.offset && stat.mtimeMs !== state.mtime_ms) state = null;
      if (state !== null && size === state.offset) kind = 'unchanged';
      else if (state !== null && state.ordered) {
        const next = this.extend(state, fd, size, stat, projectRoot);
        kind = next === state ? 'unchanged' : 'tail';
        state = next;
      } else state = null;
      if (state === null) state = this.rebuild(indexFile, fd, size, stat, projectRoot);
      this.memo.set(indexFile, state);
      if (size > state.offset) {
        // A torn last line (an append in progress, or a writer killed mid-line): answered as the plain
        // reader would, never consumed.
        return {
          exists: true,
          history: await this.withTornTail(state, fd, size, indexFile, projectRoot),
          kind: 'torn',
        };
      }
      return { exists: true, history: state.history, kind };
    } finally {
      fs.closeSync(fd);
    }
  }

  private async uncached(indexFile: string, projectRoot: string): Promise<HistoryRead> {
    const read = await readIndexInFull(indexFile, projectRoot);
    return { exists: read.exists, history: summarizeRunRows(read.rows, projectRoot), kind: 'full' };
  }

  private usable(state: IndexState, indexFile: string, projectRoot: string, stat: fs.Stats, fd: number): boolean {
    if (state.index_file !== indexFile || state.project_root !== projectRoot) return false;
    if (state.dev !== stat.dev || state.ino !== stat.ino || stat.size < state.offset) return false;
    const { head, tail } = stampsOf(fd, state.offset);
    return head === state.head_sha && tail === state.tail_sha;
  }

  /** Parses the complete lines appended after `state.offset`; null when they cannot be summarized alone. */
  private extend(state: IndexState, fd: number, size: number, stat: fs.Stats, projectRoot: string): IndexState | null {
    const bytes = readRange(fd, state.offset, size);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end === 0) return state;
    const text = bytes.subarray(0, end).toString('utf8');
    const parsed = parseIndexLines(text.slice(0, -1), state.lines);
    const order = orderOf(parsed.entries, state);
    if (!order.ordered) return null;
    const offset = state.offset + end;
    const stamps = stampsOf(fd, offset);
    return {
      ...state,
      prefix_blocks: prefixBlocks(fd, offset, state.prefix_blocks, state.offset),
      offset,
      lines: state.lines + countNewlines(text),
      mtime_ms: stat.mtimeMs,
      ctime_ms: stat.ctimeMs,
      head_sha: stamps.head,
      tail_sha: stamps.tail,
      ...order,
      history:
        parsed.entries.length === 0
          ? state.history
          : mergeRunHistory(summarizeEntries(parsed.entries, projectRoot), state.history),
    };
  }

  private rebuild(indexFile: string, fd: number, size: number, stat: fs.Stats, projectRoot: string): IndexState {
    const bytes = readRange(fd, 0, size);
    const end = bytes.lastIndexOf(0x0a) + 1;
    const text = bytes.subarray(0, end).toString('utf8');
    const parsed = parseIndexLines(end === 0 ? '' : text.slice(0, -1));
    const order = orderOf(parsed.entries, NO_ORDER);
    const stamps = stampsOf(fd, end);
    const blocks: string[] = [];
    for (let start = 0; start < end; start += PREFIX_BLOCK_BYTES)
      blocks.push(sha(bytes.subarray(start, Math.min(end, start + PREFIX_BLOCK_BYTES))));
    return {
      index_file: indexFile,
      prefix_blocks: blocks,
      project_root: projectRoot,
      dev: stat.dev,
      ino: stat.ino,
      offset: end,
      mtime_ms: stat.mtimeMs,
      ctime_ms: stat.ctimeMs,
      lines: countNewlines(text),
      head_sha: stamps.head,
      tail_sha: stamps.tail,
      ...order,
      history: summarizeEntries(parsed.entries, projectRoot),
    };
  }

  private async withTornTail(
    state: IndexState,
    fd: number,
    size: number,
    indexFile: string,
    projectRoot: string,
  ): Promise<RunHistory> {
    const tail = parseIndexLines(readRange(fd, state.offset, size).toString('utf8'), state.lines);
    if (tail.entries.length === 0) return state.history;
    if (state.ordered && orderOf(tail.entries, state).ordered)
      return mergeRunHistory(summarizeEntries(tail.entries, projectRoot), state.history);
    return (await this.uncached(indexFile, projectRoot)).history;
  }
}

function countNewlines(text: string): number {
  let n = 0;
  for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) n++;
  return n;
}
