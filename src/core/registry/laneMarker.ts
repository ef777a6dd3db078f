import * as fs from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';

/**
 * The marker of a lane worktree (docs/lanes.md): `loopx-lane.json` in the worktree's private git
 * folder (`<common git dir>/worktrees/<name>/`, never in the tree, so never committed) names the main
 * checkout's registry, so `loopx` run anywhere in a lane finds the goal's registry, state file and
 * runtime instead of a stale copy the branch may carry.
 */

export const LANE_MARKER_FILE = 'loopx-lane.json';
export const LANE_MARKER_SCHEMA = 'loopx_lane_marker_v0';

export const LaneMarkerSchema = z.object({
  schema_version: z.literal(LANE_MARKER_SCHEMA),
  goal_id: z.string(),
  agent_id: z.string(),
  branch: z.string(),
  registry_path: z.string(),
  project_root: z.string(),
});
export type LaneMarker = z.infer<typeof LaneMarkerSchema>;

/** The marker of the lane worktree `folder` is in (the nearest `.git` above it is a lane's), or null. */
export function findLaneMarker(folder: string): LaneMarker | null {
  let current = path.resolve(folder);
  for (;;) {
    const dotGit = path.join(current, '.git');
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(dotGit);
    } catch {
      stat = undefined;
    }
    if (stat !== undefined) {
      // A `.git` folder is a main checkout; only a worktree has a `.git` file pointing at its git folder.
      if (!stat.isFile()) return null;
      try {
        const pointer = /^gitdir:\s*(.+)$/m.exec(fs.readFileSync(dotGit, 'utf8'))?.[1]?.trim();
        if (pointer === undefined) return null;
        const marker = path.join(path.resolve(current, pointer), LANE_MARKER_FILE);
        const parsed = LaneMarkerSchema.safeParse(JSON.parse(fs.readFileSync(marker, 'utf8')));
        return parsed.success ? parsed.data : null;
      } catch {
        return null;
      }
    }
    const parent = path.dirname(current);
    if (parent === current) return null;
    current = parent;
  }
}
