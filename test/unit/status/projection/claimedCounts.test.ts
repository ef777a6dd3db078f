import assert from 'node:assert/strict';
import { claimedCounts, type CountedTodo } from '../../../../src/core/status/projection/claimedCounts';
import { todoTaskClass } from '../../../../src/core/status/projection/todoTaskClass';

/**
 * The original's claimed counts on a todo summary and the task class it reads for them (the mixed tier compares the
 * counts with its own; the classes below were checked against its `normalize_todo_task_class`).
 */

function todo(over: Partial<CountedTodo>): CountedTodo {
  return { status: 'open', claimed_by: null, task_class: null, text: 'Do it', actionable: true, ...over };
}

describe('status todo summary: claimed_open_count and its advancement / monitor split', () => {
  it('counts open (and blocked) todos with a valid claim; of them the actionable ones by class', () => {
    assert.deepEqual(
      claimedCounts([
        todo({ claimed_by: 'codex-a', task_class: 'advancement_task' }),
        todo({ claimed_by: 'Codex B', text: 'Watch the nightly build' }),
        todo({ claimed_by: 'codex-a', text: 'Fix it', actionable: false }),
        todo({ status: 'blocked', claimed_by: 'codex-a', actionable: false }),
        todo({}),
        todo({ claimed_by: '!bad' }),
        todo({ status: 'done', claimed_by: 'codex-a', actionable: false }),
        todo({ status: 'deferred', claimed_by: 'codex-a', actionable: false }),
      ]),
      {
        claimed_open_count: 4,
        unclaimed_open_count: 2,
        claimed_advancement_open_count: 1,
        claimed_monitor_open_count: 1,
      },
    );
  });

  it('absent when no open todo is claimed (a claimed done todo does not count)', () => {
    assert.equal(claimedCounts([todo({}), todo({ status: 'done', claimed_by: 'codex-a', actionable: false })]), null);
    assert.equal(claimedCounts([]), null);
  });

  it('the task class: explicit, then the action kind, then the text as the original reads it', () => {
    const cases: [Parameters<typeof todoTaskClass>[0], string][] = [
      [{ text: 'Review', task_class: 'USER_GATE' }, 'user_gate'],
      [{ text: 'Review', task_class: 'weird', action_kind: 'watch' }, 'continuous_monitor'],
      [{ text: 'Review', task_class: null, action_kind: 'fix' }, 'advancement_task'],
      [{ text: 'Watch the nightly build', task_class: null }, 'continuous_monitor'],
      [{ text: '[P2] watch the nightly build', task_class: null }, 'advancement_task'],
      [{ text: 'Do not run the eval until the owner approves', task_class: null }, 'continuous_monitor'],
      [{ text: 'Implement the parser: waiting for user', task_class: null }, 'advancement_task'],
      // Hard monitor words win over a leading verb; blocked words do not.
      [{ text: 'Run the sweep, but do not start it until the owner approves', task_class: null }, 'continuous_monitor'],
      [{ text: 'Fix the loader while waiting on the owner', task_class: null }, 'advancement_task'],
      [{ text: 'step: poll the queue', task_class: null }, 'continuous_monitor'],
      [{ text: 'credential missing', task_class: null }, 'continuous_monitor'],
      [{ text: 'Review the draft', task_class: null }, 'advancement_task'],
    ];
    assert.deepEqual(
      cases.map(([input]) => todoTaskClass(input)),
      cases.map(([, expected]) => expected),
    );
  });
});
