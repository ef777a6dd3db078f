import type { GoalStatusItem } from '../goalStatusSchema';
import { handoffReadiness, longTaskCadenceHint } from './handoffReadiness';

/**
 * The item fields the quota's state decides, set when the quota is attached to a projected item (one rule for
 * `loopx status` and `/status.json`): the handoff readiness's `quota_state`, `codex_ready`, `ready` and its
 * should-run source check, and a blocked cadence hint (`blocked`/`wait`) when the quota state blocks.
 */
export function withQuotaSignals(
  item: GoalStatusItem,
  quota: { state?: unknown },
): Pick<GoalStatusItem, 'handoff_readiness' | 'long_task_cadence_hint'> {
  // What the quota decides is recomputed, not carried over.
  const { checks, ready: _ready, codex_ready: _codexReady, quota_state: _quotaState, ...rest } = item.handoff_readiness;
  const state = {
    ...rest,
    checks: {
      project_asset_backed: checks.project_asset_backed,
      same_source_should_run: checks.handoff_has_next_action,
      handoff_has_next_action: checks.handoff_has_next_action,
      handoff_has_stop_condition: checks.handoff_has_stop_condition,
      handoff_sanitized_surface: checks.handoff_sanitized_surface,
    },
  };
  const readiness = handoffReadiness(state, quota, item.waiting_on);
  const blocked = longTaskCadenceHint({
    quotaState: readiness.quota_state,
    userOpenCount: item.user_todos?.open_count ?? null,
    handoff: null,
    latestRuns: [],
  });
  return {
    handoff_readiness: readiness,
    long_task_cadence_hint: blocked.signal === 'blocked' ? blocked : item.long_task_cadence_hint,
  };
}
