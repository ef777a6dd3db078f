import {
  turnInspectJournal,
  turnLoop,
  turnPlan,
  turnRunOnce,
  type JournalInspection,
  type LoopResult,
  type TurnEvent,
  type TurnPlan,
  type TurnRunResult,
} from '../../core/ops/turn';
import { operationCommand, type EnvironmentScope } from '../operationHandler';
import type { CliContext } from '../context';
import { markdownTable } from '../output';

/**
 * `loopx turn plan | run-once | loop | inspect-journal`: the turn operations, rendered for people.
 * `plan` and `inspect-journal` only read; `run-once` previews unless `--execute`; `loop` runs.
 * Progress events go to stderr, so `--format json` still prints one JSON object on stdout.
 */

/** One line per event for the terminal. */
export function eventLine(event: TurnEvent): string {
  switch (event.type) {
    case 'turn_started':
      return `▶ ${event.agent_id}: ${event.resumed ? 'resuming' : 'turn on'} ${event.todo_id ?? '(no todo)'}${event.todo_title === null ? '' : ` — ${event.todo_title}`}`;
    case 'phase_done':
      return `  ✓ ${event.phase}: ${event.detail}`;
    case 'turn_ended':
      return `■ ${event.agent_id}: ${event.status}${event.spent ? ' (1 slot spent)' : ''} — ${event.summary}`;
    case 'loop_stopped':
      return `⏹ loop stopped (${event.reason}) after ${event.turns} turn(s), ${event.spends} spend(s): ${event.message}`;
  }
}

function progressSink(ctx: CliContext): (event: TurnEvent) => void {
  return (event) => {
    ctx.stderr(`${eventLine(event)}\n`);
  };
}

