import * as fs from 'node:fs';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { agentProfileForGoal, type GoalRecord } from '../registry/agentIds';
import { LANE_MARKER_FILE, LANE_MARKER_SCHEMA, type LaneMarker } from '../registry/laneMarker';
import { git, gitEnvironment, runGit } from './git';

/**
 * Lanes (docs/lanes.md): an agent whose profile says `isolation: "worktree"` works in a git worktree
 * of its own, `<runtime root>/lanes/<goal>/<agent>`, on the branch `loopx/<goal>/<agent>`, created
 * on its first turn and kept across turns. The registry, the state file and the runtime stay in the
 * main checkout: a marker in the worktree's private git folder (`loopx-lane.json`, never in the tree,
 * so never committed) names them, and `loopx` run anywhere in the worktree finds the main registry
 * through it. Each validated turn is one commit on the branch with the trailer `LoopX-Turn:
 * <settlement id>`; a failed or voided turn resets the worktree to the commit before it.
 */

export const ISOLATION_MODES = ['shared', 'worktree'] as const;
export type IsolationMode = (typeof ISOLATION_MODES)[number];

/** The commit trailer naming the turn (its settlement effect id). */
export const TURN_TRAILER = 'LoopX-Turn';

/** The agent's `coordination.agent_profiles.<agent>.isolation`: `shared` (the default) or `worktree`. */
export function laneIsolationOf(goal: GoalRecord, agentId: string): IsolationMode {
  const value = agentProfileForGoal(goal, agentId)?.['isolation'];
  if (value === undefined || value === null || value === 'shared') return 'shared';
  if (value === 'worktree') return 'worktree';
  throw new LoopxError(
    'executor_config_invalid',
    `coordination.agent_profiles.${agentId}.isolation is ${JSON.stringify(value)}; use "worktree" or "shared" (loopx agent configure --isolation)`,
    { field: `coordination.agent_profiles.${agentId}.isolation`, value },
  );
}

/**
 * Where one lane lives and what it belongs to: a handle built from the goal as resolved (its registry
 * and runtime root; `laneRef`) or from the lane's marker on disk (`lanesOnDisk`), never a lookup.
 */
export interface LaneRef {
  goalId: string;
  agentId: string;
  branch: string;
  /** `<runtime root>/lanes/<goal>/<agent>`. */
  worktree: string;
  /** The runtime root the lane lives under (`lanesRootOf`). */
  runtimeRoot: string;
  /** The main checkout (the goal's repo). */
  projectRoot: string;
  registryPath: string;
}

export function laneBranchName(goalId: string, agentId: string): string {
  return `loopx/${goalId}/${agentId}`;
}

/** The folder holding a goal's lanes: outside the goal's runtime folder, which an archive moves. */
export function lanesRootOf(runtimeRoot: string, goalId: string): string {
  return path.join(runtimeRoot, 'lanes', goalId);
}

export function laneRef(input: {
  goalId: string;
  agentId: string;
  runtimeRoot: string;
  projectRoot: string;
  registryPath: string;
}): LaneRef {
  return {
    goalId: input.goalId,
    agentId: input.agentId,
    branch: laneBranchName(input.goalId, input.agentId),
    worktree: path.join(lanesRootOf(input.runtimeRoot, input.goalId), input.agentId),
    runtimeRoot: input.runtimeRoot,
    projectRoot: input.projectRoot,
    registryPath: input.registryPath,
  };
}

