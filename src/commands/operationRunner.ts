import * as path from 'node:path';
import * as vscode from 'vscode';
import type { z } from 'zod';
import type { Operation, OperationEnvironment, OperationOutput } from '../core/ops/operation';
import { hostClock } from '../core/ops/hostSetup';
import { previewThenApplyWith, type PreviewThenApplyOutcome } from '../core/ops/previewThenApply';
import { editorExecutorFactory, type LanguageModelTurnObserver } from '../lm/languageModelExecutor';
import { HOME_DIR, Cancelled, projectRegistryPath } from './pickers';

/** The environment an operation sees when the editor runs it for a registry of the workspace. */
export function editorEnvironment(
  registryPath: string,
  signal?: AbortSignal,
  observer: LanguageModelTurnObserver = {},
): OperationEnvironment {
  return {
    cwd: path.dirname(path.dirname(registryPath)),
    env: process.env,
    clock: hostClock(process.env),
    homeDir: HOME_DIR,
    registryPath,
    signal,
    // Agents with the vscode-lm preset run on VS Code's language models, in this process; the
    // observer (a turn terminal) receives every agent's output live.
    executorFactory: editorExecutorFactory(observer),
    // The person at the editor completes todos as the project's owner, not as one of its agents.
    actingAs: 'owner',
  };
}

/** The environment for a project folder of the workspace, whose registry is its own `.loopx/registry.json`. */
export function folderEnvironment(folder: vscode.WorkspaceFolder): OperationEnvironment {
  return editorEnvironment(projectRegistryPath(folder));
}

export interface PreviewThenApply<R> {
  /** What the confirmation dialog asks, e.g. `Archive the runtime of "g"?`; may be worded from the preview. */
  question: string | ((preview: R) => string);
  /** The preview's details, shown in the dialog. */
  describe: (preview: R) => string;
  /** The button that applies. */
  action: string;
  /** Skip the dialog (a caller that already asked, or `{ confirmed: true }` from code). */
  confirmed?: boolean;
  /** Whether the preview shows nothing to apply: then no dialog is shown and nothing is written. */
  nothingToApply?: (preview: R) => boolean;
}

/**
 * The palette's one way to run an operation that previews before writing (`previewThenApplyWith`
 * with a modal dialog): preview, show what would change, and apply only when the user confirms.
 * Declining cancels the command. A refused preview (`ok: false`) or one with nothing to apply is
 * returned as the outcome, for the caller to report. Operations without a preview step run directly.
 */
export async function previewThenApply<S extends z.ZodObject, R extends OperationOutput>(
  operation: Operation<S, R>,
  input: z.input<S>,
  env: OperationEnvironment,
  dialog: PreviewThenApply<R>,
): Promise<Exclude<PreviewThenApplyOutcome<R>, { outcome: 'declined' }>> {
  const outcome = await previewThenApplyWith(operation, input, env, {
    nothingToApply: dialog.nothingToApply,
    confirm: async (preview) => {
      if (dialog.confirmed === true) return true;
      const choice = await vscode.window.showWarningMessage(
        typeof dialog.question === 'string' ? dialog.question : dialog.question(preview),
        { modal: true, detail: dialog.describe(preview) },
        dialog.action,
      );
      return choice === dialog.action;
    },
  });
  if (outcome.outcome === 'declined') throw new Cancelled();
  return outcome;
}
