import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../src/core/state/document';
import {
  deferredTodoDue,
  deferredTodoDueWithQuota,
  openTodoResumeHolds,
  resumesOnTodo,
  resumeTodoDoneId,
} from '../../../src/core/todo/resume';
import { selectTodo } from '../../../src/core/todo/runnable';

/**
 * The readings of a todo's `resume_when` (src/core/todo/resume.ts), side by side: should-run's "is this deferred
 * todo due?", global-todos' (which also reads a bare `capacity_available` against the goal's quota), and
 * status's "may this open todo run?" (trimmed; no condition holds). Each case below pins where they differ.
 */

const todos = [
  { todoId: 'todo_done1', status: 'done' as const },
  { todoId: 'todo_open1', status: 'open' as const },
];

describe('todo/resume: the readings of resume_when', () => {
  it('reads the todo a todo_done condition waits on, and nothing from the other conditions', () => {
    assert.equal(resumeTodoDoneId('todo_done:todo_abc'), 'todo_abc');
    assert.equal(resumeTodoDoneId('todo_done:'), null);
    assert.equal(resumeTodoDoneId('pr_merged:#12'), null);
    assert.equal(resumeTodoDoneId('capacity_available:gpu'), null);
    assert.equal(resumesOnTodo('todo_done:todo_abc', 'todo_abc'), true);
    assert.equal(resumesOnTodo('todo_done:todo_abc', 'todo_abd'), false);
    assert.equal(resumesOnTodo(undefined, 'todo_abc'), false);
  });

  it('a deferred todo is due once the todo it names is done; pr_merged and capacity never (should-run)', () => {
    assert.equal(deferredTodoDue('todo_done:todo_done1', todos), true);
    assert.equal(deferredTodoDue('todo_done:todo_open1', todos), false);
    assert.equal(deferredTodoDue('todo_done:todo_missing', todos), false);
    assert.equal(deferredTodoDue(undefined, todos), false);
    assert.equal(deferredTodoDue('pr_merged:#3', todos), false);
    assert.equal(deferredTodoDue('capacity_available:gpu', todos), false);
    assert.equal(deferredTodoDue('capacity_available', todos), false);
    // Read as written: a condition with spaces around it is not due (status reads it trimmed, below).
    assert.equal(deferredTodoDue(' todo_done:todo_done1', todos), false);
  });

  it("global-todos: a bare capacity_available holds while the goal's quota has capacity; the rest as should-run", () => {
    assert.equal(deferredTodoDueWithQuota('capacity_available', todos, 'available'), true);
    assert.equal(deferredTodoDueWithQuota('capacity_available', todos, 'throttled'), false);
    assert.equal(deferredTodoDueWithQuota('capacity_available', todos, 'paused'), false);
    assert.equal(deferredTodoDueWithQuota('capacity_available', todos, undefined), false);
    assert.equal(deferredTodoDueWithQuota('capacity_available:gpu', todos, 'available'), false);
    assert.equal(deferredTodoDueWithQuota('todo_done:todo_done1', todos, undefined), true);
    assert.equal(deferredTodoDueWithQuota('todo_done:todo_open1', todos, 'available'), false);
    assert.equal(deferredTodoDueWithQuota(undefined, todos, 'available'), false);
  });

  it('status: an open todo without a condition may run; with one, only when it holds, read trimmed', () => {
    assert.equal(openTodoResumeHolds(undefined, todos), true);
    assert.equal(openTodoResumeHolds('   ', todos), true);
    assert.equal(openTodoResumeHolds('todo_done:todo_done1', todos), true);
    assert.equal(openTodoResumeHolds(' todo_done:todo_done1 ', todos), true);
    assert.equal(openTodoResumeHolds('todo_done:todo_open1', todos), false);
    assert.equal(openTodoResumeHolds('pr_merged:#3', todos), false);
    assert.equal(openTodoResumeHolds('capacity_available', todos), false);
  });

  it("should-run's successor fallback takes the deferred todo whose todo_done condition holds, and only it", () => {
    const doc = parseStateDocument(
      [
        '## Agent Todo',
        '',
        '- [x] [P1] Done first',
        '  <!-- loopx:todo todo_id=todo_first status=done -->',
        '- [-] [P1] Waits on a PR',
        '  <!-- loopx:todo todo_id=todo_waitpr status=deferred resume_when=pr_merged:%2312 -->',
        '- [-] [P2] Waits on the first',
        '  <!-- loopx:todo todo_id=todo_waitfirst status=deferred resume_when=todo_done:todo_first -->',
        '',
      ].join('\n'),
    );
    const result = selectTodo({ doc, agentId: null, availableCapabilities: [], now: Date.now() });
    assert.equal(result.selected, null);
    assert.equal(result.successor?.todo_id, 'todo_waitfirst');
  });
});
