import type { Command } from 'commander';
import { normalizeAgentId } from '../../core/registry/agentIds';
import { isLoopxError, LoopxError } from '../../core/errors';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry } from '../../core/registry/locate';
import { shouldRun, type GoalQuotaSummary, type ShouldRunDecision } from '../../core/scheduling/shouldRun';
import { loadQuotaGoal, type QuotaGoal } from '../../core/quota/goal';
import { checkTurnInstanceId } from '../../core/quota/identity';
import type { TurnUsage } from '../../core/quota/ledger';
import { SPEND_SOURCES, type SpendSource } from '../../core/quota/reservations';
import { quotaStatus, type QuotaStatusOutput } from '../../core/ops/quota';
import { operationCommand } from '../operationHandler';
import { spendSlot, voidSlot, type SpendSlotResult, type VoidSlotResult } from '../../core/quota/spend';
import type { CliContext, CommandOutput, GlobalOptions } from '../context';
import { markdownTable } from '../output';
import type { CliHandler } from './index';
import { collect } from './registerAgent';
import { cliHomeDir } from './registry';
import { numericOption } from '../numbers';

/**
 * `loopx quota status|should-run|spend-slot|void-slot`: the quota guard and its settlement.
 * `should-run` and `status` only read; `spend-slot` and `void-slot` preview unless `--execute`.
 * Exit 1 whenever the result says `ok: false`.
 */

/** Core refusals that mean "the arguments are wrong": exit 2. */
const USAGE_CODES = new Set([
  'invalid_goal_id',
  'quota_turn_instance_id_invalid',
  'quota_settlement_binding_conflict',
  'quota_replan_obligation_id_invalid',
  'quota_slots_invalid',
]);

function asUsage(error: unknown): unknown {
  return isLoopxError(error) && USAGE_CODES.has(error.code)
    ? new LoopxError('usage', error.message, { ...error.details, code: error.code })
    : error;
}

async function usageGuard<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asUsage(error);
  }
}

