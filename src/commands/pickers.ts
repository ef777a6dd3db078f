import { homedir } from 'node:os';
import * as vscode from 'vscode';
import type { GoalSummary } from '../core/ops/goalRows';
import { projectRegistryPath as registryOfProject } from '../core/ops/goalHandle';
import type { WorkspaceModel } from '../workspace/workspaceModel';

export const HOME_DIR = homedir();

/** Thrown to end a command quietly when the user dismisses a prompt. */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
  }
}

/** The goal a command acts on: the tree node it was run from, the only goal, or the user's pick. */
export async function pickGoal(model: WorkspaceModel, arg: unknown, title: string): Promise<GoalSummary> {
  const fromNode = goalFromArgument(model, arg);
  if (fromNode) return fromNode;
  const goals = model.goals;
  if (goals.length === 0)
    throw new Error(vscode.l10n.t('No LoopX goals in this workspace. Run "LoopX: Create Goal…" first.'));
  if (goals.length === 1 && goals[0]) return goals[0];
  const picked = await vscode.window.showQuickPick(
    goals.map((goal) => ({ label: goal.displayName, description: goal.goalId, detail: goal.projectRoot, goal })),
    { title, placeHolder: vscode.l10n.t('Choose a goal'), matchOnDescription: true },
  );
  if (!picked) throw new Cancelled();
  return picked.goal;
}

/** A tree node of a goal, or `{ goalId }` from a keybinding, a test or another extension. */
function goalFromArgument(model: WorkspaceModel, arg: unknown): GoalSummary | undefined {
  if (typeof arg !== 'object' || arg === null) return undefined;
  if ('goal' in arg && typeof (arg as { goal: unknown }).goal === 'object') return (arg as { goal: GoalSummary }).goal;
  if ('goalId' in arg && typeof (arg as { goalId: unknown }).goalId === 'string') {
    const goalId = (arg as { goalId: string }).goalId;
    const goal = model.findGoal(goalId);
    if (!goal) throw new Error(vscode.l10n.t('No goal "{0}" in this workspace.', goalId));
    return goal;
  }
  return undefined;
}

/** Arguments of commands run from code: `{ confirmed: true }` skips the confirmation dialog. */
export function argumentField<T>(arg: unknown, field: string, check: (value: unknown) => value is T): T | undefined {
  if (typeof arg !== 'object' || arg === null || !(field in arg)) return undefined;
  const value = (arg as Record<string, unknown>)[field];
  return check(value) ? value : undefined;
}

export const isStringArray = (value: unknown): value is string[] =>
  Array.isArray(value) && value.every((v) => typeof v === 'string');
export const isTrue = (value: unknown): value is true => value === true;

/** The workspace folder a new goal goes into: the only one, or the user's pick. */
export async function pickProjectFolder(title: string): Promise<vscode.WorkspaceFolder> {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  if (folders.length === 0)
    throw new Error(
      vscode.l10n.t('Open a folder first: LoopX keeps goals in the project folder (.loopx/registry.json).'),
    );
  if (folders.length === 1 && folders[0]) return folders[0];
  const picked = await vscode.window.showWorkspaceFolderPick({ placeHolder: title });
  if (!picked) throw new Cancelled();
  return picked;
}

export function projectRegistryPath(folder: vscode.WorkspaceFolder): string {
  return registryOfProject(folder.uri.fsPath);
}

export async function askText(options: vscode.InputBoxOptions): Promise<string> {
  const value = await vscode.window.showInputBox({ ignoreFocusOut: true, ...options });
  if (value === undefined) throw new Cancelled();
  return value.trim();
}

/** A modal confirmation; resolves only when the user chose `action`. */
export async function confirm(message: string, detail: string, action: string): Promise<void> {
  const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, action);
  if (choice !== action) throw new Cancelled();
}
