import * as vscode from 'vscode';
import { configureGoal, goalConfigProblem } from '../core/ops/configureGoal';
import type { OperationArgs } from '../core/ops/operation';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import { editorEnvironment, previewThenApply } from './operationRunner';
import { argumentField, askText, Cancelled, isTrue, pickGoal } from './pickers';

/** Keybindings, tests and other extensions may pass the settings to skip the prompts (and `confirmed` to skip the dialog). */
export interface ConfigureGoalArgs {
  goalId: string;
  quotaCompute?: number;
  quotaWindowHours?: number;
  spawnAllowed?: boolean;
  maxChildren?: number;
  confirmed?: boolean;
}

function isConfigureGoalArgs(value: unknown): value is ConfigureGoalArgs {
  if (typeof value !== 'object' || value === null) return false;
  const args = value as Record<string, unknown>;
  return (
    typeof args['goalId'] === 'string' &&
    ['quotaCompute', 'quotaWindowHours', 'spawnAllowed', 'maxChildren'].some((key) => args[key] !== undefined)
  );
}

/** "LoopX: Configure Goal…" — one setting at a time, previewed before/after, then written (the configureGoal operation). */
export async function configureGoalCommand(model: WorkspaceModel, arg: unknown): Promise<void> {
  const given = isConfigureGoalArgs(arg) ? arg : undefined;
  const goal = await pickGoal(model, given ?? arg, vscode.l10n.t('Configure which goal?'));
  const settings = given === undefined ? await askSetting(goal) : settingsOf(given);
  const problem = goalConfigProblem(settings);
  if (problem !== null) throw new Error(problem);
  const input: OperationArgs<typeof configureGoal> = { goalId: goal.goalId, ...settings };
  const outcome = await previewThenApply(configureGoal, input, editorEnvironment(goal.registryPath), {
    question: (preview) => vscode.l10n.t('Change {0} of goal "{1}"?', preview.changed_fields.join(', '), goal.goalId),
    describe: (preview) =>
      preview.changed_paths
        .map(
          (field) =>
            `${field}: ${JSON.stringify(lookup(preview.before, field))} → ${JSON.stringify(lookup(preview.after, field))}`,
        )
        .join('\n'),
    action: vscode.l10n.t('Apply'),
    nothingToApply: (preview) => !preview.changed,
    confirmed: argumentField(arg, 'confirmed', isTrue) === true,
  });
  if (outcome.outcome === 'refused') throw new Error(vscode.l10n.t('the change to "{0}" was refused', goal.goalId));
  if (outcome.outcome === 'nothing_to_apply') {
    void vscode.window.showInformationMessage(vscode.l10n.t('LoopX: "{0}" already has that setting.', goal.goalId));
    return;
  }
  await model.reload();
  void vscode.window.showInformationMessage(
    vscode.l10n.t('LoopX: updated {0} of "{1}".', outcome.result.changed_fields.join(', '), goal.goalId),
  );
}

type Settings = Pick<
  OperationArgs<typeof configureGoal>,
  'quotaCompute' | 'quotaWindowHours' | 'spawnAllowed' | 'maxChildren'
>;

function settingsOf({ quotaCompute, quotaWindowHours, spawnAllowed, maxChildren }: ConfigureGoalArgs): Settings {
  return { quotaCompute, quotaWindowHours, spawnAllowed, maxChildren };
}

async function askSetting(goal: {
  goalId: string;
  quota: { compute: number; window_hours: number };
}): Promise<Settings> {
  const setting = await vscode.window.showQuickPick(
    [
      {
        label: vscode.l10n.t('Quota: compute share'),
        description: vscode.l10n.t('now {0}', goal.quota.compute),
        key: 'compute' as const,
      },
      {
        label: vscode.l10n.t('Quota: window hours'),
        description: vscode.l10n.t('now {0}', goal.quota.window_hours),
        key: 'window' as const,
      },
      { label: vscode.l10n.t('Spawning: allow sub-agents'), key: 'spawnOn' as const },
      { label: vscode.l10n.t('Spawning: one turn at a time'), key: 'spawnOff' as const },
      { label: vscode.l10n.t('Spawning: max children'), key: 'maxChildren' as const },
    ],
    { title: vscode.l10n.t('Configure {0}', goal.goalId) },
  );
  if (!setting) throw new Cancelled();
  const number = async (prompt: string, value: string, key: 'quotaCompute' | 'quotaWindowHours' | 'maxChildren') =>
    Number(
      await askText({
        prompt,
        value,
        validateInput: (text) => goalConfigProblem({ [key]: text }) ?? undefined,
      }),
    );
  switch (setting.key) {
    case 'compute':
      return {
        quotaCompute: await number(
          vscode.l10n.t('Share of the window the loop may spend, 0 to 1'),
          String(goal.quota.compute),
          'quotaCompute',
        ),
      };
    case 'window':
      return {
        quotaWindowHours: await number(
          vscode.l10n.t('Rolling quota window in hours (whole number > 0)'),
          String(goal.quota.window_hours),
          'quotaWindowHours',
        ),
      };
    case 'spawnOn':
      return { spawnAllowed: true };
    case 'spawnOff':
      return { spawnAllowed: false };
    case 'maxChildren':
      return { maxChildren: await number(vscode.l10n.t('Most turns that may run at once (0–16)'), '2', 'maxChildren') };
  }
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