function text(options: Record<string, unknown>, key: string): string | null {
  const value = options[key];
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
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

interface GoalArgs {
  registryPath: string;
  goalId: string;
  homeDir: string;
  runtimeRootOverride: string | undefined;
}

function goalArgs(options: Record<string, unknown>, globals: GlobalOptions, ctx: CliContext): GoalArgs {
  let goalId: string;
  try {
    goalId = checkGoalIdSegment(String(options['goalId'] ?? ''));
  } catch (error) {
    throw asUsage(error);
  }
  return {
    registryPath: registryPathOf(globals, ctx),
    goalId,
    homeDir: cliHomeDir(ctx),
    runtimeRootOverride: globals.runtimeRoot,
  };
}

function agentOption(options: Record<string, unknown>): string | null {
  const raw = text(options, 'agentId');
  if (raw === null) return null;
  return normalizeAgentId(raw) ?? raw;
}

function turnOption(options: Record<string, unknown>): string | null {
  const raw = text(options, 'turnInstanceId');
  if (raw === null) return null;
  try {
    return checkTurnInstanceId(raw);
  } catch (error) {
    throw asUsage(error);
  }
}

async function decisionFor(
  args: GoalArgs,
  agentId: string | null,
  ctx: CliContext,
  extra: { availableCapabilities?: string[]; turnInstanceId?: string } = {},
): Promise<ShouldRunDecision> {
  return shouldRun({ ...args, agentId, clock: ctx.clock, ...extra });
}

async function loadGoal(args: GoalArgs): Promise<QuotaGoal> {
  return loadQuotaGoal(args);
}

// ---------------------------------------------------------------------------------------------

/** `quota status`: the quota status operation. */
export const quotaStatusCommand = operationCommand(quotaStatus, (result: QuotaStatusOutput) =>
  statusMarkdown(result, result.reservations.length),
);

function budgetCell(b: GoalQuotaSummary['budgets']['max_cost_usd']): string {
  if (b.limit === null) return `${b.used} (no limit)`;
  return `${b.used}${b.reserved > 0 ? ` + ${b.reserved} reserved` : ''} of ${b.limit} (${Math.round((b.ratio ?? 0) * 100)}%)${b.estimated ? ', estimated' : ''}`;
}

function statusMarkdown(summary: GoalQuotaSummary, reservationCount: number): string {
  const flag = summary.exceeded ? ' — limit reached' : summary.warn ? ' — near the limit' : '';
  const lines = [
    `# Quota of ${summary.goal_id}`,
    '',
    `- State: **${summary.state}**${flag}: ${summary.reason}`,
    `- Slots: ${summary.spent_slots} spent + ${summary.reserved_slots} reserved of ${summary.allowed_slots} in the last ${summary.window_hours} h (${summary.remaining_slots} left; compute ${summary.compute})`,
  ];
  if (summary.next_slot_frees_at !== null && summary.remaining_slots === 0)
    lines.push(`- Next slot frees at ${summary.next_slot_frees_at}`);
  if (reservationCount > 0) lines.push(`- Turns in flight: ${reservationCount}`);
  lines.push(
    '',
    markdownTable(
      ['Budget', 'Used'],
      [
        ['Cost (USD)', budgetCell(summary.budgets.max_cost_usd)],
        ['Tokens', budgetCell(summary.budgets.max_tokens)],
        ['Turn minutes', budgetCell(summary.budgets.max_turn_minutes)],
      ],
    ),
  );
  if (summary.config_warnings.length > 0) {
    lines.push('', '## Config warnings', '', ...summary.config_warnings.map((w) => `- ${w.field}: ${w.message}`));
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

export const quotaShouldRunCommand: CliHandler = {
  configure: (command: Command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal to decide for')
      .option('--agent-id <id>', 'the registered agent asking (omit for an unscoped decision)')
      .option('--available-capability <name>', 'a capability this agent has (repeatable)', collect, undefined)
      .option('--turn-instance-id <id>', 'the turn id; the decision then names the settlement identity');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const args = goalArgs(options, globals, ctx);
    const extra: { availableCapabilities?: string[]; turnInstanceId?: string } = {};
    const capabilities = options['availableCapability'];
    if (Array.isArray(capabilities))
      extra.availableCapabilities = capabilities
        .flatMap((c) => String(c).split(','))
        .map((c) => c.trim())
        .filter((c) => c !== '');
    const turn = turnOption(options);
    if (turn !== null) extra.turnInstanceId = turn;
    const decision = await usageGuard(() => decisionFor(args, agentOption(options), ctx, extra));
    return { ok: decision.ok, json: decision, markdown: decisionMarkdown(decision) };
  },
};

function decisionMarkdown(decision: ShouldRunDecision): string {
  const lines = [
    `# Should ${decision.agent_id ?? 'an agent'} run on ${decision.goal_id}? ${decision.should_run ? 'Yes' : 'No'}`,
    '',
    `- Decision: ${decision.decision} (${decision.effective_action}), route ${decision.route}`,
    `- State: ${decision.state}: ${decision.reason}`,
  ];
  if (decision.quota !== null)
    lines.push(
      `- Slots: ${decision.quota.spent_slots} spent + ${decision.quota.reserved_slots} reserved of ${decision.quota.allowed_slots}`,
    );
  if (decision.selected_todo !== null)
    lines.push(`- Todo: ${decision.selected_todo.todo_id} — ${decision.selected_todo.title}`);
  for (const action of decision.interaction_contract.user_channel.actions) lines.push(`- Needs you: ${action}`);
  if (!decision.should_run && decision.ok && decision.interaction_contract.user_channel.actions.length === 0)
    lines.push('', 'Nothing to do now: this is a quiet wait, not a failure.');
  for (const command of decision.interaction_contract.cli_channel.settlement_plan)
    lines.push('', 'After the work is validated and recorded:', '', `    ${command}`);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------

function bindingOptions(command: Command): Command {
  return command
    .requiredOption('--goal-id <id>', 'the goal')
    .option('--agent-id <id>', 'the registered agent of the turn')
    .option('--todo-id <id>', 'the todo the turn worked on')
    .option('--turn-instance-id <id>', 'the turn id (reuse it on retries: the spend is written once per turn)')
    .option('--execute', 'write (default: preview only)');
}

export const quotaSpendSlotCommand: CliHandler = {
  configure: (command: Command) => {
    bindingOptions(command)
      .option('--slots <n>', 'slots to spend (default 1: one turn)')
      .option('--source <source>', `${SPEND_SOURCES.join(', ')} (default heartbeat)`)
      .option('--tokens <n>', 'tokens the turn used')
      .option('--cost-usd <n>', 'what the turn cost, in USD')
      .option('--turn-minutes <n>', 'how long the turn took, in minutes')
      .option('--usage-estimated', 'the usage numbers are estimates (e.g. characters / 4)');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const args = goalArgs(options, globals, ctx);
    const source = text(options, 'source') ?? 'heartbeat';
    if (!(SPEND_SOURCES as readonly string[]).includes(source))
      throw new LoopxError(
        'usage',
        `--source must be one of ${SPEND_SOURCES.join(', ')}, got ${JSON.stringify(source)}`,
      );
    const slots = numericOption(options, 'slots', '--slots', { integer: true, min: 1 }) ?? 1;
    const usage: TurnUsage = { estimated: options['usageEstimated'] === true };
    const tokens = numericOption(options, 'tokens', '--tokens', { integer: true, min: 0 });
    const cost = numericOption(options, 'costUsd', '--cost-usd', { min: 0 });
    const minutes = numericOption(options, 'turnMinutes', '--turn-minutes', { min: 0 });
    if (tokens !== undefined) usage.tokens = tokens;
    if (cost !== undefined) usage.cost_usd = cost;
    if (minutes !== undefined) usage.minutes = minutes;
    const agentId = agentOption(options);
    const turn = turnOption(options);
    const result = await usageGuard(async () => {
      const decision = await decisionFor(args, agentId, ctx);
      const spend = await spendSlot(await loadGoal(args), ctx.clock, {
        decision,
        agentId,
        todoId: text(options, 'todoId'),
        turnInstanceId: turn,
        slots,
        source: source as SpendSource,
        execute: options['execute'] === true,
        ...(tokens !== undefined || cost !== undefined || minutes !== undefined ? { usage } : {}),
      });
      return { spend, decision };
    });
    const json = {
      goal_id: args.goalId,
      agent_id: agentId,
      todo_id: text(options, 'todoId'),
      slots,
      source,
      ...result.spend,
      decision: {
        should_run: result.decision.should_run,
        state: result.decision.state,
        effective_action: result.decision.effective_action,
        selected_todo_id: result.decision.selected_todo?.todo_id ?? null,
      },
    };
    return { ok: result.spend.ok, json, markdown: spendMarkdown(args.goalId, result.spend) };
  },
};

function spendMarkdown(goalId: string, spend: SpendSlotResult): string {
  const verb = spend.idempotent_replay
    ? 'Already spent (replay, nothing written)'
    : !spend.ok
      ? 'Not spent'
      : spend.dry_run
        ? 'Preview (nothing written; add --execute)'
        : 'Spent';
  const lines = [`# Quota spend on ${goalId}: ${verb}`, '', `- ${spend.reason}`];
  if (spend.settlement_identity !== null)
    lines.push(`- Settlement identity: \`${spend.settlement_identity.effect_id}\``);
  lines.push(
    `- Slots: ${spend.quota.spent_slots} spent + ${spend.quota.reserved_slots} reserved of ${spend.quota.allowed_slots}`,
  );
  return lines.join('\n');
}

export const quotaVoidSlotCommand: CliHandler = {
  configure: (command: Command) => {
    bindingOptions(command)
      .option('--void-generated-at <time>', 'generated_at of the spend to cancel')
      .option('--reason <text>', 'why the spend is cancelled', 'voided by operator');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const args = goalArgs(options, globals, ctx);
    const agentId = agentOption(options);
    const result = await usageGuard(async () =>
      voidSlot(await loadGoal(args), ctx.clock, {
        agentId,
        todoId: text(options, 'todoId'),
        turnInstanceId: turnOption(options),
        generatedAt: text(options, 'voidGeneratedAt'),
        reason: text(options, 'reason') ?? 'voided by operator',
        execute: options['execute'] === true,
      }),
    );
    return { ok: result.ok, json: { goal_id: args.goalId, ...result }, markdown: voidMarkdown(args.goalId, result) };
  },
};

function voidMarkdown(goalId: string, result: VoidSlotResult): string {
  const verb = !result.ok ? 'Nothing voided' : result.dry_run ? 'Preview (nothing written; add --execute)' : 'Voided';
  return [
    `# Quota void on ${goalId}: ${verb}`,
    '',
    `- ${result.reason}`,
    `- Slots: ${result.quota.spent_slots} spent + ${result.quota.reserved_slots} reserved of ${result.quota.allowed_slots}`,
  ].join('\n');
}
