import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  deriveTodoId,
  firstSectionOf,
  parseStateDocument,
  priorityOf,
  sectionEntries,
  type Section,
  type TodoItem,
} from '../../../src/core/state/document';
import { applySplices, splitLines } from '../../../src/core/state/lines';
import { formatMetadataLine, parseMetadataLine, percentDecode, percentEncode } from '../../../src/core/state/metadata';
import { parseHeading, sectionRoleOf } from '../../../src/core/state/sections';
import { projectStateDocument, StructuredProjectionSchema } from '../../../src/core/state/structured';

const CORPUS = path.join(__dirname, '../../fixtures/state/corpus');
const fixture = (name: string): string => fs.readFileSync(path.join(CORPUS, name), 'utf8');

describe('state document: lines', () => {
  it('splits LF, CRLF, lone CR and a missing final newline losslessly', () => {
    const text = 'a\nb\r\nc\rd';
    const lines = splitLines(text);
    assert.deepEqual(
      lines.map((l) => [l.content, l.eol]),
      [
        ['a', '\n'],
        ['b', '\r\n'],
        ['c', '\r'],
        ['d', ''],
      ],
    );
    assert.deepEqual(splitLines(''), []);
  });

  it('splices give new lines the ending of the line they replace, and append after an unterminated last line', () => {
    const text = 'a\r\nb\r\nc';
    const lines = splitLines(text);
    assert.equal(applySplices(text, lines, [{ from: 1, to: 2, lines: ['B', 'B2'] }]), 'a\r\nB\r\nB2\r\nc');
    assert.equal(applySplices(text, lines, [{ from: 3, to: 3, lines: ['d'] }]), 'a\r\nb\r\nc\r\nd');
    assert.equal(applySplices(text, lines, [{ from: 2, to: 3, lines: ['C'] }]), 'a\r\nb\r\nC');
  });
});

describe('state document: headings and roles (one table)', () => {
  it('reads headings of level 2 and deeper, in any case; level 1 is not a section', () => {
    assert.deepEqual(parseHeading('### Next Action ##'), { level: 3, title: 'Next Action' });
    assert.deepEqual(parseHeading('##NoSpace'), { level: 2, title: 'NoSpace' });
    assert.equal(parseHeading('# Title'), null);
    assert.equal(parseHeading(' ## indented'), null);
  });

  it('classifies headings with archive markers first, then user, then agent', () => {
    assert.equal(sectionRoleOf('User Todo / Owner Review Reading Queue'), 'user');
    assert.equal(sectionRoleOf('Owner Reading Queue'), 'user');
    assert.equal(sectionRoleOf('AGENT   todo'), 'agent');
    assert.equal(sectionRoleOf('Codex Todo'), 'agent');
    assert.equal(sectionRoleOf('Project Agent Todo'), 'agent');
    assert.equal(sectionRoleOf('Agent Todo Archive'), 'archive');
    assert.equal(sectionRoleOf('Completed Work Archive'), 'archive');
    assert.equal(sectionRoleOf('待办归档'), 'archive');
    assert.equal(sectionRoleOf('next action'), 'next_action');
    assert.equal(sectionRoleOf('Owner notes'), 'other', 'a heading merely containing "owner" is not a user section');
    assert.equal(sectionRoleOf('Next Actions and ideas'), 'other');
  });

  it('takes todos from every section of a role but Next Action only from the first', () => {
    const doc = parseStateDocument(fixture('odd-heading-levels.md'));
    assert.deepEqual(
      doc.todos.map((t) => [t.role, t.index, t.section.title]),
      [
        ['agent', 1, 'AGENT TODO'],
        ['user', 1, 'User Todo'],
        ['archive', 1, 'Agent Todo Archive'],
        ['agent', 2, 'Codex Todo'],
      ],
    );
    assert.equal(firstSectionOf(doc, 'next_action')?.level, 4);
    assert.deepEqual(
      doc.issues.map((i) => [i.kind, i.line]),
      [['duplicate_next_action_section', 15]],
    );
  });
});

describe('state document: front matter', () => {
  it('reads string values split at the first colon, quotes removed', () => {
    const doc = parseStateDocument(fixture('spec-state-format.md'));
    assert.deepEqual(doc.frontMatter?.fields, {
      status: 'active',
      objective: 'Keep next-action projections explicit.',
      updated_at: '2026-06-22T00:00:00+00:00',
    });
  });

  it('a file without front matter gives none; an unterminated one is reported and read as body', () => {
    assert.equal(parseStateDocument(fixture('p1-implicit-ids.md')).frontMatter, null);
    const broken = parseStateDocument(fixture('odd-unterminated-frontmatter.md'));
    assert.equal(broken.frontMatter, null);
    assert.deepEqual(
      broken.issues.map((i) => [i.kind, i.line]),
      [['unterminated_frontmatter', 1]],
    );
    assert.equal(broken.todos.length, 1);
  });
});

