import { handoffModeSet, handoffModeShow } from '../../core/ops/handoffMode';
import type { HandoffModeSet, HandoffModeShow } from '../../core/leases/handoffMode';
import { operationCommand } from '../operationHandler';

/** `loopx handoff-mode show|set`: a goal's handoff mode, rendered for people. */

function showMarkdown(result: HandoffModeShow): string {
  return [
    `# Handoff mode of ${result.goal_id}: ${result.handoff_mode}`,
    '',
    `- Source: ${result.source === 'frontmatter' ? 'the state file front matter' : result.source === 'registry' ? 'the registry entry' : 'the default (nothing set)'}`,
    `- State file: \`${result.state_file}\``,
  ].join('\n');
}

function setMarkdown(result: HandoffModeSet): string {
  const outcome = !result.changed
    ? 'Already so; nothing was written.'
    : result.written
      ? 'Written to the state file front matter.'
      : 'Preview only: run again with --execute to write it.';
  return [
    `# Handoff mode of ${result.goal_id}: ${result.previous_mode} → ${result.handoff_mode}`,
    '',
    outcome,
    '',
    `- State file: \`${result.state_file}\``,
  ].join('\n');
}

export const handoffModeShowCommand = operationCommand(handoffModeShow, showMarkdown);
export const handoffModeSetCommand = operationCommand(handoffModeSet, setMarkdown);
