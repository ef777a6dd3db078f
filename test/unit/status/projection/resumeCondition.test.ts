import assert from 'node:assert/strict';
import { parseStateDocument } from '../../../../src/core/state/document';
import { normalizeResumeWhen, resumeFields } from '../../../../src/core/status/projection/resumeCondition';

/**
 * A todo's resume condition on the status summaries (the original todo_summary.py `apply_resume_conditions`): the
 * `todo_done` target looked up among the state file's todos, a capability condition, an unsupported kind, and a value
 * outside the grammar (no fields).
 */

const STATE = `---
status: active
---

# Active Goal State

## User Todo

## Agent Todo

- [ ] [P0] First
  <!-- loopx:todo todo_id=todo_aaaaaaaaaaaa status=open task_class=advancement_task claimed_by=codex-a -->
- [x] Second
  <!-- loopx:todo todo_id=todo_bbbbbbbbbbbb status=done -->
`;

describe('status todos: the resume condition (resume_when, resume_condition, resume_ready)', () => {
  const doc = parseStateDocument(STATE);

  it('todo_done: the target todo, its status, section, class and claim; ready when it is done', () => {
    assert.deepEqual(resumeFields('todo_done:todo_aaaaaaaaaaaa', doc), {
      resume_when: 'todo_done:todo_aaaaaaaaaaaa',
      resume_condition: {
        schema_version: 'todo_resume_condition_v0',
        resume_when: 'todo_done:todo_aaaaaaaaaaaa',
        satisfied: false,
        kind: 'todo_done',
        target: 'todo_aaaaaaaaaaaa',
        target_todo_id: 'todo_aaaaaaaaaaaa',
        target_status: 'open',
        target_archive_state: 'active',
        target_source_section: 'Agent Todo',
        target_task_class: 'advancement_task',
        target_claimed_by: 'codex-a',
      },
      resume_ready: false,
    });
    const done = resumeFields('  TODO_DONE:todo_bbbbbbbbbbbb ', doc);
    assert.deepEqual([done.resume_when, done.resume_ready], ['todo_done:todo_bbbbbbbbbbbb', true]);
    const unknown = resumeFields('todo_done:todo_cccccccccccc', doc);
    assert.deepEqual(
      [
        unknown.resume_condition?.['target_status'],
        unknown.resume_ready,
        'target_archive_state' in (unknown.resume_condition ?? {}),
      ],
      [null, false, false],
    );
  });

  it('capacity and other kinds; values outside the grammar carry nothing', () => {
    const capacity = resumeFields('capacity_available:gpu', doc).resume_condition;
    assert.deepEqual(
      [capacity?.['provider'], capacity?.['provider_required'], capacity?.['capability'], capacity?.['satisfied']],
      ['runtime_available_capabilities', true, 'gpu', false],
    );
    assert.equal(resumeFields('tomorrow', doc).resume_condition?.['unsupported'], true);
    assert.equal(resumeFields('capacity_available', doc).resume_condition?.['unsupported'], true);
    assert.equal(resumeFields('pr_merged:#12', doc).resume_condition?.['unsupported'], undefined);
    assert.deepEqual(resumeFields('Not A Condition!', doc), {});
    assert.deepEqual(resumeFields(undefined, doc), {});
    assert.equal(normalizeResumeWhen('pr_merged:Owner/Repo#7'), 'pr_merged:owner/repo#7');
  });
});
