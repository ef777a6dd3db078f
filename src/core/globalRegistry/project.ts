import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Projecting one project-registry goal into the global registry (docs/privacy.md), as the original's
 * `sanitize_goal_for_global` does: a deep copy without `authority_sources` (its count is kept) whose
 * `authority_registry` becomes a summary of counts and flags (the global registry is shared by every project on
 * the machine, so it must not hold another project's document names or topic maps), stamped with where it came
 * from and when. The keys come in the original's order: the goal's own, then `source_registry`, `synced_at`,
 * `authority_source_count`, `authority_registry`.
 */
export function projectGoalForGlobal(
  goal: Record<string, unknown>,
  stamp: { sourceRegistry: string; syncedAt: string },
): Record<string, unknown> {
  const projected: Record<string, unknown> = structuredClone(goal);
  const sources = projected['authority_sources'];
  const alreadyCounted = !('authority_sources' in projected) ? projected['authority_source_count'] : undefined;
  const repo = typeof projected['repo'] === 'string' ? projected['repo'] : null;
  const summary = compactAuthorityRegistry(projected, repo);
  for (const key of ['authority_sources', 'authority_registry', 'source_registry', 'synced_at']) delete projected[key];
  delete projected['authority_source_count'];
  return {
    ...projected,
    source_registry: stamp.sourceRegistry,
    synced_at: stamp.syncedAt,
    authority_source_count: Array.isArray(sources)
      ? sources.length
      : typeof alreadyCounted === 'number'
        ? alreadyCounted
        : 0,
    authority_registry: summary,
  };
}

const CANONICAL_FIELDS = ['default_entry_docs', 'topic_authority', 'project_materials', 'deprecated_sources'];
const COUNT_FIELDS = [
  'default_entry_count',
  'default_entries_checked',
  'default_entries_present',
  'topic_authority_count',
  'project_material_count',
  'project_material_repository_count',
  'project_material_owner_review_required_count',
  'project_material_stale_count',
  'project_material_current_authority_count',
] as const;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function count(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (isRecord(value)) return Object.keys(value).length;
  return 0;
}

function intOf(value: unknown): number {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : 0;
  return Number.isFinite(n) ? Math.trunc(n) : 0;
}

/** A path of the project: relative ones under the project (the original's `_resolve_project_path`). */
function projectPath(project: string | null, text: string): string | null {
  if (project === null || text === '') return null;
  return path.isAbsolute(text) ? text : path.join(project, text);
}

function entryPath(entry: unknown): string | null {
  if (typeof entry === 'string') return entry === '' ? null : entry;
  if (!isRecord(entry)) return null;
  const value = entry['path'] ?? entry['doc'] ?? entry['file'];
  return typeof value === 'string' && value !== '' ? value : null;
}

/**
 * The original's `compact_authority_registry` without its `default_entries` list: the same fields in its order.
 * A goal without an authority registry gets the original's empty summary (`declared: false`, zero counts,
 * `conflict_risk: unknown`). Counts of a declared one are the number of entries it lists (the original also
 * grades project materials by owner review and staleness; those counts are taken from the registry as given).
 */
export function compactAuthorityRegistry(
  goal: Record<string, unknown>,
  project: string | null,
): Record<string, unknown> {
  const raw = isRecord(goal['authority_registry']) ? goal['authority_registry'] : {};
  const required = Boolean(goal['requires_authority_registry'] ?? goal['authority_registry_required']);
  const pathText = typeof raw['path'] === 'string' && raw['path'] !== '' ? raw['path'] : null;
  const resolved = pathText === null ? null : projectPath(project, pathText);
  const summary: Record<string, unknown> = {
    declared: CANONICAL_FIELDS.some((key) => key in raw) ? true : Boolean(raw['declared']),
    required: Boolean(raw['required']) || required,
    path: pathText,
    path_exists: resolved !== null ? fs.existsSync(resolved) : (raw['path_exists'] ?? null),
    read_status: raw['read_status'] ?? null,
  };
  for (const key of COUNT_FIELDS) summary[key] = intOf(raw[key]);
  summary['deprecated_source_count'] = intOf(raw['deprecated_source_count'] ?? raw['deprecated_sources_seen']);
  summary['conflict_risk'] =
    typeof raw['conflict_risk'] === 'string' && raw['conflict_risk'] !== '' ? raw['conflict_risk'] : 'unknown';
  if ('default_entry_docs' in raw) {
    const docs = raw['default_entry_docs'];
    const entries = (Array.isArray(docs) ? docs : isRecord(docs) ? Object.values(docs) : [])
      .map(entryPath)
      .filter((p): p is string => p !== null);
    let checked = 0;
    let present = 0;
    for (const entry of entries) {
      const file = projectPath(project, entry);
      if (file === null) continue;
      checked += 1;
      if (fs.existsSync(file)) present += 1;
    }
    summary['default_entry_count'] = entries.length;
    summary['default_entries_checked'] = checked;
    summary['default_entries_present'] = present;
  }
  if ('topic_authority' in raw) summary['topic_authority_count'] = count(raw['topic_authority']);
  if ('project_materials' in raw) summary['project_material_count'] = count(raw['project_materials']);
  if ('deprecated_sources' in raw) summary['deprecated_source_count'] = count(raw['deprecated_sources']);
  // Nothing else of the registry (names, topics, paths of its documents) leaves the project.
  return summary;
}
