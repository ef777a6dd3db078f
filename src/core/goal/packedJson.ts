/**
 * A compact, exact encoding of JSON values for the persistent status cache: a list of two or more
 * objects with the same keys in the same order (the spend and void facts of a run index) becomes
 * one column header and rows of values, and a text column whose values all share a long prefix
 * (the spends' record paths) stores the prefix once. `unpackJson(JSON.parse(JSON.stringify(packJson(v))))`
 * is deep-equal to `v`, keys in the same order, for every JSON value (an object that has a `$cols`
 * key of its own is wrapped as `{"$cols": null, "$obj": …}`, so only the encoding's own columns
 * carry one).
 */

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const MIN_PREFIX = 8;

interface Packed {
  $cols: string[];
  /** Per column: the prefix every value of it had (a text column), or null. */
  $prefix: (string | null)[];
  $rows: Json[][];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function commonPrefix(values: readonly unknown[]): string | null {
  if (values.length < 2 || !values.every((value) => typeof value === 'string')) return null;
  let prefix = values[0] as string;
  for (const value of values as string[]) {
    let i = 0;
    while (i < prefix.length && i < value.length && prefix.charCodeAt(i) === value.charCodeAt(i)) i++;
    prefix = prefix.slice(0, i);
    if (prefix.length < MIN_PREFIX) return null;
  }
  return prefix;
}

/** The keys every element shares, in order, when the list can be packed as columns; null otherwise. */
function sharedKeys(list: readonly unknown[]): string[] | null {
  if (list.length < 2 || !isPlainObject(list[0])) return null;
  const keys = Object.keys(list[0]);
  if (keys.includes('$cols')) return null;
  for (const element of list) {
    if (!isPlainObject(element)) return null;
    const own = Object.keys(element);
    if (own.length !== keys.length || own.some((key, i) => key !== keys[i] || element[key] === undefined)) return null;
  }
  return keys;
}

export function packJson(value: unknown): unknown {
  if (Array.isArray(value)) {
    const keys = sharedKeys(value);
    if (keys === null) return value.map(packJson);
    const columns = keys.map((key) => value.map((element) => (element as Record<string, unknown>)[key]));
    const prefixes = columns.map(commonPrefix);
    const rows = value.map((_, row) =>
      columns.map((column, col) => {
        const cell = column[row];
        const prefix = prefixes[col];
        return prefix !== null && prefix !== undefined ? (cell as string).slice(prefix.length) : packJson(cell);
      }),
    );
    const packed: Packed = { $cols: keys, $prefix: prefixes, $rows: rows as Json[][] };
    return packed;
  }
  if (isPlainObject(value)) {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(value)) out[key] = packJson(child);
    return Object.hasOwn(value, '$cols') ? { $cols: null, $obj: out } : out;
  }
  return value;
}

export function unpackJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(unpackJson);
  if (!isPlainObject(value)) return value;
  // A wrapped object of the data: its own keys (a `$cols` among them) are data, not an encoding.
  const own = value['$cols'] === null && isPlainObject(value['$obj']) ? value['$obj'] : null;
  if (
    own === null &&
    Array.isArray(value['$cols']) &&
    Array.isArray(value['$rows']) &&
    Array.isArray(value['$prefix'])
  ) {
    const keys = value['$cols'] as string[];
    const prefixes = value['$prefix'] as (string | null)[];
    return (value['$rows'] as unknown[][]).map((cells) => {
      const element: Record<string, unknown> = {};
      keys.forEach((key, col) => {
        const prefix = prefixes[col];
        element[key] = typeof prefix === 'string' ? prefix + (cells[col] as string) : unpackJson(cells[col]);
      });
      return element;
    });
  }
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(own ?? value)) out[key] = unpackJson(child);
  return out;
}
