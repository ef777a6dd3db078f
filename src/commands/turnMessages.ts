import * as l10n from '@vscode/l10n';
import type { LoopResult, NextStep, NextStepKind, TurnRunResult } from '../core/ops/turn';
import type { RefreshStatePayload } from '../core/ops/refresh';

/**
 * Every message the palette's turn and refresh commands show, built here (without `vscode`) so a
 * unit test can check them all: they are sentences and buttons for people, never command-line
 * flags. What a person can do next with a turn comes from its `next_steps`, shown as buttons.
 * They are in the display language (`@vscode/l10n`, whose bundle the host sets at activation), so each is
 * asked for when shown, never kept in a constant made before activation.
 */

/** The button of a next step. */
export function nextStepButton(kind: NextStepKind): string {
  switch (kind) {
    case 'execute':
      return l10n.t('Run');
    case 'resume':
      return l10n.t('Resume');
    case 'retry':
      return l10n.t('Retry');
  }
}

export const showLogButton = (): string => l10n.t('Show Log');

/** The buttons of a finished turn: its next steps, then the log. */
export function turnButtons(result: TurnRunResult): string[] {
  return [...result.next_steps.map((step) => nextStepButton(step.kind)), showLogButton()];
}

/** The next step a clicked button stands for. */
export function nextStepOfButton(result: TurnRunResult, button: string | undefined): NextStep | undefined {
  return result.next_steps.find((step) => nextStepButton(step.kind) === button);
}

/** A preview that would run the agent offers `execute`. */
export function previewRunsAgent(preview: TurnRunResult): boolean {
  return preview.next_steps.some((step) => step.kind === 'execute');
}

export function noTurnMessage(agentId: string, goalId: string, preview: TurnRunResult): string {
  return l10n.t('LoopX: no turn for {0} on "{1}": {2}', agentId, goalId, preview.message);
}

export function confirmTurnQuestion(agentId: string, goalId: string, preview: TurnRunResult): string {
  return l10n.t('Run one turn of "{0}" on "{1}"?', agentId, preview.todo_title ?? preview.todo_id ?? goalId);
}

export function confirmTurnDetail(preview: TurnRunResult): string {
  return `${preview.message}\n${l10n.t('The turn reserves one quota slot; it is spent only if the result validates.')}`;
}

export function turnProgressTitle(agentId: string, goalId: string, step?: NextStep): string {
  return step?.kind === 'resume'
    ? l10n.t('LoopX: {0} resuming {1}', agentId, goalId)
    : step?.kind === 'retry'
      ? l10n.t('LoopX: {0} retrying {1}', agentId, goalId)
      : l10n.t('LoopX: {0} on {1}', agentId, goalId);
}

export function turnOutcomeMessage(result: TurnRunResult): string {
  return `LoopX: ${result.message}`;
}

export function confirmLoopQuestion(goalId: string, agentIds: readonly string[]): string {
  return l10n.t('Run the loop on "{0}" with {1}?', goalId, agentIds.join(', '));
}

export function confirmLoopDetail(quota: { remaining_slots: number; allowed_slots: number } | undefined): string {
  const detail = l10n.t(
    'Turns run one after another until the goal waits for a person, runs out of runnable todos or budget, or you cancel.',
  );
  if (!quota) return detail;
  return `${detail}\n${l10n.t('Quota: {0} of {1} slots left in the window.', quota.remaining_slots, quota.allowed_slots)}`;
}

export function loopProgressTitle(goalId: string): string {
  return l10n.t('LoopX loop: {0}', goalId);
}

export function loopOutcomeMessage(result: LoopResult): string {
  return result.turn_count === 1
    ? l10n.t('LoopX: 1 turn, {0} spent — stopped: {1}', result.spend_count, result.message)
    : l10n.t('LoopX: {0} turns, {1} spent — stopped: {2}', result.turn_count, result.spend_count, result.message);
}

/** The buttons after a loop: the next steps of its last turn (resume or retry it), then the log. */
export function loopButtons(result: LoopResult): string[] {
  const last = result.turns.at(-1);
  return last === undefined ? [showLogButton()] : turnButtons(last);
}

export function confirmRefreshQuestion(goalId: string, classification: string): string {
  return l10n.t('Record a "{0}" run for "{1}"?', classification, goalId);
}

export function confirmRefreshDetail(nextAction: string): string {
  return nextAction === '' ? l10n.t('The Next Action stays as it is.') : l10n.t('Next Action becomes: {0}', nextAction);
}

export function refreshRecordedMessage(payload: RefreshStatePayload): string {
  return l10n.t('LoopX: recorded a {0} run for "{1}".', payload.classification, payload.goal_id);
}
