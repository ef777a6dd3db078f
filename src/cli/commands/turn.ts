import * as fs from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Command } from 'commander';
import { isLoopxError, LoopxError } from '../../core/errors';
import { DEMO_AGENT_BUNDLE, demoAgentArgv } from '../../core/executors/demoAgent';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry } from '../../core/registry/locate';
import type { TurnEvent } from '../../core/turn/events';
import type { JournalInspection } from '../../core/turn/inspect';
import { turnInspectJournal, turnPlan } from '../../core/ops/turn';
import { operationCommand } from '../operationHandler';
import { RECOVERY_KINDS, type RecoveryKind } from '../../core/turn/journal';
import { runLoop, type LoopResult } from '../../core/turn/loop';
import type { TurnPlan } from '../../core/turn/plan';
import { runOnce, type TurnRunResult } from '../../core/turn/runOnce';
import type { CliContext, CommandOutput, GlobalOptions } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { collect } from './registerAgent';
import { cliHomeDir } from './registry';
import { numericOption } from '../numbers';

/**
 * `loopx turn plan | run-once | loop | inspect-journal`: the LoopX-driven turn (spec §3.3–§3.9).
 * `plan` and `inspect-journal` only read; `run-once` previews unless `--execute`; `loop` runs.
 * Progress events go to stderr, so `--format json` still prints one JSON object on stdout.
 */

/** Core refusals that mean "the arguments are wrong": exit 2. */
const USAGE_CODES = new Set([
  'invalid_goal_id',
  'quota_turn_instance_id_invalid',
  'quota_agent_id_invalid',
  'agent_id_invalid',
]);

async function usageGuard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw isLoopxError(error) && USAGE_CODES.has(error.code)
      ? new LoopxError('usage', error.message, { ...error.details, code: error.code })
      : error;
  }
}

