import { readFileSafe } from '../fs/safeRead';
import { z } from 'zod';
import { isPlainObject } from '../registry/agentIds';
import { LoopxError } from '../errors';
import { loadRegistrySnapshot, type GoalSummary } from '../status/workspaceGoals';
import {
  findRegistryGoal as findGoalEntry,
  parseRegistryText,
  readRegistry as readRegistryFile,
} from '../registry/read';
import type { RegistryGoal } from '../registry/schema';
import { parseArguments } from '../ops/arguments';
import {
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from '../ops/libraryArguments';

const pathArgument = z
  .string()
  .trim()
  .min(1)
  .describe('the path of a JSON file (absolute, or relative to the current directory)');

/**
 * Reads a JSON file whose root must be an object (the original's `read_json`). Throws LoopxError
 * `file_not_found` for a missing file, `registry_invalid_json` (with line and column) for bad JSON,
 * `registry_not_object` for another root.
 */
export async function readJson(filePath: string): Promise<Record<string, unknown>> {
  const args = parseArguments(z.strictObject({ path: pathArgument }), { path: filePath }, { functionName: 'readJson' });
  const absolute = resolvedPath(args.path);
  let text: string;
  try {
    text = await readFileSafe(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new LoopxError('file_not_found', `${absolute} does not exist.`, { path: absolute });
    throw error;
  }
  return parseRegistryText(text, absolute);
}

/** Reads a registry file as its raw JSON object, every field kept; a missing file reads as `{}` (the original's `load_registry`). */
export async function readRegistry(registryPath: string): Promise<Record<string, unknown>> {
  const args = parseArguments(
    z.strictObject({ registryPath: registryPathArgument }),
    { registryPath },
    { functionName: 'readRegistry' },
  );
  return readRegistryFile(resolvedPath(args.registryPath));
}

/**
 * The first goal whose id, as a string, equals `goalId` (so a stored `7` matches `"7"`), or
 * undefined. Known fields are typed; unknown ones (such as `description`) are kept as they are.
 */
export function findRegistryGoal(registry: Record<string, unknown>, goalId: string | number): RegistryGoal | undefined {
  const args = parseArguments(
    z.strictObject({
      registry: z
        .custom<Record<string, unknown>>(isPlainObject)
        .describe('a registry object, as readJson or readRegistry return it'),
      goalId: z
        .union([z.number().finite(), goalIdArgument])
        .describe('a goal id such as "my-goal-id" (a number matches the same id stored as a string)'),
    }),
    { registry, goalId },
    { functionName: 'findRegistryGoal' },
  );
  return findGoalEntry(args.registry, args.goalId);
}

const ListGoalsArguments = z.strictObject({
  registryPath: registryPathArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
});
export type ListGoalsOptions = z.input<typeof ListGoalsArguments>;

/**
 * The goals of a registry as the editor's Goals view shows them: names, status, state file, runtime
 * root, registered agents and normalized quota. A missing registry has no goals; an unreadable one
 * throws its LoopxError (`registry_invalid_json`, `registry_not_object`).
 */
export async function listGoals(options: ListGoalsOptions): Promise<GoalSummary[]> {
  const args = parseArguments(ListGoalsArguments, options, { functionName: 'listGoals', root: 'options' });
  const registryPath = resolvedPath(args.registryPath);
  const snapshot = await loadRegistrySnapshot(registryPath, {
    homeDir: homeDirOf(args.homeDir),
    ...(args.runtimeRootOverride === undefined ? {} : { runtimeRootOverride: args.runtimeRootOverride }),
  });
  if (!snapshot.ok) {
    const { code, message, ...position } = snapshot.error;
    throw new LoopxError(code, message, { registry: registryPath, ...position });
  }
  return snapshot.goals;
}
