import {
  laneList,
  laneMerge,
  laneReject,
  laneRemove,
  type LaneListResult,
  type LaneMergeResult,
  type LaneRejectResult,
  type LaneRemoveResult,
} from '../../core/ops/lanes';
import { operationCommand } from '../operationHandler';

/** `loopx lane list|merge|reject|remove`: a goal's worktree lanes (docs/lanes.md). */

function listMarkdown(result: LaneListResult): string {
  const out = [`# Lanes of ${result.goal_id}`, ''];
  if (result.lanes.length === 0)
    out.push('No lanes: no agent of this goal works in a worktree (agent configure --isolation worktree).');
  for (const lane of result.lanes) {
    out.push(
      `- \`${lane.agent_id}\` on \`${lane.branch}\`: ${lane.ahead} ahead, ${lane.behind} behind ${lane.main_branch ?? 'HEAD'}` +
        `${lane.last_turn === null ? '' : `; last turn ${lane.last_turn}`}` +
        `${lane.merge_gate_todo_id === null ? '' : `; merge gate ${lane.merge_gate_todo_id}`}` +
        `${lane.conflicts.length > 0 ? `; conflicts with main on ${lane.conflicts.join(', ')}` : ''}` +
        `${lane.overlaps_with.length > 0 ? `; overlaps ${lane.overlaps_with.join(', ')}` : ''}`,
    );
  }
  const overlaps = Object.entries(result.overlaps);
  if (overlaps.length > 0) {
    out.push('', '## Files several lanes change', '');
    for (const [file, agents] of overlaps) out.push(`- \`${file}\`: ${agents.join(', ')}`);
  }
  if (result.lease_scope_conflicts.length > 0) {
    out.push('', "## Lanes changing a lease's write scope", '');
    for (const c of result.lease_scope_conflicts)
      out.push(
        `- ${c.lane_agent} changes ${c.files.join(', ')} in \`${c.scope}\`, leased by ${c.owner} (${c.todo_id})`,
      );
  }
  return out.join('\n');
}

function mergeMarkdown(result: LaneMergeResult): string {
  const out = [`# Merge lane ${result.branch}`, '', `- Status: ${result.status}`, `- ${result.message}`];
  if (result.commits.length > 0) {
    out.push('', '## Commits', '');
    for (const c of result.commits)
      out.push(`- ${c.commit.slice(0, 12)} ${c.subject}${c.turn ? ` (LoopX-Turn: ${c.turn})` : ''}`);
  }
  if (result.conflicts.length > 0) out.push('', `Conflicts: ${result.conflicts.join(', ')}`);
  const overlaps = Object.entries(result.overlaps);
  if (overlaps.length > 0)
    out.push('', `Other lanes change: ${overlaps.map(([f, a]) => `${f} (${a.join(', ')})`).join('; ')}`);
  if (result.diff_stat !== '') out.push('', '```', result.diff_stat, '```');
  if (result.dry_run) out.push('', 'Preview only; re-run with --execute to merge.');
  return out.join('\n');
}

function rejectMarkdown(result: LaneRejectResult): string {
  return [
    `# Lane ${result.branch} sent back`,
    '',
    `- Gate: ${result.merge_gate_todo_id ?? '(none open)'}`,
    `- Todo for ${result.agent_id}: ${result.agent_todo_id ?? '(none)'}`,
  ].join('\n');
}

function removeMarkdown(result: LaneRemoveResult): string {
  return [
    `# Remove lane ${result.branch}`,
    '',
    `- ${result.message}`,
    `- Unmerged commits: ${result.unmerged_commits}`,
  ].join('\n');
}

export const laneListCommand = operationCommand(laneList, listMarkdown);
export const laneMergeCommand = operationCommand(laneMerge, mergeMarkdown);
export const laneRejectCommand = operationCommand(laneReject, rejectMarkdown);
export const laneRemoveCommand = operationCommand(laneRemove, removeMarkdown);
