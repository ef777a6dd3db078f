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

const KIND_TITLES: Record<ProjectionWarning['kind'], string> = {
  next_action_projection_mismatch: 'Latest run recommends something else',
  state_action_projection_mismatch: 'Quota picked other work',
  state_projection_gap: 'Next Action has no backing todo',
  stale_latest_run_projection: 'Latest run is stale',
};

const FIELD_LABELS: Record<string, string> = {
  active_state_next_action: 'Durable Next Action',
  latest_run_recommended_action: "Latest run's recommended action",
  agent_lane_next_action: "Agent lane's action",
  selected_recommended_action: 'Todo quota selected',
  active_state_updated_at: 'State file updated',
  latest_run_generated_at: 'Latest run recorded',
  latest_run_state_updated_at: 'State as the latest run saw it',
};

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
        title: 'State file cannot be read',
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
        title: `State file ${severity === 'error' ? 'error' : 'diagnostic'}${d.line === null ? '' : ` at line ${d.line}`}`,
        message: d.message,
        compared: [],
        actions: [openAction(d.line)],
      });
      targets.set(key, emptyTarget(goal, d.line));
    }
    for (const owed of status.replan_obligations ?? []) {
      const key = `${goal.key}#${owed.obligation.obligation_id}`;
      const lane = owed.agent_id === null ? 'the goal' : `lane ${owed.agent_id}`;
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity: 'warning',
        kind: 'autonomous_replan_required',
        title: `Replan required: ${lane} stalled`,
        message: `${owed.obligation.triggers[0]?.text ?? 'the lane stalled'}${owed.since === null ? '' : ` (since ${owed.since})`}. quota should-run answers autonomous_replan_required until a replan result is recorded: ${owed.obligation.recommended_action}.`,
        compared: owed.stalled_runs.map((run, index) => ({
          label: `Stalled turn ${owed.stalled_runs.length - index}${run.turn_instance_id === null ? '' : ` (${run.turn_instance_id})`}`,
          field: 'replan_obligation.stalled_runs',
          value: [run.classification, run.recommended_action].filter(Boolean).join(': ') || null,
          written_at: run.generated_at,
        })),
        actions: [
          {
            kind: 'record_replan',
            label: 'Record replan result',
            detail: `records an autonomous_replan run${owed.agent_id === null ? '' : ` for ${owed.agent_id}`} that discharges ${owed.obligation.obligation_id} (replan the todos first)`,
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
        label: FIELD_LABELS[c.field] ?? c.field,
        field: c.field,
        value: c.value,
        written_at: writtenAt(c.field, stateUpdated, latestRunAt),
      }));
      const target: CardTarget = { ...emptyTarget(goal, null), warning, currentNextAction: next };
      const actions: CardAction[] = [];
      for (const action of warning.actions) {
        if (action.kind === 'set_next_action') {
          target.proposedNextAction = action.text;
          actions.push({ kind: 'set_next_action', label: 'Write as Next Action', detail: action.text });
        } else if (action.kind === 'refresh_state') {
          actions.push({ kind: 'refresh_state', label: 'Refresh state', detail: null });
        } else if (action.kind === 'add_todo') {
          target.addTodo = { role: action.role, text: action.text };
          actions.push({ kind: 'add_todo', label: `Add ${action.role} todo`, detail: action.text });
        }
      }
      if (warning.kind === 'next_action_projection_mismatch' && next !== null)
        actions.push({ kind: 'keep_route', label: 'Keep current route', detail: next });
      actions.push(openAction(null));
      cards.push({
        key,
        goal_id: goal.goalId,
        goal_name: goal.displayName,
        severity: warning.severity,
        kind: warning.kind,
        title: KIND_TITLES[warning.kind],
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
  return { kind: 'open_state', label: 'Open state file', detail: line === null ? null : `line ${line}` };
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