/** The top folder of the main checkout, or `lane_not_git_repository`. */
async function mainTopLevel(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<string> {
  const top = await runGit(['rev-parse', '--show-toplevel'], ref.projectRoot, env);
  const head = top.code === 0 ? await runGit(['rev-parse', '--verify', '-q', 'HEAD'], ref.projectRoot, env) : null;
  if (top.code !== 0 || head === null || head.code !== 0)
    throw new LoopxError(
      'lane_not_git_repository',
      `agent ${ref.agentId} runs in a worktree lane (isolation "worktree"), but ${ref.projectRoot} is not a git repository with a commit; run git init and commit, or set --isolation shared`,
      { project_root: ref.projectRoot, agent_id: ref.agentId },
    );
  return top.stdout.trim();
}

function isWorktreeFolder(folder: string): boolean {
  try {
    return fs.statSync(path.join(folder, '.git')).isFile();
  } catch {
    return false;
  }
}

async function branchExists(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<boolean> {
  const run = await runGit(['rev-parse', '--verify', '-q', `refs/heads/${ref.branch}`], ref.projectRoot, env);
  return run.code === 0;
}

/** The worktree's private git folder (`<common>/worktrees/<name>`). */
export async function laneGitDir(worktree: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return (await git(['rev-parse', '--absolute-git-dir'], worktree, env)).trim();
}

/**
 * Keeps the main checkout's `git status` and `git add -A` away from lanes inside it (a nested
 * worktree would be added as an embedded repository): one line in the shared `info/exclude`.
 */
async function excludeLanesFromMain(ref: LaneRef, top: string, env: NodeJS.ProcessEnv): Promise<void> {
  const relative = path.relative(top, path.dirname(path.dirname(ref.worktree)));
  if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative)) return;
  const common = path.resolve(
    ref.projectRoot,
    (await git(['rev-parse', '--git-common-dir'], ref.projectRoot, env)).trim(),
  );
  const file = path.join(common, 'info', 'exclude');
  const line = `/${relative.split(path.sep).join('/')}/`;
  const current = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (current.split('\n').includes(line)) return;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.appendFileSync(
    file,
    `${current === '' || current.endsWith('\n') ? '' : '\n'}# LoopX lanes (docs/lanes.md)\n${line}\n`,
  );
}

/**
 * The lane's worktree, created on first use (`git worktree add`, the branch from the main checkout's
 * HEAD, or the existing branch), checked when it exists: it must be a worktree on the lane's branch.
 */
