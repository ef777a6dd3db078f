import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseStateDocument, type StateDocument, type TodoItem } from '../../../src/core/state/document';
import { splitLines } from '../../../src/core/state/lines';
import {
  bumpFrontMatter,
  claimTodo,
  deferTodo,
  updateTodo,
  type OperationContext,
} from '../../../src/core/state/todos';
import { randomStateDocument } from './randomDocs';

const CORPUS = path.join(__dirname, '../../fixtures/state/corpus');
const context: OperationContext = {
  now: '2026-07-01T00:00:00Z',
  goalId: 'g',
  roster: ['codex-main', 'codex-side', 'codex-prop'],
};

function corpusFiles(): string[] {
  return fs
    .readdirSync(CORPUS)
    .filter((f) => f.endsWith('.md'))
    .sort();
}

/** The document's lines rebuilt byte for byte. */
function rebuild(doc: StateDocument): string {
  return doc.lines.map((l) => l.content + l.eol).join('');
}

/** Lines of `before` and `after` that differ, after removing the common prefix and suffix. */
function changedWindow(before: string, after: string): { from: number; beforeTo: number; afterTo: number } {
  const a = splitLines(before).map((l) => l.content + l.eol);
  const b = splitLines(after).map((l) => l.content + l.eol);
  let from = 0;
  while (from < a.length && from < b.length && a[from] === b[from]) from++;
  let tailA = a.length;
  let tailB = b.length;
  while (tailA > from && tailB > from && a[tailA - 1] === b[tailB - 1]) {
    tailA--;
    tailB--;
  }
  return { from, beforeTo: tailA, afterTo: tailB };
}

/** One single-todo edit and the value it must leave behind. */
const EDITS: readonly {
  name: string;
  apply: (text: string, item: TodoItem) => string;
  check: (item: TodoItem) => void;
}[] = [
  {
    name: 'claim',
    apply: (text, item) =>
      // A claim needs an open todo (the original's rule); a blocked one is claimed through update.
      item.status === 'open'
        ? claimTodo(text, { todoId: item.todoId, agentId: 'codex-prop', takeover: true }, context).text
        : updateTodo(text, { todoId: item.todoId, claimedBy: 'codex-prop' }, context).text,
    check: (item) => assert.equal(item.meta['claimed_by'], 'codex-prop'),
  },
  {
    name: 'update note',
    apply: (text, item) => updateTodo(text, { todoId: item.todoId, note: 'property note = 100%' }, context).text,
    check: (item) => assert.equal(item.meta['note'], 'property note = 100%'),
  },
  {
    name: 'defer',
    apply: (text, item) => deferTodo(text, { todoId: item.todoId, reason: 'waiting on input' }, context).text,
    check: (item) => {
      assert.equal(item.status, 'deferred');
      assert.equal(item.marker, '-');
    },
  },
];

function assertSingleTodoEdit(original: string, label: string, editIndex: number): boolean {
  // Every todo write bumps the front matter's updated_at (as the original does): start from the
  // bumped text, so that the only change left to check is the todo's own.
  const text = bumpFrontMatter(original, context.now);
  const doc = parseStateDocument(text);
  const counts = new Map<string, number>();
  for (const t of doc.todos) counts.set(t.todoId, (counts.get(t.todoId) ?? 0) + 1);
  // An unbounded continuous_monitor refuses every claim and update (the original's rule), so it is not edited here.
  const unboundedMonitor = (t: TodoItem) =>
    t.meta['task_class'] === 'continuous_monitor' &&
    !t.meta['expires_at'] &&
    !t.meta['resume_when'] &&
    t.meta['watch_only'] !== 'true';
  const editable = doc.todos.filter(
    (t) =>
      t.role === 'agent' &&
      !['done', 'deferred'].includes(t.status) &&
      counts.get(t.todoId) === 1 &&
      !unboundedMonitor(t),
  );
  const target = editable[editIndex % Math.max(editable.length, 1)];
  if (!target) return false;
  const edit = EDITS[editIndex % EDITS.length] as (typeof EDITS)[number];
  const after = edit.apply(text, target);
  const window = changedWindow(text, after);
  assert.ok(
    window.from >= target.line,
    `${label} ${edit.name}: change starts at line ${window.from + 1}, before the todo at line ${target.line + 1}`,
  );
  assert.ok(
    window.beforeTo <= target.end,
    `${label} ${edit.name}: change reaches line ${window.beforeTo}, past the todo block ending at ${target.end}`,
  );
  const reparsed = parseStateDocument(after);
  const edited = reparsed.todos.find((t) => t.todoId === target.todoId);
  assert.ok(edited, `${label} ${edit.name}: edited todo ${target.todoId} is still found by its id`);
  edit.check(edited);
  assert.equal(edited.todoIdSource, 'metadata', `${label}: an edited todo carries its id explicitly`);
  // Every other todo reads back the same.
  const others = (d: StateDocument): string[] =>
    d.todos
      .filter((t) => t.todoId !== target.todoId)
      .map((t) => `${t.role}|${t.todoId}|${t.status}|${t.text}|${JSON.stringify(t.meta)}`);
  assert.deepEqual(others(reparsed), others(doc), `${label} ${edit.name}: other todos unchanged`);
  return true;
}

