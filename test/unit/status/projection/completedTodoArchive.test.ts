import assert from 'node:assert/strict';
import { completedTodoArchiveWarning } from '../../../../src/core/status/projection/completedTodoArchive';

/** The original's `completed_todo_archive_warning` (loopx/control_plane/todos/completed_archive.py). */
describe('status item: completed_todo_archive_warning', () => {
  it('more than 12 done agent todos ask for an archive down to 10; 12 or fewer, or no summary, do not', () => {
    assert.deepEqual(completedTodoArchiveWarning({ done_count: 13, open_count: 4 }), {
      kind: 'completed_agent_todo_archive_required',
      requires_archive: true,
      archive_section: 'Completed Work Archive',
      active_done_count: 13,
      active_open_count: 4,
      max_active_done_count: 12,
      default_archive_keep_count: 10,
      archive_command_template: 'loopx todo archive-completed --goal-id <goal-id> --max-active-done 10 --execute',
      recommended_action:
        'move older completed Agent Todo entries into a dedicated Completed Work Archive ' +
        'until the active Agent Todo section keeps only current open work and a small recent-done tail',
    });
    assert.equal(completedTodoArchiveWarning({ done_count: 12, open_count: 0 }), null);
    assert.equal(completedTodoArchiveWarning(null), null);
  });
});
