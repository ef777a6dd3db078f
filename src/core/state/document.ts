import { createHash } from 'node:crypto';
import { splitLines, type SourceLine } from './lines';
import { isMetadataLine, parseMetadataLine, type ParsedMetadataLine } from './metadata';
import { parseHeading, sectionRoleOf, type SectionRole, type TodoRole } from './sections';

/**
 * ACTIVE_GOAL_STATE.md as a parsed document: front matter, `##` sections and checkbox todos,
 * each with the source lines it came from. The document never re-renders itself: `text` is the
 * file exactly as read, and edits splice only the lines they change (see edits.ts).
 */
export const TODO_STATUSES = ['open', 'done', 'blocked', 'deferred'] as const;
export type TodoStatus = (typeof TODO_STATUSES)[number];
export const TERMINAL_STATUSES: ReadonlySet<TodoStatus> = new Set(['done', 'deferred']);

export type TodoMarker = ' ' | 'x' | 'X' | '-';
export const PRIORITIES = ['P0', 'P1', 'P2', 'P3', 'P4'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Explicit ids must look like this; anything else gets a derived id. */
export const TODO_ID_PATTERN = /^todo_[a-z0-9_-]{3,64}$/;

export interface FrontMatter {
  /** Line index of the opening `---` (always 0) and of the closing `---`. */
  openLine: number;
  closeLine: number;
  /** Every value is a string; a key that repeats takes its last value. */
  fields: Record<string, string>;
  /** Line index of the line that supplied each key's value. */
  fieldLines: Record<string, number>;
}

export interface Section {
  /** Position among all sections, in document order. */
  ordinal: number;
  headingLine: number;
  level: number;
  /** The heading text, trimmed (the `source_section` of its todos). */
  title: string;
  role: SectionRole;
  /** First line after the heading and the line index where the section ends (exclusive). */
  bodyStart: number;
  end: number;
  /** False for a repeat of a role that already had a section (readers use the first one). */
  firstOfRole: boolean;
}

export type TodoIdSource = 'metadata' | 'generated';

export interface TodoItem {
  /** `archive` for checkboxes in archive sections: kept for edits, never counted as work. */
  role: TodoRole | 'archive';
  section: Section;
  /** 1-based position among the todos of the same role, in document order. */
  index: number;
  /** Line index of the checkbox line, and the exclusive end of the todo's block. */
  line: number;
  end: number;
  /** The bullet and the spaces before `[`, exactly as written (`- `, `*   `). */
  bullet: string;
  marker: TodoMarker;
  /** The text after `] ` on the checkbox line, as written. */
  lineText: string;
  /** Line indexes of indented continuation lines that contribute to the text. */
  continuationLines: number[];
  /** Whitespace-collapsed text: checkbox line plus continuation lines. */
  text: string;
  title: string;
  priority: Priority | null;
  metadataLine: number | null;
  metadata: ParsedMetadataLine | null;
  /** Decoded metadata values (first comment only). */
  meta: Record<string, string>;
  todoId: string;
  todoIdSource: TodoIdSource;
  status: TodoStatus;
}

export type LineIssueKind =
  | 'unterminated_frontmatter'
  | 'bad_metadata_encoding'
  | 'unknown_status'
  | 'invalid_todo_id'
  | 'malformed_metadata'
  | 'extra_metadata_comment'
  | 'duplicate_next_action_section';

/** A problem found at one line (1-based) while parsing; the parse still continues. */
export interface LineIssue {
  kind: LineIssueKind;
  line: number;
  message: string;
  key?: string;
  value?: string;
}

export interface StateDocument {
  readonly text: string;
  readonly lines: readonly SourceLine[];
  readonly frontMatter: FrontMatter | null;
  readonly sections: readonly Section[];
  /** Every checkbox todo in document order, archive ones included. */
  readonly todos: readonly TodoItem[];
  readonly issues: readonly LineIssue[];
}

const CHECKBOX = /^([-*][ \t]+)\[([ xX-])\][ \t]+(\S.*)$/;
const BOM = '\uFEFF';

/** Parses the file in one pass over its lines. It never throws: problems become `issues`. */
export function parseStateDocument(text: string): StateDocument {
  const lines = splitLines(text);
  const issues: LineIssue[] = [];
  const frontMatter = parseFrontMatter(lines, issues);
  const sections: Section[] = [];
  const todos: TodoItem[] = [];
  const roleCounts: Record<TodoRole | 'archive', number> = { user: 0, agent: 0, archive: 0 };
  const seenRoles = new Set<SectionRole>();

  let current: Section | null = null;
  let i = frontMatter ? frontMatter.closeLine + 1 : 0;
  while (i < lines.length) {
    const content = (lines[i] as SourceLine).content;
    const heading = parseHeading(content);
    if (heading) {
      if (current) current.end = i;
      const role = sectionRoleOf(heading.title);
      const firstOfRole = role === 'other' || !seenRoles.has(role);
      if (role === 'next_action' && !firstOfRole) {
        issues.push({
          kind: 'duplicate_next_action_section',
          line: i + 1,
          message: 'a second Next Action section is ignored; merge it into the first one',
        });
      }
      seenRoles.add(role);
      current = {
        ordinal: sections.length,
        headingLine: i,
        level: heading.level,
        title: heading.title,
        role,
        bodyStart: i + 1,
        end: lines.length,
        firstOfRole,
      };
      sections.push(current);
      i++;
      continue;
    }
    const role = current?.role;
    if (current && (role === 'user' || role === 'agent' || role === 'archive')) {
      const match = CHECKBOX.exec(content);
      if (match) {
        roleCounts[role]++;
        const item = readTodo(lines, i, match, current, role, roleCounts[role], issues);
        todos.push(item);
        i = item.end;
        continue;
      }
    }
    i++;
  }
  return { text, lines, frontMatter, sections, todos, issues };
}

function parseFrontMatter(lines: readonly SourceLine[], issues: LineIssue[]): FrontMatter | null {
  const first = lines[0];
  if (!first) return null;
  const opening = first.content.startsWith(BOM) ? first.content.slice(1) : first.content;
  if (opening.trim() !== '---') return null;
  const fields: Record<string, string> = {};
  const fieldLines: Record<string, number> = {};
  for (let i = 1; i < lines.length; i++) {
    const content = (lines[i] as SourceLine).content;
    if (content.trim() === '---') return { openLine: 0, closeLine: i, fields, fieldLines };
    const colon = content.indexOf(':');
    if (colon < 0) continue;
    const key = content.slice(0, colon).trim();
    if (key === '') continue;
    fields[key] = stripQuotes(content.slice(colon + 1).trim());
    fieldLines[key] = i;
  }
  issues.push({
    kind: 'unterminated_frontmatter',
    line: 1,
    message: 'front matter opened with --- is never closed; add a closing --- line',
  });
  return null;
}

function stripQuotes(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && (value[start] === '"' || value[start] === "'")) start++;
  while (end > start && (value[end - 1] === '"' || value[end - 1] === "'")) end--;
  return value.slice(start, end);
}

