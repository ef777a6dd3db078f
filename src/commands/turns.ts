import { agentIdOf, goalForAgentCommand } from './agentSetup';
import { editorErrorText, executorMissingSentence } from '../common/errorWording';
import { paletteCommandId } from '../core/commands/catalog';
import { join, relative, sep } from 'node:path';
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
import { agentTurnSetup, type AgentTurnSetup } from '../core/ops/host';
import type { GoalSummary } from '../core/ops/goalRows';
import { languageModelUnavailable, type LanguageModelUnavailable } from '../lm/languageModelExecutor';
import { reviewChangesButton, type TurnReviews, type TurnReviewSummary } from '../review/turnReview';
import type { TurnTerminal, TurnTerminals } from '../terminal/turnTerminal';
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
  nextStepButton,
  nextStepOfButton,
  noTurnMessage,
  previewRunsAgent,
  showLogButton,
  turnButtons,
  turnOutcomeMessage,
  turnProgressTitle,
} from './turnMessages';

export interface TurnSurfaces {
  model: WorkspaceModel;
  log: vscode.LogOutputChannel;
  /** Where each run's output streams live. */
  terminals: TurnTerminals;
  /** The pre-turn snapshots behind "Review Changes". */
  reviews: TurnReviews;
  /** The extension's language-model consent (`context.languageModelAccessInformation`). */
  lmAccess?: vscode.LanguageModelAccessInformation;
}

/** A run that did not start because its language-model agent cannot run: a clean stop, not a failure. */
export interface TurnNotStarted {
  ok: true;
  status: 'not_started';
  reason: LanguageModelUnavailable['reason'];
  agent_id: string;
  message: string;
}

/** What Run One Turn / Run Loop hand back besides the operation's result: the review of the changed files. */
export interface Reviewed {
  review?: TurnReviewSummary | undefined;
}

async function pickAgents(goal: GoalSummary, canPickMany: boolean, arg: unknown): Promise<string[]> {
  const given = argumentField(arg, 'agentIds', isStringArray);
  if (given && given.length > 0) return given;
  const fromNode = agentIdOf(arg);
  if (fromNode !== undefined) return [fromNode];
  if (goal.agents.length === 0)
    throw new Error(
      vscode.l10n.t('Goal "{0}" has no registered agents. Run "LoopX: Register Agent…" first.', goal.goalId),
    );
  if (goal.agents.length === 1 && goal.agents[0]) return [goal.agents[0]];
  const items = goal.agents.map((agentId) => ({ label: agentId, picked: !canPickMany || agentId === goal.agents[0] }));
  const picked = canPickMany
    ? await vscode.window.showQuickPick(items, {
        title: vscode.l10n.t('Agents to run on {0}', goal.goalId),
        canPickMany: true,
      })
    : await vscode.window
        .showQuickPick(items, { title: vscode.l10n.t('Agent to run on {0}', goal.goalId) })
        .then((item) => (item ? [item] : undefined));
  if (!picked || picked.length === 0) throw new Cancelled();
  return picked.map((item) => item.label);
}

