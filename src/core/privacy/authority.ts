/**
 * Authority data (`authority_sources`, `authority_registry`) names private documents, topic
 * maps and material paths. Anything that leaves the project (the global registry, the status
 * server, logs) carries only counts and flags of it (docs/privacy.md).
 */

export const AUTHORITY_REGISTRY_SUMMARY_SCHEMA = 'loopx_authority_registry_summary_v0';

/** String fields of an authority registry that are kept: its location and type, not its contents. */
const KEPT_STRING_FIELDS = new Set(['schema_version', 'kind', 'status', 'path', 'registry', 'registry_path']);

/**
 * Counts, flags and the registry path of an authority registry. Arrays and objects become
 * `<key>_count`; booleans and numbers stay; other strings (names, topics) are dropped.
 */
export function summarizeAuthorityRegistry(registry: unknown): Record<string, unknown> {
  const summary: Record<string, unknown> = { schema_version: AUTHORITY_REGISTRY_SUMMARY_SCHEMA };
  if (typeof registry === 'string') return { ...summary, present: registry !== '', path: registry };
  if (Array.isArray(registry)) return { ...summary, present: true, entry_count: registry.length };
  if (registry === null || typeof registry !== 'object')
    return { ...summary, present: registry !== null && registry !== undefined };
  const fields = registry as Record<string, unknown>;
  // Already a summary (a global-registry goal projected once more): keep it as it is.
  if (fields['schema_version'] === AUTHORITY_REGISTRY_SUMMARY_SCHEMA) return { ...fields };
  summary['present'] = true;
  for (const [key, value] of Object.entries(fields)) {
    if (Array.isArray(value)) summary[`${key}_count`] = value.length;
    else if (value !== null && typeof value === 'object') summary[`${key}_count`] = Object.keys(value).length;
    else if (typeof value === 'boolean' || typeof value === 'number') summary[key] = value;
    else if (typeof value === 'string' && KEPT_STRING_FIELDS.has(key))
      summary[key === 'schema_version' ? 'source_schema_version' : key] = value;
  }
  return summary;
}

/**
 * A shallow copy of `record` with `authority_sources` replaced by `authority_source_count` and
 * `authority_registry` by its summary. Records without authority data come back unchanged.
 */
export function reduceAuthorityData<T extends Record<string, unknown>>(record: T): Record<string, unknown> {
  if (!('authority_sources' in record) && !('authority_registry' in record)) return record;
  const reduced: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === 'authority_sources') {
      reduced['authority_source_count'] = Array.isArray(value) ? value.length : 0;
    } else if (key === 'authority_registry') {
      reduced[key] = summarizeAuthorityRegistry(value);
    } else if (!(key === 'authority_source_count' && 'authority_sources' in record)) {
      reduced[key] = value;
    }
  }
  return reduced;
}
