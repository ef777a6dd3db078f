import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { z } from 'zod';
import { systemClock, isoSeconds, type Clock } from '../clock';
import { LoopxError } from '../errors';
import { assertInside, realpathNative } from './contain';
import { readFileSafe, readFileSafeSync, SMALL_FILE_BYTES } from './safeRead';

/**
 * Cross-process exclusive lock on a target file X.
 *
 * Node has no flock, so the lock is the O_EXCL-created sibling `X.loopx-lock` holding the holder
 * record (pid, host, agent, operation, time). Release deletes it. A lock whose holder process is
 * dead (same host, pid gone) is reclaimed; the reclaim is serialized by a second O_EXCL file
 * `X.loopx-lock.reclaim` so two waiters cannot both delete-and-take the same stale lock.
 *
 * The name differs from the Python original's `X.lock` on purpose: that one is flocked and never
 * deleted, so its mere existence means nothing, while ours means "held".
 *
 * Waiters queue: one that finds the lock busy puts a ticket in `X.loopx-lock.queue/` (named by
 * arrival time) and takes the lock only when no live ticket is older than its own, so under
 * steady contention the lock goes round in arrival order instead of back to the process that just
 * released it. The first waiter is woken by the release (fs.watch) and polls every millisecond or
 * so as a fallback, the others back off to the policy's poll.
 *
 * Short streaks (opt-in, `streak: true`, run-index appends): a process that takes the lock again
 * right after releasing it (a loop of appends) may skip the line up to MAX_STREAK times in a row, within STREAK_WINDOW_MS of its release; then
 * it queues like everyone. Under steady contention the lock changes process every MAX_STREAK holds
 * instead of every hold (each change of process costs a wake-up and a context switch), and no
 * waiter waits more than MAX_STREAK holds of one process longer than strict arrival order. Tickets of dead waiters (pid gone, or past their deadline) are removed by the next waiter;
 * the last waiter out removes the folder.
 */

export type LockPolicy = 'mutation' | 'monitor' | 'single_flight';

export const LOCK_POLICIES: Readonly<Record<LockPolicy, { timeoutMs: number; pollMs: number; retryMode: string }>> = {
  mutation: { timeoutMs: 5000, pollMs: 50, retryMode: 'manual_after_holder_inspection' },
  monitor: { timeoutMs: 1000, pollMs: 100, retryMode: 'next_scheduled_poll_after_holder_inspection' },
  single_flight: { timeoutMs: 0, pollMs: 50, retryMode: 'skip_duplicate_attempt' },
};

export interface LockOptions {
  /** Default `mutation`. */
  policy?: LockPolicy;
  /** Overrides the policy's deadline; clamped to ≥ 0. */
  timeoutMs?: number;
  /** Overrides the policy's poll interval; clamped to ≥ 1. */
  pollMs?: number;
  /** Who takes the lock; default env `LOOPX_AGENT_ID`, else `unknown`. */
  agentId?: string | null;
  /** What the holder is doing; default the policy name. */
  operation?: string;
  /** Source of `LOOPX_AGENT_ID`; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Source of `acquired_at` / `recorded_at`; default the system clock. */
  clock?: Clock;
  /**
   * Short streaks (for loops of short writes such as run-index appends): taking the lock again
   * right after this process released it may skip the line, up to MAX_STREAK holds in a row.
   * Default false: strict arrival order.
   */
  streak?: boolean;
}

export const LOCK_FILE_SUFFIX = '.loopx-lock';
const RECLAIM_GUARD_SUFFIX = '.reclaim';
const QUEUE_SUFFIX = '.queue';
/** The first waiter in line polls this often (ms, jittered): the holder usually releases within milliseconds. */
const HEAD_POLL_MS = 1;
/** A ticket file without a readable record is stale after this (its creator died between create and write). */
const UNREADABLE_TICKET_GRACE_MS = 2000;
/** A ticket outlives its waiter's deadline by at most this before others drop it. */
const TICKET_DEADLINE_GRACE_MS = 1000;
const INCIDENTS_SUFFIX = '.lock.incidents.jsonl';
/** A lock file without a readable record (its creator died between create and write) is stale after this. */
const UNREADABLE_LOCK_GRACE_MS = 2000;
/** A reclaim guard lives for microseconds; one unchanged for this long was left by a dead process. */
const RECLAIM_GUARD_STALE_MS = 3000;

