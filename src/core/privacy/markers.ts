/**
 * Private-marker detection over a registry document (docs/privacy.md). Nothing is rewritten: we only
 * report *where* private data sits (a key path and a kind), never the value itself, so the report
 * can be shown or logged without leaking what it found.
 */

export type PrivateMarkerKind = 'local_path' | 'raw_source_reference' | 'private_text';

export interface PrivateMarker {
  /** Key path of the leaf, such as `goals[0].guards[1]`. */
  path: string;
  kind: PrivateMarkerKind;
}

export interface PrivateMarkerScan {
  markers: PrivateMarker[];
  /** True when more leaves matched than `MAX_PRIVATE_MARKERS`; the list holds the first ones. */
  truncated: boolean;
}

export const MAX_PRIVATE_MARKERS = 25;

/** Keys whose value is a filesystem location: any absolute or local-looking value is private. */
const PATH_KEYS = new Set([
  'repo',
  'source_registry',
  'json_path',
  'markdown_path',
  'index_path',
  'common_runtime_root',
  'global_registry',
]);

/** Keys that point into a private document system: private whatever the value. */
const RAW_SOURCE_KEYS = new Set(['url', 'doc_url', 'wiki_url', 'document_id', 'wiki_node_token', 'source_ref']);

/** Documentation placeholders such as `/path/to/project` are public by construction. */
const PLACEHOLDER_PREFIX = '/path/to/';

/**
 * A local path prefix at the start of the value or after a quote, colon or whitespace. The
 * original meant the same but its character class matched a backslash and the letter `s`
 * instead of whitespace (docs/compatibility.md#privacy); here `"see /tmp/x"` is caught and `"dirs/tmp/x"` is not.
 */
const LOCAL_PATH_PATTERN = /(?:^|["':\s])(?:\/Users\/|\/private\/|\/var\/folders\/|\/tmp\/|~\/|~\\)/;

/** Plain, case-insensitive substrings: deliberately broad (`tokenizer` matches). */
const PRIVATE_TEXT_PATTERN = /larkoffice|docs\.internal|bearer|authorization|token|password|secret/i;

const WINDOWS_ABSOLUTE = /^(?:[A-Za-z]:[\\/]|\\\\)/;

function isAbsoluteOrLocal(value: string): boolean {
  return (
    value.startsWith('/') || value.startsWith('~') || WINDOWS_ABSOLUTE.test(value) || LOCAL_PATH_PATTERN.test(value)
  );
}

/** The kind of one leaf, or null when it is public. `lastKey` is the nearest object key above it. */
export function classifyLeaf(lastKey: string | null, value: unknown): PrivateMarkerKind | null {
  const text = typeof value === 'string' ? value : String(value);
  if (text.startsWith(PLACEHOLDER_PREFIX)) return null;
  if (lastKey !== null && PATH_KEYS.has(lastKey) && isAbsoluteOrLocal(text)) return 'local_path';
  if (lastKey !== null && RAW_SOURCE_KEYS.has(lastKey)) return 'raw_source_reference';
  if (LOCAL_PATH_PATTERN.test(text)) return 'local_path';
  if (PRIVATE_TEXT_PATTERN.test(text)) return 'private_text';
  return null;
}

/** Walks every non-null leaf of `document` in order and reports the first `limit` private ones. */
export function findPrivateMarkers(document: unknown, limit: number = MAX_PRIVATE_MARKERS): PrivateMarkerScan {
  const markers: PrivateMarker[] = [];
  let truncated = false;

  const visit = (value: unknown, path: string, lastKey: string | null): boolean => {
    if (value === null || value === undefined) return true;
    if (Array.isArray(value)) {
      for (let index = 0; index < value.length; index += 1) {
        if (!visit(value[index], `${path}[${index}]`, lastKey)) return false;
      }
      return true;
    }
    if (typeof value === 'object') {
      for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
        if (!visit(child, path === '' ? key : `${path}.${key}`, key)) return false;
      }
      return true;
    }
    const kind = classifyLeaf(lastKey, value);
    if (kind === null) return true;
    if (markers.length >= limit) {
      truncated = true;
      return false;
    }
    markers.push({ path, kind });
    return true;
  };

  visit(document, '', null);
  return { markers, truncated };
}