describe('state document: todos', () => {
  it('reads checkbox markers, metadata status overrides and continuation lines', () => {
    const doc = parseStateDocument(fixture('odd-unknown-status.md'));
    assert.deepEqual(
      doc.todos.map((t) => [t.todoId, t.status]),
      [
        ['todo_strange', 'open'],
        [doc.todos[1]?.todoId, 'done'],
        ['todo_blocked_meta', 'blocked'],
        [doc.todos[3]?.todoId, 'open'],
      ],
    );
    assert.deepEqual(
      doc.issues.map((i) => [i.kind, i.line, i.value]),
      [
        ['unknown_status', 6, 'waiting'],
        ['malformed_metadata', 11, 'stray-word'],
        ['invalid_todo_id', 11, 'Not-An-Id'],
      ],
    );
    const nested = parseStateDocument(fixture('odd-nested-lists.md'));
    assert.equal(
      nested.todos[0]?.text,
      'Parent todo - [ ] nested child checkbox - plain nested bullet deeper continuation',
    );
    assert.equal(nested.todos[1]?.todoId, 'todo_star_bullet');
    assert.equal(nested.todos.length, 2, 'a checkbox indented after a blank line is not a todo');
  });

  it('ignores checkboxes outside todo sections', () => {
    const doc = parseStateDocument(fixture('odd-mixed.md'));
    assert.deepEqual(
      doc.todos.map((t) => t.role),
      ['agent', 'archive'],
    );
    assert.equal(doc.todos[0]?.meta['note'], '中文');
  });

  it('derives ids as the original: todo_ + sha1(role|section|index|text)[:12], index 1-based', () => {
    assert.equal(deriveTodoId('agent', 'Agent Todo', 1, '[P0] Implement a small parser fixture.'), 'todo_a5103e3d07e1');
    const doc = parseStateDocument(fixture('odd-crlf.md'));
    const second = doc.todos[1] as TodoItem;
    assert.equal(second.todoIdSource, 'generated');
    assert.equal(second.todoId, deriveTodoId('agent', 'Agent Todo', 2, 'Second CRLF todo.'));
  });

  it('reads priority from a [Pn] or bare Pn prefix, else from priority= metadata', () => {
    assert.equal(priorityOf('[P2] do it', undefined), 'P2');
    assert.equal(priorityOf('P3: do it', undefined), 'P3');
    assert.equal(priorityOf('[P1] do it', 'P4'), 'P1');
    assert.equal(priorityOf('do it', 'P4'), 'P4');
    assert.equal(priorityOf('do it', '2'), 'P2');
    assert.equal(priorityOf('Upgrade to P2 format', undefined), null);
    assert.equal(priorityOf('[P7] no', 'P9'), null);
  });
});

describe('state document: metadata encoding', () => {
  it('percent-encodes what would break the comment and decodes strictly', () => {
    const value = 'a b=c%d-->é,public_claim:project:*';
    const encoded = percentEncode(value);
    assert.equal(encoded, 'a%20b%3Dc%25d--%3E%C3%A9,public_claim:project:*');
    assert.equal(percentDecode(encoded), value);
    assert.equal(percentDecode('100%zz'), null);
    assert.equal(percentDecode('%E2%82'), null, 'truncated UTF-8');
    assert.equal(percentDecode('%F0%9F%98%80'), '😀');
  });

  it('reports bad encodings with their line and keeps the raw value', () => {
    const doc = parseStateDocument(fixture('odd-bad-percent.md'));
    const bad = doc.todos[0] as TodoItem;
    assert.equal(bad.meta['note'], '100%zz');
    assert.deepEqual(
      doc.issues.map((i) => [i.kind, i.line, i.key]),
      [
        ['bad_metadata_encoding', 6, 'note'],
        ['bad_metadata_encoding', 6, 'evidence'],
      ],
    );
    assert.equal(doc.todos[1]?.meta['note'], 'a b=c%');
  });

  it('formats and re-parses a metadata line', () => {
    const line = formatMetadataLine('  ', [
      { key: 'todo_id', raw: 'todo_abc' },
      { key: 'note', raw: percentEncode('x y') },
    ]);
    assert.equal(line, '  <!-- loopx:todo todo_id=todo_abc note=x%20y -->');
    assert.deepEqual(
      parseMetadataLine(line).tokens.map((t) => [t.key, t.value]),
      [
        ['todo_id', 'todo_abc'],
        ['note', 'x y'],
      ],
    );
  });
});