export const LockHolder = z.looseObject({
  schema_version: z.literal('file_lock_holder_v0'),
  lock_id: z.string(),
  policy: z.string(),
  pid: z.number().int(),
  agent_id: z.string(),
  operation: z.string(),
  acquired_at: z.string(),
  hostname: z.string().optional(),
  /** Random per acquisition: tells this hold from a later one by the same pid. */
  nonce: z.string().optional(),
});
export type LockHolder = z.infer<typeof LockHolder>;

/** Each run of characters outside `[A-Za-z0-9._:@-]` becomes `_`; ends trimmed of `._-`; at most 128 chars. */
export function sanitizeLockLabel(label: string): string {
  return label
    .replace(/[^A-Za-z0-9._:@-]+/g, '_')
    .replace(/^[._-]+|[._-]+$/g, '')
    .slice(0, 128);
}

/** The target with symlinks resolved (as far as it exists), so every alias of a file shares one lock. */
export function resolveLockTarget(target: string): string {
  const absolute = path.resolve(target);
  try {
    return realpathNative(absolute);
  } catch {
    try {
      return path.join(realpathNative(path.dirname(absolute)), path.basename(absolute));
    } catch {
      return absolute;
    }
  }
}

/** First 16 hex characters of sha256 of the resolved target path: names the lock without revealing the path. */
export function lockIdFor(target: string): string {
  return lockIdOfResolved(resolveLockTarget(target));
}

function lockIdOfResolved(resolvedTarget: string): string {
  return createHash('sha256').update(resolvedTarget).digest('hex').slice(0, 16);
}

export function lockFilePath(target: string): string {
  return `${resolveLockTarget(target)}${LOCK_FILE_SUFFIX}`;
}

function parseHolder(text: string): LockHolder | null {
  try {
    const parsed = LockHolder.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** The current holder of the lock on `target`, or null when it is free (or its record is unreadable). */
export async function readLockHolder(target: string): Promise<LockHolder | null> {
  try {
    return parseHolder(await readFileSafe(lockFilePath(target), { maxBytes: SMALL_FILE_BYTES }));
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
}

function isErrno(error: unknown, ...codes: string[]): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code !== undefined && codes.includes(code);
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return !isErrno(error, 'ESRCH');
  }
}

/** Compact JSON with sorted keys, like the original's holder record. */
function compactSorted(record: Record<string, unknown>): string {
  return JSON.stringify(Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))));
}

function readIfExists(file: string): { text: string; stat: fs.Stats } | null {
  try {
    const stat = fs.statSync(file);
    return { text: readFileSafeSync(file, { maxBytes: SMALL_FILE_BYTES }), stat };
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return null;
    throw error;
  }
}

/** Nonces of the holds this process has right now, released by the exit hook if the process exits mid-hold. */
const heldByThisProcess = new Map<string, string>(); // lock file path -> nonce
/** Queue tickets this process has right now, removed by the exit hook. */
const ticketsOfThisProcess = new Set<string>();
/** Per lock file: when this process last released it, and how many holds it took in a row past the line. */
const recentReleases = new Map<string, { at: number; streak: number }>();
export const MAX_STREAK = 8;
export const STREAK_WINDOW_MS = 50;
/** Lock files held in the current async call chain, to refuse nested (re-entrant) acquisition. */
const heldInContext = new AsyncLocalStorage<ReadonlySet<string>>();
let exitHookInstalled = false;

