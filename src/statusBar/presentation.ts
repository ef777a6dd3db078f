import * as l10n from '@vscode/l10n';
import type { GoalQuotaSummary } from '../core/ops/quota';

/**
 * What the status-bar quota indicator shows for one goal (pure, so it is tested as data). Each
 * state has its own icon and word; only the limit (and a state that cannot be computed) is shown as
 * an error, and a quiet wait never looks like a failure.
 */

export type IndicatorKind = 'eligible' | 'running' | 'waiting' | 'needs_you' | 'throttled' | 'paused' | 'error';

export interface IndicatorInput {
  goalId: string;
  displayName: string;
  quota: GoalQuotaSummary | undefined;
  openGates: number;
  /** Why the goal's state could not be read, if it could not. */
  error: string | null;
  /** A loop runs on the goal in this window (Run Loop until Stop Loop or its stop condition). */
  loopRunning?: boolean;
  /** Gates of any goal of the workspace past their due time: the escalation shows on the item. */
  overdueGates?: number;
}

export interface IndicatorPresentation {
  kind: IndicatorKind;
  icon: string;
  word: string;
  /** Status-bar text, with the `$(icon)`. */
  text: string;
  background: 'warning' | 'error' | null;
  /** Tooltip lines, plain text (the item escapes them into its MarkdownString). */
  details: string[];
}

const ICONS: Record<IndicatorKind, string> = {
  eligible: 'play-circle',
  running: 'sync~spin',
  waiting: 'watch',
  needs_you: 'bell-dot',
  throttled: 'dashboard',
  paused: 'debug-pause',
  error: 'error',
};

/** The indicator's word in the display language (asked at each call: the bundle is set at activation). */
function indicatorWord(kind: IndicatorKind): string {
  switch (kind) {
    case 'eligible':
      return l10n.t('eligible');
    case 'running':
      return l10n.t('running');
    case 'waiting':
      return l10n.t('waiting');
    case 'needs_you':
      return l10n.t('needs you');
    case 'throttled':
      return l10n.t('throttled');
    case 'paused':
      return l10n.t('paused');
    case 'error':
      return l10n.t('error');
  }
}

export function indicatorKind(input: IndicatorInput): IndicatorKind {
  const quota = input.quota;
  if (input.error !== null || quota === undefined || quota.state === 'blocked_health') return 'error';
  if (quota.state === 'paused') return 'paused';
  if (quota.reserved_slots > 0 || input.loopRunning === true) return 'running';
  if (input.openGates > 0 || quota.state === 'operator_gate') return 'needs_you';
  if (quota.state === 'throttled') return 'throttled';
  if (quota.state === 'eligible') return 'eligible';
  return 'waiting';
}

function money(n: number): string {
  return `$${n.toFixed(2)}`;
}

function compact(n: number): string {
  return n >= 1_000_000 ? `${(n / 1_000_000).toFixed(1)}M` : n >= 1_000 ? `${(n / 1_000).toFixed(1)}k` : String(n);
}

export function presentIndicator(input: IndicatorInput): IndicatorPresentation {
  const kind = indicatorKind(input);
  const icon = ICONS[kind];
  const word = indicatorWord(kind);
  const quota = input.quota;
  const parts = [`$(${icon}) ${input.goalId}`];
  const details: string[] = [];
  if (quota) {
    parts.push(`${quota.spent_slots}/${quota.allowed_slots}`);
    const cost = quota.budgets.max_cost_usd;
    const tokens = quota.budgets.max_tokens;
    if (cost.limit !== null) parts.push(`${money(cost.used)}/${money(cost.limit)}`);
    else if (tokens.limit !== null) parts.push(l10n.t('{0}/{1} tok', compact(tokens.used), compact(tokens.limit)));
    details.push(
      l10n.t('State: {0} ({1}) — {2}', word, quota.state, quota.reason),
      l10n.t(
        'Slots: {0} spent + {1} reserved of {2} in {3} h ({4} left)',
        quota.spent_slots,
        quota.reserved_slots,
        quota.allowed_slots,
        quota.window_hours,
        quota.remaining_slots,
      ),
    );
    if (cost.limit !== null) details.push(l10n.t('Cost: {0} of {1}', money(cost.used), money(cost.limit)));
    if (tokens.limit !== null) details.push(l10n.t('Tokens: {0} of {1}', tokens.used, tokens.limit));
    if (quota.next_slot_frees_at !== null && quota.remaining_slots === 0)
      details.push(l10n.t('Next slot frees at {0}', quota.next_slot_frees_at));
  }
  if (input.openGates > 0)
    details.push(
      input.openGates === 1
        ? l10n.t('1 open gate waits for you')
        : l10n.t('{0} open gates wait for you', input.openGates),
    );
  if (input.error !== null) details.push(l10n.t('Error: {0}', input.error));
  else if (!quota) details.push(l10n.t('Error: the quota could not be computed (see the LoopX log)'));
  parts.push(word);
  const overdue = input.overdueGates ?? 0;
  if (overdue > 0) {
    parts.push(`$(bell-dot) ${l10n.t('{0} overdue', overdue)}`);
    details.push(
      overdue === 1 ? l10n.t('1 gate is past its due time') : l10n.t('{0} gates are past their due time', overdue),
    );
  }
  const background =
    kind === 'error' || quota?.exceeded === true || overdue > 0 ? 'error' : quota?.warn === true ? 'warning' : null;
  return { kind, icon, word, text: parts.join(' · ').replace(' · ', ' '), background, details };
}

/** Least headroom first: the goal at or nearest its limit (largest used share of any limit). */
export function headroomRatio(quota: GoalQuotaSummary | undefined): number {
  if (!quota) return Number.POSITIVE_INFINITY;
  const slotRatio = quota.allowed_slots > 0 ? (quota.spent_slots + quota.reserved_slots) / quota.allowed_slots : 1;
  const budgetRatios = [
    quota.budgets.max_cost_usd.ratio,
    quota.budgets.max_tokens.ratio,
    quota.budgets.max_turn_minutes.ratio,
  ];
  return Math.max(slotRatio, ...budgetRatios.map((r) => r ?? 0));
}

/**
 * The goal the status bar shows when none is selected: paused goals last, then the least headroom
 * (`headroomRatio`, highest first); the first listed wins a tie. One pass, not a sort: it runs at
 * every change of any goal.
 */
export function leastHeadroom<T>(
  goals: readonly T[],
  quotaOf: (goal: T) => GoalQuotaSummary | undefined,
): T | undefined {
  let best: { goal: T; paused: number; ratio: number } | undefined;
  for (const goal of goals) {
    const quota = quotaOf(goal);
    const paused = quota?.state === 'paused' ? 1 : 0;
    const ratio = headroomRatio(quota);
    if (best === undefined || paused < best.paused || (paused === best.paused && ratio > best.ratio))
      best = { goal, paused, ratio };
  }
  return best?.goal;
}
