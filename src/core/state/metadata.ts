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

/**
 * The order the original writes metadata keys in (its todo metadata schema): it rewrites a todo's whole comment
 * in this order on every edit, so we do too, and a state file edited by either program reads the same bytes.
 * Keys it does not know (it drops them) keep their relative order after these.
 */
const CANONICAL_KEYS = [
  'todo_id',
  'status',
  'task_class',
  'action_kind',
  'task_domain',
  'capability_binding_ref',
  'task_repository',
  'continuation_policy',
  'removed_continuation_policy',
  'required_write_scopes',
  'required_capabilities',
  'target_capabilities',
  'explore_result_node_refs',
  'decision_scope',
  'required_decision_scopes',
  'decision_outcome',
  'decision_scope_outcomes',
  'claimed_by',
  'bound_agent',
  'goal_bound',
  'blocks_agent',
  'excluded_agents',
  'global_gate',
  'unblocks_todo_id',
  'successor_todo_ids',
  'completion_continuation',
  'completion_recovery',
  'replan_obligation_id',
  'resume_when',
  'no_followup',
  'target_key',
  'cadence',
  'next_due_at',
  'expires_at',
  'last_checked_at',
  'result_hash',
  'consecutive_no_change',
  'material_change',
  'max_no_change_before_replan',
  'watch_only',
  'note',
  'evidence',
  'reason',
  'completed_at',
  'updated_at',
  'completion_turn_key',
  'validation_command',
  'validation_command_argv',
  'validation_label',
  'validation_timeout_seconds',
  'superseded_by',
] as const;
const CANONICAL_RANK = new Map<string, number>(CANONICAL_KEYS.map((key, rank) => [key, rank]));

/** The tokens in the original's key order (a stable sort: unknown keys last, as they came). */
export function inCanonicalOrder<T extends { key: string }>(tokens: readonly T[]): T[] {
  const rank = (key: string) => CANONICAL_RANK.get(key) ?? CANONICAL_KEYS.length;
  return tokens
    .map((token, index) => ({ token, index }))
    .sort((a, b) => rank(a.token.key) - rank(b.token.key) || a.index - b.index)
    .map(({ token }) => token);
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