/** A process that exits while holding (e.g. process.exit inside a hold) must not leave its lock behind. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const [lockPath, nonce] of heldByThisProcess) {
      try {
        if (parseHolder(readFileSafeSync(lockPath, { maxBytes: SMALL_FILE_BYTES }))?.nonce === nonce)
          fs.unlinkSync(lockPath);
      } catch {
        // Best effort: a leftover lock of a dead pid is reclaimed by the next waiter anyway.
      }
    }
    for (const ticket of ticketsOfThisProcess) {
      try {
        fs.unlinkSync(ticket);
      } catch {
        // Best effort: the next waiter drops the ticket of a dead pid anyway.
      }
    }
  });
}

interface Resolved {
  target: string;
  lockPath: string;
  lockId: string;
  policy: LockPolicy;
  timeoutMs: number;
  pollMs: number;
  retryMode: string;
  agentId: string;
  operation: string;
  clock: Clock;
}

function resolveOptions(target: string, options: LockOptions): Resolved {
  const policy = options.policy ?? 'mutation';
  const defaults = LOCK_POLICIES[policy];
  const env = options.env ?? process.env;
  const agentRaw = options.agentId ?? env['LOOPX_AGENT_ID'] ?? '';
  const resolvedTarget = resolveLockTarget(target);
  return {
    target: resolvedTarget,
    lockPath: `${resolvedTarget}${LOCK_FILE_SUFFIX}`,
    lockId: lockIdOfResolved(resolvedTarget),
    policy,
    timeoutMs: Math.max(0, options.timeoutMs ?? defaults.timeoutMs),
    pollMs: Math.max(1, options.pollMs ?? defaults.pollMs),
    retryMode: defaults.retryMode,
    agentId: sanitizeLockLabel(agentRaw) || 'unknown',
    operation: sanitizeLockLabel(options.operation ?? '') || policy,
    clock: options.clock ?? systemClock,
  };
}

/** What a waiter remembers between polls, to judge "unchanged for long enough". */
interface WaitState {
  unreadableLock?: { key: string; since: number };
  reclaimGuard?: { key: string; since: number };
  lastHolder: LockHolder | null;
  /** The holder's nonce at the previous poll: a new one means the lock changed hands. */
  lastSeenNonce?: string | undefined;
}

const fileKey = (entry: { text: string; stat: fs.Stats }): string =>
  `${entry.stat.ino}:${entry.stat.mtimeMs}:${entry.stat.size}:${entry.text}`;

/**
 * Wall-clock start of this process, compared with lock-file mtimes only (not a business "now"): a lock
 * with our own pid that is older than this process was left by an earlier process that had our pid.
 */
const PROCESS_STARTED_MS = Date.now() - process.uptime() * 1000;

/** True when `holder` cannot be holding anything any more. Holders on another host are never judged. */
function holderIsDead(holder: LockHolder, stat: fs.Stats): boolean {
  if (holder.hostname !== undefined && holder.hostname !== os.hostname()) return false;
  // Same pid: alive unless the file predates us (a sibling worker thread would also share our pid).
  if (holder.pid === process.pid) return stat.mtimeMs < PROCESS_STARTED_MS - 1000;
  return !pidAlive(holder.pid);
}

function isStale(entry: { text: string; stat: fs.Stats }, state: WaitState): boolean {
  const holder = parseHolder(entry.text);
  if (holder) return holderIsDead(holder, entry.stat);
  const key = fileKey(entry);
  const now = performance.now();
  if (state.unreadableLock?.key !== key) {
    state.unreadableLock = { key, since: now };
    return false;
  }
  return now - state.unreadableLock.since >= UNREADABLE_LOCK_GRACE_MS;
}

/**
 * Deletes the stale lock file `observed`, unless it changed meanwhile. Runs inside the O_EXCL reclaim
 * guard so that of two waiters who saw the same stale lock only one deletes it; the other re-checks
 * afterwards and finds the new, live holder.
 */
function reclaimStaleLock(r: Resolved, observedKey: string, state: WaitState): void {
  const guardPath = `${r.lockPath}${RECLAIM_GUARD_SUFFIX}`;
  const guardNonce = randomBytes(8).toString('hex');
  try {
    const fd = fs.openSync(guardPath, 'wx', 0o600);
    try {
      fs.writeSync(fd, guardNonce);
    } finally {
      fs.closeSync(fd);
    }
  } catch (error) {
    if (!isErrno(error, 'EEXIST')) throw error;
    clearStaleReclaimGuard(guardPath, state);
    return;
  }
  try {
    const current = readIfExists(r.lockPath);
    if (current && fileKey(current) === observedKey && isStale(current, state)) fs.unlinkSync(r.lockPath);
  } finally {
    try {
      if (readFileSafeSync(guardPath, { maxBytes: SMALL_FILE_BYTES }) === guardNonce) fs.unlinkSync(guardPath);
    } catch {
      // Already removed by a waiter that judged it stale; nothing of ours is left.
    }
  }
}

