import { join } from 'node:path';
import * as vscode from 'vscode';
import { runOperation } from '../core/ops/run';
import {
  turnLoop,
  turnRunOnce,
  type LoopResult,
  type NextStep,
  type TurnEvent,
  type TurnRunResult,
} from '../core/ops/turn';
import type { GoalSummary } from '../core/status/workspaceGoals';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment } from './operationRunner';
import { argumentField, Cancelled, confirm, isStringArray, isTrue, pickGoal } from './pickers';
import {
  confirmLoopDetail,
  confirmLoopQuestion,
  confirmTurnDetail,
  confirmTurnQuestion,
  loopButtons,
  loopOutcomeMessage,
  loopProgressTitle,
  NEXT_STEP_BUTTONS,
  nextStepOfButton,
  noTurnMessage,
  previewRunsAgent,
  SHOW_LOG,
  turnButtons,
  turnOutcomeMessage,
  turnProgressTitle,
} from './turnMessages';

export interface TurnSurfaces {
  model: WorkspaceModel;
  log: vscode.LogOutputChannel;
}

async function pickAgents(goal: GoalSummary, canPickMany: boolean, arg: unknown): Promise<string[]> {
  const given = argumentField(arg, 'agentIds', isStringArray);
  if (given && given.length > 0) return given;
  if (goal.agents.length === 0)
    throw new Error(`Goal "${goal.goalId}" has no registered agents. Run "LoopX: Register Agent…" first.`);
  if (goal.agents.length === 1 && goal.agents[0]) return [goal.agents[0]];
  const items = goal.agents.map((agentId) => ({ label: agentId, picked: !canPickMany || agentId === goal.agents[0] }));
  const picked = canPickMany
    ? await vscode.window.showQuickPick(items, { title: `Agents to run on ${goal.goalId}`, canPickMany: true })
    : await vscode.window
        .showQuickPick(items, { title: `Agent to run on ${goal.goalId}` })
        .then((item) => (item ? [item] : undefined));
  if (!picked || picked.length === 0) throw new Cancelled();
  return picked.map((item) => item.label);
}

/** Progress text and the log, from the driver's typed events. */
function eventSink(
  surfaces: TurnSurfaces,
  _goal: GoalSummary,
  progress: vscode.Progress<{ message?: string }>,
): (event: TurnEvent) => void {
  return (event) => {
    switch (event.type) {
      case 'turn_started':
        progress.report({ message: `${event.agent_id}: ${event.todo_title ?? 'planning'}` });
        surfaces.log.info(
          `turn ${event.turn_key} started: ${event.agent_id} on ${event.todo_id ?? '(no todo)'}${event.resumed ? ' (resumed)' : ''}`,
        );
        break;
      case 'phase_done':
        progress.report({ message: `${event.agent_id}: ${event.phase.replace(/_/g, ' ')} — ${event.detail}` });
        surfaces.log.trace(`turn ${event.turn_key} ${event.phase}: ${event.detail}`);
        break;
      case 'turn_ended':
        surfaces.log.info(
          `turn ${event.turn_key} ended: ${event.status}${event.spent ? ' (1 slot spent)' : ''} — ${event.summary}`,
        );
        // api.onDidEndTurn fires from the status model when the run's record appears, as for any process.
        surfaces.model.scheduleReload();
        break;
      case 'loop_stopped':
        surfaces.log.info(`loop on ${event.goal_id} stopped (${event.reason}): ${event.message}`);
        break;
    }
  };
}

function withCancellableProgress<T>(
  title: string,
  task: (progress: vscode.Progress<{ message?: string }>, signal: AbortSignal) => Promise<T>,
): Thenable<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (progress, token) => {
      const controller = new AbortController();
      token.onCancellationRequested(() => controller.abort());
      return task(progress, controller.signal);
    },
  );
}

