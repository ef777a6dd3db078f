import { z } from 'zod';
import { LoopxError } from '../errors';
import { ensureMergeGate, noteMergeGate, openMergeGate, resolveMergeGate } from '../lanes/gate';
import { git, lines, runGit } from '../lanes/git';
import { findLaneMarker, laneIsolationOf, laneRef, type LaneRef } from '../lanes/lane';
import {
  inWriteScope,
  laneConflicts,
  laneDiff,
  laneOverlaps,
  laneStatus,
  MERGE_STRATEGIES,
  mergeLane,
  mergeMainIntoLane,
  type LaneStatus,
} from '../lanes/merge';
import { leaseFiles, readLeaseSync } from '../leases/store';
import { leaseIsActive, normalizeWriteScopes } from '../leases/rules';
import { registeredAgentsForGoal } from '../registry/agentIds';
import { formatLocalIsoSeconds } from '../runtime/time';
import { parseStateDocument } from '../state/document';
import { readGoalStateFile } from '../goal/reads';
import type { OperationContext } from '../state/todos';
import { agentIdArg, goalIdArg } from './common';
import { requireStatePath, resolveGoal, type ResolvedGoal } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';

/**
 * Lanes (docs/lanes.md): `lane list` shows each worktree lane of a goal (branch, ahead/behind, last
 * turn, pending merge, files it changes, overlaps with other lanes and with leases' write scopes);
 * `lane merge` approves a lane's merge gate by merging its branch (a person's decision: refused inside
 * an agent's turn); `lane reject` sends it back with a note; `lane remove` prunes a lane's worktree.
 */

export { MERGE_STRATEGIES, type MergeStrategy } from '../lanes/merge';
export { mergeGateLaneOf } from '../lanes/gate';

function projectRootOf(goal: ResolvedGoal): string {
  const repo = goal.rawEntry['repo'];
  return typeof repo === 'string' && repo.trim() !== '' ? repo : goal.projectRoot;
}

function refOf(goal: ResolvedGoal, agentId: string): LaneRef {
  return laneRef({
    goalId: goal.goalId,
    agentId,
    runtimeRoot: goal.runtimeRoot,
    projectRoot: projectRootOf(goal),
    registryPath: goal.registryPath,
  });
}

/** The agents with a lane: those configured with `isolation: "worktree"`, and any with a lane branch left. */
async function laneAgents(goal: ResolvedGoal, env: NodeJS.ProcessEnv): Promise<string[]> {
  const agents = new Set<string>();
  for (const agent of registeredAgentsForGoal(goal.rawEntry)) {
    try {
      if (laneIsolationOf(goal.rawEntry, agent) === 'worktree') agents.add(agent);
    } catch {
      // an invalid isolation value: the turn reports it
    }
  }
  const refs = await runGit(
    ['for-each-ref', '--format=%(refname:short)', `refs/heads/loopx/${goal.goalId}/`],
    projectRootOf(goal),
    env,
  );
  if (refs.code === 0)
    for (const branch of lines(refs.stdout)) agents.add(branch.slice(`loopx/${goal.goalId}/`.length));
  return [...agents].sort();
}

function context(goal: ResolvedGoal, env: OperationEnvironment): OperationContext {
  const roster = registeredAgentsForGoal(goal.rawEntry);
  return {
    now: formatLocalIsoSeconds(env.clock.now()),
    goalId: goal.goalId,
    roster: roster.length > 0 ? roster : null,
  };
}

/** Merging and rejecting are a person's decisions: never from inside an agent's turn or lane. */
function requireHuman(env: OperationEnvironment, what: string): void {
  const inTurn = env.env['LOOPX_TURN_KEY'] !== undefined || env.env['LOOPX_LANE_WORKTREE'] !== undefined;
  if (inTurn || findLaneMarker(env.cwd) !== null)
    throw new LoopxError(
      'lane_human_only',
      `${what} is a person's decision and is refused inside an agent's turn or lane; a person runs it from the main checkout or the editor`,
      {},
    );
}

