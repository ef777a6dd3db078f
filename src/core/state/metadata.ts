/**
 * Todo metadata comments: `<!-- loopx:todo key=value … -->` on an indented line below the
 * checkbox, values percent-encoded. Tokens remember their raw spelling, so rewriting one key
 * leaves the spelling of every other key as the author wrote it.
 */
export const METADATA_OPEN = '<!-- loopx:todo';
export const METADATA_CLOSE = '-->';

export interface MetadataToken {
  key: string;
  /** The value as written (still encoded). */
  raw: string;
  /** The decoded value; equals `raw` when decoding failed. */
  value: string;
  /** False when `raw` has a bad `%` escape or decodes to invalid UTF-8. */
  decodedCleanly: boolean;
}

export interface ParsedMetadataLine {
  tokens: MetadataToken[];
  /** Words that are not `key=value`, kept so a rewrite does not drop them silently. */
  strayWords: string[];
}

const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

/** True for an (indented or not) line holding a loopx todo metadata comment. */
export function isMetadataLine(content: string): boolean {
  const trimmed = content.trim();
  return (
    trimmed.startsWith(METADATA_OPEN) &&
    trimmed.endsWith(METADATA_CLOSE) &&
    (trimmed.length === METADATA_OPEN.length + METADATA_CLOSE.length || /\s/.test(trimmed.charAt(METADATA_OPEN.length)))
  );
}

export function parseMetadataLine(content: string): ParsedMetadataLine {
  const trimmed = content.trim();
  const body = trimmed.slice(METADATA_OPEN.length, trimmed.length - METADATA_CLOSE.length);
  const tokens: MetadataToken[] = [];
  const strayWords: string[] = [];
  for (const word of body.split(/\s+/)) {
    if (word === '') continue;
    const eq = word.indexOf('=');
    const key = eq > 0 ? word.slice(0, eq) : '';
    if (eq <= 0 || !KEY_PATTERN.test(key)) {
      strayWords.push(word);
      continue;
    }
    const raw = word.slice(eq + 1);
    const decoded = percentDecode(raw);
    tokens.push({ key, raw, value: decoded ?? raw, decodedCleanly: decoded !== null });
  }
  return { tokens, strayWords };
}

/** Writes a metadata line: `<indent><!-- loopx:todo k=v … -->`. */
export function formatMetadataLine(
  indent: string,
  tokens: readonly Pick<MetadataToken, 'key' | 'raw'>[],
  strayWords: readonly string[] = [],
): string {
  const words = [...tokens.map((t) => `${t.key}=${t.raw}`), ...strayWords];
  return `${indent}${METADATA_OPEN}${words.length > 0 ? ` ${words.join(' ')}` : ''} ${METADATA_CLOSE}`;
}

// Characters left as they are: unreserved URL characters plus `: , / @ + *`, which appear in ids,
// decision scopes and lists. Everything else (space, `%`, `=`, `<`, `>`, non-ASCII) is escaped.
const SAFE = new Set('ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~:,/@+*'.split(''));

export function percentEncode(value: string): string {
  let out = '';
  for (const char of value) {
    if (SAFE.has(char)) {
      out += char;
      continue;
    }
    for (const byte of Buffer.from(char, 'utf8')) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes `%XX` escapes strictly; null when an escape is malformed or the bytes are not UTF-8. */
export function percentDecode(raw: string): string | null {
  if (!raw.includes('%')) return raw;
  const bytes: number[] = [];
  for (let i = 0; i < raw.length; i++) {
    const code = raw.charCodeAt(i);
    if (code === 37 /* % */) {
      const hex = raw.slice(i + 1, i + 3);
      if (!/^[0-9A-Fa-f]{2}$/.test(hex)) return null;
      bytes.push(parseInt(hex, 16));
      i += 2;
    } else if (code < 128) {
      bytes.push(code);
    } else {
      const point = raw.codePointAt(i) ?? code;
      if (point > 0xffff) i++;
      for (const byte of Buffer.from(String.fromCodePoint(point), 'utf8')) bytes.push(byte);
    }
  }
  try {
    return STRICT_UTF8.decode(Uint8Array.from(bytes));
  } catch {
    return null;
  }
}
