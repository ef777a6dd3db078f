import { evidenceLog, type EvidenceLogOutput } from '../../core/ops/evidenceLog';
import { operationCommand } from '../operationHandler';
import { markdownTable } from '../output';

/** `evidence-log`: the goal's rollout events, oldest first. */
export const evidenceLogCommand = operationCommand(evidenceLog, (result: EvidenceLogOutput) => {
  const lines = [
    `# Evidence log of ${result.goal_id}`,
    '',
    `- Events: ${result.matched_count} matching of ${result.total_count}${result.truncated ? ` (newest ${result.events.length} shown)` : ''}`,
  ];
  if (result.skipped_lines.length > 0)
    lines.push(`- Skipped lines: ${result.skipped_lines.map((s) => `${s.line} (${s.reason})`).join('; ')}`);
  lines.push('');
  if (result.events.length === 0)
    lines.push(result.log_exists ? 'No matching events.' : 'The goal has no event log yet.');
  else
    lines.push(
      markdownTable(
        ['When', 'Kind', 'Agent', 'Turn', 'Todo', 'Status', 'Summary'],
        result.events.map((e) => [
          e.recorded_at ?? '',
          e.event_kind,
          e.agent_id ?? '',
          e.run_id ?? '',
          e.todo_id ?? '',
          e.status ?? '',
          e.summary ?? '',
        ]),
      ),
    );
  return lines.join('\n');
});
