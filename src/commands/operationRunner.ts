import * as path from 'node:path';
import * as vscode from 'vscode';
import type { z } from 'zod';
import { clockFromEnv } from '../core/clock';
import type { Operation, OperationEnvironment, OperationOutput } from '../core/ops/operation';
import { runOperation } from '../core/ops/run';
import { HOME_DIR, Cancelled } from './pickers';

/** The environment an operation sees when the editor runs it for a registry of the workspace. */
export function editorEnvironment(registryPath: string, signal?: AbortSignal): OperationEnvironment {
  return {
    cwd: path.dirname(path.dirname(registryPath)),
    env: process.env,
    clock: clockFromEnv(process.env),
    homeDir: HOME_DIR,
    registryPath,
    signal,
  };
}

export interface PreviewThenApply<R> {
  /** What the confirmation dialog asks, e.g. `Archive the runtime of "g"?`. */
  question: string;
  /** The preview's details, shown in the dialog. */
  describe: (preview: R) => string;
  /** The button that applies. */
  action: string;
  /** Skip the dialog (a caller that already asked, or `{ confirmed: true }` from code). */
  confirmed?: boolean;
}

/**
 * The palette's one way to run an operation that previews before writing: preview, show what would
 * change in a modal dialog, and apply only when the user confirms. Operations without a preview
 * step run directly.
 */
export async function previewThenApply<S extends z.ZodObject, R extends OperationOutput>(
  operation: Operation<S, R>,
  input: z.input<S>,
  env: OperationEnvironment,
  dialog: PreviewThenApply<R>,
): Promise<R> {
  if (operation.applySwitch === undefined) return runOperation(operation, input, env);
  const preview = await runOperation(operation, input, env, 'preview');
  if (dialog.confirmed !== true) {
    const choice = await vscode.window.showWarningMessage(
      dialog.question,
      { modal: true, detail: dialog.describe(preview) },
      dialog.action,
    );
    if (choice !== dialog.action) throw new Cancelled();
  }
  return runOperation(operation, input, env, 'apply');
}
