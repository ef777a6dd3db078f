import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import { selectTodo } from '../../../src/core/todo/runnable';

// The original's claim-scoped view applies only to a named agent: an unscoped should-run (no --agent-id) lists a
// todo claimed by any agent, a stale claim of an agent off the roster included, as executable (kit seeds 1
// quota-008, 3 quota-012/-024). A named agent still skips another agent's claim.
const STATE = [
  '## Agent Todo',
  '',
  '- [ ] [P0] Refactor the state loader',
  '  <!-- loopx:todo todo_id=todo_ghost status=open task_class=advancement_task claimed_by=codex-ghost -->',
  '- [ ] [P2] Write the docs',
  '  <!-- loopx:todo todo_id=todo_docs status=open task_class=advancement_task -->',
  '',
].join('\n');

const select = (agentId: string | null) =>
  selectTodo({ doc: parseStateDocument(STATE), agentId, availableCapabilities: [], now: 0 }).selected?.todo_id;

describe('todo selection: claims and unscoped decisions', () => {
  it('an unscoped decision sees claimed todos; a named agent skips the claims of others', () => {
    assert.equal(select(null), 'todo_ghost');
    assert.equal(select('codex-main'), 'todo_docs');
    assert.equal(select('codex-ghost'), 'todo_ghost');
  });
});
