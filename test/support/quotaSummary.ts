import type { Clock } from '../../src/core/clock';
import { GoalLoader } from '../../src/core/goal/loader';
import { goalQuotaSummary } from '../../src/core/goal/quotaSummary';
import { loadGoalRef } from './goalRef';
import type { GoalQuotaSummary } from '../../src/core/quota/summary';

/** A goal's quota summary as `loopx quota status` computes it: the goal loaded once (`GoalLoader`), then the pure summary. */
export async function loadedQuotaSummary(options: {
  registryPath: string;
  goalId: string;
  clock: Clock;
  homeDir?: string;
}): Promise<GoalQuotaSummary> {
  const goal = await loadGoalRef(options);
  return goalQuotaSummary(await new GoalLoader().load(goal, { clock: options.clock, indexCache: 'off' }));
}