export interface LeaseScopeConflict {
  todo_id: string;
  owner: string;
  scope: string;
  /** The lane (another agent than the lease's owner) whose pending changes fall in the scope. */
  lane_agent: string;
  files: string[];
}

export interface LaneView extends LaneStatus {
  /** The open merge gate's todo id, or null. */
  merge_gate_todo_id: string | null;
  /** Files a merge into main would conflict on now. */
  conflicts: string[];
  /** Other lanes changing the same files before either is merged. */
  overlaps_with: string[];
}

export interface LaneListResult {
  ok: boolean;
  schema_version: 'loopx_lanes_v0';
  goal_id: string;
  main_checkout: string;
  lanes: LaneView[];
  /** File → the lanes changing it (two or more). */
  overlaps: Record<string, string[]>;
  lease_scope_conflicts: LeaseScopeConflict[];
}

/** Every lane of the goal with what it holds that main lacks. */
export async function listLanes(goal: ResolvedGoal, env: OperationEnvironment): Promise<LaneListResult> {
  const agents = await laneAgents(goal, env.env);
  const statusText = goal.statePath === null ? null : (await readGoalStateFile(goal.statePath)).text;
  const doc = statusText === null ? null : parseStateDocument(statusText);
  const statuses = await Promise.all(agents.map((agent) => laneStatus(refOf(goal, agent), env.env)));
  const overlaps = laneOverlaps(statuses);
  const lanes: LaneView[] = [];
  for (const status of statuses) {
    const ref = refOf(goal, status.agent_id);
    const conflicts = status.ahead > 0 ? await laneConflicts(ref, env.env) : [];
    const overlapsWith = new Set<string>();
    for (const file of status.pending_files)
      for (const agent of overlaps[file] ?? []) if (agent !== status.agent_id) overlapsWith.add(agent);
    lanes.push({
      ...status,
      merge_gate_todo_id: doc === null ? null : (openMergeGate(doc, status.branch)?.todoId ?? null),
      conflicts,
      overlaps_with: [...overlapsWith].sort(),
    });
  }
  return {
    ok: true,
    schema_version: 'loopx_lanes_v0',
    goal_id: goal.goalId,
    main_checkout: projectRootOf(goal),
    lanes,
    overlaps,
    lease_scope_conflicts: leaseScopeConflicts(goal, env, lanes),
  };
}

/** Active leases whose write scope another agent's lane is changing (docs/lanes.md#overlap-control). */
function leaseScopeConflicts(
  goal: ResolvedGoal,
  env: OperationEnvironment,
  lanes: readonly LaneStatus[],
): LeaseScopeConflict[] {
  const conflicts: LeaseScopeConflict[] = [];
  for (const file of leaseFiles(goal)) {
    let lease;
    try {
      lease = readLeaseSync(file);
    } catch {
      continue;
    }
    if (lease === null || !leaseIsActive(lease, env.clock.now())) continue;
    for (const scope of normalizeWriteScopes(lease.write_scopes)) {
      for (const lane of lanes) {
        if (lane.agent_id === lease.owner) continue;
        const files = lane.pending_files.filter((f) => inWriteScope(f, scope));
        if (files.length > 0)
          conflicts.push({
            todo_id: lease.todo_id ?? '',
            owner: lease.owner ?? '',
            scope,
            lane_agent: lane.agent_id,
            files,
          });
      }
    }
  }
  return conflicts;
}

export const laneList = defineOperation({
  key: 'laneList',
  args: z.strictObject({
    goalId: goalIdArg('the goal whose lanes to show'),
  }),
  run: async (args, env): Promise<LaneListResult> => listLanes(await resolveGoal(env, args.goalId), env),
});

