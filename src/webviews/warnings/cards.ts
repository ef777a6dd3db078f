import * as l10n from '@vscode/l10n';
import type { GoalStatusItem } from '../../core/status/goalStatus';
import type { ProjectionWarning } from '../../core/status/projection/schemas';
import type { CardAction, ComparedText, WarningCard } from './protocol';

/**
 * The cards of the projection-warnings webview: every drift warning of every goal, plus the state
 * file's diagnostics, with the texts being compared side by side and the actions that resolve each.
 * Pure (no editor API), so the cards are tested as data.
 */

export interface CardGoal {
  /** registry path + goal id, unique across the workspace. */
  key: string;
  goalId: string;
  displayName: string;
  status: GoalStatusItem | undefined;
}

/** What the host needs to run a card's action: resolved from its own model, never from a message. */
export interface CardTarget {
  goalKey: string;
  goalId: string;
  warning: ProjectionWarning | null;
  /** The text `set_next_action` writes, `keep_route` keeps, `add_todo` adds. */
  proposedNextAction: string | null;
  currentNextAction: string | null;
  addTodo: { role: 'agent' | 'user'; text: string } | null;
  /** 1-based line to open the state file at, when known. */
  line: number | null;
  /** The replan obligation `record_replan` discharges, and the lane it is recorded for. */
  replan: { obligationId: string; agentId: string | null } | null;
}

// The card texts are in the display language (`@vscode/l10n`, its bundle set by the host at activation): asked for
// when the cards are built, never kept in a table made at import.
function kindTitle(kind: ProjectionWarning['kind']): string {
  switch (kind) {
    case 'next_action_projection_mismatch':
      return l10n.t('Latest run recommends something else');
    case 'state_action_projection_mismatch':
      return l10n.t('Quota picked other work');
    case 'state_projection_gap':
      return l10n.t('Next Action has no backing todo');
    case 'stale_latest_run_projection':
      return l10n.t('Latest run is stale');
  }
}

function fieldLabel(field: string): string {
  switch (field) {
    case 'active_state_next_action':
      return l10n.t('Durable Next Action');
    case 'latest_run_recommended_action':
      return l10n.t("Latest run's recommended action");
    case 'agent_lane_next_action':
      return l10n.t("Agent lane's action");
    case 'selected_recommended_action':
      return l10n.t('Todo quota selected');
    case 'active_state_updated_at':
      return l10n.t('State file updated');
    case 'latest_run_generated_at':
      return l10n.t('Latest run recorded');
    case 'latest_run_state_updated_at':
      return l10n.t('State as the latest run saw it');
    default:
      return field;
  }
}

