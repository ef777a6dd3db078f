import { LoopxError } from '../errors';

/**
 * The goal's validator argv from the registry, or null when it has none. A string is refused:
 * LoopX never hands text to a shell.
 */
export function readValidationCommand(goal: Readonly<Record<string, unknown>>): string[] | null {
  const value = goal['validation_command'];
  if (value === undefined || value === null) return null;
  const goalId = String(goal['id'] ?? '');
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    !value.every((part) => typeof part === 'string') ||
    value[0] === ''
  ) {
    throw new LoopxError(
      'validation_command_invalid',
      `goal '${goalId}': validation_command must be a non-empty JSON array of strings (an argv such as ["node", "scripts/check.js"]), not ${typeof value === 'string' ? 'a shell string' : JSON.stringify(value)}; fix it in the registry`,
      { goal_id: goalId, field: 'validation_command' },
    );
  }
  return [...(value as string[])];
}
