import type { Clock } from '../clock';
import { goalQuotaSummary, type GoalQuotaSummary } from '../scheduling/shouldRun';
import { quotaGoalFromEntry } from '../quota/goal';
import type { GoalStatusTarget } from './goalStatus';
import type { StatusQuotaSources } from './statusPayload';

export interface StatusQuotaOptions {
  /** The registry `loadStatus` reads (absolute). */
  registryPath: string;
  clock: Clock;
  runtimeRootOverride?: string | null | undefined;
  homeDir: string;
}

/**
 * The `quotaSummary` of a `loadStatus` request: each goal's quota summary from what status already
 * read (the goal's registry entry, with its project and runtime root resolved once for all goals,
 * and its run index), so no goal re-reads the registry or its index.
 */
export function statusQuotaSummaries(
  options: StatusQuotaOptions,
): (goal: GoalStatusTarget, sources: StatusQuotaSources) => Promise<GoalQuotaSummary> {
  const runtimeRootOverride = options.runtimeRootOverride ?? undefined;
  return (target, sources) =>
    goalQuotaSummary({
      registryPath: options.registryPath,
      goalId: target.goalId,
      clock: options.clock,
      runtimeRootOverride,
      homeDir: options.homeDir,
      registry: sources.registry,
      ...(sources.registryEntry !== undefined
        ? {
            goal: quotaGoalFromEntry(sources.registryEntry, {
              goalId: target.goalId,
              registryPath: options.registryPath,
              projectRoot: target.projectRoot,
              runtimeRoot: target.runtimeRoot,
              homeDir: options.homeDir,
            }),
          }
        : {}),
      ...(sources.runIndex !== undefined ? { runIndex: sources.runIndex } : {}),
      ...(sources.indexDigest !== undefined ? { indexDigest: sources.indexDigest } : {}),
    });
}