export interface LaneMergeResult {
  ok: boolean;
  schema_version: 'loopx_lane_merge_v0';
  goal_id: string;
  agent_id: string;
  branch: string;
  dry_run: boolean;
  /** `preview`, `merged`, `conflict` (aborted: nothing changed), `handed_to_agent`, `merge_in_editor`, `nothing_to_merge`, `refused`. */
  status: 'preview' | 'merged' | 'conflict' | 'handed_to_agent' | 'merge_in_editor' | 'nothing_to_merge' | 'refused';
  strategy: string;
  ahead: number;
  behind: number;
  commits: LaneStatus['commits'];
  pending_files: string[];
  /** `git diff --stat` and the combined diff of the lane against where it left main. */
  diff_stat: string;
  diff: string;
  diff_truncated: boolean;
  conflicts: string[];
  /** Files other lanes change too. */
  overlaps: Record<string, string[]>;
  merge_gate_todo_id: string | null;
  /** After a merge: main's commit before and after. */
  main_before: string | null;
  main_after: string | null;
  fast_forward: boolean;
  /** The todo handed to the lane's agent (a conflict to resolve). */
  agent_todo_id: string | null;
  message: string;
}

/** `lane merge`: the merge gate's approval. */
export const laneMerge = defineOperation({
  key: 'laneMerge',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: agentIdArg('the agent whose lane to merge'),
    strategy: z
      .enum(MERGE_STRATEGIES)
      .default('ff')
      .describe('ff (fast-forward when possible, else a merge commit), no-ff (always a merge commit) or ff-only'),
    handToAgent: z
      .boolean()
      .default(false)
      .describe(
        'on a conflict: merge main into the lane and give its agent a todo to resolve it (nothing in main changes)',
      ),
    resolveInEditor: z
      .boolean()
      .default(false)
      .describe("on a conflict: leave the merge in progress in the main checkout for VS Code's merge editor"),
    execute: z.boolean().default(false).describe('merge (default: preview the diff, conflicts and overlaps only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<LaneMergeResult> => {
    const goal = await resolveGoal(env, args.goalId);
    const ref = refOf(goal, args.agentId);
    const list = await listLanes(goal, env);
    const lane = list.lanes.find((l) => l.agent_id === args.agentId);
    if (lane === undefined || !lane.branch_exists)
      throw new LoopxError(
        'lane_not_found',
        `goal ${goal.goalId} has no lane for agent ${args.agentId} (no branch ${ref.branch}); lanes: ${list.lanes.map((l) => l.agent_id).join(', ') || 'none'}`,
        { goal_id: goal.goalId, agent_id: args.agentId },
      );
    const diff = lane.ahead > 0 ? await laneDiff(ref, env.env) : { diff: '', truncated: false, stat: '' };
    const overlaps = Object.fromEntries(
      Object.entries(list.overlaps).filter(([, agents]) => agents.includes(args.agentId)),
    );
    const result: LaneMergeResult = {
      ok: true,
      schema_version: 'loopx_lane_merge_v0',
      goal_id: goal.goalId,
      agent_id: args.agentId,
      branch: ref.branch,
      dry_run: !args.execute,
      status: 'preview',
      strategy: args.strategy,
      ahead: lane.ahead,
      behind: lane.behind,
      commits: lane.commits,
      pending_files: lane.pending_files,
      diff_stat: diff.stat,
      diff: diff.diff,
      diff_truncated: diff.truncated,
      conflicts: lane.conflicts,
      overlaps,
      merge_gate_todo_id: lane.merge_gate_todo_id,
      main_before: null,
      main_after: null,
      fast_forward: false,
      agent_todo_id: null,
      message:
        lane.ahead === 0
          ? `lane ${ref.branch} has nothing main lacks`
          : `${lane.ahead} commit(s) to merge into ${lane.main_branch ?? 'HEAD'}${lane.conflicts.length > 0 ? `; they conflict on ${lane.conflicts.join(', ')}` : ''}`,
    };
    if (!args.execute) return result;
    requireHuman(env, 'merging a lane');
    const statePath = requireStatePath(goal);
    const gateOptions = { statePath, context: context(goal, env), lock: {} };
    if (lane.ahead === 0) {
      await resolveMergeGate(ref, { ...gateOptions, outcome: 'cancel', evidence: 'nothing left to merge' });
      return { ...result, status: 'nothing_to_merge' };
    }
    if (args.handToAgent) {
      if (lane.conflicts.length === 0)
        return {
          ...result,
          ok: false,
          status: 'refused',
          message: 'the lane merges without conflict; nothing to hand over',
        };
      const files = await mergeMainIntoLane(ref, env.env);
      const handed = await resolveMergeGate(ref, {
        ...gateOptions,
        outcome: 'cancel',
        evidence: `conflict handed to ${args.agentId}: ${files.join(', ')}`,
        agentTodo: `[P1] Resolve the merge conflict of lane ${ref.branch} with main in ${files.join(', ')} (main is merged into your lane with conflict markers; keep both changes' intent)`,
      });
      return {
        ...result,
        status: 'handed_to_agent',
        conflicts: files,
        agent_todo_id: handed.agentTodoId,
        message: `main merged into lane ${ref.branch} with conflict markers in ${files.join(', ')}; todo ${handed.agentTodoId ?? ''} asks ${args.agentId} to resolve them`,
      };
    }
    const merged = await mergeLane(ref, args.strategy, { env: env.env, leaveConflicts: args.resolveInEditor });
    if (merged.status === 'merged') {
      await resolveMergeGate(ref, {
        ...gateOptions,
        outcome: 'approve',
        evidence: `merged ${ref.branch} into main: ${merged.before.slice(0, 12)}..${merged.after.slice(0, 12)} (${merged.fast_forward ? 'fast-forward' : 'merge commit'})`,
      });
      return {
        ...result,
        status: 'merged',
        main_before: merged.before,
        main_after: merged.after,
        fast_forward: merged.fast_forward,
        message: `merged ${lane.ahead} commit(s) of ${ref.branch} into ${lane.main_branch ?? 'HEAD'}`,
      };
    }
    if (merged.status === 'conflict') {
      await noteMergeGate(ref, { ...gateOptions, note: `conflicts with main: ${merged.conflicts.join(', ')}` });
      return {
        ...result,
        ok: false,
        status: args.resolveInEditor ? 'merge_in_editor' : 'conflict',
        conflicts: merged.conflicts,
        message: args.resolveInEditor
          ? `the merge is in progress in ${ref.projectRoot} with conflicts in ${merged.conflicts.join(', ')}: resolve them in the merge editor and commit`
          : `the merge conflicts on ${merged.conflicts.join(', ')}; it was aborted and main is unchanged. Hand it to ${args.agentId} (--hand-to-agent) or resolve it in the editor (--resolve-in-editor)`,
      };
    }
    return { ...result, ok: false, status: 'refused', message: merged.reason };
  },
});

