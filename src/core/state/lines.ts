/**
 * The state file as a list of physical lines that remember their exact line ending, so any
 * edit can splice whole lines and leave every other byte of the file as it was.
 */
export type LineEnding = '\n' | '\r\n' | '\r' | '';

export interface SourceLine {
  /** Offset of the line's first character in the file text. */
  readonly start: number;
  /** The line without its ending. */
  readonly content: string;
  /** The ending exactly as found ('' only for a last line without a final newline). */
  readonly eol: LineEnding;
}

/** Splits text into lines in one pass; joining `content + eol` of every line gives the text back. */
export function splitLines(text: string): SourceLine[] {
  const lines: SourceLine[] = [];
  let start = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const code = text.charCodeAt(i);
    if (code === 10 /* \n */) {
      lines.push({ start, content: text.slice(start, i), eol: '\n' });
      start = i + 1;
    } else if (code === 13 /* \r */) {
      const crlf = text.charCodeAt(i + 1) === 10;
      lines.push({ start, content: text.slice(start, i), eol: crlf ? '\r\n' : '\r' });
      if (crlf) i++;
      start = i + 1;
    }
  }
  if (start < length) lines.push({ start, content: text.slice(start), eol: '' });
  return lines;
}

/** The line ending most lines use (LF when there is none), for lines we insert. */
export function dominantLineEnding(lines: readonly SourceLine[]): Exclude<LineEnding, ''> {
  let lf = 0;
  let crlf = 0;
  let cr = 0;
  for (const line of lines) {
    if (line.eol === '\n') lf++;
    else if (line.eol === '\r\n') crlf++;
    else if (line.eol === '\r') cr++;
  }
  if (crlf > lf && crlf >= cr) return '\r\n';
  if (cr > lf && cr > crlf) return '\r';
  return '\n';
}

/** Replace lines [from, to) with new line contents (each given without its ending). */
export interface LineSplice {
  from: number;
  to: number;
  lines: readonly string[];
}

/**
 * Applies non-overlapping splices to the text. Untouched lines are copied as they are; a new
 * line takes the ending of the line it replaces (else the file's dominant ending), and a file
 * that had no final newline still has none. Appending after such a last line gives it one.
 */
export function applySplices(text: string, lines: readonly SourceLine[], splices: readonly LineSplice[]): string {
  const eol = dominantLineEnding(lines);
  const last = lines[lines.length - 1];
  const finalEnding: LineEnding = last ? last.eol : eol;
  const ordered = [...splices].sort((a, b) => a.from - b.from || a.to - b.to);
  let out = '';
  let cursor = 0; // text offset copied so far
  for (const splice of ordered) {
    const fromOffset = splice.from < lines.length ? (lines[splice.from] as SourceLine).start : text.length;
    if (fromOffset < cursor) throw new Error('overlapping line splices');
    out += text.slice(cursor, fromOffset);
    if (splice.from >= lines.length && last !== undefined && last.eol === '' && splice.lines.length > 0) out += eol;
    const reachesEnd = splice.to >= lines.length;
    splice.lines.forEach((content, k) => {
      if (reachesEnd && k === splice.lines.length - 1) {
        out += content + finalEnding;
        return;
      }
      const replaced = lines[splice.from + k];
      const own = k < splice.to - splice.from && replaced !== undefined ? replaced.eol : '';
      out += content + (own === '' ? eol : own);
    });
    cursor = splice.to < lines.length ? (lines[splice.to] as SourceLine).start : text.length;
  }
  return out + text.slice(cursor);
}
