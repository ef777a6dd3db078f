/**
 * Status items kept pre-serialized, so the answer of `loopx status --format json` splices each goal's
 * text instead of serializing its item again (on M the items are most of a 7.8 MB answer).
 *
 * A status item's text is `JSON.stringify(item, null, 2)` as it appears nested {@link STATUS_ITEM_LEVEL}
 * levels deep in the pretty answer (`payload.attention_queue.items[i]`): every line after the first
 * indented by two spaces per level. The status cache makes the text once when it projects an item
 * (its JSON copy, see `goalStatus.ts`) and the persistent cache keeps it, so a warm call parses the
 * item from it and prints the same bytes.
 *
 * The answer's item is not the cached one: the quota, its signals, the dashboards' blocks and the
 * dependency blockers are added when answering (some of them depend on the time), and later fields
 * may be too. `deriveItemText` links the answer's item to the cached one it was made from; its text
 * is then composed member by member: a member whose value is the cached item's own (the same value,
 * `===`) takes the cached text of that member, any other (added, replaced or patched when answering)
 * is serialized now. So an answer-time field never comes from the cache, and a cached item that
 * expires is a new item with a new text. Items are never mutated once made (the caches share them).
 */

/** How deep a status item sits in the status payload: `attention_queue` → `items` → the item. */
export const STATUS_ITEM_LEVEL = 3;

const heads: string[] = [''];
const tails: string[] = [''];

/** What `JSON.stringify(…, null, 2)` prints before a value nested `level` arrays deep. */
function wrapperHead(level: number): string {
  for (let l = heads.length; l <= level; l++) heads[l] = `${heads[l - 1] ?? ''}[\n${'  '.repeat(l)}`;
  return heads[level] ?? '';
}

/** What it prints after it. */
function wrapperTail(level: number): string {
  for (let l = tails.length; l <= level; l++) tails[l] = `\n${'  '.repeat(l - 1)}]${tails[l - 1] ?? ''}`;
  return tails[level] ?? '';
}

/**
 * `JSON.stringify(value, null, 2)` as it reads nested `level` levels deep in a pretty-printed document
 * (undefined: the value has no JSON text). Stringified inside as many arrays, whose brackets are cut.
 */
export function prettyJsonAt(value: unknown, level: number): string | undefined {
  let wrapped: unknown = value;
  for (let i = 0; i < level; i++) wrapped = [wrapped];
  const text = JSON.stringify(wrapped, null, 2) as string | undefined;
  if (text === undefined) return undefined;
  if (level === 0) return text;
  const inner = text.slice(wrapperHead(level).length, text.length - wrapperTail(level).length);
  // An array stringifies a value without JSON text as `null`: it has none.
  return inner === 'null' && value !== null ? undefined : inner;
}

/** Texts of cached items, at STATUS_ITEM_LEVEL. */
const itemTexts = new WeakMap<object, string>();
/** Answer items → the cached item each was made from. */
const derivedFrom = new WeakMap<object, object>();
/** Composed texts of answer items. */
const composedTexts = new WeakMap<object, string>();
/** A cached item's own keys (JSON.stringify's: those with a JSON text), in order. */
const keysOf = new WeakMap<object, string[]>();

/** Records `text` as the item's JSON at STATUS_ITEM_LEVEL (the caller made the item from it, or it from the item). */
export function setItemText(item: object, text: string): void {
  itemTexts.set(item, text);
}

/** Records that `answerItem` was made from the cached `item` (a spread of it with members added or replaced). */
export function deriveItemText(answerItem: object, item: object): void {
  if (answerItem !== item) derivedFrom.set(answerItem, derivedFrom.get(item) ?? item);
}

function isPlainRecord(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Whether JSON.stringify leaves a member with this value out. */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}

/**
 * The JSON text of `value` at `level` of a pretty-printed answer when status knows it already (a cached
 * item, or an answer item made from one); undefined otherwise (the caller serializes it).
 */
export function knownJsonText(value: unknown, level: number): string | undefined {
  if (level !== STATUS_ITEM_LEVEL || value === null || typeof value !== 'object') return undefined;
  const own = itemTexts.get(value);
  if (own !== undefined) return own;
  const composed = composedTexts.get(value);
  if (composed !== undefined) return composed;
  const base = derivedFrom.get(value);
  if (base === undefined || !isPlainRecord(value) || !isPlainRecord(base)) return undefined;
  const baseText = itemTexts.get(base);
  if (baseText === undefined) return undefined;
  let baseKeys = keysOf.get(base);
  if (baseKeys === undefined) {
    baseKeys = Object.keys(base).filter((key) => !omitted(base[key]));
    keysOf.set(base, baseKeys);
  }
  const keys = Object.keys(value);
  // The answer's item is a spread of the cached one: its keys, in their order, then the added ones.
  if (baseKeys.length === 0 || keys.length < baseKeys.length) return undefined;
  for (let i = 0; i < baseKeys.length; i++) if (keys[i] !== baseKeys[i]) return undefined;
  const indent = '  '.repeat(STATUS_ITEM_LEVEL + 1);
  const close = `\n${'  '.repeat(STATUS_ITEM_LEVEL)}}`;
  if (!baseText.startsWith(`{\n${indent}`) || !baseText.endsWith(close)) return undefined;
  const separator = `,\n${indent}`;
  const parts: string[] = [];
  const add = (text: string): void => {
    parts.push(parts.length === 0 ? text : `${separator}${text}`);
  };
  // The cached text is copied in runs of unchanged members, from `runStart` to the member at `at`. A
  // member is found by its line: indented to the member level (deeper lines are indented further, and
  // strings hold no raw newline), the next member's key after it.
  let runStart = 2 + indent.length;
  let at = runStart;
  const endRun = (): void => {
    if (at > runStart) add(baseText.slice(runStart, at - separator.length));
    runStart = at;
  };
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const child = value[key];
    if (omitted(child)) {
      if (i < baseKeys.length) return undefined;
      continue;
    }
    if (child !== null && typeof child === 'object' && 'toJSON' in child) return undefined;
    if (i < baseKeys.length) {
      const end =
        i === baseKeys.length - 1
          ? baseText.length - close.length
          : baseText.indexOf(`${separator}${JSON.stringify(baseKeys[i + 1])}: `, at);
      if (end < at) return undefined;
      if (base[key] === child) {
        at = end + separator.length;
        continue;
      }
      endRun();
      runStart = at = end + separator.length;
    } else endRun();
    const text = prettyJsonAt(child, STATUS_ITEM_LEVEL + 1);
    if (text !== undefined) add(`${JSON.stringify(key)}: ${text}`);
  }
  endRun();
  const text = parts.length === 0 ? '{}' : `{\n${indent}${parts.join('')}${close}`;
  composedTexts.set(value, text);
  return text;
}
