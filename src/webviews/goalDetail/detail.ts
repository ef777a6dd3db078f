import type { GoalStatusItem } from '../../core/status/goalStatus';
import type { QuotaHistoryOutput } from '../../core/ops/quota';
import type { EvidenceLogOutput } from '../../core/ops/evidenceLog';
import type { GoalDetail } from './protocol';
import { eventTimeline } from './timeline';

/** The goal-detail payload from the quota history operation and the goal's status item (pure). */
export function goalDetailOf(
  goal: { goalId: string; displayName: string },
  history: QuotaHistoryOutput,
  status: GoalStatusItem | undefined,
  log: EvidenceLogOutput | { error: string } | null = null,
): GoalDetail {
  const budget = (b: QuotaHistoryOutput['budgets']['max_cost_usd']) =>
    b.limit === null ? null : { used: b.used, limit: b.limit };
  const agent = status?.agent_todos;
  const user = status?.user_todos;
  const claimed = (agent?.items ?? []).filter((t) => t.status === 'open' && t.claimed_by !== null).length;
  return {
    goal_id: goal.goalId,
    goal_name: goal.displayName,
    quota: {
      state: history.state,
      reason: history.reason,
      window_start: history.window_start,
      window_end: history.window_end,
      window_hours: history.window_hours,
      allowed_slots: history.allowed_slots,
      spent_slots: history.spent_slots,
      warn: history.warn,
      exceeded: history.exceeded,
      cost: budget(history.budgets.max_cost_usd),
      tokens: budget(history.budgets.max_tokens),
    },
    spends: history.spends.map((s) => ({ at: s.generated_at, slots: s.slots, tokens: s.tokens, cost_usd: s.cost_usd })),
    frontier: {
      open: Math.max(0, (agent?.open_count ?? 0) + (user?.open_count ?? 0) - claimed),
      claimed,
      blocked: (agent?.blocked_count ?? 0) + (user?.blocked_count ?? 0),
      done: (agent?.done_count ?? 0) + (user?.done_count ?? 0),
    },
    runs: (status?.latest_runs ?? []).map((r) => ({
      generated_at: r.generated_at,
      classification: r.classification,
      agent_id: r.agent_id,
      recommended_action: r.recommended_action,
    })),
    timeline:
      log === null || 'error' in log
        ? { log_exists: false, total_events: 0, turns: [], error: log === null ? null : log.error }
        : { log_exists: log.log_exists, total_events: log.total_count, turns: eventTimeline(log.events), error: null },
  };
}
