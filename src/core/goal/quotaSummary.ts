import { quotaSummary, type GoalQuotaSummary } from '../quota/summary';
import { latestStatusRun } from '../runtime/runIndex';
import type { GoalSnapshot } from './snapshot';

/**
 * The goal's quota summary (`quota status`, `quota history`, `quota plan`): a function of its snapshot
 * (`GoalLoader.load`), which reads nothing. Its todos and leases play no part.
 */
export function goalQuotaSummary(snapshot: Pick<GoalSnapshot, 'goal' | 'quota' | 'runs'>): GoalQuotaSummary {
  const runs = snapshot.runs;
  return quotaSummary({
    goal: snapshot.goal,
    quota: snapshot.quota,
    latestStatusRun: runs.kind === 'history' ? runs.latestStatusRun : latestStatusRun(runs.rows),
  });
}