/** Runs (or resumes, or retries) one turn with progress; Cancel stops after the current phase. */
async function runTurnWithProgress(
  surfaces: TurnSurfaces,
  goal: GoalSummary,
  agentId: string,
  step?: NextStep,
): Promise<TurnRunResult> {
  return withCancellableProgress(turnProgressTitle(agentId, goal.goalId, step), (progress, signal) =>
    runOperation(
      turnRunOnce,
      {
        goalId: goal.goalId,
        agentId,
        execute: true,
        ...(step?.turn_key === undefined ? {} : { resumeTurnKey: step.turn_key }),
        ...(step?.kind === 'retry' ? { retryFailedTurn: true } : {}),
      },
      { ...editorEnvironment(goal.registryPath, signal), onEvent: eventSink(surfaces, goal, progress) },
    ),
  );
}

/** Shows how a turn ended, with a button per next step (Resume, Retry) that carries it out. */
async function showTurnOutcome(
  surfaces: TurnSurfaces,
  goal: GoalSummary,
  result: TurnRunResult,
  buttons: string[] = turnButtons(result),
  message: string = turnOutcomeMessage(result),
): Promise<void> {
  const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const choice = await show(message, ...buttons);
  if (choice === SHOW_LOG) surfaces.log.show();
  const step = nextStepOfButton(result, choice);
  if (step === undefined) return;
  const next = await runTurnWithProgress(surfaces, goal, result.agent_id, step);
  await surfaces.model.reload();
  await showTurnOutcome(surfaces, goal, next);
}

/** "LoopX: Run One Turn…" — preview the turn (agent, todo), confirm, run it with progress; Cancel stops after the current phase. */
export async function runOneTurnCommand(surfaces: TurnSurfaces, arg: unknown): Promise<TurnRunResult | undefined> {
  const goal = await pickGoal(surfaces.model, arg, 'Run a turn on which goal?');
  const [agentId] = await pickAgents(goal, false, arg);
  if (agentId === undefined) throw new Cancelled();
  const preview = await runOperation(
    turnRunOnce,
    { goalId: goal.goalId, agentId },
    editorEnvironment(goal.registryPath),
    'preview',
  );
  if (!previewRunsAgent(preview)) {
    void vscode.window.showInformationMessage(noTurnMessage(agentId, goal.goalId, preview));
    return undefined;
  }
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      confirmTurnQuestion(agentId, goal.goalId, preview),
      confirmTurnDetail(preview),
      NEXT_STEP_BUTTONS.execute,
    );
  const result = await runTurnWithProgress(surfaces, goal, agentId);
  await surfaces.model.reload();
  void showTurnOutcome(surfaces, goal, result);
  return result;
}

/** "LoopX: Run Loop…" — turns back to back until the goal needs a person, the budget stops it, or Cancel. */
export async function runLoopCommand(surfaces: TurnSurfaces, arg: unknown): Promise<LoopResult> {
  const goal = await pickGoal(surfaces.model, arg, 'Run the loop on which goal?');
  const agentIds = await pickAgents(goal, true, arg);
  const quota = surfaces.model.detailsOf(goal)?.quota;
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(confirmLoopQuestion(goal.goalId, agentIds), confirmLoopDetail(quota), 'Run Loop');
  // Stop Loop (tree, palette) and the progress notification's Cancel both stop it after the current phase.
  const loop = surfaces.model.beginLoop(goal);
  let result: LoopResult;
  try {
    result = await withCancellableProgress(loopProgressTitle(goal.goalId), (progress, signal) =>
      runOperation(
        turnLoop,
        { goalId: goal.goalId, agentId: agentIds },
        {
          ...editorEnvironment(goal.registryPath, AbortSignal.any([signal, loop.signal])),
          onEvent: eventSink(surfaces, goal, progress),
        },
      ),
    );
  } finally {
    loop.end();
  }
  await surfaces.model.reload();
  const last = result.turns.at(-1);
  if (last === undefined) {
    const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(loopOutcomeMessage(result), SHOW_LOG).then((choice) => {
      if (choice === SHOW_LOG) surfaces.log.show();
    });
  } else
    void showTurnOutcome(surfaces, goal, { ...last, ok: result.ok }, loopButtons(result), loopOutcomeMessage(result));
  return result;
}

export function bundleDirOf(context: vscode.ExtensionContext): string {
  return join(context.extensionUri.fsPath, 'out');
}
