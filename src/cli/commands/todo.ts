import type { TodoListResult, TodoSchema } from '../../core/ops/resultSchemas';
import type { z } from 'zod';
import { todoAdd, todoClaim, todoComplete, todoDefer, todoList, todoSupersede, todoUpdate } from '../../core/ops/todo';
import type { TodoEditOutput } from '../../core/ops/todoFields';
import { markdownTable } from '../output';
import { operationCommand } from '../operationHandler';

/** `loopx todo add|list|claim|update|complete|supersede|defer`: the todo operations, rendered for people. */

function editMarkdown(result: TodoEditOutput): string {
  const verb = result.operation.replace('todo_', '');
  const lines = [`# todo ${verb}: \`${result.todo_id}\``, ''];
  lines.push(todoLine(result.todo_item));
  if (result.already_exists === true) lines.push('', 'An unfinished todo with this text already exists.');
  if (result.written) lines.push('', `Changed: ${result.changed_fields.join(', ') || 'new todo'}.`);
  else lines.push('', 'Nothing changed; the state file was not written.');
  for (const added of result.added_todos) if (added.todo_id !== result.todo_id) lines.push(`Added: ${todoLine(added)}`);
  if (result.released_todo_ids.length > 0)
    lines.push(`Released: ${result.released_todo_ids.map((id) => `\`${id}\``).join(', ')}.`);
  lines.push('', `${result.written ? 'Written' : 'State file'}: \`${result.state_file}\``);
  return lines.join('\n');
}

function todoLine(todo: z.infer<typeof TodoSchema>): string {
  const claim = todo.claimed_by ? ` (claimed by ${todo.claimed_by})` : '';
  const box = todo.status === 'done' ? 'x' : todo.status === 'deferred' ? '-' : ' ';
  return `- [${box}] \`${todo.todo_id}\` ${todo.text} — ${todo.role}, ${todo.status}${claim}`;
}

function listMarkdown(result: TodoListResult): string {
  const lines = [`# Todos of ${result.goal_id}`, ''];
  if (result.todos.length === 0) lines.push('No todos match.');
  else {
    lines.push(
      markdownTable(
        ['Id', 'Role', 'P', 'Status', 'Claimed by', 'Text', 'Blocked by'],
        result.todos.map((t) => [
          `\`${t.todo_id}\``,
          t.role,
          t.priority ?? '',
          t.status,
          t.claimed_by ?? '',
          t.title,
          t.blocked_by.map((b) => `${b.gate_todo_id} (${b.relation}, ${b.gate_state})`).join(', '),
        ]),
      ),
    );
  }
  if (result.open_gates.length > 0) {
    lines.push('', '## Open gates', '');
    for (const gate of result.open_gates) {
      const holds = gate.blocked_todo_ids.map((id) => `\`${id}\``).join(', ');
      lines.push(`- \`${gate.todo_id}\` ${gate.title}${holds === '' ? '' : ` — holds back ${holds}`}`);
    }
  }
  const { diagnostics } = result;
  if (diagnostics.warning_count + diagnostics.error_count > 0) {
    lines.push('', '## Diagnostics', '');
    for (const d of [...diagnostics.errors, ...diagnostics.warnings])
      lines.push(`- ${d.line === null ? '' : `line ${d.line}: `}${d.kind}: ${d.message}`);
  }
  lines.push('', `State file: \`${result.state_file}\``);
  return lines.join('\n');
}

export const todoAddCommand = operationCommand(todoAdd, editMarkdown);
export const todoListCommand = operationCommand(todoList, listMarkdown);
export const todoClaimCommand = operationCommand(todoClaim, editMarkdown);
export const todoUpdateCommand = operationCommand(todoUpdate, editMarkdown);
export const todoCompleteCommand = operationCommand(todoComplete, editMarkdown);
export const todoSupersedeCommand = operationCommand(todoSupersede, editMarkdown);
export const todoDeferCommand = operationCommand(todoDefer, editMarkdown);
