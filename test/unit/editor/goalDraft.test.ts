import assert from 'node:assert/strict';
import {
  draftPriority,
  readDraftDocument,
  readModelDraft,
  renderDraftDocument,
  templateDraft,
} from '../../../src/lm/goalDraft';

describe('goal draft (a goal from a sentence)', () => {
  const draft = {
    goal_id: 'weekly-digest',
    objective: 'Publish a weekly digest.',
    todos: ['Collect the notes.', 'Write the digest.'],
    gates: ['Approve the digest.'],
  };

  it('reads a fenced JSON draft from the model reply', () => {
    const reading = readModelDraft(`Sure.\n\n\`\`\`json\n${JSON.stringify(draft)}\n\`\`\`\n`);
    assert.deepEqual(reading, { ok: true, draft });
  });

  it('refuses a reply without JSON, or a draft that breaks the schema, naming the fields', () => {
    const none = readModelDraft('I would start by reading the notes.');
    assert.equal(none.ok, false);
    assert.match(!none.ok ? none.message : '', /without a JSON draft/);
    const bad = readModelDraft('```json\n{"goal_id": "Bad Id!", "objective": "", "todos": []}\n```');
    assert.equal(bad.ok, false);
    const message = !bad.ok ? bad.message : '';
    assert.match(message, /goal_id/);
    assert.match(message, /todos/);
    assert.match(message, /nothing was written/);
  });

  it('round-trips the review document, and reads the user edits exactly (order = priority)', () => {
    const text = renderDraftDocument(draft, 'test');
    assert.deepEqual(readDraftDocument(text), { ok: true, draft });
    const edited = text.replace('- Collect the notes.\n', '').replace('- Write the digest.', '- Write it.\n- Send it.');
    const reading = readDraftDocument(edited);
    assert.ok(reading.ok);
    assert.deepEqual(reading.draft.todos, ['Write it.', 'Send it.']);
    assert.deepEqual(
      reading.draft.todos.map((_t, i) => draftPriority(i)),
      ['P1', 'P2'],
    );
  });

  it('names the line of a document it cannot read, and an empty todo list', () => {
    const stray = readDraftDocument(`${renderDraftDocument(draft, 'test')}\nsome stray words\n`);
    assert.equal(stray.ok, false);
    assert.match(!stray.ok ? stray.message : '', /draft line \d+: "some stray words"/);
    const empty = readDraftDocument(renderDraftDocument({ ...draft, todos: [] }, 'test'));
    assert.equal(empty.ok, false);
    assert.match(!empty.ok ? empty.message : '', /todos/);
  });

  it('offers a template without a model, with a slug id from the sentence', () => {
    const template = templateDraft('Tidy the notes folder, then publish an index!');
    assert.equal(template.goal_id, 'tidy-the-notes-folder-then');
    assert.equal(template.todos.length, 3);
  });
});