export interface LaneRejectResult {
  ok: boolean;
  schema_version: 'loopx_lane_reject_v0';
  goal_id: string;
  agent_id: string;
  branch: string;
  merge_gate_todo_id: string | null;
  agent_todo_id: string | null;
}

/** `lane reject`: the merge gate is rejected; the branch stays, and the note becomes a todo for the lane's agent. */
export const laneReject = defineOperation({
  key: 'laneReject',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: agentIdArg('the agent whose lane to send back'),
    note: z.string().trim().min(1).max(2000).describe("the reviewer's note: what to change (becomes the agent's todo)"),
  }),
  run: async (args, env): Promise<LaneRejectResult> => {
    requireHuman(env, 'rejecting a lane');
    const goal = await resolveGoal(env, args.goalId);
    const ref = refOf(goal, args.agentId);
    const resolved = await resolveMergeGate(ref, {
      statePath: requireStatePath(goal),
      context: context(goal, env),
      lock: {},
      outcome: 'reject',
      evidence: `review: ${args.note}`,
      agentTodo: `[P1] Rework lane ${ref.branch} after review: ${args.note}`,
    });
    return {
      ok: true,
      schema_version: 'loopx_lane_reject_v0',
      goal_id: goal.goalId,
      agent_id: args.agentId,
      branch: ref.branch,
      merge_gate_todo_id: resolved.gateTodoId,
      agent_todo_id: resolved.agentTodoId,
    };
  },
});

