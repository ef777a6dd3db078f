import { archiveRuntime, type ArchiveRuntimeOutput } from '../../core/ops/archiveRuntime';
import { operationCommand } from '../operationHandler';

/** `loopx archive-runtime`: moves a goal's runtime folder aside; a dry run unless --execute. */

function archiveMarkdown(result: ArchiveRuntimeOutput): string {
  if (!result.ok) return `# LoopX archive-runtime\n\nNot archived: ${result.error}\n`;
  const lines = [
    `# LoopX archive-runtime${result.dry_run ? ' (dry run)' : ''}`,
    '',
    `- Goal: \`${result.goal_id}\` (${result.registry_member === null ? 'registry not readable' : result.registry_member ? 'registered' : 'not in the registry'})`,
    `- From: \`${result.source}\``,
    `- ${result.archived ? 'Moved to' : 'Would move to'}: \`${result.archive_path}\``,
    `- Checks: ${result.checks.join(', ')}`,
  ];
  if (result.dry_run) lines.push('', 'Nothing was moved. Run again with `--execute` to move it.');
  return lines.join('\n');
}

export const archiveRuntimeCommand = operationCommand(archiveRuntime, archiveMarkdown);