/** Removes a reclaim guard left by a process that died inside the (microsecond-long) reclaim. */
function clearStaleReclaimGuard(guardPath: string, state: WaitState): void {
  const guard = readIfExists(guardPath);
  if (!guard) return;
  const key = fileKey(guard);
  const now = performance.now();
  if (state.reclaimGuard?.key !== key) {
    state.reclaimGuard = { key, since: now };
    return;
  }
  if (now - state.reclaimGuard.since < RECLAIM_GUARD_STALE_MS) return;
  // Move it aside first and check we moved the stale one, not a fresh guard created in between.
  const aside = `${guardPath}.${randomBytes(6).toString('hex')}.stale`;
  try {
    fs.renameSync(guardPath, aside);
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return;
    throw error;
  }
  const moved = readIfExists(aside);
  if (moved && fileKey(moved) !== key) {
    try {
      fs.linkSync(aside, guardPath);
    } catch {
      /* a newer guard exists: it wins */
    }
  }
  fs.rmSync(aside, { force: true });
  state.reclaimGuard = undefined;
}

/** One non-blocking attempt; on success the lock file holds our record. */
function attempt(r: Resolved, state: WaitState): { acquired: true; nonce: string } | { acquired: false } {
  for (let round = 0; round < 3; round++) {
    const nonce = randomBytes(8).toString('hex');
    const holder: LockHolder = {
      schema_version: 'file_lock_holder_v0',
      lock_id: r.lockId,
      policy: r.policy,
      pid: process.pid,
      agent_id: r.agentId,
      operation: r.operation,
      acquired_at: isoSeconds(r.clock.now()),
      hostname: os.hostname(),
      nonce,
    };
    let fd: number | undefined;
    try {
      fd = fs.openSync(r.lockPath, 'wx', 0o600);
    } catch (error) {
      if (!isErrno(error, 'EEXIST')) throw error;
    }
    if (fd !== undefined) {
      heldByThisProcess.set(r.lockPath, nonce);
      try {
        fs.writeSync(fd, compactSorted(holder));
      } finally {
        fs.closeSync(fd);
      }
      return { acquired: true, nonce };
    }
    const existing = readIfExists(r.lockPath);
    if (!existing) continue; // released between our create and our read: try again at once
    state.lastHolder = parseHolder(existing.text);
    if (!isStale(existing, state)) return { acquired: false };
    reclaimStaleLock(r, fileKey(existing), state);
  }
  return { acquired: false };
}

function release(r: Resolved, nonce: string): void {
  heldByThisProcess.delete(r.lockPath);
  try {
    // Only delete our own record; anything else is not ours to remove.
    if (parseHolder(readFileSafeSync(r.lockPath, { maxBytes: SMALL_FILE_BYTES }))?.nonce === nonce)
      fs.unlinkSync(r.lockPath);
  } catch (error) {
    if (!isErrno(error, 'ENOENT')) throw error;
  }
}

/** Whether the current async call chain holds the lock on `target` (a read inside it is a locked re-read). */
export function holdsLockOn(target: string): boolean {
  return heldInContext.getStore()?.has(lockFilePath(target)) ?? false;
}

function refuseReentry(r: Resolved): void {
  if (heldInContext.getStore()?.has(r.lockPath)) {
    throw new LoopxError(
      'lock_not_reentrant',
      `This operation already holds the lock on ${path.basename(r.target)}; LoopX locks are not re-entrant. ` +
        'Do the nested read-modify-write inside the outer hold instead of locking again.',
      { lock_id: r.lockId, operation: r.operation },
    );
  }
}

/** `streak`: holds taken in a row past the line before this one (0 when this one came through it). */
async function runHeld<T>(r: Resolved, nonce: string, fn: () => Promise<T> | T, streak: number): Promise<T> {
  const held = new Set(heldInContext.getStore() ?? []);
  held.add(r.lockPath);
  try {
    return await heldInContext.run(held, fn);
  } finally {
    release(r, nonce);
    if (recentReleases.size >= 256) recentReleases.clear();
    recentReleases.set(r.lockPath, { at: performance.now(), streak });
  }
}

