import * as os from 'node:os';
import * as path from 'node:path';
import { LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import { registryProjectRoot, resolveGoalStatePath, resolveRuntimeRoot } from '../registry/locate';
import { findRawRegistryGoal, readRegistry } from '../registry/read';
import { goalRuntimeDir } from '../runtime/layout';
import { readQuotaConfig, type QuotaConfig } from './config';

/** Everything quota code needs to know about one registered goal, loaded once per operation. */
export interface QuotaGoal {
  goalId: string;
  registryPath: string;
  /** The registry's project: relative run-artifact paths resolve against it. */
  projectRoot: string;
  runtimeRoot: string;
  /** `<runtime>/goals/<goal>`: holds `runs/` and the reservations file. */
  goalRuntimeDir: string;
  /** The raw registry entry (unknown fields kept). */
  goal: Record<string, unknown>;
  config: QuotaConfig;
  /** Absolute path of ACTIVE_GOAL_STATE.md, or null when the goal has none that can be resolved. */
  statePath: string | null;
}

export interface LoadQuotaGoalOptions {
  registryPath: string;
  goalId: string;
  /** `--runtime-root`; default: the registry's `common_runtime_root`. */
  runtimeRootOverride?: string | undefined;
  /** For `~` expansion; default the OS home directory. */
  homeDir?: string | undefined;
}

/** Loads the goal, or null when the registry has no goal with this id. */
export async function findQuotaGoal(options: LoadQuotaGoalOptions): Promise<QuotaGoal | null> {
  return quotaGoalFromRegistry(await readRegistry(path.resolve(options.registryPath)), options);
}

/**
 * The goal from a registry document the caller already read (`options.registryPath` is where it
 * came from), or null when it has no goal with this id. Reads no file.
 */
export function quotaGoalFromRegistry(
  registry: Record<string, unknown>,
  options: LoadQuotaGoalOptions,
): QuotaGoal | null {
  const goalId = checkGoalIdSegment(options.goalId);
  const homeDir = options.homeDir ?? os.homedir();
  const registryPath = path.resolve(options.registryPath);
  const goal = findRawRegistryGoal(registry, goalId);
  if (goal === undefined) return null;
  const runtimeRoot = resolveRuntimeRoot({ registryPath, registry, override: options.runtimeRootOverride, homeDir });
  return quotaGoalFromEntry(goal, {
    goalId,
    registryPath,
    projectRoot: registryProjectRoot(registryPath),
    runtimeRoot,
    homeDir,
  });
}

/**
 * The quota goal of a raw registry entry (the object in `registry.goals`, e.g. from
 * `rawRegistryGoalsById`) at the place its reader resolved (a `GoalRef`'s fields: the runtime root with
 * any override applied, the project the registry belongs to, the home `~` expands to). Reads no file.
 */
export function quotaGoalFromEntry(
  goal: Record<string, unknown>,
  place: Pick<QuotaGoal, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot'> & { homeDir: string },
): QuotaGoal {
  const goalId = checkGoalIdSegment(place.goalId);
  const { homeDir, runtimeRoot } = place;
  const registryPath = path.resolve(place.registryPath);
  const statePath = resolveGoalStatePath(goal, goalId, homeDir);
  const config = readQuotaConfig(goal);
  checkQuotaWindow(config, goalId, registryPath);
  return {
    goalId,
    registryPath,
    projectRoot: place.projectRoot,
    runtimeRoot,
    goalRuntimeDir: goalRuntimeDir(runtimeRoot, goalId),
    goal,
    config,
    statePath,
  };
}

/**
 * Longest quota window LoopX accounts (about 114 years). The start of a far longer window is not a
 * date (1e308 hours made every quota command fail with "Invalid time value").
 */
export const MAX_WINDOW_HOURS = 1_000_000;

/** Refuses a quota window no date can hold (`quota_window_out_of_range`, naming the registry, the goal and the field). */
export function checkQuotaWindow(config: QuotaConfig, goalId: string, registryPath: string): void {
  const hours = config.slots.window_hours;
  if (hours <= MAX_WINDOW_HOURS) return;
  throw new LoopxError(
    'quota_window_out_of_range',
    `${registryPath}: goal '${goalId}' has quota.window_hours ${hours}, more than the ${MAX_WINDOW_HOURS} hours LoopX can account. ` +
      `Set quota.window_hours to a whole number of hours from 1 to ${MAX_WINDOW_HOURS} (e.g. loopx configure-goal), then retry.`,
    { path: registryPath, goal_id: goalId, field: 'quota.window_hours', value: hours, max: MAX_WINDOW_HOURS },
  );
}

/**
 * The goal as the registry says it now: its entry is read again from `goal.registryPath` (stop flag,
 * quota, budgets, executors), at the place the caller resolved (runtime root, project). Admission
 * decides on this, never on the snapshot an operation took when it started (a running loop would
 * otherwise ignore a pause or a lowered limit). A goal removed meanwhile is `goal_not_found`.
 */
export async function reloadQuotaGoal(
  goal: QuotaGoal,
  homeDir: string,
): Promise<{
  goal: QuotaGoal;
  document: Record<string, unknown>;
}> {
  const document = await readRegistry(goal.registryPath);
  const entry = findRawRegistryGoal(document, goal.goalId);
  if (entry === undefined) {
    throw new LoopxError(
      'goal_not_found',
      `goal '${goal.goalId}' is no longer in the registry ${goal.registryPath}; no new turn starts`,
      { goal_id: goal.goalId, registry: goal.registryPath },
    );
  }
  return {
    goal: quotaGoalFromEntry(entry, {
      goalId: goal.goalId,
      registryPath: goal.registryPath,
      projectRoot: goal.projectRoot,
      runtimeRoot: goal.runtimeRoot,
      homeDir,
    }),
    document,
  };
}

/** Loads the goal; a goal missing from the registry is LoopxError `goal_not_found`. */
export async function loadQuotaGoal(options: LoadQuotaGoalOptions): Promise<QuotaGoal> {
  const loaded = await findQuotaGoal(options);
  if (loaded === null) {
    throw new LoopxError(
      'goal_not_found',
      `goal '${options.goalId}' is not in the registry ${options.registryPath}; check --goal-id or add the goal with loopx bootstrap`,
      {
        goal_id: options.goalId,
        registry: options.registryPath,
      },
    );
  }
  return loaded;
}
