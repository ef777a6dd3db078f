import { createHash } from 'node:crypto';
import { z } from 'zod';
import { publicSafeCompact } from './text';

/**
 * The original's `issue_meta_surface` (loopx/control_plane/work_items/issue_meta_surface.py): the first of the state
 * file's `## Issue Meta Surface` / `## Issue/PR Meta Surface` sections (in that order) holding a valid block. A block is
 * a `- `/`* ` bullet with its indented continuation lines; its `key=value` pairs (a value quoted or up to a space) give
 * `anchor_id` (or `id`), `repo_handle` (`repo`), `issue_handle` (`issue`, `issue_or_pr`, `issue_or_pr_handle`),
 * `owner_route` (`owner`), `related_code_hint` (`related_code`, `code`), `validation_surface` (`validation`),
 * `promotion_target` (`promotion`), `status`, `freshness` (each public-safe, 120, none with `<`/`>`) and `labels`
 * (`label`; split on `,;|`, 80 each, up to 8, once each). A block without a repo, owner, validation and promotion is
 * dropped; one without an anchor gets `issue_anchor_<sha1 of repo|issue|index, 10>`. Up to 8 items, `item_count` all.
 * On the item and in its `project_asset` block, as the original's active-state fields are.
 */

const HEADINGS = ['Issue Meta Surface', 'Issue/PR Meta Surface'] as const;
const HEADING = /^##+\s+(.+?)\s*$/u;
const FIELD = /(?<key>[a-z_][a-z0-9_-]*)=(?<value>"[^"]+"|'[^']+'|[^\s]+)/gu;
const MAX_ITEMS = 8;
const MAX_LABELS = 8;
const ALIASES: readonly (readonly [string, readonly string[]])[] = [
  ['anchor_id', ['anchor_id', 'id']],
  ['repo_handle', ['repo_handle', 'repo']],
  ['issue_handle', ['issue_handle', 'issue', 'issue_or_pr', 'issue_or_pr_handle']],
  ['owner_route', ['owner_route', 'owner']],
  ['related_code_hint', ['related_code_hint', 'related_code', 'code']],
  ['validation_surface', ['validation_surface', 'validation']],
  ['promotion_target', ['promotion_target', 'promotion']],
  ['status', ['status']],
  ['freshness', ['freshness']],
];

export const IssueMetaSurfaceSchema = z.object({
  schema_version: z.literal('issue_meta_surface_v0'),
  source_section: z.string(),
  item_count: z.number().int(),
  items: z.array(z.looseObject({ schema_version: z.literal('issue_meta_surface_item_v0'), index: z.number() })),
});
export type IssueMetaSurface = z.infer<typeof IssueMetaSurfaceSchema>;

/** Python's `str.strip(chars)`. */
function stripChars(text: string, chars: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && chars.includes(text[start] as string)) start++;
  while (end > start && chars.includes(text[end - 1] as string)) end--;
  return text.slice(start, end);
}

function publicValue(value: string | undefined, limit = 120): string | null {
  if (value === undefined) return null;
  const text = publicSafeCompact(value, limit);
  if (text === null || text.includes('<') || text.includes('>')) return null;
  return stripChars(text, '"\'');
}

function blocksOf(lines: readonly string[]): string[] {
  const blocks: string[] = [];
  let current: string[] | null = null;
  for (const line of lines) {
    const stripped = line.trim();
    if (stripped === '') continue;
    if (stripped.startsWith('- ') || stripped.startsWith('* ')) {
      if (current !== null) blocks.push(current.join(' '));
      current = [stripped.slice(2).trim()];
      continue;
    }
    if (current !== null && (line.startsWith(' ') || line.startsWith('\t'))) current.push(stripped);
  }
  if (current !== null) blocks.push(current.join(' '));
  return blocks;
}

function itemOf(block: string, index: number): Record<string, unknown> | null {
  const fields = new Map<string, string>();
  for (const match of block.matchAll(FIELD)) {
    const key = (match.groups?.['key'] ?? '').trim().toLowerCase().replace(/-/gu, '_');
    const value = stripChars((match.groups?.['value'] ?? '').trim(), '"\'');
    if (key !== '' && value !== '') fields.set(key, value);
  }
  if (fields.size === 0) return null;
  const item: Record<string, unknown> = { schema_version: 'issue_meta_surface_item_v0', index };
  for (const [output, aliases] of ALIASES) {
    const raw = aliases.map((alias) => fields.get(alias)).find((value) => value !== undefined);
    const value = publicValue(raw);
    if (value) item[output] = value;
  }
  const rawLabels = fields.get('labels') || fields.get('label');
  if (rawLabels) {
    const labels: string[] = [];
    for (const raw of rawLabels.split(/[,;|]/u)) {
      const label = publicValue(raw, 80);
      if (!label || labels.includes(label)) continue;
      labels.push(label);
      if (labels.length >= MAX_LABELS) break;
    }
    if (labels.length > 0) item['labels'] = labels;
  }
  if (!['repo_handle', 'owner_route', 'validation_surface', 'promotion_target'].every((key) => item[key])) return null;
  if (!item['anchor_id']) {
    const basis = [String(item['repo_handle'] ?? ''), String(item['issue_handle'] ?? ''), String(index)]
      .filter((part) => part !== '')
      .join('|');
    item['anchor_id'] = `issue_anchor_${createHash('sha1').update(basis, 'utf8').digest('hex').slice(0, 10)}`;
  }
  return item;
}

export function issueMetaSurface(stateText: string): IssueMetaSurface | null {
  const sections = new Map<string, string[]>(HEADINGS.map((heading) => [heading, []]));
  let current: string | null = null;
  for (const line of stateText.split(/\r\n|\r|\n/u)) {
    const heading = HEADING.exec(line);
    if (heading !== null) {
      const name = (heading[1] ?? '').trim().toLowerCase();
      current = HEADINGS.find((h) => h.toLowerCase() === name) ?? null;
      continue;
    }
    if (current !== null) sections.get(current)?.push(line);
  }
  for (const heading of HEADINGS) {
    const items = blocksOf(sections.get(heading) ?? [])
      .map((block, i) => itemOf(block, i + 1))
      .filter((item): item is Record<string, unknown> => item !== null);
    if (items.length > 0)
      return {
        schema_version: 'issue_meta_surface_v0',
        source_section: heading,
        item_count: items.length,
        items: items.slice(0, MAX_ITEMS) as IssueMetaSurface['items'],
      };
  }
  return null;
}
