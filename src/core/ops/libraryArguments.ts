import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { clockFromEnv, fixedClock, type Clock } from '../clock';
import { isLoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import type { OperationEnvironment } from './operation';
import { processEnvironment } from './run';

/**
 * Argument fields shared by the public functions, and how they become the internal context.
 * Relative paths resolve against the process's current directory; `~` is not expanded here
 * (a script's shell already did), except inside the registry, as everywhere else.
 */

function isGoalIdSegment(value: string): boolean {
  try {
    checkGoalIdSegment(value);
    return true;
  } catch (error) {
    if (isLoopxError(error, 'invalid_goal_id')) return false;
    throw error;
  }
}

/** `null` reads as "not given", as the original's `None` does. */
const absent = <T extends z.ZodType>(schema: T) => schema.nullish().transform((value) => value ?? undefined);

export const registryPathArgument = z
  .string()
  .trim()
  .min(1)
  .describe(
    'the path of a registry file such as ".loopx/registry.json" (absolute, or relative to the current directory)',
  );

export const goalIdArgument = z
  .string()
  .refine(isGoalIdSegment)
  .describe('a goal id: one path segment such as "my-goal-id" (not empty, no "/" or "\\", not "." or "..")');

export const runtimeRootOverrideArgument = absent(z.string().trim().min(1)).describe(
  "a runtime root folder that replaces the registry's common_runtime_root, or null/undefined to use it",
);

export const homeDirArgument = absent(z.string().trim().min(1)).describe(
  'the home folder that "~" in the registry stands for, or null/undefined for the current user\'s',
);

export const nowArgument = absent(
  z.union([z.iso.datetime({ offset: true }), z.date().refine((date) => !Number.isNaN(date.getTime()))]),
).describe(
  'an ISO-8601 instant such as "2026-01-15T10:00:00Z" or a valid Date, or null/undefined for the LOOPX_NOW environment variable or the system clock',
);

export const flagArgument = absent(z.boolean()).describe('true or false');

export function resolvedPath(value: string): string {
  return path.resolve(value);
}

export function homeDirOf(homeDir: string | undefined): string {
  return homeDir ?? os.homedir();
}

/** The clock a public call uses: `now` when given, else `LOOPX_NOW`, else the system clock. */
export function clockOf(now: string | Date | undefined): Clock {
  return now === undefined ? clockFromEnv(process.env) : fixedClock(now);
}

/** Where and when a library call runs, as an operation's environment (`registryPath` resolved against the current folder). */
export function libraryEnvironment(place: {
  registryPath: string;
  runtimeRootOverride?: string | undefined;
  homeDir?: string | undefined;
  now?: string | Date | undefined;
}): OperationEnvironment {
  return processEnvironment({
    registryPath: resolvedPath(place.registryPath),
    runtimeRootOverride: place.runtimeRootOverride,
    homeDir: homeDirOf(place.homeDir),
    clock: clockOf(place.now),
  });
}
