import { z } from 'zod';

/**
 * The original's `completed_todo_archive_warning` (loopx/control_plane/todos/completed_archive.py): when the state
 * file's agent todo summary counts more than 12 done todos (`done_count`, done and deferred as LoopX counts them), the
 * active Agent Todo section should be archived down to 10 (12 less a headroom of 2) with `todo archive-completed`.
 * On the item and in its `project_asset` block, as the original's active-state fields are.
 */

export const MAX_ACTIVE_DONE_TODOS = 12;
const ARCHIVE_HEADROOM = 2;

export const CompletedTodoArchiveWarningSchema = z.object({
  kind: z.literal('completed_agent_todo_archive_required'),
  requires_archive: z.literal(true),
  archive_section: z.literal('Completed Work Archive'),
  active_done_count: z.number().int(),
  active_open_count: z.number().int(),
  max_active_done_count: z.number().int(),
  default_archive_keep_count: z.number().int(),
  archive_command_template: z.string(),
  recommended_action: z.string(),
});
export type CompletedTodoArchiveWarning = z.infer<typeof CompletedTodoArchiveWarningSchema>;

export function completedTodoArchiveWarning(
  agentTodos: { done_count: number; open_count: number } | null | undefined,
): CompletedTodoArchiveWarning | null {
  if (agentTodos === null || agentTodos === undefined) return null;
  if (agentTodos.done_count <= MAX_ACTIVE_DONE_TODOS) return null;
  const keep = Math.max(0, MAX_ACTIVE_DONE_TODOS - ARCHIVE_HEADROOM);
  return {
    kind: 'completed_agent_todo_archive_required',
    requires_archive: true,
    archive_section: 'Completed Work Archive',
    active_done_count: agentTodos.done_count,
    active_open_count: agentTodos.open_count,
    max_active_done_count: MAX_ACTIVE_DONE_TODOS,
    default_archive_keep_count: keep,
    archive_command_template: `loopx todo archive-completed --goal-id <goal-id> --max-active-done ${keep} --execute`,
    recommended_action:
      'move older completed Agent Todo entries into a dedicated Completed Work Archive ' +
      'until the active Agent Todo section keeps only current open work and a small recent-done tail',
  };
}