function readTodo(
  lines: readonly SourceLine[],
  line: number,
  match: RegExpExecArray,
  section: Section,
  role: TodoRole | 'archive',
  index: number,
  issues: LineIssue[],
): TodoItem {
  const bullet = match[1] ?? '- ';
  const marker = (match[2] ?? ' ') as TodoMarker;
  const lineText = match[3] ?? '';
  const textParts = [lineText];
  const continuationLines: number[] = [];
  let metadataLine: number | null = null;
  let metadata: ParsedMetadataLine | null = null;
  let end = line + 1;
  // The block goes on while lines are indented and not blank.
  while (end < lines.length) {
    const content = (lines[end] as SourceLine).content;
    const first = content.charCodeAt(0);
    if ((first !== 32 && first !== 9) || content.trim() === '') break;
    if (isMetadataLine(content)) {
      if (metadata === null) {
        metadataLine = end;
        metadata = parseMetadataLine(content);
      } else {
        issues.push({
          kind: 'extra_metadata_comment',
          line: end + 1,
          message: 'only the first loopx:todo comment of a todo is read; merge this one into it',
        });
      }
    } else if (!content.trimStart().startsWith('<!--')) {
      textParts.push(content);
      continuationLines.push(end);
    }
    end++;
  }

  const meta: Record<string, string> = {};
  if (metadata && metadataLine !== null) {
    for (const token of metadata.tokens) {
      if (!(token.key in meta)) meta[token.key] = token.value;
      if (!token.decodedCleanly) {
        issues.push({
          kind: 'bad_metadata_encoding',
          line: metadataLine + 1,
          key: token.key,
          value: token.raw,
          message: `metadata ${token.key}=${token.raw} is not valid percent-encoding; write % as %25`,
        });
      }
    }
    for (const word of metadata.strayWords) {
      issues.push({
        kind: 'malformed_metadata',
        line: metadataLine + 1,
        value: word,
        message: `metadata word ${JSON.stringify(word)} is not key=value`,
      });
    }
  }

  const text = compactText(textParts.join(' '));
  let status = statusFromMarker(marker);
  const metaStatus = meta['status'];
  if (metaStatus !== undefined) {
    if (isTodoStatus(metaStatus)) status = metaStatus;
    else
      issues.push({
        kind: 'unknown_status',
        line: (metadataLine ?? line) + 1,
        value: metaStatus,
        message: `status=${metaStatus} is not one of ${TODO_STATUSES.join(', ')}; the checkbox [${marker}] is used instead`,
      });
  }

  const explicitId = meta['todo_id'];
  let todoId: string;
  let todoIdSource: TodoIdSource;
  if (explicitId !== undefined && TODO_ID_PATTERN.test(explicitId)) {
    todoId = explicitId;
    todoIdSource = 'metadata';
  } else {
    if (explicitId !== undefined) {
      issues.push({
        kind: 'invalid_todo_id',
        line: (metadataLine ?? line) + 1,
        value: explicitId,
        message: `todo_id=${explicitId} does not match todo_[a-z0-9_-]{3,64}; a derived id is used instead`,
      });
    }
    todoId = deriveTodoId(role, section.title, index, text);
    todoIdSource = 'generated';
  }

  const priority = priorityOf(text, meta['priority']);
  return {
    role,
    section,
    index,
    line,
    end,
    bullet,
    marker,
    lineText,
    continuationLines,
    text,
    title: titleOf(text),
    priority,
    metadataLine,
    metadata,
    meta,
    todoId,
    todoIdSource,
    status,
  };
}

