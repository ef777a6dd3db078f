import * as path from 'node:path';
import { LoopxError } from '../errors';
import { checkGoalIdSegment } from '../registry/goalId';
import type { GoalRef } from '../registry/goalRef';
import { resolveGoalStatePath } from '../registry/locate';
import { goalRuntimeDir } from '../runtime/layout';
import { readQuotaConfig, type QuotaConfig } from './config';

/**
 * What quota code reads of a goal: these fields of its `GoalRef` (quota code takes
 * `Pick<GoalRef, QuotaRefKeys>`, so status can hand in the part of a reference it builds from a registry entry).
 * The quota configuration is read from `rawEntry` (`quotaConfigOf`).
 */
export type QuotaRefKeys =
  'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'runtimeDir' | 'statePath' | 'rawEntry';

/**
 * The goal's quota configuration (its registry entry's `quota`, normalized), refused when its window is
 * longer than any date can hold (`quota_window_out_of_range`). Reads no file.
 */
export function quotaConfigOf(goal: Pick<GoalRef, QuotaRefKeys>): QuotaConfig {
  const config = readQuotaConfig(goal.rawEntry);
  checkQuotaWindow(config, goal);
  return config;
}

/**
 * Longest quota window LoopX accounts (about 114 years). The start of a far longer window is not a
 * date (1e308 hours made every quota command fail with "Invalid time value").
 */
export const MAX_WINDOW_HOURS = 1_000_000;

/** Refuses a quota window no date can hold (`quota_window_out_of_range`, naming the registry, the goal and the field). */
function checkQuotaWindow(config: QuotaConfig, goal: Pick<GoalRef, QuotaRefKeys>): void {
  const hours = config.slots.window_hours;
  if (hours <= MAX_WINDOW_HOURS) return;
  const goalId = goal.goalId;
  const registryPath = path.resolve(goal.registryPath);
  throw new LoopxError(
    'quota_window_out_of_range',
    `${registryPath}: goal '${goalId}' has quota.window_hours ${hours}, more than the ${MAX_WINDOW_HOURS} hours LoopX can account. ` +
      `Set quota.window_hours to a whole number of hours from 1 to ${MAX_WINDOW_HOURS} (e.g. loopx configure-goal), then retry.`,
    { path: registryPath, goal_id: goalId, field: 'quota.window_hours', value: hours, max: MAX_WINDOW_HOURS },
  );
}

/**
 * The part of a `GoalRef` quota code reads, from a raw registry entry (the object in `registry.goals`) at the
 * place its reader resolved (the runtime root with any override applied, the project the registry belongs
 * to, the home `~` expands to), its quota window checked (`quotaConfigOf`). Reads no file.
 */
export function quotaRefOfEntry(
  entry: Record<string, unknown>,
  place: Pick<GoalRef, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'homeDir'>,
): Pick<GoalRef, QuotaRefKeys> {
  const { runtimeRoot, homeDir } = place;
  const goalId = checkGoalIdSegment(place.goalId);
  const runtimeDir = goalRuntimeDir(runtimeRoot, goalId);
  const ref = {
    goalId,
    registryPath: path.resolve(place.registryPath),
    projectRoot: place.projectRoot,
    runtimeRoot,
    runtimeDir,
    statePath: resolveGoalStatePath(entry, goalId, homeDir),
    rawEntry: entry,
  };
  quotaConfigOf(ref);
  return ref;
}
