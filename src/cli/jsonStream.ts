/**
 * Writes `JSON.stringify(value, null, 2)` in pieces, byte for byte the same text, so a large answer
 * (status over thousands of goals prints tens of megabytes) is never held whole as one string and
 * again as its encoded bytes. The top levels are walked here; below `depth` each value is stringified
 * alone, nested in as many arrays as it is deep so that JSON.stringify indents it for its place, and
 * the arrays' brackets cut off. Small pieces are gathered up to `chunkChars` before each write; a piece
 * of an eighth of that or more is written alone.
 *
 * Walked levels follow JSON.stringify's rules: `toJSON(key)` first, object members whose value is
 * undefined, a function or a symbol left out, the same in an array written as `null`.
 */
export function writeJsonPretty(
  value: unknown,
  write: (text: string) => void,
  options: { depth?: number; chunkChars?: number } = {},
): void {
  const depth = options.depth ?? 3;
  const chunkChars = options.chunkChars ?? 1 << 18;
  const aloneChars = Math.max(1, chunkChars >> 3);
  let pending: string[] = [];
  let pendingChars = 0;
  const emit = (text: string): void => {
    // A large piece (a value stringified whole below the walk) goes out as it is: gathering it would
    // only copy it once more (a status answer's items are ~90 kB each, 10 MB in all on M).
    if (text.length >= aloneChars) {
      flush();
      write(text);
      return;
    }
    pending.push(text);
    pendingChars += text.length;
    if (pendingChars >= chunkChars) flush();
  };
  const flush = (): void => {
    if (pending.length === 0) return;
    write(pending.join(''));
    pending = [];
    pendingChars = 0;
  };

  /**
   * Writes one value: `raw` as given, `resolved` after its toJSON. False when it has no JSON text
   * (undefined, a function, a symbol), which a caller writes as null or leaves out.
   */
  const walk = (raw: unknown, resolved: unknown, indent: string, level: number): boolean => {
    if (resolved === undefined || typeof resolved === 'function' || typeof resolved === 'symbol') return false;
    // A value that came out of a toJSON is walked on whatever its depth (JSON.stringify would call a
    // toJSON of that result again; the walk, like JSON.stringify, does not).
    if (!isWalkable(resolved) || (level >= depth && raw === resolved)) {
      // Stringified inside as many arrays as it is deep, so JSON.stringify indents it for its place;
      // the wrapper's brackets are sliced off.
      let wrapped: unknown = resolved;
      for (let i = 0; i < level; i++) wrapped = [wrapped];
      const text = JSON.stringify(wrapped, null, 2) as string;
      emit(level === 0 ? text : text.slice(wrapperHead(level).length, text.length - wrapperTail(level).length));
      return true;
    }
    const inner = `${indent}  `;
    if (Array.isArray(resolved)) {
      if (resolved.length === 0) {
        emit('[]');
        return true;
      }
      emit('[');
      for (let i = 0; i < resolved.length; i++) {
        emit(i === 0 ? `\n${inner}` : `,\n${inner}`);
        const item: unknown = resolved[i];
        if (!walk(item, withToJson(item, String(i)), inner, level + 1)) emit('null');
      }
      emit(`\n${indent}]`);
      return true;
    }
    let first = true;
    for (const member of Object.keys(resolved)) {
      const child = (resolved as Record<string, unknown>)[member];
      const resolvedChild = withToJson(child, member);
      if (resolvedChild === undefined || typeof resolvedChild === 'function' || typeof resolvedChild === 'symbol')
        continue;
      emit(`${first ? '{' : ','}\n${inner}${JSON.stringify(member)}: `);
      first = false;
      walk(child, resolvedChild, inner, level + 1);
    }
    emit(first ? '{}' : `\n${indent}}`);
    return true;
  };

  if (walk(value, withToJson(value, ''), '', 0)) emit('\n');
  flush();
}

const heads: string[] = [''];
const tails: string[] = [''];

/** What JSON.stringify prints before a value nested `level` arrays deep: `[\n  [\n    ` … */
function wrapperHead(level: number): string {
  for (let l = heads.length; l <= level; l++) heads[l] = `${heads[l - 1] ?? ''}[\n${'  '.repeat(l)}`;
  return heads[level] ?? '';
}

/** What it prints after it: … `\n  ]\n]`. */
function wrapperTail(level: number): string {
  for (let l = tails.length; l <= level; l++) tails[l] = `\n${'  '.repeat(l - 1)}]${tails[l - 1] ?? ''}`;
  return tails[level] ?? '';
}

function withToJson(value: unknown, key: string): unknown {
  if (value !== null && (typeof value === 'object' || typeof value === 'bigint')) {
    const toJson = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJson === 'function') return (toJson as (key: string) => unknown).call(value, key);
  }
  return value;
}

/** Plain objects and arrays are walked; boxed primitives and everything else go to JSON.stringify whole. */
function isWalkable(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  return !(value instanceof Number || value instanceof String || value instanceof Boolean);
}