/** Progress text and the log, from the driver's typed events. */
function eventSink(
  surfaces: TurnSurfaces,
  terminal: TurnTerminal,
  progress: vscode.Progress<{ message?: string }>,
): (event: TurnEvent) => void {
  return (event) => {
    terminal.event(event);
    switch (event.type) {
      case 'turn_started':
        progress.report({ message: `${event.agent_id}: ${event.todo_title ?? vscode.l10n.t('planning')}` });
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

/** How a run's agents work: the setup of each, read before anything is reserved. */
async function setupOf(goal: GoalSummary, agentId: string): Promise<AgentTurnSetup> {
  return agentTurnSetup(editorEnvironment(goal.registryPath), goal.goalId, agentId);
}

/**
 * A language-model agent with no model (or whose model the user declined) stops the run before it
 * starts, with a clear status: no slot reserved, no failed turn recorded.
 */
async function refusedLanguageModel(
  surfaces: TurnSurfaces,
  setups: readonly { agentId: string; setup: AgentTurnSetup }[],
): Promise<TurnNotStarted | undefined> {
  for (const { agentId, setup } of setups) {
    const unavailable = await languageModelUnavailable(setup.executor, agentId, surfaces.lmAccess);
    if (unavailable === undefined) continue;
    surfaces.log.info(`no turn started for ${agentId}: ${unavailable.message}`);
    void vscode.window.showInformationMessage(`LoopX: ${unavailable.message}`);
    return {
      ok: true,
      status: 'not_started',
      reason: unavailable.reason,
      agent_id: agentId,
      message: unavailable.message,
    };
  }
  return undefined;
}

/** The run's terminal and every way to stop it: the progress notification, the terminal, Stop Loop (tree). */
async function watched<T>(
  surfaces: TurnSurfaces,
  goal: GoalSummary,
  agentIds: readonly string[],
  title: string,
  task: (env: {
    signal: AbortSignal;
    terminal: TurnTerminal;
    progress: vscode.Progress<{ message?: string }>;
  }) => Promise<T>,
  summary: (result: T) => string,
): Promise<T> {
  const terminal = surfaces.terminals.open(goal.goalId, agentIds);
  // Stop Loop (tree, palette, status bar) stops a single turn as well as a loop.
  const stop = surfaces.model.beginLoop(goal);
  try {
    const result = await withCancellableProgress(title, (progress, signal) =>
      task({ signal: AbortSignal.any([signal, stop.signal, terminal.signal]), terminal, progress }),
    );
    terminal.finish(summary(result));
    return result;
  } catch (error) {
    terminal.finish(`✖ ${editorErrorText(error)}`);
    throw error;
  } finally {
    stop.end();
  }
}

/** Runs (or resumes, or retries) one turn with progress and its terminal; Cancel stops after the current phase. */
async function runTurnWithProgress(
  surfaces: TurnSurfaces,
  goal: GoalSummary,
  agentId: string,
  step?: NextStep,
): Promise<TurnRunResult> {
  return watched(
    surfaces,
    goal,
    [agentId],
    turnProgressTitle(agentId, goal.goalId, step),
    ({ signal, terminal, progress }) =>
      runOperation(
        turnRunOnce,
        {
          goalId: goal.goalId,
          agentId,
          execute: true,
          ...(step?.turn_key === undefined ? {} : { resumeTurnKey: step.turn_key }),
          ...(step?.kind === 'retry' ? { retryFailedTurn: true } : {}),
        },
        {
          ...editorEnvironment(goal.registryPath, signal, {
            onOutput: (text, stream) => terminal.output(text, stream),
          }),
          onEvent: eventSink(surfaces, terminal, progress),
        },
      ),
    (result) => `${result.ok ? '✔' : '✖'} ${result.message}`,
  );
}

/** "Review Changes" on the outcome when the run changed files; the diff editors open from it. */
function reviewButton(review: TurnReviewSummary | undefined): string[] {
  return review !== undefined && review.files.length > 0 ? [reviewChangesButton()] : [];
}

/** Shows how a turn ended, with a button per next step (Resume, Retry) that carries it out. */
async function showTurnOutcome(
  surfaces: TurnSurfaces,
  goal: GoalSummary,
  result: TurnRunResult,
  review: TurnReviewSummary | undefined,
  buttons: string[] = turnButtons(result),
  message: string = turnOutcomeMessage(result),
): Promise<void> {
  const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  const choice = await show(message, ...reviewButton(review), ...buttons);
  if (choice === showLogButton()) surfaces.log.show();
  if (choice === reviewChangesButton() && review !== undefined) {
    await surfaces.reviews.open(review.id);
    return;
  }
  const step = nextStepOfButton(result, choice);
  if (step === undefined) return;
  const setup = await setupOf(goal, result.agent_id);
  if (await refusedLanguageModel(surfaces, [{ agentId: result.agent_id, setup }])) return;
  const snapshot = await surfaces.reviews.before(snapshotOptions(goal, setup), surfaces.log);
  const next = await runTurnWithProgress(surfaces, goal, result.agent_id, step);
  await surfaces.model.reload();
  await showTurnOutcome(surfaces, goal, next, await surfaces.reviews.after(snapshot, `the turn of ${result.agent_id}`));
}

function snapshotOptions(goal: GoalSummary, setup: AgentTurnSetup) {
  const state = goal.stateFile === null ? null : relative(setup.projectRoot, goal.stateFile).split(sep).join('/');
  return {
    projectRoot: setup.projectRoot,
    writeScope: setup.writeScope,
    excluded: state === null || state.startsWith('..') ? [] : [state],
  };
}

/**
 * The agent has no executor (the core's `executor_missing`, worded for the CLI): say so in the editor's
 * words and offer "Configure Agent…" for this agent and goal. Resolves once the command ran (the caller
 * reads the setup again and goes on); Cancelled when the person declines.
 */
async function configureMissingExecutor(surfaces: TurnSurfaces, goal: GoalSummary, agentId: string): Promise<void> {
  const configure = vscode.l10n.t('Configure Agent…');
  surfaces.log.info(`no executor for ${agentId} on ${goal.goalId}: offering Configure Agent`);
  const choice = await vscode.window.showWarningMessage(executorMissingSentence(agentId), configure);
  if (choice !== configure) throw new Cancelled();
  await vscode.commands.executeCommand(paletteCommandId({ key: 'configureAgent' }), { goal, agentId });
}

/** "LoopX: Run One Turn…" — preview the turn (agent, todo), confirm, run it with progress; Cancel stops after the current phase. */
export async function runOneTurnCommand(
  surfaces: TurnSurfaces,
  arg: unknown,
): Promise<(TurnRunResult & Reviewed) | TurnNotStarted | undefined> {
  // From an Agents view node: that agent, on one of its goals.
  const goal = await goalForAgentCommand(surfaces.model, arg, vscode.l10n.t('Run a turn on which goal?'));
  const [agentId] = await pickAgents(goal, false, arg);
  if (agentId === undefined) throw new Cancelled();
  // A language-model agent with no model stops first: nothing to preview, nothing reserved.
  let setup = await setupOf(goal, agentId);
  const refused = await refusedLanguageModel(surfaces, [{ agentId, setup }]);
  if (refused !== undefined) return refused;
  let preview = await runOperation(
    turnRunOnce,
    { goalId: goal.goalId, agentId },
    editorEnvironment(goal.registryPath),
    'preview',
  );
  // The turn would run but the agent has no executor: offer Configure Agent, then preview again.
  if (!previewRunsAgent(preview) && setup.executor === null && preview.route === 'contract_error') {
    // Run from code (`confirmed`), nothing asks: the refusal in the editor's words.
    if (argumentField(arg, 'confirmed', isTrue)) throw new Error(executorMissingSentence(agentId));
    await configureMissingExecutor(surfaces, goal, agentId);
    setup = await setupOf(goal, agentId);
    if (setup.executor === null) throw new Error(executorMissingSentence(agentId));
    preview = await runOperation(
      turnRunOnce,
      { goalId: goal.goalId, agentId },
      editorEnvironment(goal.registryPath),
      'preview',
    );
  }
  if (!previewRunsAgent(preview)) {
    void vscode.window.showInformationMessage(noTurnMessage(agentId, goal.goalId, preview));
    return undefined;
  }
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      confirmTurnQuestion(agentId, goal.goalId, preview),
      confirmTurnDetail(preview),
      nextStepButton('execute'),
    );
  const snapshot = await surfaces.reviews.before(snapshotOptions(goal, setup), surfaces.log);
  const result = await runTurnWithProgress(surfaces, goal, agentId);
  const review = await surfaces.reviews.after(snapshot, `the turn of ${agentId}`);
  await surfaces.model.reload();
  void showTurnOutcome(surfaces, goal, result, review);
  return { ...result, review };
}

/** "LoopX: Run Loop…" — turns back to back until the goal needs a person, the budget stops it, or Cancel. */
export async function runLoopCommand(
  surfaces: TurnSurfaces,
  arg: unknown,
): Promise<(LoopResult & Reviewed) | TurnNotStarted> {
  const goal = await pickGoal(surfaces.model, arg, vscode.l10n.t('Run the loop on which goal?'));
  const agentIds = await pickAgents(goal, true, arg);
  // An agent with no executor would stop the loop at its first turn: offer Configure Agent for it first.
  // Run from code (`confirmed`), nothing asks: the loop stops at that agent's turn as before (executor_missing).
  if (!argumentField(arg, 'confirmed', isTrue))
    for (const agentId of agentIds)
      if ((await setupOf(goal, agentId)).executor === null) await configureMissingExecutor(surfaces, goal, agentId);
  const setups = await Promise.all(agentIds.map(async (agentId) => ({ agentId, setup: await setupOf(goal, agentId) })));
  const refused = await refusedLanguageModel(surfaces, setups);
  if (refused !== undefined) return refused;
  const quota = surfaces.model.detailsOf(goal)?.quota;
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(confirmLoopQuestion(goal.goalId, agentIds), confirmLoopDetail(quota), vscode.l10n.t('Run Loop'));
  const first = setups[0]?.setup;
  const snapshot =
    first === undefined ? undefined : await surfaces.reviews.before(snapshotOptions(goal, first), surfaces.log);
  // Stop Loop (tree, palette), the notification's Cancel and Ctrl+C in the terminal stop it after the current phase.
  const result = await watched(
    surfaces,
    goal,
    agentIds,
    loopProgressTitle(goal.goalId),
    ({ signal, terminal, progress }) =>
      runOperation(
        turnLoop,
        { goalId: goal.goalId, agentIds },
        {
          ...editorEnvironment(goal.registryPath, signal, {
            onOutput: (text, stream) => terminal.output(text, stream),
          }),
          onEvent: eventSink(surfaces, terminal, progress),
        },
      ),
    (loop) => `${loop.ok ? '✔' : '✖'} ${loopOutcomeMessage(loop).replace(/^LoopX[:：] ?/, '')}`,
  );
  const review = await surfaces.reviews.after(snapshot, `the loop on ${goal.goalId}`);
  await surfaces.model.reload();
  const last = result.turns.at(-1);
  if (last === undefined) {
    const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
    void show(loopOutcomeMessage(result), showLogButton()).then((choice) => {
      if (choice === showLogButton()) surfaces.log.show();
    });
  } else
    void showTurnOutcome(
      surfaces,
      goal,
      { ...last, ok: result.ok },
      review,
      loopButtons(result),
      loopOutcomeMessage(result),
    );
  return { ...result, review };
}

export function bundleDirOf(context: vscode.ExtensionContext): string {
  return join(context.extensionUri.fsPath, 'out');
}
