import { type StateDocument, type TodoItem, type TodoMarker } from './document';
import { applySplices, type LineSplice, type SourceLine } from './lines';
import { formatMetadataLine, inCanonicalOrder, percentEncode, type MetadataToken } from './metadata';

/**
 * Line-level edits of a parsed state document. Each builder returns splices that touch only the
 * lines of the todo (or the insertion point) it is about; `applyEdits` copies every other byte.
 */
export const METADATA_INDENT = '  ';

/** Metadata changes: a string sets the key, null removes it. */
export type MetadataChanges = Readonly<Record<string, string | null>>;

export interface TodoRewrite {
  marker?: TodoMarker;
  /** New text for the checkbox line; continuation lines are then dropped (they were part of the old text). */
  text?: string;
  metadata?: MetadataChanges;
}

export function applyEdits(doc: StateDocument, splices: readonly LineSplice[]): string {
  return splices.length === 0 ? doc.text : applySplices(doc.text, doc.lines, splices);
}

/**
 * Splices that rewrite one todo. Only the checkbox line, its continuation lines (when the text
 * changes) and its metadata line change; a todo whose id was derived gets it written explicitly,
 * so later edits elsewhere can no longer change it.
 */
export function rewriteTodo(doc: StateDocument, item: TodoItem, rewrite: TodoRewrite): LineSplice[] {
  const splices: LineSplice[] = [];
  const checkbox = (doc.lines[item.line] as SourceLine).content;
  if (rewrite.text !== undefined && rewrite.text !== item.lineText) {
    splices.push({
      from: item.line,
      to: item.line + 1,
      lines: [`${item.bullet}[${rewrite.marker ?? item.marker}] ${rewrite.text}`],
    });
    for (const line of item.continuationLines) splices.push({ from: line, to: line + 1, lines: [] });
  } else if (rewrite.marker !== undefined && rewrite.marker !== item.marker) {
    const column = item.bullet.length + 1;
    splices.push({
      from: item.line,
      to: item.line + 1,
      lines: [checkbox.slice(0, column) + rewrite.marker + checkbox.slice(column + 1)],
    });
  }

  const changes: Record<string, string | null> = { ...(rewrite.metadata ?? {}) };
  if (item.todoIdSource === 'generated' && changes['todo_id'] === undefined) changes['todo_id'] = item.todoId;
  const metadataText = rewriteMetadata(doc, item, changes);
  if (metadataText !== null) {
    if (item.metadataLine !== null)
      splices.push({ from: item.metadataLine, to: item.metadataLine + 1, lines: [metadataText] });
    else splices.push({ from: item.end, to: item.end, lines: [metadataText] });
  }
  return splices;
}

/** The rewritten metadata line, or null when nothing changes. Untouched tokens keep their raw spelling. */
function rewriteMetadata(doc: StateDocument, item: TodoItem, changes: MetadataChanges): string | null {
  const existing: readonly MetadataToken[] = item.metadata?.tokens ?? [];
  const tokens: Pick<MetadataToken, 'key' | 'raw'>[] = [];
  const handled = new Set<string>();
  let changed = false;
  for (const token of existing) {
    const change = changes[token.key];
    if (change === undefined || handled.has(token.key)) {
      // A repeated key is dropped once the key is being set, so the value read back is the new one.
      if (change !== undefined) changed = true;
      else tokens.push(token);
      continue;
    }
    handled.add(token.key);
    if (change === null) {
      changed = true;
      continue;
    }
    if (token.decodedCleanly && token.value === change) tokens.push(token);
    else {
      tokens.push({ key: token.key, raw: percentEncode(change) });
      changed = true;
    }
  }
  for (const [key, value] of Object.entries(changes)) {
    if (handled.has(key) || value === null) continue;
    // todo_id leads a new comment, as the original writes it.
    const token = { key, raw: percentEncode(value) };
    if (key === 'todo_id') tokens.unshift(token);
    else tokens.push(token);
    changed = true;
  }
  if (!changed) return null;
  const indent =
    item.metadataLine !== null
      ? leadingWhitespace((doc.lines[item.metadataLine] as SourceLine).content)
      : METADATA_INDENT;
  return formatMetadataLine(indent, inCanonicalOrder(tokens), item.metadata?.strayWords ?? []);
}

function leadingWhitespace(content: string): string {
  const match = /^[ \t]*/.exec(content);
  return match ? match[0] : '';
}

/** The lines of a new todo: checkbox line plus metadata comment. */
export function newTodoLines(
  marker: TodoMarker,
  text: string,
  metadata: readonly (readonly [string, string])[],
): string[] {
  return [
    `- [${marker}] ${text}`,
    formatMetadataLine(
      METADATA_INDENT,
      inCanonicalOrder(metadata.map(([key, value]) => ({ key, raw: percentEncode(value) }))),
    ),
  ];
}