/** Ctrl+C: the first one stops after the current phase (a running agent is stopped); the handler is removed afterwards. */
async function withInterrupt<T>(ctx: CliContext, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const onInterrupt = (): void => {
    ctx.stderr('loopx: stopping after the current phase (the journal keeps the turn resumable)…\n');
    controller.abort();
  };
  process.once('SIGINT', onInterrupt);
  try {
    return await fn(controller.signal);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}

/** A turn's environment on the terminal: Ctrl+C cancels between phases, progress goes to stderr. */
const interruptibleWithProgress: EnvironmentScope = (ctx, run) =>
  withInterrupt(ctx, (signal) => run({ signal, onEvent: progressSink(ctx) }));

/** The command lines that carry out a turn's next steps. */
export function nextStepCommands(result: TurnRunResult): string[] {
  const base = `loopx turn run-once --goal-id ${result.goal_id} --agent-id ${result.agent_id}`;
  return result.next_steps.map((step) => {
    switch (step.kind) {
      case 'execute':
        return `${base} --execute`;
      case 'resume':
        return `${base} --resume-turn-key ${step.turn_key ?? ''} --execute`;
      case 'retry':
        return `${base} --resume-turn-key ${step.turn_key ?? ''} --retry-failed-turn --execute`;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Markdown

function planMarkdown(plan: TurnPlan): string {
  const lines = [
    `# Turn plan: ${plan.goal_id} / ${plan.agent_id}`,
    '',
    `- Route: **${plan.route}**${plan.would_invoke_host ? ' (would run the agent)' : ''}`,
    `- Decision: ${plan.decision.effective_action} (${plan.decision.state}): ${plan.decision.reason}`,
    `- Todo: ${plan.selected_todo === null ? '(none)' : `\`${plan.selected_todo.todo_id}\` ${plan.selected_todo.title}`}`,
    `- Turn: \`${plan.turn_instance_id}\`, key \`${plan.turn_key}\``,
    `- Settlement: ${plan.settlement_identity === null ? '(no turn, nothing to settle)' : `\`${plan.settlement_identity.effect_id}\``}`,
    `- Agent: ${plan.executor === null ? '(no executor configured)' : `${plan.executor.kind}, stopped after ${plan.executor.timeout_minutes} min`}; session ${plan.session.action}`,
    `- Validator: ${plan.validation_command === null ? '(none)' : `\`${plan.validation_command.join(' ')}\``}`,
  ];
  if (plan.contract_problems.length > 0)
    lines.push('', '## Problems', '', ...plan.contract_problems.map((p) => `- ${p}`));
  if (plan.skipped_todos.length > 0) {
    lines.push(
      '',
      '## Skipped todos',
      '',
      markdownTable(
        ['Todo', 'Why'],
        plan.skipped_todos.map((s) => [s.todo_id, s.detail === null ? s.reason : `${s.reason}: ${s.detail}`]),
      ),
    );
  }
  if (plan.decision.user_actions.length > 0)
    lines.push('', '## Needs you', '', ...plan.decision.user_actions.map((a) => `- ${a}`));
  return lines.join('\n');
}

function runMarkdown(result: TurnRunResult): string {
  const lines = [`# Turn ${result.status}: ${result.goal_id} / ${result.agent_id}`, '', result.message];
  if (result.todo_id !== null)
    lines.push('', `- Todo: \`${result.todo_id}\`${result.todo_title === null ? '' : ` ${result.todo_title}`}`);
  if (result.turn_key !== null) lines.push(`- Turn key: \`${result.turn_key}\``);
  if (result.settlement_identity !== null)
    lines.push(`- Settlement: \`${result.settlement_identity.effect_id}\` (${result.quota_slot_spend_count} spend)`);
  if (result.summary !== null && result.status !== 'failed') lines.push(`- Agent: ${result.summary}`);
  if (result.validation !== null) lines.push(`- Validation: ${result.validation.status} — ${result.validation.reason}`);
  if (result.receipt !== null)
    lines.push(
      `- Phases: ${result.receipt.completed_phases.join(' → ') || '(none)'}${result.receipt.failed_phase === null ? '' : `, failed at ${result.receipt.failed_phase}`}`,
    );
  if (result.failure !== null && result.failure.output_excerpt !== '')
    lines.push('', '```text', result.failure.output_excerpt, '```');
  const next = nextStepCommands(result);
  if (next.length > 0) lines.push('', 'Next:', '', ...next.map((command) => `    ${command}`));
  if (result.plan !== null && result.status === 'preview' && result.plan.host_request !== null) {
    lines.push(
      '',
      '## Host request that would be sent',
      '',
      '```json',
      JSON.stringify(result.plan.host_request, null, 2),
      '```',
    );
  }
  return lines.join('\n');
}

function loopMarkdown(result: LoopResult): string {
  const lines = [
    `# Loop stopped: ${result.stop_reason}`,
    '',
    result.message,
    '',
    `- Goal: ${result.goal_id}; agents: ${result.agent_ids.join(', ')} (at most ${result.max_concurrent_turns} turn(s) at once)`,
    `- Turns: ${result.turn_count}; spends: ${result.spend_count}`,
  ];
  if (result.turns.length > 0) {
    lines.push(
      '',
      markdownTable(
        ['Agent', 'Todo', 'Status', 'Result', 'Spent'],
        result.turns.map((t) => [
          t.agent_id,
          t.todo_id ?? '',
          t.status,
          t.result_kind ?? '',
          t.effects.quota_spent ? 'yes' : 'no',
        ]),
      ),
    );
  }
  return lines.join('\n');
}

function journalMarkdown(inspection: JournalInspection): string {
  if (inspection.journal !== null) {
    return [
      `# Turn journal ${inspection.journal.turn_key}`,
      '',
      '```json',
      JSON.stringify(inspection.journal, null, 2),
      '```',
    ].join('\n');
  }
  if (inspection.turns.length === 0)
    return `# Turn journals of ${inspection.goal_id}\n\nNo turn has run for this goal yet.`;
  return [
    `# Turn journals of ${inspection.goal_id}`,
    '',
    markdownTable(
      ['Turn key', 'Agent', 'Todo', 'Status', 'Result', 'Phases', 'Updated'],
      inspection.turns.map((t) => [
        `\`${t.turn_key.slice(0, 19)}…\``,
        t.agent_id,
        t.todo_id ?? '',
        t.status,
        t.result_kind ?? '',
        String(t.completed_phases.length),
        t.updated_at,
      ]),
    ),
  ].join('\n');
}

// ---------------------------------------------------------------------------------------------
// Handlers

export const turnPlanCommand = operationCommand(turnPlan, planMarkdown);

export const turnRunOnceCommand = operationCommand(turnRunOnce, runMarkdown, interruptibleWithProgress);

export const turnLoopCommand = operationCommand(turnLoop, loopMarkdown, interruptibleWithProgress);

export const turnInspectJournalCommand = operationCommand(turnInspectJournal, journalMarkdown);
