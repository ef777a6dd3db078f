import { findCredentials } from '../../privacy/scrub';

/**
 * Text normalization shared by every next-action projection: the display form (what users see),
 * the compare form (what alignment works on), and the public-safe filter applied to run
 * recommendations before they leave the run history.
 */

export const DISPLAY_LIMIT = 320;
const ELLIPSIS = '…';

export function collapseWhitespace(text: string | null | undefined): string {
  if (typeof text !== 'string') return '';
  return text
    .split(/\s+/u)
    .filter((part) => part !== '')
    .join(' ');
}

/** Cuts `text` to at most `limit` characters (code points), ending in `…` when it was longer. */
export function truncateText(text: string, limit: number): string {
  const chars = Array.from(text);
  if (chars.length <= limit) return text;
  return (
    chars
      .slice(0, limit - 1)
      .join('')
      .trimEnd() + ELLIPSIS
  );
}

/** `display(x)`: whitespace collapsed, cut at 320 characters. Empty for missing values. */
export function displayText(text: string | null | undefined): string {
  return truncateText(collapseWhitespace(text), DISPLAY_LIMIT);
}

// Each prefix is stripped at most once, in this order, so "todo_x: P1: [ops] agent: do it" → "do it".
const COMPARE_PREFIXES: readonly RegExp[] = [
  /^todo_[a-z0-9_-]+:\s*/u,
  /^p\d+:\s*/u,
  /^\[[^\]]*\]\s*/u,
  /^(?:agent|user|owner|codex):\s*/u,
];

/** `compare(x)`: lowercased, whitespace-collapsed, with todo-id / priority / tag / role prefixes removed. */
export function compareForm(text: string | null | undefined): string {
  let form = collapseWhitespace(text).toLowerCase();
  for (const prefix of COMPARE_PREFIXES) form = form.replace(prefix, '');
  return form;
}

const MIN_LABEL_LENGTH = 8;
const MAX_LABEL_SOURCE = 120;
const MIN_PREFIX_LENGTH = 24;
const CLAUSE_END = /[,.;:，。；：]/u;

/** The label: the text before the first colon when 8–120 characters precede it, else the first 120 characters. */
function labelOf(form: string): string {
  const colon = form.indexOf(':');
  if (colon >= MIN_LABEL_LENGTH && colon <= MAX_LABEL_SOURCE) return form.slice(0, colon).trim();
  return Array.from(form).slice(0, MAX_LABEL_SOURCE).join('').trim();
}

/** The leading clause, reduced to its first 6 words when it has 4 or more. */
function leadingClauseOf(form: string): string {
  const clause = form.split(CLAUSE_END, 1)[0] ?? '';
  const words = clause.split(' ').filter((word) => word !== '');
  return (words.length >= 4 ? words.slice(0, 6) : words).join(' ');
}

function labelMatches(form: string, other: string): boolean {
  const label = labelOf(form);
  return Array.from(label).length >= MIN_LABEL_LENGTH && other.includes(label);
}

function leadingClauseMatches(form: string, other: string): boolean {
  const clause = leadingClauseOf(form);
  return Array.from(clause).length >= MIN_PREFIX_LENGTH && other.includes(clause);
}

/**
 * `aligned(a, b)`: whether two action texts name the same work. Deliberately loose (the original's
 * rules, kept so the same pairs align): equal compare forms, a label of one found in the other, or a
 * leading clause of one found in the other. The original's fourth rule (the shorter text of ≥32
 * characters contained in the longer) is omitted: whenever it holds, the label rule already holds.
 */
export function actionsAligned(a: string | null | undefined, b: string | null | undefined): boolean {
  const left = compareForm(a);
  const right = compareForm(b);
  if (left === '' || right === '') return false;
  if (left === right) return true;
  if (labelMatches(left, right) || labelMatches(right, left)) return true;
  return leadingClauseMatches(left, right) || leadingClauseMatches(right, left);
}

const LOCAL_PATH_PATTERNS: readonly RegExp[] = [
  /\/Users\//u,
  /\/home\//u,
  /\/tmp\//u,
  /\/private\/var\//u,
  /\/var\/folders\//u,
  /\/root\//u,
  /\b[A-Za-z]:\\Users\\/u,
];

const CREDENTIAL_PATTERNS: readonly RegExp[] = [
  /\bbearer\s+\S/iu,
  /\bauthorization\s*[:=]/iu,
  /\b[a-z_]*token=/iu,
  /\bghp_[A-Za-z0-9]/u,
  /\beyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}/u,
  /\b[as]k=/iu,
  /\bAKIA[0-9A-Z]{16}\b/u,
  /\bsk-[A-Za-z0-9_-]{16,}/u,
];

export function containsLocalPath(text: string): boolean {
  return LOCAL_PATH_PATTERNS.some((pattern) => pattern.test(text));
}

/** The original's loose credential test, widened by everything the scrubber redacts as a credential. */
export function containsCredential(text: string): boolean {
  return CREDENTIAL_PATTERNS.some((pattern) => pattern.test(text)) || findCredentials(text).length > 0;
}

/**
 * Public-safe compaction of a run's recommended action: collapsed and cut at 320 characters, or
 * null when the text is empty or names a local path or a secret (the text is hidden, not redacted,
 * so nothing of it leaks into status payloads).
 */
export function publicSafeCompact(text: string | null | undefined, limit: number = DISPLAY_LIMIT): string | null {
  const collapsed = collapseWhitespace(text);
  if (collapsed === '' || containsLocalPath(collapsed) || containsCredential(collapsed)) return null;
  return truncateText(collapsed, limit);
}
