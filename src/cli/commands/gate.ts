import { gateInbox, shortDuration, type GateInboxResult } from '../../core/ops/gate';
import { gateSetDue } from '../../core/ops/todo';
import type { TodoEditOutput } from '../../core/ops/todoFields';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/** `loopx gate inbox | set-due`: the open gates of every goal, and a gate's due time. */

function inboxMarkdown(result: GateInboxResult): string {
  const lines = [`# Gate inbox: ${result.gate_count} open gate${result.gate_count === 1 ? '' : 's'}`, ''];
  if (result.overdue_count > 0) lines.push(`${result.overdue_count} overdue.`, '');
  if (result.gates.length === 0) return [...lines, 'No open gate waits for you.'].join('\n');
  lines.push(
    markdownTable(
      ['goal', 'gate', 'title', 'blocked for', 'agent time', 'due'],
      result.gates.map((g) => [
        g.goal_id,
        g.todo_id,
        g.title,
        g.blocked_ms === null ? '?' : shortDuration(g.blocked_ms),
        g.agent_blocked_ms === null ? '?' : shortDuration(g.agent_blocked_ms),
        g.due_at === null ? '' : `${g.due_at}${g.overdue ? ' (overdue)' : ''}`,
      ]),
    ),
  );
  return lines.join('\n');
}

function setDueMarkdown(result: TodoEditOutput): string {
  const due = result.todo_item.metadata['next_due_at'];
  return [
    `# gate set-due: \`${result.todo_id}\``,
    '',
    due === undefined ? 'No due time.' : `Due at ${due}.`,
    '',
    `${result.written ? 'Written' : 'Unchanged'}: \`${result.state_file}\``,
  ].join('\n');
}

export const gateInboxCommand = operationCommand(gateInbox, inboxMarkdown);
export const gateSetDueCommand = operationCommand(gateSetDue, setDueMarkdown);
