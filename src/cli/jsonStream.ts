/**
 * Writes `JSON.stringify(value, null, 2)` in pieces, byte for byte the same text, so a large answer
 * (status over thousands of goals prints tens of megabytes) is never held whole as one string and
 * again as its encoded bytes. The top levels are walked here; below `depth` each value is stringified
 * alone and indented to its place (JSON text has line breaks only between tokens, so re-indenting
 * every line of a nested value is exact). Pieces are gathered up to `chunkChars` before each write.
 *
 * Walked levels follow JSON.stringify's rules: `toJSON(key)` first, object members whose value is
 * undefined, a function or a symbol left out, the same in an array written as `null`. Values below
 * the walked levels see `toJSON('')` for their own key, which matters only to a `toJSON` that reads
 * its key (LoopX's answers are plain data).
 */
export function writeJsonPretty(
  value: unknown,
  write: (text: string) => void,
  options: { depth?: number; chunkChars?: number } = {},
): void {
  const depth = options.depth ?? 3;
  const chunkChars = options.chunkChars ?? 1 << 16;
  let pending: string[] = [];
  let pendingChars = 0;
  const emit = (text: string): void => {
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

  /** `resolved` has had its toJSON applied; false when it has no JSON text (undefined, a function, a symbol). */
  const walk = (resolved: unknown, indent: string, level: number): boolean => {
    if (!isWalkable(resolved) || level >= depth) {
      const text = JSON.stringify(resolved, null, 2) as string | undefined;
      if (text === undefined) return false;
      emit(indent === '' ? text : text.replace(/\n/g, `\n${indent}`));
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
        if (!walk(withToJson(resolved[i], String(i)), inner, level + 1)) emit('null');
      }
      emit(`\n${indent}]`);
      return true;
    }
    let first = true;
    for (const member of Object.keys(resolved)) {
      const child = withToJson((resolved as Record<string, unknown>)[member], member);
      if (child === undefined || typeof child === 'function' || typeof child === 'symbol') continue;
      emit(`${first ? '{' : ','}\n${inner}${JSON.stringify(member)}: `);
      first = false;
      walk(child, inner, level + 1);
    }
    emit(first ? '{}' : `\n${indent}}`);
    return true;
  };

  if (walk(withToJson(value, ''), '', 0)) emit('\n');
  flush();
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
