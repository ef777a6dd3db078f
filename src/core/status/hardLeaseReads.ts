import * as fs from 'node:fs';
import { leaseDir, leaseFiles, readLeaseSync } from '../leases/store';
import type { HardLeaseRead } from './channelProjection';

/**
 * The goal's hard task lease files (`<runtime>/goals/<goal>/task-leases/todo_*.json`) as the goal channel projection
 * reads them when answering (whether a lease is active depends on the time: never cached). A goal without leases has
 * no folder: one existence check (a listing of a missing folder costs an exception); else one directory listing.
 */
export function readHardLeases(goal: { runtimeRoot: string; goalId: string }): HardLeaseRead[] {
  if (!fs.existsSync(leaseDir(goal))) return [];
  return leaseFiles(goal).map((file): HardLeaseRead => {
    try {
      return { file, record: readLeaseSync(file) };
    } catch {
      return { file, unreadable: true };
    }
  });
}
