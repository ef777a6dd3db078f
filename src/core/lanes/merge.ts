import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { git, gitEnvironment, lines, runGit } from './git';
import { TURN_TRAILER, type LaneRef } from './lane';

/**
 * What a lane holds that the main branch lacks, and merging it back (docs/lanes.md#merging-back):
 * read-only questions (ahead/behind, the files it changes, the combined diff, whether a merge would
 * conflict, computed with `git merge-tree` without touching any working tree), and the merge itself
 * in the main checkout, which never resolves a conflict: a conflicting merge is aborted and reported.
 */

export const MERGE_STRATEGIES = ['ff', 'no-ff', 'ff-only'] as const;
export type MergeStrategy = (typeof MERGE_STRATEGIES)[number];

export interface LaneCommitView {
  commit: string;
  subject: string;
  /** The `LoopX-Turn` trailer (the turn's settlement id), or null for a commit LoopX did not make. */
  turn: string | null;
}

export interface LaneStatus {
  agent_id: string;
  branch: string;
  worktree: string;
  /** Whether the worktree folder exists (a lane not yet started, or removed, has none). */
  exists: boolean;
  /** Whether the branch exists. */
  branch_exists: boolean;
  /** The branch checked out in the main checkout (what a merge goes into), or null when detached. */
  main_branch: string | null;
  head: string | null;
  /** Commits the lane has that main lacks, and main has that the lane lacks. */
  ahead: number;
  behind: number;
  /** The lane's commits main lacks, newest first (at most 50). */
  commits: LaneCommitView[];
  /** Files the lane's commits change against where it left main (`git diff main...lane`). */
  pending_files: string[];
  /** The newest commit's `LoopX-Turn` trailer. */
  last_turn: string | null;
}