describe('state file round trip', () => {
  it('corpus: parse then serialize is the identity for every fixture', () => {
    const files = corpusFiles();
    assert.ok(files.length >= 15);
    for (const file of files) {
      const text = fs.readFileSync(path.join(CORPUS, file), 'utf8');
      const doc = parseStateDocument(text);
      assert.equal(doc.text, text, file);
      assert.equal(rebuild(doc), text, `${file}: lines rebuild the text`);
    }
  });

  it("corpus: a single todo edit changes only that todo's lines", () => {
    let edited = 0;
    for (const [i, file] of corpusFiles().entries()) {
      const text = fs.readFileSync(path.join(CORPUS, file), 'utf8');
      for (let k = 0; k < 3; k++) if (assertSingleTodoEdit(text, file, i + k)) edited++;
    }
    assert.ok(edited >= 20, `edited ${edited} corpus todos`);
  });

  it('200 seeded random documents: identity, and single todo edits stay local', () => {
    let edited = 0;
    for (let seed = 1; seed <= 200; seed++) {
      const text = randomStateDocument(seed);
      const doc = parseStateDocument(text);
      assert.equal(rebuild(doc), text, `seed ${seed}`);
      if (assertSingleTodoEdit(text, `seed ${seed}`, seed)) edited++;
    }
    assert.ok(edited >= 100, `only ${edited} random documents had an editable todo`);
  });

  it('keeps CRLF endings, a BOM and a missing final newline when editing', () => {
    const crlf = fs.readFileSync(path.join(CORPUS, 'odd-crlf.md'), 'utf8');
    const claimed = claimTodo(crlf, { todoId: 'todo_crlf_one', agentId: 'codex-main' }, context).text;
    assert.ok(!/[^\r]\n/.test(claimed), 'every newline stays CRLF');

    const noFinal = fs.readFileSync(path.join(CORPUS, 'odd-no-final-newline.md'), 'utf8');
    const todo = parseStateDocument(noFinal).todos[0] as TodoItem;
    const deferred = deferTodo(noFinal, { todoId: todo.todoId, reason: 'later' }, context).text;
    assert.ok(deferred.endsWith('- Keep going.'), 'still no final newline');

    const bom = fs.readFileSync(path.join(CORPUS, 'odd-bom-trailing-space.md'), 'utf8');
    assert.ok(bom.startsWith('\uFEFF'));
    const bomDoc = parseStateDocument(bom);
    assert.equal(bomDoc.frontMatter?.fields['status'], 'active');
    const bomTodo = bomDoc.todos[0] as TodoItem;
    const bomEdited = claimTodo(bom, { todoId: bomTodo.todoId, agentId: 'codex-main' }, context).text;
    assert.ok(bomEdited.startsWith('\uFEFF---\n'));
    assert.ok(bomEdited.endsWith('- Trailing spaces kept.  \n\n\n'));
  });
});
