import {
  quotaHistory,
  quotaPlan,
  type QuotaPlanOutput,
  quotaShouldRun,
  quotaSpendSlot,
  quotaStatus,
  quotaVoidSlot,
  type GoalQuotaSummary,
  type QuotaHistoryOutput,
  type QuotaSpendSlotOutput,
  type QuotaStatusOutput,
  type QuotaVoidSlotOutput,
  type ShouldRunDecision,
  type ShouldRunRefusal,
  type SpendSlotResult,
  type VoidSlotResult,
} from '../../core/ops/quota';
import { operationCommand } from '../operationHandler';
import { markdownTable } from '../output';

/**
 * `loopx quota status|should-run|spend-slot|void-slot`: the quota operations, rendered for people.
 * `should-run` and `status` only read; `spend-slot` and `void-slot` preview unless `--execute`.
 * Exit 1 whenever the result says `ok: false`.
 */

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

export const quotaShouldRunCommand = operationCommand(quotaShouldRun, decisionMarkdown);

function decisionMarkdown(decision: ShouldRunDecision | ShouldRunRefusal): string {
  if (!('effective_action' in decision))
    return [
      `# Should ${decision.agent_id ?? 'an agent'} run on ${decision.goal_id || 'this goal'}? No`,
      '',
      `- ${decision.status}: ${decision.reason}`,
      `- Fix: ${decision.recommended_action}`,
    ].join('\n');
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

export const quotaSpendSlotCommand = operationCommand(quotaSpendSlot, (result: QuotaSpendSlotOutput) =>
  spendMarkdown(result.goal_id, result),
);

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

export const quotaVoidSlotCommand = operationCommand(quotaVoidSlot, (result: QuotaVoidSlotOutput) =>
  voidMarkdown(result.goal_id, result),
);

function voidMarkdown(goalId: string, result: VoidSlotResult): string {
  const verb = !result.ok ? 'Nothing voided' : result.dry_run ? 'Preview (nothing written; add --execute)' : 'Voided';
  return [
    `# Quota void on ${goalId}: ${verb}`,
    '',
    `- ${result.reason}`,
    `- Slots: ${result.quota.spent_slots} spent + ${result.quota.reserved_slots} reserved of ${result.quota.allowed_slots}`,
  ].join('\n');
}

/** `quota history`: the window's counted spends, oldest first. */
export const quotaHistoryCommand = operationCommand(quotaHistory, (result: QuotaHistoryOutput) => {
  const lines = [
    `# Spend history of ${result.goal_id}`,
    '',
    `- Window: ${result.window_start} → ${result.window_end} (${result.window_hours} h)`,
    `- Slots: ${result.spent_slots} spent of ${result.allowed_slots} allowed`,
    '',
  ];
  if (result.spends.length === 0) lines.push('No spends in the window.');
  else
    lines.push(
      markdownTable(
        ['When', 'Slots', 'Tokens', 'Cost (USD)', 'Agent', 'Todo'],
        result.spends.map((s) => [
          s.generated_at,
          String(s.slots),
          s.tokens === null ? '' : String(s.tokens),
          s.cost_usd === null ? '' : String(s.cost_usd),
          s.agent_id ?? '',
          s.todo_id ?? '',
        ]),
      ),
    );
  return lines.join('\n');
});

/** `quota plan`: the goals grouped by quota state. */
export const quotaPlanCommand = operationCommand(quotaPlan, (result: QuotaPlanOutput) => {
  const lines = [`# Quota plan (${result.goal_count} goal(s))`, ''];
  lines.push(
    result.next_automatic_turn === null
      ? '- Next automatic turn: none (no eligible goal)'
      : `- Next automatic turn: ${result.next_automatic_turn.goal_id}`,
    '',
  );
  const rows = result.groups.flatMap((g) =>
    g.goals.map((goal) => [g.state, goal.goal_id, `${goal.spent_slots}/${goal.allowed_slots}`, goal.reason]),
  );
  lines.push(rows.length === 0 ? 'No registered goals.' : markdownTable(['State', 'Goal', 'Slots', 'Why'], rows));
  for (const e of result.errors) lines.push(`- ${e.goal_id}: ${e.error}`);
  return lines.join('\n');
});
