import type * as vscode from 'vscode';
import { LoopxError } from '../core/errors';
import { goalStatusOfItem } from '../core/ops/goalStatusView';
import { listGates, listTodos } from '../core/ops/library';
import { getGoalStatus } from '../core/ops/libraryFunctions';
import { LOOPX_VERSION as version } from '../core/version';
import type { GoalStatusItem } from '../core/status/goalStatus';
import type { GoalSummary } from '../core/ops/goalRows';
import type { LoopxExtensionApi, LoopxGoal, LoopxQuotaChanged, LoopxTurnEnded } from './types';

/**
 * The object other extensions get from `getExtension('loopx.loopx-vscode').exports`: the workspace
 * model's goals and the core's read operations on them, plus events. It writes nothing. It uses
 * `vscode` for types only, so it runs (and is unit-tested) without the editor.
 */

/** What the API needs of the workspace model (WorkspaceModel has it). */
export interface ApiWorkspaceModel {
  readonly goals: readonly GoalSummary[];
  readonly onDidChange: vscode.Event<void>;
  /**
   * The goal's item of the live status model (re-read only when its files changed), or undefined
   * when the model has none for it (its registry unreadable): then `getGoalStatus` asks the core.
   */
  statusItem(goal: GoalSummary): Promise<GoalStatusItem | undefined>;
}

/** Events that come from elsewhere in the extension: the live status model's diffs (see statusEvents.ts). */
export interface ApiEventSources {
  readonly onDidEndTurn: vscode.Event<LoopxTurnEnded>;
  readonly onDidChangeQuota: vscode.Event<LoopxQuotaChanged>;
}

export const API_VERSION = 1;

export function createExtensionApi(model: ApiWorkspaceModel, events: ApiEventSources): LoopxExtensionApi {
  const findGoal = (goalId: string, registryPath?: string): GoalSummary | undefined =>
    model.goals.find(
      (goal) => goal.goalId === goalId && (registryPath === undefined || goal.registryPath === registryPath),
    );

  const requireGoal = (goalId: string, registryPath?: string): GoalSummary => {
    const goal = findGoal(goalId, registryPath);
    if (goal !== undefined) return goal;
    const where = registryPath === undefined ? 'the registries of this workspace' : registryPath;
    throw new LoopxError('goal_not_found', `goal '${goalId}' is not in ${where}`, {
      goal_id: goalId,
      registry: registryPath ?? null,
    });
  };

  const onDidChangeGoals: vscode.Event<readonly LoopxGoal[]> = (listener, thisArgs, disposables) =>
    model.onDidChange(() => listener.call(thisArgs, [...model.goals]), undefined, disposables);

  return {
    apiVersion: API_VERSION,
    version,
    getGoals: () => [...model.goals],
    getGoal: (goalId, registryPath) => findGoal(goalId, registryPath),
    getGoalStatus: async (goalId, registryPath) => {
      const goal = requireGoal(goalId, registryPath);
      const item = await model.statusItem(goal);
      return item === undefined
        ? getGoalStatus({ registryPath: goal.registryPath, goalId: goal.goalId })
        : goalStatusOfItem(goal, item);
    },
    getTodos: async (goalId, query = {}) => {
      const { registryPath, ...filter } = query;
      const goal = requireGoal(goalId, registryPath);
      return listTodos({ ...filter, registryPath: goal.registryPath, goalId: goal.goalId });
    },
    getGates: async (goalId, registryPath) => {
      const goal = requireGoal(goalId, registryPath);
      return listGates({ registryPath: goal.registryPath, goalId: goal.goalId });
    },
    getQuota: (goalId, registryPath) => findGoal(goalId, registryPath)?.quota,
    onDidChangeGoals,
    onDidEndTurn: events.onDidEndTurn,
    onDidChangeQuota: events.onDidChangeQuota,
  };
}