export interface LaneRemoveResult {
  ok: boolean;
  schema_version: 'loopx_lane_remove_v0';
  goal_id: string;
  agent_id: string;
  branch: string;
  worktree: string;
  dry_run: boolean;
  /** Commits on the branch that main lacks (lost with the branch when it is deleted). */
  unmerged_commits: number;
  worktree_removed: boolean;
  branch_deleted: boolean;
  message: string;
}

/** `lane remove`: prunes the lane's worktree; the branch is kept unless asked (and merged, or forced). */
export const laneRemove = defineOperation({
  key: 'laneRemove',
  args: z.strictObject({
    goalId: goalIdArg('the goal'),
    agentId: agentIdArg('the agent whose lane to remove'),
    deleteBranch: z.boolean().default(false).describe('delete the lane branch too (default: keep it)'),
    force: z.boolean().default(false).describe('delete the branch even with commits main lacks'),
    execute: z.boolean().default(false).describe('remove (default: preview only)'),
  }),
  applySwitch: { argument: 'execute', applyWhen: true },
  run: async (args, env): Promise<LaneRemoveResult> => {
    const goal = await resolveGoal(env, args.goalId);
    const ref = refOf(goal, args.agentId);
    return removeLane(goal, ref, env, args);
  },
});

/** Removes one lane's worktree (and its branch when asked); the safety check refuses to drop unmerged commits. */
export async function removeLane(
  goal: ResolvedGoal,
  ref: LaneRef,
  env: OperationEnvironment,
  args: { deleteBranch: boolean; force: boolean; execute: boolean },
): Promise<LaneRemoveResult> {
  const status = await laneStatus(ref, env.env);
  const base: LaneRemoveResult = {
    ok: true,
    schema_version: 'loopx_lane_remove_v0',
    goal_id: goal.goalId,
    agent_id: ref.agentId,
    branch: ref.branch,
    worktree: ref.worktree,
    dry_run: !args.execute,
    unmerged_commits: status.ahead,
    worktree_removed: false,
    branch_deleted: false,
    message: '',
  };
  if (args.deleteBranch && status.ahead > 0 && !args.force)
    return {
      ...base,
      ok: false,
      message: `branch ${ref.branch} has ${status.ahead} commit(s) main lacks; merge them first, keep the branch, or pass --force to delete them`,
    };
  if (!args.execute)
    return {
      ...base,
      message: `would remove ${status.exists ? ref.worktree : 'no worktree'}${args.deleteBranch ? ` and delete ${ref.branch}` : `; ${ref.branch} is kept`}`,
    };
  let worktreeRemoved = false;
  if (status.exists) {
    await git(['worktree', 'remove', '--force', ref.worktree], ref.projectRoot, env.env);
    worktreeRemoved = true;
  }
  await git(['worktree', 'prune'], ref.projectRoot, env.env);
  let branchDeleted = false;
  if (args.deleteBranch && status.branch_exists) {
    await git(['branch', '-D', ref.branch], ref.projectRoot, env.env);
    branchDeleted = true;
    if (goal.statePath !== null)
      await resolveMergeGate(ref, {
        statePath: goal.statePath,
        context: context(goal, env),
        lock: {},
        outcome: 'cancel',
        evidence: 'lane removed with its branch',
      });
  }
  return {
    ...base,
    worktree_removed: worktreeRemoved,
    branch_deleted: branchDeleted,
    message: `${worktreeRemoved ? `removed ${ref.worktree}` : 'no worktree to remove'}; ${branchDeleted ? `deleted ${ref.branch}` : `${ref.branch} kept`}`,
  };
}

/** Re-opens the merge gate of every lane with commits main lacks (after a rejection the agent worked on). */
export async function syncMergeGates(goal: ResolvedGoal, env: OperationEnvironment): Promise<string[]> {
  const statePath = requireStatePath(goal);
  const opened: string[] = [];
  for (const lane of (await listLanes(goal, env)).lanes) {
    if (lane.ahead === 0) continue;
    const gate = await ensureMergeGate(refOf(goal, lane.agent_id), {
      statePath,
      context: context(goal, env),
      lock: { agentId: lane.agent_id },
    });
    if (gate.opened) opened.push(gate.todoId);
  }
  return opened;
}
