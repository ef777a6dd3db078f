import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { z } from 'zod';
import { clockFromEnv, fixedClock, type Clock } from '../clock';
import { isLoopxError, LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import { resolveGoalStatePath, resolveRuntimeRoot } from '../registry/locate';
import { findRawRegistryGoal, readRegistry } from '../registry/read';

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

/** A registered goal and where its files are. */
export interface GoalLocation {
  registryPath: string;
  goalId: string;
  goal: Record<string, unknown>;
  registry: Record<string, unknown>;
  runtimeRoot: string;
  /** The goal's ACTIVE_GOAL_STATE.md, or null when neither `state_file` nor an absolute `repo` locates it. */
  statePath: string | null;
}

export interface GoalLookup {
  registryPath: string;
  goalId: string;
  runtimeRootOverride?: string | undefined;
  homeDir?: string | undefined;
}

/** Finds the goal in its registry; `registry_missing` / `goal_not_found` when it is not there. */
export async function locateGoal(lookup: GoalLookup): Promise<GoalLocation> {
  const registryPath = resolvedPath(lookup.registryPath);
  const homeDir = homeDirOf(lookup.homeDir);
  if (!fs.existsSync(registryPath)) {
    throw new LoopxError(
      'registry_missing',
      `registry file does not exist: ${registryPath}; create it with \`loopx bootstrap\` or pass the right registryPath`,
      { registry: registryPath },
    );
  }
  const registry = await readRegistry(registryPath);
  const goalId = checkGoalIdSegment(lookup.goalId);
  const goal = findRawRegistryGoal(registry, goalId);
  if (goal === undefined) {
    throw new LoopxError('goal_not_found', `goal '${goalId}' is not in the registry ${registryPath}`, {
      goal_id: goalId,
      registry: registryPath,
    });
  }
  const runtimeRoot = resolveRuntimeRoot({ registryPath, registry, override: lookup.runtimeRootOverride, homeDir });
  return { registryPath, goalId, goal, registry, runtimeRoot, statePath: resolveGoalStatePath(goal, goalId, homeDir) };
}

/** The state path of a located goal, or `state_file_unresolved`. */
export function requireStatePath(location: GoalLocation): string {
  if (location.statePath !== null) return location.statePath;
  throw new LoopxError(
    'state_file_unresolved',
    `goal '${location.goalId}' has no state_file and no absolute repo, so its ACTIVE_GOAL_STATE.md cannot be found; set state_file in ${location.registryPath}`,
    { goal_id: location.goalId, registry: location.registryPath },
  );
}