function text(options: Record<string, unknown>, key: string): string | undefined {
  const value = options[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

function goalId(options: Record<string, unknown>): string {
  try {
    return checkGoalIdSegment(String(options['goalId'] ?? ''));
  } catch (error) {
    throw new LoopxError('usage', isLoopxError(error) ? error.message : String(error));
  }
}

function registryPathOf(globals: GlobalOptions, ctx: CliContext): string {
  const located = locateRegistry({
    flag: globals.registry,
    env: ctx.env,
    cwd: ctx.cwd,
    homeDir: cliHomeDir(ctx),
    runtimeRootOverride: globals.runtimeRoot,
  });
  if (!located.exists)
    throw new LoopxError(
      'registry_missing',
      `registry file does not exist: ${located.path}; pass --registry or run loopx bootstrap`,
      { registry: located.path },
    );
  return located.path;
}

function argvOption(options: Record<string, unknown>, key: string, flag: string): string[] | undefined {
  const raw = text(options, key);
  if (raw === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new LoopxError(
      'usage',
      `${flag} must be a JSON array of strings such as '["node","scripts/check.js"]', got ${JSON.stringify(raw)}`,
    );
  }
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string' && v !== '')) {
    throw new LoopxError(
      'usage',
      `${flag} must be a non-empty JSON array of non-empty strings (an argv; LoopX never runs a shell)`,
    );
  }
  return value as string[];
}

function failureKindOption(options: Record<string, unknown>): RecoveryKind | undefined {
  const raw = text(options, 'validationFailureKind');
  if (raw === undefined) return undefined;
  if (!(RECOVERY_KINDS as readonly string[]).includes(raw))
    throw new LoopxError(
      'usage',
      `--validation-failure-kind must be one of ${RECOVERY_KINDS.join(', ')}, got ${JSON.stringify(raw)}`,
    );
  return raw as RecoveryKind;
}

/**
 * How this CLI starts the built-in demo agent: the bundle next to out/cli.js, or, run from source,
 * its entry script under the tsx loader.
 */
export function cliDemoAgentArgv(): string[] | undefined {
  if (fs.existsSync(path.join(__dirname, DEMO_AGENT_BUNDLE))) return demoAgentArgv(__dirname);
  const source = path.resolve(__dirname, '..', '..', 'core', 'executors', 'demoAgentMain.ts');
  if (!fs.existsSync(source)) return undefined;
  try {
    return [process.execPath, '--import', pathToFileURL(require.resolve('tsx')).href, source];
  } catch {
    return undefined;
  }
}

function common(
  options: Record<string, unknown>,
  globals: GlobalOptions,
  ctx: CliContext,
): {
  registryPath: string;
  goalId: string;
  clock: CliContext['clock'];
  homeDir: string;
  runtimeRootOverride: string | undefined;
  hostAdapterCommand: string[] | undefined;
  validationCommand: string[] | undefined;
  availableCapabilities: string[] | undefined;
} {
  const id = goalId(options);
  return {
    registryPath: registryPathOf(globals, ctx),
    goalId: id,
    clock: ctx.clock,
    homeDir: cliHomeDir(ctx),
    runtimeRootOverride: globals.runtimeRoot,
    hostAdapterCommand: argvOption(options, 'hostAdapterCommandJson', '--host-adapter-command-json'),
    validationCommand: argvOption(options, 'validationCommandJson', '--validation-command-json'),
    availableCapabilities: Array.isArray(options['availableCapability'])
      ? (options['availableCapability'] as string[])
      : undefined,
  };
}

function executionOptions(command: Command): Command {
  return command
    .option(
      '--host-adapter-command-json <argv>',
      'run this command (JSON argv) as the agent instead of the registry executor',
    )
    .option(
      '--validation-command-json <argv>',
      "run this validator (JSON argv) instead of the goal's validation_command",
    )
    .option(
      '--validation-failure-kind <kind>',
      `what a failed validation asks for next (${RECOVERY_KINDS.join(', ')}; default repair_required)`,
    )
    .option('--available-capability <name>', 'a capability the agent has (repeatable)', collect, undefined);
}

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

export const turnRunOnceCommand: CliHandler = {
  configure: (command) => {
    executionOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption('--agent-id <id>', 'the registered agent to run')
        .option('--execute', 'run the turn (without it: a preview that invokes and writes nothing)')
        .option('--turn-instance-id <id>', 'the turn instance id (default: a fresh one from the clock)')
        .option('--resume-turn-key <key>', 'resume this turn from its journal (or replay it when it is finished)')
        .option('--retry-failed-turn', 'with --resume-turn-key: retry a failed turn from its last safe phase'),
    );
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> =>
    usageGuard(async () => {
      const args = common(options, globals, ctx);
      const failureKind = failureKindOption(options);
      const result = await withInterrupt(ctx, (signal) =>
        runOnce({
          ...args,
          agentId: String(options['agentId'] ?? ''),
          env: ctx.env,
          execute: options['execute'] === true,
          turnInstanceId: text(options, 'turnInstanceId'),
          resumeTurnKey: text(options, 'resumeTurnKey'),
          retryFailedTurn: options['retryFailedTurn'] === true,
          ...(failureKind !== undefined ? { validationFailureKind: failureKind } : {}),
          signal,
          onEvent: progressSink(ctx),
          demoAgentArgv: cliDemoAgentArgv(),
        }),
      );
      return { ok: result.ok, json: result, markdown: runMarkdown(result) };
    }),
};

export const turnLoopCommand: CliHandler = {
  configure: (command) => {
    executionOptions(
      command
        .requiredOption('--goal-id <id>', 'the goal')
        .requiredOption(
          '--agent-id <id>',
          'a registered agent to run (repeatable: several agents run side by side when the spawn policy allows)',
          collect,
          undefined,
        )
        .option('--max-turns <n>', 'stop after this many turns')
        .option('--cadence-seconds <s>', 'pause between turns (default 0)'),
    );
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> =>
    usageGuard(async () => {
      const args = common(options, globals, ctx);
      const agentIds = Array.isArray(options['agentId']) ? (options['agentId'] as string[]) : [];
      if (agentIds.length === 0) throw new LoopxError('usage', '--agent-id is required');
      const failureKind = failureKindOption(options);
      const result = await withInterrupt(ctx, (signal) =>
        runLoop({
          ...args,
          agentIds,
          env: ctx.env,
          maxTurns: numericOption(options, 'maxTurns', '--max-turns', { integer: true, min: 1 }),
          cadenceSeconds: numericOption(options, 'cadenceSeconds', '--cadence-seconds', { min: 0 }),
          ...(failureKind !== undefined ? { validationFailureKind: failureKind } : {}),
          signal,
          onEvent: progressSink(ctx),
          demoAgentArgv: cliDemoAgentArgv(),
        }),
      );
      return { ok: result.ok, json: result, markdown: loopMarkdown(result) };
    }),
};

export const turnInspectJournalCommand = operationCommand(turnInspectJournal, journalMarkdown);
