import { LoopxError, errorMessage } from '../errors';
import { writeJsonAtomic } from './atomicWrite';
import { withFileLock, type LockOptions } from './fileLock';
import { readFileSafe, readFileSafeSync } from './safeRead';

/** Line and column (both 1-based) of a character offset. */
export function lineColumnAt(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, Math.max(0, Math.min(offset, text.length)));
  const lines = before.split('\n');
  return { line: lines.length, column: (lines[lines.length - 1] ?? '').length + 1 };
}

/**
 * Offset of the first character that makes `text` invalid JSON, found by a small strict scanner.
 * Node's own parse error does not always carry a position, so we locate it ourselves.
 */
export function jsonErrorOffset(text: string): number {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const string = (): void => {
    i++; // opening quote
    for (;;) {
      const ch = text[i];
      if (ch === undefined || ch < ' ') fail();
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        i++;
        const esc = text[i];
        if (esc === 'u') {
          for (let k = 1; k <= 4; k++)
            if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) {
              i += k;
              fail();
            }
          i += 5;
        } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i++;
        else fail();
      } else i++;
    }
  };
  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!match || match[0] === '-') fail();
    i += match?.[0].length ?? 0;
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return;
        }
        fail();
      }
    } else if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value();
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return;
        }
        fail();
      }
    } else if (ch === '"') string();
    else if (ch === 't') literal('true');
    else if (ch === 'f') literal('false');
    else if (ch === 'n') literal('null');
    else if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) number();
    else fail();
  };
  try {
    value();
    ws();
    return i < text.length ? i : text.length;
  } catch (offset) {
    return typeof offset === 'number' ? offset : 0;
  }
}

/**
 * Deepest nesting LoopX reads. Its files nest a handful of levels; far deeper text is hostile or
 * broken, and writing it back (JSON.stringify, structuredClone) would overflow the stack.
 */
export const MAX_JSON_DEPTH = 512;

/** Whether arrays and objects in JSON `text` nest deeper than `limit`; one linear pass. */
export function jsonNestingExceeds(text: string, limit = MAX_JSON_DEPTH): boolean {
  // Each level opens with a character of its own, so shorter text cannot be deeper.
  if (text.length <= limit) return false;
  // Nor can text with no more opening characters than `limit` (those inside strings only add to the count): a
  // run index row has a handful, and `indexOf` counts them far faster than the scan below walks every character.
  if (!moreOpenersThan(text, limit)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > limit) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** Whether `text` holds more than `limit` of the characters `{` and `[` together. */
function moreOpenersThan(text: string, limit: number): boolean {
  let count = 0;
  for (let at = text.indexOf('{'); at !== -1; at = text.indexOf('{', at + 1)) if (++count > limit) return true;
  for (let at = text.indexOf('['); at !== -1; at = text.indexOf('[', at + 1)) if (++count > limit) return true;
  return false;
}

/** LoopxError `json_too_deep` for `file` (and `field`, when the text is one value inside it). */
export function jsonTooDeep(file: string, field?: string): LoopxError {
  const where = field === undefined ? file : `${field} of ${file}`;
  return new LoopxError(
    'json_too_deep',
    `${where} nests arrays or objects more than ${MAX_JSON_DEPTH} levels deep; LoopX did not read it. ` +
      'Remove the deeply nested value by hand or restore the file from a backup, then retry.',
    { path: file, ...(field === undefined ? {} : { field }), max_depth: MAX_JSON_DEPTH },
  );
}

/**
 * Parses JSON text read from `file`. A parse failure becomes LoopxError `invalid_json` naming the
 * file, line and column, and the fix. A leading UTF-8 byte-order mark is tolerated.
 */
export function parseJsonText(text: string, file: string): unknown {
  const body = text.startsWith('\uFEFF') ? text.slice(1) : text;
  if (jsonNestingExceeds(body)) throw jsonTooDeep(file);
  try {
    return JSON.parse(body);
  } catch (error) {
    const { line, column } = lineColumnAt(body, jsonErrorOffset(body));
    throw new LoopxError(
      'invalid_json',
      `${file} is not valid JSON (line ${line}, column ${column}: ${errorMessage(error)}). ` +
        'Fix the file by hand or restore it from a backup, then retry; LoopX does not overwrite a file it cannot parse.',
      { path: file, line, column, reason: errorMessage(error) },
    );
  }
}

function notFound(file: string): LoopxError {
  return new LoopxError('file_not_found', `${file} does not exist.`, { path: file });
}

export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFileSafe(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(file);
    throw error;
  }
  return parseJsonText(text, file);
}

export function readJsonFileSync(file: string): unknown {
  let text: string;
  try {
    text = readFileSafeSync(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw notFound(file);
    throw error;
  }
  return parseJsonText(text, file);
}

export interface JsonUpdateResult {
  changed: boolean;
  /** The content after the update (the unchanged current content when nothing was written). */
  value: unknown;
}

/**
 * The one safe read-modify-write of a shared JSON file: take the cross-process lock, re-read the file
 * inside it, apply `mutate` to a deep copy and write atomically only if the result differs.
 *
 * `mutate` receives `undefined` when the file does not exist yet, and returns the new content or
 * `undefined` for "no change". A file that cannot be parsed is refused (LoopxError `invalid_json`)
 * and left untouched.
 */
export async function updateJsonFile<T>(
  file: string,
  mutate: (current: unknown) => T | undefined | Promise<T | undefined>,
  lock: LockOptions,
): Promise<JsonUpdateResult> {
  return withFileLock(file, lock, async () => {
    let current: unknown;
    try {
      current = await readJsonFile(file);
    } catch (error) {
      if (!(error instanceof LoopxError && error.code === 'file_not_found')) throw error;
      current = undefined;
    }
    const next = await mutate(current === undefined ? undefined : structuredClone(current));
    // Compared as JSON text: key order is part of the file, so a reordering counts as a change.
    if (next === undefined || (current !== undefined && JSON.stringify(next) === JSON.stringify(current))) {
      return { changed: false, value: current };
    }
    await writeJsonAtomic(file, next);
    return { changed: true, value: next };
  });
}
