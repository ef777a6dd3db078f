import type { z } from 'zod';
import type { Operation, OperationEnvironment, OperationOutput } from './operation';
import { runOperation } from './run';

/**
 * The one way an interactive surface runs an operation that previews before writing: preview,
 * let the person see what would change, and apply only when they confirm. The surface supplies
 * the asking (the palette's modal dialog, a test's answer); the order of steps lives here.
 */

export interface PreviewThenApplySteps<R> {
  /** Shown the preview; resolves true to apply it. Not called when the preview refused or there is nothing to apply. */
  confirm: (preview: R) => Promise<boolean>;
  /** Whether the preview shows nothing to apply (e.g. the setting is already so): then nothing is asked or written. */
  nothingToApply?: (preview: R) => boolean;
}

export type PreviewThenApplyOutcome<R> =
  /** Applied; `preview` is null for an operation that has no preview step (it simply ran). */
  | { outcome: 'applied'; preview: R | null; result: R }
  /** The preview answered `ok: false` (a refusal): nothing was asked or applied. */
  | { outcome: 'refused'; preview: R }
  | { outcome: 'nothing_to_apply'; preview: R }
  /** The person did not confirm: nothing was applied. */
  | { outcome: 'declined'; preview: R };

export async function previewThenApplyWith<S extends z.ZodObject, R extends OperationOutput>(
  operation: Operation<S, R>,
  input: z.input<S> | Record<string, unknown>,
  env: OperationEnvironment,
  steps: PreviewThenApplySteps<R>,
): Promise<PreviewThenApplyOutcome<R>> {
  if (operation.applySwitch === undefined) {
    return { outcome: 'applied', preview: null, result: await runOperation(operation, input, env) };
  }
  const preview = await runOperation(operation, input, env, 'preview');
  if (!preview.ok) return { outcome: 'refused', preview };
  if (steps.nothingToApply?.(preview) === true) return { outcome: 'nothing_to_apply', preview };
  if (!(await steps.confirm(preview))) return { outcome: 'declined', preview };
  return { outcome: 'applied', preview, result: await runOperation(operation, input, env, 'apply') };
}
