import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { resolveRepo } from '../registry/locate';

/**
 * Per-turn snapshots of a project's working tree as git objects (docs/review.md#snapshots). A
 * snapshot is `git add -A` + `git write-tree` through a private copy of the user's index
 * (`GIT_INDEX_FILE`: the user's index, HEAD, branches and stash are never written; ignored files are
 * not seen): a tree object, kept from `git gc` by a ref under `refs/loopx/`. A turn's base is taken
 * when it starts and kept as `refs/loopx/turn-base/<hash of goal and turn>`, so the process that ends
 * the turn (another CLI call for a heartbeat turn) finds it; its head is taken at the writeback and
 * kept as `refs/loopx/turn-head/<same hash>`. Few git processes per turn (each costs milliseconds):
 * base = add, write-tree, update-ref; head = rev-parse, add, write-tree, update-ref, diff. A project that is not in a git repository, or a machine without
 * git, gets no snapshot and no failure.
 */

/** The ids a run record keeps (`snapshot`), plus what changed between them (the view fills without git). */
export const RunSnapshotSchema = z.looseObject({
  base: z.string().regex(/^[0-9a-f]{40,64}$/),
  head: z.string().regex(/^[0-9a-f]{40,64}$/),
  changed: z.array(z.object({ path: z.string(), status: z.enum(['added', 'modified', 'deleted']) })).optional(),
  changed_truncated: z.boolean().optional(),
});
export type RunSnapshot = z.infer<typeof RunSnapshotSchema>;

export type ChangeStatus = 'added' | 'modified' | 'deleted';
export interface SnapshotChange {
  /** Project-relative, with `/`. */
  path: string;
  status: ChangeStatus;
}

/** A record lists at most this many changed files (`changed_truncated` says when there were more). */
export const RECORDED_CHANGES_MAX = 500;
const TURN_BASE_REFS = 'refs/loopx/turn-base';
const TURN_HEAD_REFS = 'refs/loopx/turn-head';

export function git(cwd: string, args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      args,
      {
        cwd,
        // Optional locks off: a status-like read never takes the user's index lock.
        env: { ...process.env, ...env, GIT_OPTIONAL_LOCKS: '0' },
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        windowsHide: true,
      },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

/** Where a project sits in its repository, or null when it is in none (or git is missing). */
export interface RepoPlace {
  /** The project root relative to the repository's top, with `/` ('' when it is the top). */
  prefix: string;
  /** The user's index file (absolute), which a snapshot copies and never writes. */
  indexFile: string;
}

const placeCache = new Map<string, RepoPlace>();

export async function repoPlace(projectRoot: string): Promise<RepoPlace | null> {
  const cached = placeCache.get(projectRoot);
  if (cached !== undefined) return cached;
  const [top = '', indexFile = ''] = await git(projectRoot, [
    'rev-parse',
    '--show-toplevel',
    '--path-format=absolute',
    '--git-path',
    'index',
  ]).then(
    (out) => out.toString('utf8').trim().split('\n'),
    () => [],
  );
  let place: RepoPlace | null = null;
  if (top !== '' && indexFile !== '') {
    const realRoot = await fs.realpath(projectRoot);
    place = { prefix: toPosix(path.relative(await fs.realpath(top), realRoot)), indexFile };
  }
  // Only a repository is remembered: a folder that becomes one (git init) gets snapshots from then on.
  if (placeCache.size > 64) placeCache.clear();
  if (place !== null) placeCache.set(projectRoot, place);
  return place;
}

/** The project's working tree as a git tree object, written through a private copy of the index. */
export async function writeWorkingTree(projectRoot: string, place: RepoPlace): Promise<string> {
  const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'loopx-snapshot-'));
  const index = path.join(scratch, 'index');
  try {
    // A copy of the user's index keeps its stat cache (fast) and is all this writes to.
    await fs.copyFile(place.indexFile, index).catch(() => undefined);
    const env = { GIT_INDEX_FILE: index };
    await git(projectRoot, ['add', '-A', '--', '.', ':(exclude).loopx'], env);
    return (await git(projectRoot, ['write-tree'], env)).toString('utf8').trim();
  } finally {
    await fs.rm(scratch, { recursive: true, force: true });
  }
}

/**
 * Snapshots the working tree as a tree object and keeps it under `ref`; null when the project is in
 * no git repository or git fails (a turn never fails for want of a snapshot). With `createOnly`, an
 * existing ref wins and its object is returned instead.
 */
async function snapshotInto(projectRoot: string, ref: string, createOnly: boolean): Promise<string | null> {
  try {
    const place = await repoPlace(projectRoot);
    if (place === null) return null;
    const tree = await writeWorkingTree(projectRoot, place);
    const created = await git(projectRoot, ['update-ref', ref, tree, ...(createOnly ? [''] : [])]).then(
      () => true,
      () => false,
    );
    if (created) return tree;
    return createOnly ? readRef(projectRoot, ref) : null;
  } catch {
    return null;
  }
}

