import { refreshState, type RefreshStatePayload } from '../../core/ops/refresh';
import { operationCommand } from '../operationHandler';

/**
 * `loopx refresh-state`: records a snapshot run of a goal's state and, with `--next-action`,
 * rewrites the durable route first (goal scope only). `--dry-run` writes nothing and shows what
 * would change.
 */
export const refreshStateCommand = operationCommand(refreshState, refreshMarkdown);

function refreshMarkdown(payload: RefreshStatePayload): string {
  const update = payload.active_state_next_action_update;
  const scope = payload.progress_scope === 'agent_lane' ? `agent lane ${payload.agent_lane ?? ''}` : 'goal scope';
  const lines = [
    `# refresh-state: ${payload.goal_id}`,
    '',
    payload.dry_run
      ? `Dry run: nothing was written. The run would be recorded as \`${payload.json_path}\`.`
      : `Recorded run ${payload.generated_at} (${payload.classification}, ${scope}) as \`${payload.json_path}\`.`,
    '',
    `- Recommended action: ${payload.recommended_action} (from ${payload.recommended_action_source})`,
  ];
  if (update !== undefined) {
    const before = update.previous_next_action === null ? '(none)' : `"${update.previous_next_action}"`;
    if (!update.would_update) lines.push(`- Next Action: unchanged ("${update.next_action}")`);
    else if (update.updated)
      lines.push(
        `- Next Action: changed from ${before} to "${update.next_action}"; updated_at set to ${update.updated_at ?? ''}`,
      );
    else lines.push(`- Next Action: would change from ${before} to "${update.next_action}"`);
  } else {
    lines.push(
      `- Next Action: ${payload.state.next_action[0] !== undefined ? `"${payload.state.next_action[0]}"` : '(none)'} (not changed; use --next-action to change it)`,
    );
  }
  lines.push(
    `- State snapshot: sha256_16 ${payload.state.sha256_16}, updated_at ${payload.state.frontmatter['updated_at'] ?? '(none)'}`,
  );
  if (payload.state_projection_gap) lines.push('', `Warning: ${payload.state_projection_gap.message}`);
  return lines.join('\n');
}
