import { leaseFiles, readLeaseSync } from '../leases/store';
import type { HardLeaseRead } from './channelProjection';

/**
 * The goal's hard task lease files (`<runtime>/goals/<goal>/task-leases/todo_*.json`) as the goal channel projection
 * reads them when answering (whether a lease is active depends on the time: never cached). One directory listing per
 * goal; a goal without leases has no folder and costs that listing only.
 */
export function readHardLeases(goal: { runtimeRoot: string; goalId: string }): HardLeaseRead[] {
  return leaseFiles(goal).map((file): HardLeaseRead => {
    try {
      return { file, record: readLeaseSync(file) };
    } catch {
      return { file, unreadable: true };
    }
  });
}