export function buildCards(goals: readonly CardGoal[]): { cards: WarningCard[]; targets: Map<string, CardTarget> } {
  const cards: WarningCard[] = [];
  const targets = new Map<string, CardTarget>();
  for (const goal of goals) {
    const status = goal.status;
    if (!status) continue;
    const stateUpdated = status.active_state.updated_at;
    const latestRunAt = status.latest_runs[0]?.generated_at ?? null;
    if (status.active_state.error) {
      const key = `${goal.key}#state-error`;
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity: 'error',
        kind: 'state_file_error',
        title: l10n.t('State file cannot be read'),
        message: status.active_state.error.message,
        compared: [],
        actions: [openAction(null)],
      });
      targets.set(key, emptyTarget(goal, null));
    }
    for (const [index, diagnostic] of [
      ...(status.state_diagnostics?.errors ?? []).map((d) => ['error', d] as const),
      ...(status.state_diagnostics?.warnings ?? []).map((d) => ['warning', d] as const),
    ].entries()) {
      const [severity, d] = diagnostic;
      const key = `${goal.key}#diagnostic-${index}`;
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity,
        kind: `state_diagnostic:${d.kind}`,
        title:
          d.line === null
            ? severity === 'error'
              ? l10n.t('State file error')
              : l10n.t('State file diagnostic')
            : severity === 'error'
              ? l10n.t('State file error at line {0}', d.line)
              : l10n.t('State file diagnostic at line {0}', d.line),
        message: d.message,
        compared: [],
        actions: [openAction(d.line)],
      });
      targets.set(key, emptyTarget(goal, d.line));
    }
    for (const owed of status.replan_obligations ?? []) {
      const key = `${goal.key}#${owed.obligation.obligation_id}`;
      const lane = owed.agent_id === null ? l10n.t('the goal') : l10n.t('lane {0}', owed.agent_id);
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity: 'warning',
        kind: 'autonomous_replan_required',
        title: l10n.t('Replan required: {0} stalled', lane),
        message: `${owed.obligation.triggers[0]?.text ?? l10n.t('the lane stalled')}${owed.since === null ? '' : ` ${l10n.t('(since {0})', owed.since)}`}. ${l10n.t('quota should-run answers autonomous_replan_required until a replan result is recorded: {0}.', owed.obligation.recommended_action)}`,
        compared: owed.stalled_runs.map((run, index) => ({
          label: `${l10n.t('Stalled turn {0}', owed.stalled_runs.length - index)}${run.turn_instance_id === null ? '' : ` (${run.turn_instance_id})`}`,
          field: 'replan_obligation.stalled_runs',
          value: [run.classification, run.recommended_action].filter(Boolean).join(': ') || null,
          written_at: run.generated_at,
        })),
        actions: [
          {
            kind: 'record_replan',
            label: l10n.t('Record replan result'),
            detail:
              owed.agent_id === null
                ? l10n.t(
                    'records an autonomous_replan run that discharges {0} (replan the todos first)',
                    owed.obligation.obligation_id,
                  )
                : l10n.t(
                    'records an autonomous_replan run for {0} that discharges {1} (replan the todos first)',
                    owed.agent_id,
                    owed.obligation.obligation_id,
                  ),
          },
          openAction(null),
        ],
      });
      targets.set(key, {
        ...emptyTarget(goal, null),
        replan: { obligationId: owed.obligation.obligation_id, agentId: owed.agent_id },
      });
    }
    for (const warning of status.projection_warnings) {
      const key = `${goal.key}#${warning.id}`;
      const next = status.active_state_next_action ?? null;
      const compared: ComparedText[] = warning.compared.map((c) => ({
        label: fieldLabel(c.field),
        field: c.field,
        value: c.value,
        written_at: writtenAt(c.field, stateUpdated, latestRunAt),
      }));
      const target: CardTarget = { ...emptyTarget(goal, null), warning, currentNextAction: next };
      const actions: CardAction[] = [];
      for (const action of warning.actions) {
        if (action.kind === 'set_next_action') {
          target.proposedNextAction = action.text;
          actions.push({ kind: 'set_next_action', label: l10n.t('Write as Next Action'), detail: action.text });
        } else if (action.kind === 'refresh_state') {
          actions.push({ kind: 'refresh_state', label: l10n.t('Refresh state'), detail: null });
        } else if (action.kind === 'add_todo') {
          target.addTodo = { role: action.role, text: action.text };
          actions.push({
            kind: 'add_todo',
            label: action.role === 'agent' ? l10n.t('Add agent todo') : l10n.t('Add user todo'),
            detail: action.text,
          });
        }
      }
      if (warning.kind === 'next_action_projection_mismatch' && next !== null)
        actions.push({ kind: 'keep_route', label: l10n.t('Keep current route'), detail: next });
      actions.push(openAction(null));
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity: warning.severity,
        kind: warning.kind,
        title: kindTitle(warning.kind),
        message: warning.message,
        compared,
        actions,
      });
      targets.set(key, target);
    }
  }
  const rank = { error: 0, warning: 1, info: 2 } as const;
  cards.sort((a, b) => rank[a.severity] - rank[b.severity]);
  return { cards, targets };
}

function writtenAt(field: string, stateUpdated: string | null, latestRunAt: string | null): string | null {
  if (field.startsWith('active_state')) return stateUpdated;
  if (field.startsWith('latest_run') || field === 'agent_lane_next_action') return latestRunAt;
  return null;
}

function openAction(line: number | null): CardAction {
  return {
    kind: 'open_state',
    label: l10n.t('Open state file'),
    detail: line === null ? null : l10n.t('line {0}', line),
  };
}

function emptyTarget(goal: CardGoal, line: number | null): CardTarget {
  return {
    goalKey: goal.key,
    goalId: goal.goalId,
    warning: null,
    proposedNextAction: null,
    currentNextAction: null,
    addTodo: null,
    line,
    replan: null,
  };
}