export async function ensureLane(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<{ created: boolean }> {
  const top = await mainTopLevel(ref, env);
  let created = false;
  if (isWorktreeFolder(ref.worktree)) {
    const head = await runGit(['symbolic-ref', '-q', '--short', 'HEAD'], ref.worktree, env);
    if (head.code !== 0 || head.stdout.trim() !== ref.branch)
      throw new LoopxError(
        'lane_state_invalid',
        `the lane worktree ${ref.worktree} is not on its branch ${ref.branch} (HEAD: ${head.stdout.trim() || 'detached'}); check out ${ref.branch} there, or remove the lane (loopx lane remove) to start it again`,
        { worktree: ref.worktree, branch: ref.branch },
      );
  } else {
    if (fs.existsSync(ref.worktree)) {
      if (fs.readdirSync(ref.worktree).length > 0)
        throw new LoopxError(
          'lane_state_invalid',
          `${ref.worktree} exists and is not a git worktree; move it away so LoopX can create agent ${ref.agentId}'s lane there`,
          { worktree: ref.worktree },
        );
      fs.rmdirSync(ref.worktree);
    }
    fs.mkdirSync(lanesRootOf(ref.runtimeRoot, ref.goalId), { recursive: true });
    // A worktree folder deleted by hand leaves its registration behind; prune it so the add succeeds.
    await git(['worktree', 'prune'], ref.projectRoot, env);
    if (await branchExists(ref, env)) await git(['worktree', 'add', ref.worktree, ref.branch], ref.projectRoot, env);
    else await git(['worktree', 'add', '-b', ref.branch, ref.worktree, 'HEAD'], ref.projectRoot, env);
    created = true;
  }
  await excludeLanesFromMain(ref, top, env);
  const marker: LaneMarker = {
    schema_version: LANE_MARKER_SCHEMA,
    goal_id: ref.goalId,
    agent_id: ref.agentId,
    branch: ref.branch,
    registry_path: ref.registryPath,
    project_root: ref.projectRoot,
  };
  const markerFile = path.join(await laneGitDir(ref.worktree, env), LANE_MARKER_FILE);
  const text = `${JSON.stringify(marker, null, 2)}\n`;
  if (!fs.existsSync(markerFile) || fs.readFileSync(markerFile, 'utf8') !== text) fs.writeFileSync(markerFile, text);
  return { created };
}

/** The commit the lane's branch points at. */
export async function laneHead(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return (await git(['rev-parse', 'HEAD'], ref.worktree, env)).trim();
}

/** The `LoopX-Turn` trailer of the lane's newest commit, or null. */
async function headTrailer(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<string | null> {
  const out = await git(['log', '-1', `--format=%(trailers:key=${TURN_TRAILER},valueonly)`], ref.worktree, env);
  const value = out.trim().split('\n')[0]?.trim() ?? '';
  return value === '' ? null : value;
}

/**
 * Brings the worktree back to its branch's commit: what a killed turn left (uncommitted edits,
 * untracked files, a stale `index.lock` of a killed git) is removed. Ignored files stay (`git clean
 * -fd`, without `-x`): a lane's installed dependencies survive turns.
 */
async function cleanWorktree(ref: LaneRef, target: string, env: NodeJS.ProcessEnv): Promise<void> {
  const gitDir = await laneGitDir(ref.worktree, env);
  // Only this lane's one turn at a time uses the worktree (the agent's turn lock), so a lock left here is a killed git's.
  fs.rmSync(path.join(gitDir, 'index.lock'), { force: true });
  await git(['reset', '-q', '--hard', target], ref.worktree, env);
  await git(['clean', '-q', '-fd'], ref.worktree, env);
}

/**
 * Before the agent runs: the lane exists and is clean at its branch's commit, which is returned (the
 * commit a failed turn goes back to).
 */
export async function prepareLaneTurn(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  await ensureLane(ref, env);
  await cleanWorktree(ref, 'HEAD', env);
  return laneHead(ref, env);
}

export interface LaneCommit {
  /** The turn's commit, or null when the turn changed no file. */
  commit: string | null;
  /** The branch's commit after the turn. */
  head: string;
}

/** The lane's files as the turn left them (for the run record's `changed_files` cross-check). */
export async function laneWorkingChanges(ref: LaneRef, env: NodeJS.ProcessEnv = process.env): Promise<string[]> {
  const out = await git(['status', '--porcelain', '-z', '--untracked-files=all'], ref.worktree, env);
  return out
    .split('\0')
    .filter((entry) => entry.length > 3)
    .map((entry) => entry.slice(3));
}

async function identityEnv(ref: LaneRef, env: NodeJS.ProcessEnv): Promise<Record<string, string>> {
  const author = { GIT_AUTHOR_NAME: `${ref.agentId} (LoopX)`, GIT_AUTHOR_EMAIL: `${ref.agentId}@loopx.invalid` };
  const email = await runGit(['config', 'user.email'], ref.worktree, env);
  return email.code === 0 && email.stdout.trim() !== ''
    ? author
    : { ...author, GIT_COMMITTER_NAME: 'LoopX', GIT_COMMITTER_EMAIL: 'loopx@loopx.invalid' };
}

/**
 * Commits the validated turn's changes on the lane's branch with the trailer `LoopX-Turn: <effectId>`.
 * Idempotent per turn: a resumed turn finds its commit at the branch's head and commits nothing again.
 */
export async function commitLaneTurn(
  ref: LaneRef,
  turn: { effectId: string; summary: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<LaneCommit> {
  if ((await headTrailer(ref, env)) === turn.effectId) {
    const head = await laneHead(ref, env);
    return { commit: head, head };
  }
  await git(['add', '-A'], ref.worktree, env);
  const staged = await runGit(['diff', '--cached', '--quiet'], ref.worktree, env);
  if (staged.code === 0) {
    const head = await laneHead(ref, env);
    return { commit: null, head };
  }
  const subject = `${ref.agentId}: ${turn.summary.replace(/\s+/g, ' ').trim()}`.slice(0, 72);
  const commitEnv = gitEnvironment(env, await identityEnv(ref, env));
  await git(
    [
      '-c',
      'commit.gpgsign=false',
      'commit',
      '-q',
      '--no-verify',
      '-m',
      subject,
      '-m',
      `${TURN_TRAILER}: ${turn.effectId}`,
    ],
    ref.worktree,
    commitEnv,
  );
  const head = await laneHead(ref, env);
  return { commit: head, head };
}

/**
 * A failed or voided turn: the worktree goes back to the commit before the turn (the turn's own commit,
 * found by its trailer at the head, is undone too). Nothing outside the lane's worktree is touched.
 */
export async function resetLaneTurn(
  ref: LaneRef,
  effectId: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string> {
  if (!isWorktreeFolder(ref.worktree)) return '';
  const own = (await headTrailer(ref, env)) === effectId;
  await cleanWorktree(ref, own ? 'HEAD^' : 'HEAD', env);
  return laneHead(ref, env);
}

/** The lane recorded with a run: `lane: {branch, worktree, commit}` (commit null when the turn changed nothing). */
export interface LaneRunField {
  branch: string;
  worktree: string;
  commit: string | null;
}

export { findLaneMarker, LANE_MARKER_FILE, type LaneMarker } from '../registry/laneMarker';
