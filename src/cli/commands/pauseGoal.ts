import type { GoalFlagResult } from '../../core/ops/pauseGoal';
import { pauseGoal, resumeGoal } from '../../core/ops/index';
import { operationCommand } from '../operationHandler';

/** `loopx pause-goal` / `loopx resume-goal`: the owner's stop flag in the registry. */

function flagMarkdown(result: GoalFlagResult): string {
  const verb = result.operation === 'pause' ? 'Paused' : 'Resumed';
  const lines = [`# ${verb} goal ${result.goal_id}`, ''];
  lines.push(`- Status: \`${result.status_before ?? '(none)'}\` → \`${result.status_after ?? '(none)'}\``);
  lines.push(
    result.written
      ? `- Written and read back: ${result.verified ? 'verified' : 'NOT verified'}.`
      : `- Already ${result.stopped ? 'paused' : 'running'}; the registry was not written.`,
  );
  if (result.stopped) lines.push('', 'No turn starts until `loopx resume-goal --goal-id ' + result.goal_id + '`.');
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

export const pauseGoalCommand = operationCommand(pauseGoal, flagMarkdown);
export const resumeGoalCommand = operationCommand(resumeGoal, flagMarkdown);