// ---------------------------------------------------------------------------------------------
// Waiting queue

export const TicketRecord = z.looseObject({
  schema_version: z.literal('file_lock_ticket_v0'),
  pid: z.number().int(),
  hostname: z.string(),
  /** Wall-clock ms after which the waiter has given up (its timeout). */
  deadline_ms: z.number(),
});
export type TicketRecord = z.infer<typeof TicketRecord>;

interface Ticket {
  name: string;
  path: string;
}

function queueDirOf(r: Resolved): string {
  return `${r.lockPath}${QUEUE_SUFFIX}`;
}

/**
 * Takes a place in the queue. The name sorts in arrival order: wall-clock ms (an order between
 * processes, not a business "now"), then pid and a nonce for ties.
 */
function takeTicket(r: Resolved, deadlineMs: number): Ticket {
  const queueDir = queueDirOf(r);
  const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${randomBytes(4).toString('hex')}`;
  const ticketPath = path.join(queueDir, name);
  const record: TicketRecord = {
    schema_version: 'file_lock_ticket_v0',
    pid: process.pid,
    hostname: os.hostname(),
    deadline_ms: deadlineMs,
  };
  for (let round = 0; ; round++) {
    try {
      // Inside the try: a recursive mkdir that meets the folder (EEXIST) stats it, and answers ENOENT
      // when the last waiter out removes it in between (seen in CI under a reclaim race).
      fs.mkdirSync(queueDir, { recursive: true, mode: 0o700 });
      fs.writeFileSync(ticketPath, JSON.stringify(record), { flag: 'wx', mode: 0o600 });
      ticketsOfThisProcess.add(ticketPath);
      return { name, path: ticketPath };
    } catch (error) {
      // The last waiter out removed the folder during our mkdir or before our write: make it again.
      if (!isErrno(error, 'ENOENT') || round >= 5) throw error;
    }
  }
}

/** Leaves the queue; the last one out removes the folder. */
function dropTicket(r: Resolved, ticket: Ticket): void {
  ticketsOfThisProcess.delete(ticket.path);
  fs.rmSync(ticket.path, { force: true });
  removeQueueIfEmpty(r);
}

function removeQueueIfEmpty(r: Resolved): void {
  try {
    fs.rmdirSync(queueDirOf(r));
  } catch (error) {
    if (!isErrno(error, 'ENOENT', 'ENOTEMPTY', 'EEXIST')) throw error;
  }
}

/** Whether a ticket's waiter can no longer be waiting: gone, past its deadline, or never wrote its record. */
function ticketIsStale(ticketPath: string, name: string): boolean {
  let text: string;
  try {
    text = readFileSafeSync(ticketPath, { maxBytes: SMALL_FILE_BYTES });
  } catch (error) {
    if (isErrno(error, 'ENOENT')) return false; // already gone: not ahead of anyone any more
    throw error;
  }
  const now = Date.now();
  let record: TicketRecord | null = null;
  try {
    const parsed = TicketRecord.safeParse(JSON.parse(text));
    record = parsed.success ? parsed.data : null;
  } catch {
    record = null;
  }
  if (record === null) return now - Number(name.slice(0, 15)) >= UNREADABLE_TICKET_GRACE_MS;
  if (now > record.deadline_ms + TICKET_DEADLINE_GRACE_MS) return true;
  if (record.hostname !== os.hostname()) return false;
  return record.pid !== process.pid && !pidAlive(record.pid);
}

/**
 * How many waiters are ahead: tickets older than ours (without a ticket, all of them). The oldest
 * is checked to be live, stale ones being removed until a live one leads; the rest are counted
 * as they are (each is checked when it comes first).
 */
function waitersAhead(r: Resolved, ticket: Ticket | null): number {
  const queueDir = queueDirOf(r);
  if (!fs.existsSync(queueDir)) return 0;
  let names: string[];
  try {
    names = fs.readdirSync(queueDir);
  } catch (error) {
    if (isErrno(error, 'ENOENT', 'ENOTDIR')) return 0;
    throw error;
  }
  const ahead = names.filter((name) => ticket === null || name < ticket.name).sort();
  let first = 0;
  while (first < ahead.length) {
    const name = ahead[first] as string;
    const ticketPath = path.join(queueDir, name);
    if (!ticketIsStale(ticketPath, name)) break;
    fs.rmSync(ticketPath, { force: true });
    first++;
  }
  if (first > 0 && first === names.length) removeQueueIfEmpty(r);
  return ahead.length - first;
}

/**
 * Ends a waiter's sleep as soon as the lock file changes (released or taken), where the platform
 * reports file changes (inotify and the like); polling stays the fallback. The first waiter in line
 * listens to the lock file, the others to the queue folder (so they are awake when the line moves,
 * not at the end of a back-off). A change that arrives while the waiter
 * is awake (between its attempt and its sleep) is kept, and the next sleep returns at once.
 */
class LockFileWatch {
  private watcher: fs.FSWatcher | null = null;
  private queueWatcher: fs.FSWatcher | null = null;
  private wake: (() => void) | null = null;
  private pending = false;

  constructor(
    private readonly lockPath: string,
    private readonly queueDir: string,
  ) {}

  /**
   * First in line (`ahead` 0): listen to the lock file; behind others: to the queue folder (the line
   * moving). True when the change this waiter waits for will wake it.
   */
  listen(ahead: number): boolean {
    if (ahead === 0 && this.watcher === null) {
      const name = path.basename(this.lockPath);
      this.watcher = this.watch(
        path.dirname(this.lockPath),
        (file) => file === null || file === name,
        () => {
          this.watcher = null;
        },
      );
    } else if (ahead > 0 && this.queueWatcher === null) {
      this.queueWatcher = this.watch(
        this.queueDir,
        () => true,
        () => {
          this.queueWatcher = null;
        },
      );
    }
    return ahead === 0 ? this.watcher !== null : this.queueWatcher !== null;
  }

  private watch(dir: string, relevant: (file: string | null) => boolean, onClosed: () => void): fs.FSWatcher | null {
    try {
      const watcher = fs.watch(dir, { persistent: false }, (_event, file) => {
        if (relevant(file === null ? null : String(file))) this.signal();
      });
      watcher.on('error', () => {
        watcher.close();
        onClosed();
        this.signal();
      });
      // A change before the watch began was not seen: check again before sleeping.
      this.pending = true;
      return watcher;
    } catch {
      // No change notification here (or out of watches, or no queue folder any more): polling still works.
      return null;
    }
  }

  private signal(): void {
    if (this.wake !== null) this.wake();
    else this.pending = true;
  }

  /** Sleeps `ms`, or less when the lock file changes meanwhile (or changed since the last sleep). */
  sleep(ms: number): Promise<void> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = null;
        this.pending = false;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }

  close(): void {
    this.watcher?.close();
    this.queueWatcher?.close();
    this.watcher = null;
    this.queueWatcher = null;
    this.wake = null;
  }
}

/**
 * Next wait: about a millisecond, doubling (up to the policy's poll) while the line does not move,
 * so waiters follow a line of short holds closely and back off behind a long one; ±25 % jitter.
 */
function nextPollMs(r: Resolved, pollsWithoutProgress: number): number {
  return Math.min(r.pollMs, HEAD_POLL_MS * 2 ** Math.min(pollsWithoutProgress, 16)) * (0.75 + Math.random() * 0.5);
}

function prepare(target: string, options: LockOptions): Resolved {
  const r = resolveOptions(target, options);
  refuseReentry(r);
  fs.mkdirSync(path.dirname(r.lockPath), { recursive: true });
  installExitHook();
  return r;
}

/**
 * Runs `fn` while holding the exclusive lock on `target`, waiting up to the policy's deadline.
 * On timeout it appends an incident line to `<target>.lock.incidents.jsonl` and throws LoopxError
 * `lock_acquire_timeout` whose details say who holds the lock and what the operator should do.
 */
export async function withFileLock<T>(target: string, options: LockOptions, fn: () => Promise<T> | T): Promise<T> {
  const r = prepare(target, options);
  const startedAt = r.clock.now();
  const start = performance.now();
  const state: WaitState = { lastHolder: null };
  let ticket: Ticket | null = null;
  let pollsWithoutProgress = 0;
  let lastAhead = Number.POSITIVE_INFINITY;
  const watch = new LockFileWatch(r.lockPath, queueDirOf(r));
  const recent = recentReleases.get(r.lockPath);
  if (
    options.streak === true &&
    recent !== undefined &&
    recent.streak < MAX_STREAK &&
    performance.now() - recent.at <= STREAK_WINDOW_MS
  ) {
    // Right after our own release: take it again without queueing, if nobody took it meanwhile.
    const result = attempt(r, state);
    if (result.acquired) return runHeld(r, result.nonce, fn, recent.streak + 1);
  }
  try {
    for (;;) {
      const ahead = waitersAhead(r, ticket);
      if (ahead === 0) {
        const result = attempt(r, state);
        if (result.acquired) {
          if (ticket !== null) dropTicket(r, ticket);
          ticket = null;
          return await runHeld(r, result.nonce, fn, 0);
        }
      }
      const remaining = r.timeoutMs - (performance.now() - start);
      if (remaining <= 0) throw timeoutError(r, state.lastHolder, startedAt, (performance.now() - start) / 1000);
      ticket ??= takeTicket(r, Date.now() + remaining);
      // The line moved (or the holder changed): keep polling fast, the lock comes round soon.
      const holderNonce = state.lastHolder?.nonce;
      if (ahead < lastAhead || holderNonce !== state.lastSeenNonce) pollsWithoutProgress = 0;
      lastAhead = ahead;
      state.lastSeenNonce = holderNonce;
      // Woken by the change it waits for, a waiter polls only as a safety net (at the policy's poll);
      // without change notification it polls fast while the line moves, backing off while it does not.
      const woken = watch.listen(ahead);
      const poll = woken ? r.pollMs : nextPollMs(r, pollsWithoutProgress);
      pollsWithoutProgress++;
      await watch.sleep(Math.min(remaining, poll));
    }
  } finally {
    watch.close();
    if (ticket !== null) dropTicket(r, ticket);
  }
}

/** One attempt only: runs `fn` and returns `{ value }`, or returns null at once when the lock is busy or others wait for it (no incident). */
export async function tryWithFileLock<T>(
  target: string,
  options: LockOptions,
  fn: () => Promise<T> | T,
): Promise<{ value: T } | null> {
  const r = prepare(target, options);
  if (waitersAhead(r, null) > 0) return null;
  const result = attempt(r, { lastHolder: null });
  if (!result.acquired) return null;
  return { value: await runHeld(r, result.nonce, fn, 0) };
}

function timeoutError(r: Resolved, holder: LockHolder | null, startedAt: Date, waitedSeconds: number): LoopxError {
  const waited = Math.round(waitedSeconds * 1000) / 1000;
  const holderPid = holder?.pid ?? null;
  const lockName = path.basename(r.lockPath);
  const operatorAction = {
    required: true,
    action: 'inspect_lock_holder',
    holder_pid: holderPid,
    retry_mode: r.retryMode,
    steps: [
      holderPid === null
        ? `Find the process that holds ${lockName} (its record could not be read).`
        : `Check whether process ${holderPid} (agent ${holder?.agent_id}, operation ${holder?.operation}) is still running.`,
      'If it is still working, wait for it to finish, then retry.',
      'If it is hung, stop that process; LoopX reclaims the lock of a dead process on the next attempt.',
      `Do not delete ${lockName} by hand while its holder is running.`,
    ],
  };
  const incident = {
    schema_version: 'file_lock_incident_v0',
    error_code: 'lock_acquire_timeout',
    recorded_at: isoSeconds(r.clock.now()),
    lock_id: r.lockId,
    policy: r.policy,
    holder,
    waiter: {
      pid: process.pid,
      agent_id: r.agentId,
      operation: r.operation,
      started_at: isoSeconds(startedAt),
      timeout_seconds: r.timeoutMs / 1000,
      waited_seconds: waited,
    },
    operator_action: operatorAction,
  };
  const incidentsPath = `${r.target}${INCIDENTS_SUFFIX}`;
  let incidentRecorded = false;
  try {
    // A symlinked incidents file must not carry the append out of the target's folder.
    const real = assertInside(path.dirname(r.target), incidentsPath, 'append to');
    fs.appendFileSync(real, `${JSON.stringify(incident)}\n`, { mode: 0o600 });
    incidentRecorded = true;
  } catch {
    // The structured error below still tells the operator everything.
  }
  const byWhom = holder
    ? ` while waiting for holder pid ${holder.pid} (agent ${holder.agent_id}, operation ${holder.operation}, since ${holder.acquired_at})`
    : '';
  return new LoopxError(
    'lock_acquire_timeout',
    `file lock acquisition timed out${byWhom} on ${path.basename(r.target)} after ${waited} s. ` +
      `Check that process; if it is gone, retry (the lock of a dead process is reclaimed). Do not delete ${lockName} by hand.`,
    {
      error_code: 'lock_acquire_timeout',
      lock_timeout: {
        lock_id: r.lockId,
        policy: r.policy,
        timeout_seconds: r.timeoutMs / 1000,
        waited_seconds: waited,
        holder_pid: holderPid,
        holder_agent_id: holder?.agent_id ?? null,
        holder_operation: holder?.operation ?? null,
        holder,
        retry_mode: r.retryMode,
      },
      incident_recorded: incidentRecorded,
      incident_channel: path.basename(incidentsPath),
      operator_action: operatorAction,
    },
  );
}

/** Whether a process with this pid exists on this host (signal 0; EPERM counts as alive). */
export function isPidAlive(pid: number): boolean {
  return pid === process.pid || pidAlive(pid);
}

/**
 * Removes the lock file `lockPath` (a `X.loopx-lock`) when its holder is dead, as a waiter would:
 * a record of this host whose pid is gone, or a file without a readable record that has not changed
 * for the unreadable grace (its creator died between create and write), judged by its mtime so a
 * single call can decide. A reclaim guard left by a dead process is cleared the same way.
 * Single-attempt callers (`tryWithFileLock`) never wait long enough to reclaim the last two cases,
 * so the turn driver sweeps its lock files with this before it starts. Returns true when removed.
 */
export function reclaimAbandonedLock(lockPath: string): boolean {
  if (!lockPath.endsWith(LOCK_FILE_SUFFIX)) return false;
  const r = resolveOptions(lockPath.slice(0, -LOCK_FILE_SUFFIX.length), { operation: 'sweep_stale_lock' });
  const state: WaitState = { lastHolder: null };
  const guard = readIfExists(`${r.lockPath}${RECLAIM_GUARD_SUFFIX}`);
  if (guard && Date.now() - guard.stat.mtimeMs >= RECLAIM_GUARD_STALE_MS) {
    state.reclaimGuard = { key: fileKey(guard), since: performance.now() - RECLAIM_GUARD_STALE_MS };
    clearStaleReclaimGuard(`${r.lockPath}${RECLAIM_GUARD_SUFFIX}`, state);
  }
  const existing = readIfExists(r.lockPath);
  if (!existing) return false;
  const key = fileKey(existing);
  const holder = parseHolder(existing.text);
  if (holder) {
    if (!holderIsDead(holder, existing.stat)) return false;
  } else {
    if (Date.now() - existing.stat.mtimeMs < UNREADABLE_LOCK_GRACE_MS) return false;
    state.unreadableLock = { key, since: performance.now() - UNREADABLE_LOCK_GRACE_MS };
  }
  reclaimStaleLock(r, key, state);
  return !fs.existsSync(r.lockPath);
}

/**
 * Whether a lock file (`X.loopx-lock`) was left by a process that is gone (this host only): true
 * stale, false held by a live process or another host, null unreadable. For `loopx doctor`; a waiter
 * reclaims such a lock by itself.
 */
export function lockFileIsStale(lockFile: string): boolean | null {
  const entry = readIfExists(lockFile);
  if (entry === null) return null;
  const holder = parseHolder(entry.text);
  return holder === null ? null : holderIsDead(holder, entry.stat);
}