async function mainBranch(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<string | null> {
  const run = await runGit(['symbolic-ref', '-q', '--short', 'HEAD'], ref.projectRoot, env);
  return run.code === 0 ? run.stdout.trim() : null;
}

async function branchExists(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<boolean> {
  return (await runGit(['rev-parse', '--verify', '-q', `refs/heads/${ref.branch}`], ref.projectRoot, env)).code === 0;
}

export async function laneStatus(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<LaneStatus> {
  const main = await mainBranch(ref, env);
  const exists = fs.existsSync(path.join(ref.worktree, '.git'));
  const status: LaneStatus = {
    agent_id: ref.agentId,
    branch: ref.branch,
    worktree: ref.worktree,
    exists,
    branch_exists: await branchExists(ref, env),
    main_branch: main,
    head: null,
    ahead: 0,
    behind: 0,
    commits: [],
    pending_files: [],
    last_turn: null,
  };
  if (!status.branch_exists) return status;
  status.head = (await git(['rev-parse', ref.branch], ref.projectRoot, env)).trim();
  const counts = (await git(['rev-list', '--left-right', '--count', `HEAD...${ref.branch}`], ref.projectRoot, env))
    .trim()
    .split(/\s+/);
  status.behind = Number(counts[0] ?? 0);
  status.ahead = Number(counts[1] ?? 0);
  if (status.ahead > 0) {
    const log = await git(
      [
        'log',
        '-50',
        `--format=%H%x1f%s%x1f%(trailers:key=${TURN_TRAILER},valueonly,separator=%x2c)%x1e`,
        `HEAD..${ref.branch}`,
      ],
      ref.projectRoot,
      env,
    );
    status.commits = log
      .split('\x1e')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '')
      .map((entry) => {
        const [commit = '', subject = '', turn = ''] = entry.split('\x1f');
        return { commit, subject, turn: turn.trim() === '' ? null : turn.trim() };
      });
    status.pending_files = lines(await git(['diff', '--name-only', `HEAD...${ref.branch}`], ref.projectRoot, env));
  }
  const trailer = await git(
    ['log', '-1', `--format=%(trailers:key=${TURN_TRAILER},valueonly)`, ref.branch],
    ref.projectRoot,
    env,
  );
  status.last_turn = trailer.trim().split('\n')[0]?.trim() || null;
  return status;
}

/** The lane's combined diff against where it left main (`git diff main...lane`), capped. */
export async function laneDiff(
  ref: LaneRef,
  env: NodeJS.ProcessEnv = process.env,
  maxChars = 200_000,
): Promise<{ diff: string; truncated: boolean; stat: string }> {
  const diff = await git(['diff', '--no-color', `HEAD...${ref.branch}`], ref.projectRoot, env);
  const stat = await git(['diff', '--stat', '--no-color', `HEAD...${ref.branch}`], ref.projectRoot, env);
  return { diff: diff.slice(0, maxChars), truncated: diff.length > maxChars, stat: stat.trimEnd() };
}

/** The files a merge of the lane into main would conflict on (computed in memory: `git merge-tree`). */
export async function laneConflicts(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const run = await runGit(
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', 'HEAD', ref.branch],
    ref.projectRoot,
    env,
  );
  if (run.code === 0) return [];
  if (run.code !== 1)
    throw new LoopxError('lane_git_failed', `git merge-tree failed in ${ref.projectRoot}: ${run.stderr.trim()}`, {
      cwd: ref.projectRoot,
    });
  return [...new Set(lines(run.stdout).slice(1))];
}

export type MergeOutcome =
  | { status: 'merged'; strategy: MergeStrategy; before: string; after: string; fast_forward: boolean }
  | { status: 'conflict'; conflicts: string[] }
  | { status: 'refused'; reason: string };

/**
 * Merges the lane's branch into the branch checked out in the main checkout. A conflict is never
 * resolved: the merge is aborted (the main checkout as it was) and the conflicting files returned.
 * `leaveConflicts` (the person chose to resolve it in the editor's merge editor) keeps the merge in
 * progress instead.
 */
export async function mergeLane(
  ref: LaneRef,
  strategy: MergeStrategy,
  options: { env?: NodeJS.ProcessEnv; leaveConflicts?: boolean; message?: string } = {},
): Promise<MergeOutcome> {
  const env = options.env ?? process.env;
  const main = await mainBranch(ref, env);
  if (main === null) return { status: 'refused', reason: `the main checkout ${ref.projectRoot} is not on a branch` };
  const inProgress = await runGit(['rev-parse', '-q', '--verify', 'MERGE_HEAD'], ref.projectRoot, env);
  if (inProgress.code === 0)
    return {
      status: 'refused',
      reason: `a merge is already in progress in ${ref.projectRoot}; finish or abort it (git merge --abort) first`,
    };
  const before = (await git(['rev-parse', 'HEAD'], ref.projectRoot, env)).trim();
  const identity = await committerFallback(ref, env);
  const run = await runGit(
    [
      '-c',
      'commit.gpgsign=false',
      'merge',
      '--no-edit',
      `--${strategy}`,
      '-m',
      options.message ?? `Merge lane ${ref.branch} (agent ${ref.agentId})`,
      ref.branch,
    ],
    ref.projectRoot,
    gitEnvironment(env, identity),
  );
  if (run.code === 0) {
    const after = (await git(['rev-parse', 'HEAD'], ref.projectRoot, env)).trim();
    const laneTip = (await git(['rev-parse', ref.branch], ref.projectRoot, env)).trim();
    return { status: 'merged', strategy, before, after, fast_forward: after === laneTip };
  }
  const conflicts = lines(await git(['diff', '--name-only', '--diff-filter=U'], ref.projectRoot, env));
  const merging = (await runGit(['rev-parse', '-q', '--verify', 'MERGE_HEAD'], ref.projectRoot, env)).code === 0;
  if (conflicts.length > 0) {
    if (merging && options.leaveConflicts !== true) await git(['merge', '--abort'], ref.projectRoot, env);
    return { status: 'conflict', conflicts };
  }
  if (merging) await git(['merge', '--abort'], ref.projectRoot, env);
  return { status: 'refused', reason: (run.stderr || run.stdout).trim().slice(0, 1000) };
}

/**
 * Hands a conflict to the lane's agent: main is merged INTO the lane (in the lane's worktree, never
 * in the main checkout) and committed with its conflict markers, so the agent's next turn resolves
 * them in its own worktree and the lane then merges back cleanly. Returns the conflicting files.
 */
export async function mergeMainIntoLane(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const main = (await git(['rev-parse', 'HEAD'], ref.projectRoot, env)).trim();
  const identity = {
    ...(await committerFallback(ref, env)),
    GIT_AUTHOR_NAME: 'LoopX',
    GIT_AUTHOR_EMAIL: 'loopx@loopx.invalid',
  };
  const run = await runGit(
    ['-c', 'commit.gpgsign=false', 'merge', '--no-ff', '--no-commit', main],
    ref.worktree,
    gitEnvironment(env, identity),
  );
  const conflicts = lines(await git(['diff', '--name-only', '--diff-filter=U'], ref.worktree, env));
  if (run.code !== 0 && conflicts.length === 0) {
    await runGit(['merge', '--abort'], ref.worktree, env);
    throw new LoopxError('lane_git_failed', `merging main into lane ${ref.branch} failed: ${run.stderr.trim()}`, {
      cwd: ref.worktree,
    });
  }
  await git(['add', '-A'], ref.worktree, env);
  await git(
    [
      '-c',
      'commit.gpgsign=false',
      'commit',
      '-q',
      '--no-verify',
      '-m',
      `Merge main into lane ${ref.branch}: conflicts for ${ref.agentId} to resolve`,
      '-m',
      `Conflicting files: ${conflicts.join(', ') || 'none'}`,
    ],
    ref.worktree,
    gitEnvironment(env, identity),
  );
  return conflicts;
}

async function committerFallback(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const email = await runGit(['config', 'user.email'], ref.projectRoot, env);
  return email.code === 0 && email.stdout.trim() !== ''
    ? {}
    : {
        GIT_COMMITTER_NAME: 'LoopX',
        GIT_COMMITTER_EMAIL: 'loopx@loopx.invalid',
        GIT_AUTHOR_NAME: 'LoopX',
        GIT_AUTHOR_EMAIL: 'loopx@loopx.invalid',
      };
}

/** Files two or more lanes change before either is merged: file → the agents changing it. */
export function laneOverlaps(
  lanes: readonly Pick<LaneStatus, 'agent_id' | 'pending_files'>[],
): Record<string, string[]> {
  const byFile = new Map<string, string[]>();
  for (const lane of lanes)
    for (const file of lane.pending_files) byFile.set(file, [...(byFile.get(file) ?? []), lane.agent_id]);
  const overlaps: Record<string, string[]> = {};
  for (const [file, agents] of [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b)))
    if (agents.length > 1) overlaps[file] = agents;
  return overlaps;
}

/** Whether `file` (repository-relative, `/`-separated) is inside a lease's write scope (a path, a folder, or a glob). */
export function inWriteScope(file: string, scope: string): boolean {
  const normalized = scope.replace(/^\.\//, '').replace(/\\/g, '/');
  if (normalized === '' || normalized === '.' || normalized === '**') return true;
  if (!/[*?]/.test(normalized)) {
    const folder = normalized.endsWith('/') ? normalized : `${normalized}/`;
    return file === normalized.replace(/\/$/, '') || file.startsWith(folder);
  }
  const pattern = normalized
    .split(/(\*\*\/?|\*|\?)/)
    .map((part) =>
      part === '**/' || part === '**'
        ? '(?:.*/)?' + (part === '**' ? '.*' : '')
        : part === '*'
          ? '[^/]*'
          : part === '?'
            ? '[^/]'
            : part.replace(/[.+^${}()|[\]\\]/g, '\\$&'),
    )
    .join('');
  return new RegExp(`^${pattern}$`).test(file);
}
