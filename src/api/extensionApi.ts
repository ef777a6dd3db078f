import type * as vscode from 'vscode';
import { getGoalStatus, listGates, listTodos, LoopxError, version } from '../core/index';
import type { GoalSummary } from '../core/index';
import type { LoopxExtensionApi, LoopxGoal, LoopxQuota, LoopxQuotaChanged, LoopxTurnEnded } from './types';

/**
 * The object other extensions get from `getExtension('loopx.loopx-vscode').exports`: the workspace
 * model's goals and the core's read operations on them, plus events. It writes nothing. It uses
 * `vscode` for types only, so it runs (and is unit-tested) without the editor.
 */

/** What the API needs of the workspace model (WorkspaceModel has it). */
export interface ApiWorkspaceModel {
  readonly goals: readonly GoalSummary[];
  readonly onDidChange: vscode.Event<void>;
}

/** Events that come from elsewhere in the extension: the turn driver and quota settlement fire them. */
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
      return getGoalStatus({ registryPath: goal.registryPath, goalId: goal.goalId });
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
    onDidChangeQuota: mergeEvents(events.onDidChangeQuota, quotaSettingChanges(model)),
  };
}

function goalKey(goal: GoalSummary): string {
  return JSON.stringify([goal.registryPath, goal.goalId]);
}

/**
 * Fires when a reload shows a goal's normalized quota settings changed (someone edited the registry).
 * Each subscription compares against what it last saw; goals that appear or disappear are goal
 * changes, not quota changes.
 */
function quotaSettingChanges(model: ApiWorkspaceModel): vscode.Event<LoopxQuotaChanged> {
  return (listener, thisArgs, disposables) => {
    const quotaOf = (): Map<string, LoopxQuota> => new Map(model.goals.map((goal) => [goalKey(goal), goal.quota]));
    let seen = quotaOf();
    return model.onDidChange(
      () => {
        const current = quotaOf();
        for (const goal of model.goals) {
          const before = seen.get(goalKey(goal));
          if (before !== undefined && JSON.stringify(before) !== JSON.stringify(goal.quota)) {
            listener.call(thisArgs, { goalId: goal.goalId, registryPath: goal.registryPath, quota: goal.quota });
          }
        }
        seen = current;
      },
      undefined,
      disposables,
    );
  };
}

function mergeEvents<T>(...sources: vscode.Event<T>[]): vscode.Event<T> {
  return (listener, thisArgs, disposables) => {
    const subscriptions = sources.map((event) => event(listener, thisArgs));
    const subscription = { dispose: () => subscriptions.forEach((s) => s.dispose()) };
    disposables?.push(subscription);
    return subscription;
  };
}