function readRef(projectRoot: string, ref: string): Promise<string | null> {
  return git(projectRoot, ['rev-parse', '--verify', '--quiet', ref]).then(
    (out) => out.toString('utf8').trim() || null,
    () => null,
  );
}

function turnRefKey(goalId: string, turnInstanceId: string): string {
  return createHash('sha256').update(`${goalId}\0${turnInstanceId}`).digest('hex').slice(0, 40);
}

/** The base a turn recorded when it started, or null. */
export async function turnBase(projectRoot: string, goalId: string, turnInstanceId: string): Promise<string | null> {
  if ((await repoPlace(projectRoot)) === null) return null;
  return readRef(projectRoot, `${TURN_BASE_REFS}/${turnRefKey(goalId, turnInstanceId)}`);
}

/**
 * At a turn's start: snapshots the working tree as the turn's base, unless the turn has one already
 * (a resumed or retried turn, or a concurrent start, keeps the base of its first start: the ref is
 * created only if absent). Returns the base, or null.
 */
export function recordTurnBase(projectRoot: string, goalId: string, turnInstanceId: string): Promise<string | null> {
  return snapshotInto(projectRoot, `${TURN_BASE_REFS}/${turnRefKey(goalId, turnInstanceId)}`, true);
}

/**
 * At a turn's writeback: snapshots the head and pairs it with the turn's base, with the files that
 * differ. Null when the turn has no base (no git, or it started before snapshots existed).
 */
export async function recordTurnHead(
  projectRoot: string,
  goalId: string,
  turnInstanceId: string,
  excluded: readonly string[] = [],
): Promise<RunSnapshot | null> {
  try {
    const base = await turnBase(projectRoot, goalId, turnInstanceId);
    if (base === null) return null;
    const head = await snapshotInto(projectRoot, `${TURN_HEAD_REFS}/${turnRefKey(goalId, turnInstanceId)}`, false);
    if (head === null) return null;
    const changed = await snapshotChanges(projectRoot, base, head, excluded);
    return {
      base,
      head,
      changed: changed.slice(0, RECORDED_CHANGES_MAX),
      ...(changed.length > RECORDED_CHANGES_MAX ? { changed_truncated: true } : {}),
    };
  } catch {
    return null;
  }
}

/** LoopX's own files (`.loopx/`, the goal's state file): never a turn's changes. */
export function isLoopxOwned(relative: string, excluded: ReadonlySet<string>): boolean {
  return relative === '.loopx' || relative.startsWith('.loopx/') || excluded.has(relative);
}

/** The files that differ between two snapshots, project-relative, LoopX's own files (`.loopx/`, `excluded`) left out, sorted. */
export async function snapshotChanges(
  projectRoot: string,
  base: string,
  head: string,
  excluded: readonly string[] = [],
): Promise<SnapshotChange[]> {
  const place = await repoPlace(projectRoot);
  if (place === null) return [];
  // Absolute paths (a goal's state file) are taken relative to the project.
  const skip = new Set(excluded.map((e) => toPosix(path.isAbsolute(e) ? path.relative(projectRoot, e) : e)));
  const out = (await git(projectRoot, ['diff', '--name-status', '--no-renames', '-z', base, head, '--', '.'])).toString(
    'utf8',
  );
  const fields = out.split('\0').filter((f) => f !== '');
  const changes: SnapshotChange[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2) {
    const code = fields[i] ?? '';
    const fromTop = fields[i + 1] ?? '';
    const relative = place.prefix === '' ? fromTop : fromTop.slice(place.prefix.length + 1);
    if (isLoopxOwned(relative, skip)) continue;
    changes.push({ path: relative, status: code === 'A' ? 'added' : code === 'D' ? 'deleted' : 'modified' });
  }
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** A file's bytes in a snapshot, or null when it did not exist there. */
export async function snapshotBlob(projectRoot: string, commit: string, relativePath: string): Promise<Buffer | null> {
  const place = await repoPlace(projectRoot);
  if (place === null) return null;
  const fromTop = place.prefix === '' ? relativePath : `${place.prefix}/${relativePath}`;
  return git(projectRoot, ['cat-file', 'blob', `${commit}:${fromTop}`]).catch(() => null);
}

/** The line ranges (1-based, in the head) a turn's diff of one file added or changed. */
export async function changedLineRanges(
  projectRoot: string,
  base: string,
  head: string,
  relativePath: string,
): Promise<Array<{ start: number; count: number }>> {
  const place = await repoPlace(projectRoot);
  if (place === null) return [];
  const out = (
    await git(projectRoot, ['diff', '-U0', '--no-color', '--no-renames', base, head, '--', relativePath])
  ).toString('utf8');
  const ranges: Array<{ start: number; count: number }> = [];
  for (const match of out.matchAll(/^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/gm)) {
    const count = match[2] === undefined ? 1 : Number(match[2]);
    if (count > 0) ranges.push({ start: Number(match[1]), count });
  }
  return ranges;
}

/** Where a goal's agents work: its registry entry's `repo`, else the registry's project. */
export function snapshotProjectRoot(entry: unknown, homeDir: string, fallback: string): string {
  return resolveRepo(entry, homeDir) ?? fallback;
}
