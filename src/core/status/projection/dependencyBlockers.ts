import { z } from 'zod';
import { collapseWhitespace, truncateText } from './text';

/**
 * The original's `dependency_blockers` (loopx/control_plane/todos/todo_summary.py `attach_dependency_blockers`): each
 * goal's item lists the open user todos of the **other** goals in the queue (goals in the original's order, sorted
 * by id), the first 4, with their goal's route, so an agent sees what the people it waits on also have on their desk.
 * Absent when there are none.
 */

export const MAX_DEPENDENCY_BLOCKERS = 4;

export const DependencyBlockersSchema = z.object({
  source: z.literal('attention_queue.user_todos'),
  open_count: z.number().int(),
  items: z.array(
    z.object({
      goal_id: z.string(),
      status: z.string(),
      waiting_on: z.string(),
      severity: z.string(),
      index: z.number().int(),
      text: z.string(),
      source: z.literal('user_todos'),
    }),
  ),
});
export type DependencyBlockers = z.infer<typeof DependencyBlockersSchema>;

export interface BlockerSource {
  goal_id: string;
  status: string;
  waiting_on: string;
  severity: string;
  user_todos: { items: readonly { index: number; done: boolean; text: string }[] } | null;
}

/** The blockers of every goal, by goal id (goals without any are left out). */
export function dependencyBlockers(items: readonly BlockerSource[]): Map<string, DependencyBlockers> {
  const ordered = [...items].sort((a, b) => (a.goal_id < b.goal_id ? -1 : a.goal_id > b.goal_id ? 1 : 0));
  const all = ordered.flatMap((item) =>
    (item.user_todos?.items ?? [])
      .filter((todo) => !todo.done)
      .map((todo) => ({
        goal_id: item.goal_id,
        status: item.status,
        waiting_on: item.waiting_on,
        severity: item.severity,
        index: todo.index,
        text: truncateText(collapseWhitespace(todo.text), 220),
        source: 'user_todos' as const,
      }))
      .filter((blocker) => blocker.text !== ''),
  );
  // Per goal: every other goal's blockers are counted, and the first few listed (not all of them filtered per goal).
  const own = new Map<string, number>();
  for (const blocker of all) own.set(blocker.goal_id, (own.get(blocker.goal_id) ?? 0) + 1);
  const result = new Map<string, DependencyBlockers>();
  for (const item of items) {
    const openCount = all.length - (own.get(item.goal_id) ?? 0);
    if (openCount === 0) continue;
    const listed: (typeof all)[number][] = [];
    for (const blocker of all) {
      if (listed.length >= MAX_DEPENDENCY_BLOCKERS) break;
      if (blocker.goal_id !== item.goal_id) listed.push(blocker);
    }
    result.set(item.goal_id, { source: 'attention_queue.user_todos', open_count: openCount, items: listed });
  }
  return result;
}
