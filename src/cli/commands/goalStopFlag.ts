import { pauseGoal, type GoalStopFlagResult } from '../../core/ops/pauseGoal';
import { resumeGoal } from '../../core/ops/resumeGoal';
import { operationCommand } from '../operationHandler';

/** `loopx goal pause|resume`: the owner's stop flag; both preview unless `--execute`. */

function stopFlagMarkdown(result: GoalStopFlagResult): string {
  const verb = result.action === 'pause' ? 'Pause' : 'Resume';
  const lines = [
    `# ${verb} goal ${result.goal_id}`,
    '',
    `- Status: \`${result.status_before ?? '(none)'}\` → \`${result.status_after ?? '(none)'}\``,
  ];
  if (!result.changed)
    lines.push(`- Nothing to do: the goal is already ${result.action === 'pause' ? 'paused' : 'not paused'}.`);
  else if (result.dry_run) lines.push('- Preview only; re-run with --execute to write the registry.');
  else lines.push(`- Written and read back: ${result.verified ? 'verified' : 'NOT verified'}.`);
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

export const pauseGoalCommand = operationCommand(pauseGoal, stopFlagMarkdown);
export const resumeGoalCommand = operationCommand(resumeGoal, stopFlagMarkdown);
