import * as vscode from 'vscode';
import { configureGoal, parseGoalConfigChanges, type GoalConfigInput } from '../core/agents/goalConfig';
import { clockFromEnv } from '../core/clock';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { askText, Cancelled, confirm, pickGoal } from './pickers';

/** "LoopX: Configure Goal…" — one setting at a time, previewed before/after, then written. */
export async function configureGoalCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const goal = await pickGoal(model, arg, 'Configure which goal?');
  const setting = await vscode.window.showQuickPick(
    [
      { label: 'Quota: compute share', description: `now ${goal.quota.compute}`, key: 'compute' as const },
      { label: 'Quota: window hours', description: `now ${goal.quota.window_hours}`, key: 'window' as const },
      { label: 'Spawning: allow sub-agents', key: 'spawnOn' as const },
      { label: 'Spawning: one turn at a time', key: 'spawnOff' as const },
      { label: 'Spawning: max children', key: 'maxChildren' as const },
    ],
    { title: `Configure ${goal.goalId}` },
  );
  if (!setting) throw new Cancelled();
  const input: GoalConfigInput = {};
  const validate =
    (build: (v: string) => GoalConfigInput) =>
    (value: string): string | undefined => {
      try {
        parseGoalConfigChanges(build(value));
        return undefined;
      } catch (error) {
        return (error as Error).message;
      }
    };
  switch (setting.key) {
    case 'compute':
      input.quotaCompute = await askText({
        prompt: 'Share of the window the loop may spend, 0 to 1',
        value: String(goal.quota.compute),
        validateInput: validate((v) => ({ quotaCompute: v })),
      });
      break;
    case 'window':
      input.quotaWindowHours = await askText({
        prompt: 'Rolling quota window in hours (whole number > 0)',
        value: String(goal.quota.window_hours),
        validateInput: validate((v) => ({ quotaWindowHours: v })),
      });
      break;
    case 'spawnOn':
      input.spawnAllowed = true;
      break;
    case 'spawnOff':
      input.spawnAllowed = false;
      break;
    case 'maxChildren':
      input.maxChildren = await askText({
        prompt: 'Most turns that may run at once (0–16)',
        value: '2',
        validateInput: validate((v) => ({ maxChildren: v })),
      });
      break;
  }
  const changes = parseGoalConfigChanges(input);
  const request = {
    registryPath: goal.registryPath,
    goalId: goal.goalId,
    changes,
    clock: clockFromEnv(),
    env: process.env,
  };
  const preview = await configureGoal({ ...request, execute: false });
  if (!preview.changed) {
    void vscode.window.showInformationMessage(`LoopX: "${goal.goalId}" already has that setting.`);
    return;
  }
  await confirm(
    `Change ${preview.changed_fields.join(', ')} of goal "${goal.goalId}"?`,
    preview.changed_fields
      .map(
        (field) =>
          `${field}: ${JSON.stringify(lookup(preview.before, field))} → ${JSON.stringify(lookup(preview.after, field))}`,
      )
      .join('\n'),
    'Apply',
  );
  const result = await configureGoal({ ...request, execute: true });
  await model.reload();
  void vscode.window.showInformationMessage(`LoopX: updated ${result.changed_fields.join(', ')} of "${goal.goalId}".`);
}

function lookup(value: unknown, dotted: string): unknown {
  return dotted
    .split('.')
    .reduce<unknown>(
      (current, key) =>
        typeof current === 'object' && current !== null ? (current as Record<string, unknown>)[key] : undefined,
      value,
    );
}
