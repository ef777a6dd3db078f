import { shellWord } from '../registry/agentIds';
import type { ProjectionWarning, ResolutionAction } from './projection/schemas';
import { todosOrEmpty, type GoalStatusItem, type StatusTodoSummary } from './goalStatus';
import { contractItem, goalItems, type StatusPayload } from './statusPayload';

/** The status payload as Markdown for people (the CLI's default output, the editor's status preview). */
export function statusMarkdown(payload: StatusPayload): string {
  const lines = [
    '# LoopX status',
    '',
    `Registry \`${payload.registry}\`: ${payload.goal_count} goal${payload.goal_count === 1 ? '' : 's'}, ${payload.run_count} run${payload.run_count === 1 ? '' : 's'}` +
      (payload.agent_id !== undefined ? `, seen as agent ${payload.agent_id}` : '') +
      '.',
  ];
  if (payload.goal_count === 0)
    lines.push('', 'No goals yet. Connect one with `loopx bootstrap --project . --goal-id <id> --objective "<text>"`.');
  if (contractItem(payload) !== undefined || payload.contract.warnings.length > 0)
    lines.push('', ...contractMarkdown(payload));
  for (const item of goalItems(payload)) lines.push('', ...goalMarkdown(item));
  return lines.join('\n');
}

/** The contract check: its errors (they fail the status) and warnings. */
function contractMarkdown(payload: StatusPayload): string[] {
  const { errors, warnings } = payload.contract;
  const lines = [errors.length > 0 ? '## Contract check failed' : '## Contract check', ''];
  if (errors.length > 0) lines.push(`- Fix these before advancing goals (${errors.length}):`);
  for (const error of errors) lines.push(`  - ${error}`);
  if (warnings.length > 0) lines.push(`- Warnings (${warnings.length}):`);
  for (const warning of warnings) lines.push(`  - ${warning}`);
  return lines;
}

function goalMarkdown(item: GoalStatusItem): string[] {
  const title = item.display_name !== item.goal_id ? `${item.goal_id} — ${item.display_name}` : item.goal_id;
  const lines = [`## ${title}`, '', `- Waiting on: ${item.waiting_on} (${item.severity}); status ${item.status}`];
  if (!item.active_state.available) {
    lines.push(`- State file: unreadable — ${item.active_state.error?.message ?? 'unknown error'}`);
  } else {
    lines.push(`- Next Action: ${item.active_state_next_action ?? '(none — add one under "## Next Action")'}`);
  }
  if (item.latest_run_recommended_action !== null) {
    lines.push(
      `- Latest run recommends: ${item.latest_run_recommended_action} (${item.latest_run_recommended_action_source ?? ''})`,
    );
  }
  if (item.run_index_unreadable !== undefined)
    lines.push(
      `- Warning: the run index is unreadable, so runs and slot use are unknown — ${item.run_index_unreadable}`,
    );
  if (item.quota !== undefined)
    lines.push(
      item.run_index_unreadable !== undefined
        ? '- Quota: unknown (the run index is unreadable; no turn is admitted until it is fixed)'
        : `- Quota: ${quotaLine(item)}`,
    );
  lines.push(
    `- Agent todos: ${todoCounts(todosOrEmpty(item.agent_todos))}`,
    ...todoItems(todosOrEmpty(item.agent_todos)),
  );
  lines.push(`- User todos: ${todoCounts(todosOrEmpty(item.user_todos))}`, ...todoItems(todosOrEmpty(item.user_todos)));
  if (item.open_gates.length > 0) {
    lines.push('- Open gates:');
    for (const gate of item.open_gates) {
      const holds = gate.blocked_todo_ids.length > 0 ? `; holds back ${gate.blocked_todo_ids.join(', ')}` : '';
      const lane =
        gate.blocks_agent !== null ? ` (agent ${gate.blocks_agent})` : gate.global_gate ? ' (all agents)' : '';
      lines.push(`  - \`${gate.todo_id}\` ${gate.title}${lane}${holds}`);
    }
  }
  const latest = item.latest_runs[0];
  lines.push(
    latest === undefined
      ? '- Latest run: none yet'
      : `- Latest run: ${latest.generated_at ?? '(no time)'} ${latest.classification ?? ''}${latest.agent_id !== null ? ` by ${latest.agent_id}` : ''} (${item.unique_runs} run${item.unique_runs === 1 ? '' : 's'})`,
  );
  if (item.state_diagnostics && item.state_diagnostics.error_count > 0) {
    for (const error of item.state_diagnostics.errors) lines.push(`- State file error: ${error.message}`);
  }
  if (item.projection_warnings.length > 0) {
    lines.push('', '### Warnings', '');
    for (const warning of item.projection_warnings) lines.push(...warningMarkdown(item.goal_id, warning));
  }
  return lines;
}

function quotaLine(item: GoalStatusItem): string {
  const quota = item.quota ?? {};
  const used =
    quota.spent_slots !== undefined && quota.allowed_slots !== undefined
      ? ` — ${quota.spent_slots} of ${quota.allowed_slots} slots used in ${quota.window_hours ?? '?'} h`
      : '';
  return `${quota.state ?? 'unknown'}${used}${quota.reason !== undefined ? ` (${quota.reason})` : ''}`;
}

function todoCounts(todos: StatusTodoSummary): string {
  if (todos.total_count === 0) return 'none';
  const extra = [
    todos.blocked_count > 0 ? `${todos.blocked_count} blocked` : '',
    todos.deferred_count > 0 ? `${todos.deferred_count} deferred` : '',
  ].filter((part) => part !== '');
  return `${todos.open_count} open, ${todos.done_count - todos.deferred_count} done of ${todos.total_count}${extra.length > 0 ? ` (${extra.join(', ')})` : ''}`;
}

/** The first five open todos of the summary's `items` (open ones come first, by priority). */
function todoItems(todos: StatusTodoSummary): string[] {
  return todos.items
    .filter((todo) => !todo.done)
    .slice(0, 5)
    .map(
      (todo) =>
        `  - [${todo.status === 'blocked' ? '!' : ' '}] \`${todo.todo_id}\` ${todo.text}${todo.claimed_by !== null ? ` (claimed by ${todo.claimed_by})` : ''}`,
    );
}

function warningMarkdown(goalId: string, warning: ProjectionWarning): string[] {
  const lines = [`- **${warning.severity}** ${warning.message}`];
  for (const action of warning.actions) {
    const command = resolutionCommand(goalId, action);
    if (command !== null) lines.push(`  - ${command.label}: \`${command.text}\``);
  }
  return lines;
}

function resolutionCommand(goalId: string, action: ResolutionAction): { label: string; text: string } | null {
  const refresh = `loopx refresh-state --goal-id ${shellWord(goalId)} --classification state_refreshed`;
  switch (action.kind) {
    case 'set_next_action':
      return { label: 'make it the Next Action', text: `${refresh} --next-action ${shellWord(action.text)}` };
    case 'refresh_state':
      return { label: 'record a fresh snapshot', text: refresh };
    case 'add_todo':
      return {
        label: `add ${action.role === 'agent' ? 'an agent' : 'a user'} todo`,
        text: `loopx todo add --goal-id ${shellWord(goalId)} --role ${action.role} --text ${shellWord(action.text)}`,
      };
    case 'dismiss':
      return null;
  }
}
