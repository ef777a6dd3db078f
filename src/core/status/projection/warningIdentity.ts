import { createHash } from 'node:crypto';
import type { z } from 'zod';
import { LoopxError } from '../../errors';
import type { ComparedValue, ProjectionWarningKind } from './schemas';

/**
 * A warning's stable id: `lxw_` + 16 hex digits of SHA-256 over kind, goal and the compared values.
 * It stays the same while the same texts disagree and changes as soon as any of them changes,
 * so a dismissal keyed by id lapses when the situation it dismissed is gone.
 */
export function projectionWarningId(
  kind: ProjectionWarningKind,
  goalId: string | null | undefined,
  compared: readonly ComparedValue[],
): string {
  const material = JSON.stringify([kind, goalId ?? null, compared.map((entry) => [entry.field, entry.value])]);
  return `lxw_${createHash('sha256').update(material, 'utf8').digest('hex').slice(0, 16)}`;
}

/** `goal_id` is added only when the caller named the goal. */
export function goalIdField(goalId: string | null | undefined): { goal_id?: string } {
  return goalId ? { goal_id: goalId } : {};
}

/** Validates a projection function's input, turning a schema failure into a LoopxError that names the field. */
export function parseProjectionInput<S extends z.ZodType>(schema: S, value: unknown, functionName: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const field = issue && issue.path.length > 0 ? issue.path.join('.') : '(input)';
  throw new LoopxError('invalid_projection_input', `${functionName}: ${field}: ${issue?.message ?? 'invalid input'}.`, {
    function: functionName,
    field,
    issues: result.error.issues.map((entry) => ({ path: entry.path.map(String), message: entry.message })),
  });
}
