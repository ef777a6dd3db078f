import type { z } from 'zod';
import { LoopxError } from '../errors';

/**
 * Argument checking for the public API. Every public function parses its arguments with a strict
 * zod object whose fields carry a `.describe()` text saying what the argument accepts, so a bad
 * call fails before anything is read or written, with a LoopxError `invalid_argument` that names
 * the function, the argument, the accepted values and what was received.
 */

export const INVALID_ARGUMENT = 'invalid_argument';

export interface ArgumentLabel {
  /** The public function, as callers write it (`archiveRuntimeGoal`). */
  functionName: string;
  /** `options` for an options object (paths read `options.goalId`); omitted for positional arguments. */
  root?: string;
}

/** Parses `value` with `schema` (a strict object of described fields) or throws `invalid_argument`. */
export function parseArguments<S extends z.ZodObject>(schema: S, value: unknown, label: ArgumentLabel): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // A misspelt name (`goal_id` for `goalId`) also leaves the right one missing; naming the misspelling helps more.
  const issues = result.error.issues;
  throw invalidArgument(schema, value, issues.find((issue) => issue.code === 'unrecognized_keys') ?? issues[0], label);
}

function invalidArgument(
  schema: z.ZodObject,
  value: unknown,
  issue: z.core.$ZodIssue | undefined,
  label: ArgumentLabel,
): LoopxError {
  const prefix = label.root === undefined ? '' : `${label.root}.`;
  const known = Object.keys(schema.shape);
  if (issue === undefined || (issue.path.length === 0 && issue.code !== 'unrecognized_keys')) {
    const what = label.root ?? 'arguments';
    return new LoopxError(
      INVALID_ARGUMENT,
      `${label.functionName}: ${what} must be an object with ${known.join(', ')}; got ${describeValue(value)}.`,
      {
        function: label.functionName,
        argument: what,
        accepted: known,
      },
    );
  }
  if (issue.code === 'unrecognized_keys') {
    const names = issue.keys.map((key) => `${prefix}${key}`);
    return new LoopxError(
      INVALID_ARGUMENT,
      `${label.functionName}: unknown argument ${names.join(', ')}; the accepted arguments are ${known.map((key) => `${prefix}${key}`).join(', ')}.`,
      { function: label.functionName, argument: names[0] ?? '', accepted: known.map((key) => `${prefix}${key}`) },
    );
  }
  const key = String(issue.path[0]);
  const argument = `${prefix}${issue.path.map(String).join('.')}`;
  const field = schema.shape[key];
  const described = (field === undefined ? undefined : fieldDescription(field)) ?? issue.message;
  // A wrong choice names the choices (an operation's text may only say what the field is for).
  const choices = issue.code === 'invalid_value' ? issue.values.map((value) => JSON.stringify(value)) : [];
  const accepted =
    choices.length === 0 || described.startsWith('one of ') ? described : `one of ${choices.join(', ')} (${described})`;
  const received = valueAt(value, issue.path);
  return new LoopxError(
    INVALID_ARGUMENT,
    `${label.functionName}: ${argument} must be ${accepted}; got ${describeValue(received)}.`,
    {
      function: label.functionName,
      argument,
      accepted,
      received: received === undefined ? null : received,
      reason: issue.message,
    },
  );
}

function valueAt(value: unknown, path: readonly PropertyKey[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<PropertyKey, unknown>)[key];
  }
  return current;
}

const MAX_SHOWN = 60;

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'bigint') return `${value}n`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_SHOWN ? `${text.slice(0, MAX_SHOWN - 1)}…` : text;
}

/**
 * The description of an argument, wherever it sits among its wrappers: `.describe()` before or
 * after `.optional()`, `.default()` or a transform both count (zod keeps it on the one it was called on).
 */
export function fieldDescription(schema: z.core.$ZodType): string | undefined {
  let current: z.core.$ZodType | undefined = schema;
  while (current !== undefined) {
    const described = (current as { description?: string }).description;
    if (described !== undefined && described !== '') return described;
    const def = current._zod.def as { type: string; innerType?: z.core.$ZodType; in?: z.core.$ZodType };
    current = def.type === 'pipe' ? def.in : def.innerType;
  }
  return undefined;
}
