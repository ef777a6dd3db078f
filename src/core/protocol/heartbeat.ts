import { cliCommands } from '../commands/catalog';
import { SPEND_USAGE_FLAGS, SPEND_USAGE_NOTE, TURN_ID_PLACEHOLDER } from '../quota/spend';
import { LOOPX_CLI_COMMAND } from './cliInvocation';

/**
 * The heartbeat loop of an agent driven by its own scheduler (Codex automation, Claude Code `/loop`,
 * cron): the rules and the CLI steps of one turn. One source for `loopx heartbeat-prompt` (rendered
 * with the goal, the agent and the selected todo) and for the `/loopx-heartbeat` prompt files
 * `slash-commands --install` writes (rendered with placeholders the agent fills).
 */

/** One CLI step of a heartbeat turn, and when it applies. */
export interface HeartbeatStep {
  command: string;
  when?: string;
}

/** Who the steps are for: real values, or the placeholders of an installed prompt. */
export interface HeartbeatSubject {
  goalId: string;
  agentId: string;
  /** The todo the turn works on; null when none was selected (the todo steps are left out). */
  todoId: string | null;
}

/** The placeholders the installed `/loopx-heartbeat` prompt uses in place of a goal, an agent and a todo. */
export const HEARTBEAT_PLACEHOLDERS: HeartbeatSubject = { goalId: '<id>', agentId: '<agent>', todoId: '<todo_id>' };

export { TURN_ID_PLACEHOLDER };

/** The rules above the steps. */
export const HEARTBEAT_RULES: readonly string[] = [
  `- Pick one turn id per trigger (the current UTC time, ISO 8601, e.g. \`2026-12-01T06:00:00Z\`) and write it in place of \`${TURN_ID_PLACEHOLDER}\` in every command below, literally: a variable you export is gone by your next shell call. Reuse the same id on retries of the same trigger.`,
  "- The guard's `user_channel.notify` decides only whether you tell the user something (NOTIFY: one concrete action; DONT_NOTIFY: stay quiet); `must_attempt_work=true` still obliges one bounded step.",
  '- Apply scheduler hints without spending quota; never spend for quiet skips, failed preflights, dry runs or duplicates.',
  '- Two stalled turns in a row: stop and replan instead of repeating the same step.',
];

function cliExists(words: string): boolean {
  return cliCommands().some((c) => c.cli === words);
}

/**
 * The CLI steps of a heartbeat turn, limited to the commands this LoopX has. `cli` is how the agent runs
 * LoopX's CLI, written first in every command: by default `"${LOOPX_CLI:-loopx}"` (in VS Code's terminals the
 * `loopx` on the PATH may be another LoopX; docs/executors.md), or e.g. an absolute path.
 */
export function heartbeatSteps(subject: HeartbeatSubject, cli: string = LOOPX_CLI_COMMAND): HeartbeatStep[] {
  const { goalId, agentId, todoId } = subject;
  const steps: HeartbeatStep[] = [];
  if (cliExists('quota should-run')) {
    steps.push({
      command: `${cli} quota should-run --goal-id ${goalId} --agent-id ${agentId} --turn-instance-id ${TURN_ID_PLACEHOLDER}`,
      when: 'first; stop if should_run is false',
    });
  }
  steps.push({
    command: `${cli} refresh-state --goal-id ${goalId} --classification autonomous_replan --turn-instance-id ${TURN_ID_PLACEHOLDER} --agent-id ${agentId}`,
    when: 'instead of the todo work when effective_action is autonomous_replan_required (two stalled turns): replan the todos, then record the replan; the receipt binds the obligation',
  });
  if (todoId !== null && cliExists('todo complete')) {
    steps.push({
      command: `${cli} todo complete --goal-id ${goalId} --todo-id ${todoId} --evidence "<evidence>" --successor-text "<next todo>" --turn-instance-id ${TURN_ID_PLACEHOLDER} --agent-id ${agentId}`,
      when: 'when the todo is done and work follows; before recording',
    });
  }
  if (cliExists('refresh-state')) {
    steps.push({
      command: `${cli} refresh-state --goal-id ${goalId} --classification <classification> --delivery-batch-scale <scale> --delivery-outcome <outcome> --turn-instance-id ${TURN_ID_PLACEHOLDER} --agent-id ${agentId}`,
      when: 'after the work and its validation (the heartbeat receipt supplies the todo)',
    });
  }
  if (cliExists('quota spend-slot')) {
    steps.push({
      command: `${cli} quota spend-slot --goal-id ${goalId} --slots 1 --source heartbeat --execute --turn-instance-id ${TURN_ID_PLACEHOLDER} --agent-id ${agentId} ${SPEND_USAGE_FLAGS}`,
      when: `exactly once, after recording; ${SPEND_USAGE_NOTE}; a retry with the same turn id replays`,
    });
  }
  if (todoId !== null && cliExists('todo complete')) {
    steps.push({
      command: `${cli} todo complete --goal-id ${goalId} --todo-id ${todoId} --evidence "<evidence>" --no-follow-up --turn-instance-id ${TURN_ID_PLACEHOLDER} --agent-id ${agentId}`,
      when: 'when the todo is done and nothing follows; only after the spend',
    });
  }
  return steps;
}

/** A Markdown code span that a backtick inside the text cannot close early. */
export function codeSpan(text: string): string {
  const clean = text.replace(/\r?\n/g, ' ');
  return clean.includes('`') ? `\`\` ${clean} \`\`` : `\`${clean}\``;
}

/** The `## Heartbeat` section: the rules, then the numbered steps (Markdown lines, no leading blank line). */
export function heartbeatSectionLines(steps: readonly HeartbeatStep[]): string[] {
  const out = ['## Heartbeat', '', ...HEARTBEAT_RULES];
  if (steps.length > 0) {
    out.push('', 'Commands of one turn, in order:', '');
    steps.forEach((step, i) =>
      out.push(`${i + 1}. ${codeSpan(step.command)}${step.when === undefined ? '' : ` (${step.when})`}`),
    );
  }
  return out;
}
