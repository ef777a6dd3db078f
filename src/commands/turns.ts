import { join } from 'node:path';
import * as vscode from 'vscode';
import { clockFromEnv } from '../core/clock';
import { demoAgentArgv } from '../core/executors/demoAgent';
import type { TurnEvent } from '../core/turn/events';
import { runLoop, type LoopResult } from '../core/turn/loop';
import { runOnce } from '../core/turn/runOnce';
import type { GoalSummary } from '../core/status/workspaceGoals';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { argumentField, Cancelled, confirm, HOME_DIR, isStringArray, isTrue, pickGoal } from './pickers';

export interface TurnSurfaces {
  model: WorkspaceModel;
  log: vscode.LogOutputChannel;
  /** Folder of the extension's bundles (the built-in demo agent lives there). */
  bundleDir: string;
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

/** "LoopX: Run One Turn…" — preview the turn (agent, todo), confirm, run it with progress; Cancel stops after the current phase. */
export async function runOneTurnCommand(surfaces: TurnSurfaces, arg: unknown): Promise<void> {
  const goal = await pickGoal(surfaces.model, arg, 'Run a turn on which goal?');
  const [agentId] = await pickAgents(goal, false, arg);
  if (agentId === undefined) throw new Cancelled();
  const base = {
    registryPath: goal.registryPath,
    goalId: goal.goalId,
    agentId,
    clock: clockFromEnv(),
    homeDir: HOME_DIR,
    env: process.env,
    demoAgentArgv: demoAgentArgv(surfaces.bundleDir),
  };
  const preview = await runOnce({ ...base, execute: false });
  if (preview.status !== 'preview') {
    void vscode.window.showInformationMessage(`LoopX: no turn for ${agentId} on "${goal.goalId}": ${preview.message}`);
    return;
  }
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      `Run one turn of "${agentId}" on "${preview.todo_title ?? preview.todo_id ?? goal.goalId}"?`,
      `${preview.message}\nThe turn reserves one quota slot; it is spent only if the result validates.`,
      'Run Turn',
    );
  const result = await withCancellableProgress(`LoopX: ${agentId} on ${goal.goalId}`, (progress, signal) =>
    runOnce({ ...base, execute: true, signal, onEvent: eventSink(surfaces, goal, progress) }),
  );
  await surfaces.model.reload();
  const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void show(`LoopX: ${result.message}`, 'Show Log').then((choice) => {
    if (choice) surfaces.log.show();
  });
}

/** "LoopX: Run Loop…" — turns back to back until the goal needs a person, the budget stops it, or Cancel. */
export async function runLoopCommand(surfaces: TurnSurfaces, arg: unknown): Promise<LoopResult> {
  const goal = await pickGoal(surfaces.model, arg, 'Run the loop on which goal?');
  const agentIds = await pickAgents(goal, true, arg);
  const quota = surfaces.model.detailsOf(goal)?.quota;
  if (!argumentField(arg, 'confirmed', isTrue))
    await confirm(
      `Run the loop on "${goal.goalId}" with ${agentIds.join(', ')}?`,
      `Turns run one after another until the goal waits for a person, runs out of runnable todos or budget, or you cancel.${quota ? `\nQuota: ${quota.remaining_slots} of ${quota.allowed_slots} slots left in the window.` : ''}`,
      'Run Loop',
    );
  const result = await withCancellableProgress(`LoopX loop: ${goal.goalId}`, (progress, signal) =>
    runLoop({
      registryPath: goal.registryPath,
      goalId: goal.goalId,
      agentIds,
      clock: clockFromEnv(),
      homeDir: HOME_DIR,
      env: process.env,
      demoAgentArgv: demoAgentArgv(surfaces.bundleDir),
      signal,
      onEvent: eventSink(surfaces, goal, progress),
    }),
  );
  await surfaces.model.reload();
  const summary = `${result.turn_count} turn${result.turn_count === 1 ? '' : 's'}, ${result.spend_count} spent — stopped: ${result.message}`;
  const show = result.ok ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void show(`LoopX: ${summary}`, 'Show Log').then((choice) => {
    if (choice) surfaces.log.show();
  });
  return result;
}

export function bundleDirOf(context: vscode.ExtensionContext): string {
  return join(context.extensionUri.fsPath, 'out');
}