describe('state document: section entries', () => {
  it('case N1: bullets start entries, indented lines continue, comments are skipped', () => {
    const doc = parseStateDocument(fixture('n1-entries.md'));
    const section = firstSectionOf(doc, 'next_action') as Section;
    assert.deepEqual(sectionEntries(doc, section, { limit: 3 }), ['First step continued here', 'Second', 'Third']);
    assert.deepEqual(sectionEntries(doc, section), [
      'First step continued here',
      'Second',
      'Third',
      'plain line',
      'Fourth',
    ]);
  });

  it('case N2: a ### next action heading is read', () => {
    const doc = parseStateDocument(fixture('n2-deep-heading.md'));
    assert.deepEqual(sectionEntries(doc, firstSectionOf(doc, 'next_action') as Section), ['deep heading ok']);
  });

  it('cuts entries at 220 characters ending in …', () => {
    const doc = parseStateDocument(`## Next Action\n- ${'x'.repeat(300)}\n`);
    const [entry] = sectionEntries(doc, firstSectionOf(doc, 'next_action') as Section);
    assert.equal(entry?.length, 220);
    assert.ok(entry?.endsWith('…'));
  });
});

describe('structured projection', () => {
  it('case P1: implicit id, missing front matter', () => {
    const projection = StructuredProjectionSchema.parse(
      projectStateDocument(parseStateDocument(fixture('p1-implicit-ids.md'))),
    );
    const item = projection.todos.agent.items[0];
    assert.deepEqual(
      item && {
        todo_id: item.todo_id,
        todo_id_source: item.todo_id_source,
        role: item.role,
        source_section: item.source_section,
        index: item.index,
        status: item.status,
        done: item.done,
        text: item.text,
        priority: item.priority,
        title: item.title,
      },
      {
        todo_id: 'todo_a5103e3d07e1',
        todo_id_source: 'generated',
        role: 'agent',
        source_section: 'Agent Todo',
        index: 1,
        status: 'open',
        done: false,
        text: '[P0] Implement a small parser fixture.',
        priority: 'P0',
        title: 'Implement a small parser fixture.',
      },
    );
    const d = projection.diagnostics;
    assert.equal(d.parseable, true);
    assert.equal(d.migration_ready, false);
    assert.equal(d.warning_count, 2);
    assert.deepEqual(
      d.warnings.map((w) => w.kind),
      ['missing_frontmatter', 'implicit_todo_ids'],
    );
    assert.equal(d.warnings[1]?.['count'], 1);
    assert.equal(d.warnings[1]?.line, 3);
    assert.deepEqual(projection.next_action, {
      count: 1,
      first: 'Implement a small parser fixture.',
      entries: ['Implement a small parser fixture.'],
    });
  });

  it('case P2: duplicate explicit ids make the file unparseable', () => {
    const d = projectStateDocument(parseStateDocument(fixture('p2-duplicate-ids.md'))).diagnostics;
    assert.equal(d.parseable, false);
    assert.equal(d.errors.length, 1);
    assert.equal(d.errors[0]?.kind, 'duplicate_todo_ids');
    assert.deepEqual(d.errors[0]?.['todo_ids'], ['todo_duplicate']);
    assert.deepEqual(d.errors[0]?.['lines'], { todo_duplicate: [5, 7] });
  });

  it('case P3: the structured smoke fixture is migration ready with no warnings', () => {
    const projection = projectStateDocument(parseStateDocument(fixture('p3-structured-smoke.md')), { goalId: 'g1' });
    assert.equal(projection.todos.user.open_count, 1);
    assert.equal(projection.todos.agent.open_count, 2);
    assert.equal(projection.diagnostics.migration_ready, true);
    assert.equal(projection.diagnostics.warning_count, 0);
    assert.equal(projection.goal_id, 'g1');
    assert.equal(projection.next_action.first, 'todo_agent_projection: add the projection smoke and validate it.');
  });

  it('reads a broken file as far as possible, with a line for every problem', () => {
    for (const name of [
      'odd-unknown-status.md',
      'odd-bad-percent.md',
      'odd-unterminated-frontmatter.md',
      'odd-empty.md',
      'odd-prose-only.md',
    ]) {
      const projection = StructuredProjectionSchema.parse(projectStateDocument(parseStateDocument(fixture(name))));
      for (const warning of projection.diagnostics.warnings) {
        if (!['missing_next_action', 'missing_todo_sections'].includes(warning.kind))
          assert.equal(typeof warning.line, 'number', `${name}: ${warning.kind}`);
      }
    }
    const empty = projectStateDocument(parseStateDocument(''));
    assert.deepEqual(
      empty.diagnostics.warnings.map((w) => w.kind),
      ['missing_frontmatter', 'missing_next_action', 'missing_todo_sections'],
    );
    assert.equal(empty.diagnostics.migration_ready, false);
  });

  it('excludes archive sections from counts and duplicate checks', () => {
    const projection = projectStateDocument(parseStateDocument(fixture('spec-control-plane.md')));
    assert.equal(projection.todos.agent.total_count, 1);
    assert.equal(projection.todos.user.total_count, 1);
    assert.equal(projection.diagnostics.warning_count, 1);
  });
});