export function isTodoStatus(value: string): value is TodoStatus {
  return (TODO_STATUSES as readonly string[]).includes(value);
}

export function statusFromMarker(marker: TodoMarker): TodoStatus {
  if (marker === 'x' || marker === 'X') return 'done';
  if (marker === '-') return 'deferred';
  return 'open';
}

export function markerForStatus(status: TodoStatus): TodoMarker {
  if (status === 'done') return 'x';
  if (status === 'deferred') return '-';
  return ' ';
}

/** Collapses whitespace runs to one space and trims, as the original does before hashing. */
export function compactText(text: string): string {
  // `trim` strips exactly the characters `\s` matches, so this equals splitting on \s+ and joining the parts.
  return text.replace(/\s+/g, ' ').trim();
}

/** The original's derived id: `todo_` + the first 12 hex of SHA-1 over `role|section|index|text`. */
export function deriveTodoId(role: string, sectionTitle: string, index: number, text: string): string {
  return `todo_${createHash('sha1').update(`${role}|${sectionTitle}|${index}|${text}`, 'utf8').digest('hex').slice(0, 12)}`;
}

const PRIORITY_PREFIX = /^\[(P[0-4])\](?=\s|$)|^(P[0-4])(?=[\s:]|$)/;

/**
 * Priority from a `[P0]`…`[P4]` (or bare `P2:`) text prefix, as the original reads it; when the
 * text has none, from `priority=` metadata (which the original ignored).
 */
export function priorityOf(text: string, metaPriority: string | undefined): Priority | null {
  const match = PRIORITY_PREFIX.exec(text);
  if (match) return (match[1] ?? match[2]) as Priority;
  if (metaPriority !== undefined) {
    const normalized = metaPriority.trim().toUpperCase();
    const candidate = /^[0-4]$/.test(normalized) ? `P${normalized}` : normalized;
    if ((PRIORITIES as readonly string[]).includes(candidate)) return candidate as Priority;
  }
  return null;
}

/** The text without its `[Pn]` prefix. */
export function titleOf(text: string): string {
  return text.replace(/^\[P[0-4]\]\s*/, '');
}

/** The first section with a role (the one readers use), or null. */
export function firstSectionOf(doc: StateDocument, role: SectionRole): Section | null {
  return doc.sections.find((s) => s.role === role) ?? null;
}

export interface SectionEntryOptions {
  limit?: number;
  /** Cut each entry at this many characters, ending in `…` (220 as in the original). */
  maxLength?: number;
}

const ENTRY_BULLET = /^(?:[-*]|\d+[.)])[ \t]+/;

/**
 * The entries of a section: a bullet (`-`, `*`, `1.`, `1)`) starts an entry and indented lines
 * continue it; any other non-empty line is an entry by itself; comment lines are skipped.
 */
export function sectionEntries(doc: StateDocument, section: Section, options: SectionEntryOptions = {}): string[] {
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  const maxLength = options.maxLength ?? 220;
  const entries: string[][] = [];
  let open: string[] | null = null;
  for (let i = section.bodyStart; i < section.end && entries.length <= limit; i++) {
    const content = (doc.lines[i] as SourceLine).content;
    const trimmed = content.trim();
    if (trimmed === '') {
      open = null;
      continue;
    }
    if (trimmed.startsWith('<!--')) continue;
    const indented = content.charCodeAt(0) === 32 || content.charCodeAt(0) === 9;
    const bullet = ENTRY_BULLET.exec(trimmed);
    if (bullet && !(indented && open)) {
      open = [trimmed.slice(bullet[0].length)];
      entries.push(open);
    } else if (indented && open) {
      open.push(trimmed);
    } else {
      entries.push([trimmed]);
      open = null;
    }
  }
  return entries.slice(0, limit).map((parts) => truncate(compactText(parts.join(' ')), maxLength));
}

export function truncate(text: string, maxLength: number): string {
  return text.length <= maxLength ? text : `${text.slice(0, maxLength - 1)}…`;
}
