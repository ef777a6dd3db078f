import { pauseGoal, type GoalStopFlagResult } from '../../core/ops/pauseGoal';
import { resumeGoal } from '../../core/ops/resumeGoal';
import { goalLifecycle, type GoalLifecycleResult } from '../../core/ops/goalLifecycle';
import { operationCommand } from '../operationHandler';

/** `loopx goal pause|resume` and the original's `goal-lifecycle --operation stop|resume`: the owner's stop flag; all preview unless `--execute`. */

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

/** The original's Markdown of a goal activation transition. */
function lifecycleMarkdown(result: GoalLifecycleResult): string {
  return [
    '# Goal Activation',
    '',
    `- ok: \`${String(result.ok)}\``,
    `- goal: \`${result.goal_id}\``,
    `- transition: \`${result.before_state}\` → \`${result.after_state}\``,
    `- dry_run: \`${String(result.dry_run)}\``,
    `- changed: \`${String(result.changed)}\``,
    `- written: \`${String(result.written)}\``,
    `- readback: \`${result.readback.status}\``,
    ...(result.dry_run && result.changed ? ['', 'Preview only; re-run with --execute to write the registry.'] : []),
  ].join('\n');
}

export const goalLifecycleCommand = operationCommand(goalLifecycle, lifecycleMarkdown);
