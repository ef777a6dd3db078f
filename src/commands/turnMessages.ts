import type { LoopResult, NextStep, NextStepKind, TurnRunResult } from '../core/ops/turn';
import type { RefreshStatePayload } from '../core/ops/refresh';

/**
 * Every message the palette's turn and refresh commands show, built here (without `vscode`) so a
 * unit test can check them all: they are sentences and buttons for people, never command-line
 * flags. What a person can do next with a turn comes from its `next_steps`, shown as buttons.
 */

/** The button of each next step. */
export const NEXT_STEP_BUTTONS: Readonly<Record<NextStepKind, string>> = {
  execute: 'Run',
  resume: 'Resume',
  retry: 'Retry',
};

export const SHOW_LOG = 'Show Log';

/** The buttons of a finished turn: its next steps, then the log. */
export function turnButtons(result: TurnRunResult): string[] {
  return [...result.next_steps.map((step) => NEXT_STEP_BUTTONS[step.kind]), SHOW_LOG];
}

/** The next step a clicked button stands for. */
export function nextStepOfButton(result: TurnRunResult, button: string | undefined): NextStep | undefined {
  return result.next_steps.find((step) => NEXT_STEP_BUTTONS[step.kind] === button);
}

/** A preview that would run the agent offers `execute`. */
export function previewRunsAgent(preview: TurnRunResult): boolean {
  return preview.next_steps.some((step) => step.kind === 'execute');
}

export function noTurnMessage(agentId: string, goalId: string, preview: TurnRunResult): string {
  return `LoopX: no turn for ${agentId} on "${goalId}": ${preview.message}`;
}

export function confirmTurnQuestion(agentId: string, goalId: string, preview: TurnRunResult): string {
  return `Run one turn of "${agentId}" on "${preview.todo_title ?? preview.todo_id ?? goalId}"?`;
}

export function confirmTurnDetail(preview: TurnRunResult): string {
  return `${preview.message}\nThe turn reserves one quota slot; it is spent only if the result validates.`;
}

export function turnProgressTitle(agentId: string, goalId: string, step?: NextStep): string {
  const verb = step?.kind === 'resume' ? 'resuming' : step?.kind === 'retry' ? 'retrying' : 'on';
  return `LoopX: ${agentId} ${verb} ${goalId}`;
}

export function turnOutcomeMessage(result: TurnRunResult): string {
  return `LoopX: ${result.message}`;
}

export function confirmLoopQuestion(goalId: string, agentIds: readonly string[]): string {
  return `Run the loop on "${goalId}" with ${agentIds.join(', ')}?`;
}

export function confirmLoopDetail(quota: { remaining_slots: number; allowed_slots: number } | undefined): string {
  return `Turns run one after another until the goal waits for a person, runs out of runnable todos or budget, or you cancel.${quota ? `\nQuota: ${quota.remaining_slots} of ${quota.allowed_slots} slots left in the window.` : ''}`;
}

export function loopProgressTitle(goalId: string): string {
  return `LoopX loop: ${goalId}`;
}

export function loopOutcomeMessage(result: LoopResult): string {
  return `LoopX: ${result.turn_count} turn${result.turn_count === 1 ? '' : 's'}, ${result.spend_count} spent — stopped: ${result.message}`;
}

/** The buttons after a loop: the next steps of its last turn (resume or retry it), then the log. */
export function loopButtons(result: LoopResult): string[] {
  const last = result.turns.at(-1);
  return last === undefined ? [SHOW_LOG] : turnButtons(last);
}

export function confirmRefreshQuestion(goalId: string, classification: string): string {
  return `Record a "${classification}" run for "${goalId}"?`;
}

export function confirmRefreshDetail(nextAction: string): string {
  return nextAction === '' ? 'The Next Action stays as it is.' : `Next Action becomes: ${nextAction}`;
}

export function refreshRecordedMessage(payload: RefreshStatePayload): string {
  return `LoopX: recorded a ${payload.classification} run for "${payload.goal_id}".`;
}
