import { z } from 'zod';
import { assetGate, assetOwner, assetStopCondition, assetSupportMode } from './projection/projectAsset';

/**
 * The global registry's findings in the attention queue, by the original's rule (`merge_global_registry_findings`,
 * control_plane/work_items/attention_queue.py, with `attach_global_registry_shadow_finding`,
 * control_plane/goals/global_registry_shadow.py): each finding of `global_registry` (reports/globalRegistryHealth.ts)
 * of severity `high` or `action`, in its order, and of the goal asked for when a `--goal-id` filters the status (its
 * `goal_id`, or one of its `goal_ids`):
 * - a `source_registry_missing` or `stale_source_registry` finding of a goal whose item has a quota is a shadow on
 *   that item: `global_registry_shadow_findings[]` (`kind`, `severity`, `source: global_registry`, `message` and
 *   `recommended_action` when set), and on its `project_asset` the summary `global_registry_shadow_findings`
 *   (`open`, the count; `kinds`, each kind once in first-seen order);
 * - any other finding is an item of its own (the original's `attention_item`): its `goal_id` (`global-registry` when
 *   none), `status` the finding's kind, `waiting_on: codex`, its severity and recommended action (defaults
 *   `global_registry_finding`, `action`, `inspect global registry health`), a project asset of those, and
 *   `source: global_registry`. These items come before the goals' items (after the contract's), as the original's
 *   health items do.
 * Computed when answering, from the global registry read then: the goals' cached items are copied, not changed.
 */

export const GLOBAL_REGISTRY_SOURCE = 'global_registry';

/** The finding kinds that shadow a goal's own item instead of adding one (`SOURCE_REGISTRY_SHADOW_FINDINGS`). */
const SOURCE_REGISTRY_SHADOW_FINDINGS: ReadonlySet<string> = new Set([
  'source_registry_missing',
  'stale_source_registry',
]);

export const GlobalRegistryShadowFindingSchema = z.object({
  kind: z.string(),
  severity: z.string(),
  source: z.literal(GLOBAL_REGISTRY_SOURCE),
  message: z.string().optional(),
  recommended_action: z.string().optional(),
});
export type GlobalRegistryShadowFinding = z.infer<typeof GlobalRegistryShadowFindingSchema>;

/** A finding's item of its own in the attention queue. */
export const GlobalRegistryAttentionItemSchema = z.object({
  goal_id: z.string(),
  status: z.string(),
  waiting_on: z.literal('codex'),
  severity: z.string(),
  recommended_action: z.string(),
  project_asset: z.object({
    owner: z.string(),
    gate: z.string(),
    support_mode: z.string(),
    next_action: z.string(),
    stop_condition: z.string(),
  }),
  source: z.literal(GLOBAL_REGISTRY_SOURCE),
});
export type GlobalRegistryAttentionItem = z.infer<typeof GlobalRegistryAttentionItemSchema>;

/** Whether an attention item is a global registry finding's own item (no goal's item has this source). */
export function isGlobalRegistryAttentionItem(item: { source?: unknown }): item is GlobalRegistryAttentionItem {
  return item.source === GLOBAL_REGISTRY_SOURCE;
}

/** What of a goal's item the rule reads and writes. */
interface ShadowedItem {
  goal_id: string;
  quota?: unknown;
  project_asset?: unknown;
  global_registry_shadow_findings?: GlobalRegistryShadowFinding[] | undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's `str(value or default)` for a JSON value. */
function textOr(value: unknown, fallback: string): string {
  if (value === undefined || value === null || value === false || value === '' || value === 0) return fallback;
  if (typeof value === 'string') return value;
  if (value === true) return 'True';
  return typeof value === 'number' ? String(value) : JSON.stringify(value);
}

function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return value !== undefined && value !== null && value !== false && value !== 0 && value !== '';
}

/** `compact_global_registry_shadow_finding`. */
function shadowOf(finding: Record<string, unknown>): GlobalRegistryShadowFinding {
  const shadow: GlobalRegistryShadowFinding = {
    kind: textOr(finding['kind'], 'global_registry_finding'),
    severity: textOr(finding['severity'], 'action'),
    source: GLOBAL_REGISTRY_SOURCE,
  };
  if (truthy(finding['message'])) shadow.message = textOr(finding['message'], '');
  if (truthy(finding['recommended_action'])) shadow.recommended_action = textOr(finding['recommended_action'], '');
  return shadow;
}

/** The original's `attention_item` for a finding: no question, command, gates or handoff condition. */
function findingItem(goalId: string, finding: Record<string, unknown>): GlobalRegistryAttentionItem {
  const status = textOr(finding['kind'], 'global_registry_finding');
  const recommendedAction = textOr(finding['recommended_action'], 'inspect global registry health');
  const route = { status, waiting_on: 'codex', recommended_action: recommendedAction };
  return {
    goal_id: goalId,
    status,
    waiting_on: 'codex',
    severity: textOr(finding['severity'], 'action'),
    recommended_action: recommendedAction,
    project_asset: {
      owner: assetOwner(route.waiting_on),
      gate: assetGate(route),
      support_mode: assetSupportMode(route),
      next_action: recommendedAction,
      stop_condition: assetStopCondition(route),
    },
    source: GLOBAL_REGISTRY_SOURCE,
  };
}

/** A copy of the item with the shadow attached (`attach_global_registry_shadow_finding`). */
function withShadow<T extends ShadowedItem>(item: T, finding: Record<string, unknown>): T {
  const shadow = shadowOf(finding);
  const out: T = {
    ...item,
    global_registry_shadow_findings: [...(item.global_registry_shadow_findings ?? []), shadow],
  };
  const asset = item.project_asset;
  if (!isRecord(asset)) return out;
  const previous = asset['global_registry_shadow_findings'];
  const summary = isRecord(previous) ? previous : { open: 0, kinds: [] };
  const kinds = Array.isArray(summary['kinds']) ? (summary['kinds'] as unknown[]) : [];
  out.project_asset = {
    ...asset,
    global_registry_shadow_findings: {
      ...summary,
      open: (typeof summary['open'] === 'number' ? summary['open'] : 0) + 1,
      kinds: kinds.includes(shadow.kind) ? kinds : [...kinds, shadow.kind],
    },
  };
  return out;
}

/**
 * The findings merged into the queue: `findingItems` to put before the goals' items, and the goals' items with their
 * shadows (the same objects when no finding shadows them).
 */
export function mergeGlobalRegistryFindings<T extends ShadowedItem>(input: {
  items: readonly T[];
  findings: unknown;
  goalFilter: string | null;
}): { findingItems: GlobalRegistryAttentionItem[]; items: T[] } {
  const items = [...input.items];
  const findingItems: GlobalRegistryAttentionItem[] = [];
  if (!Array.isArray(input.findings)) return { findingItems, items };
  const withQuota = new Map<string, number[]>();
  items.forEach((item, index) => {
    if (!isRecord(item.quota)) return;
    const at = withQuota.get(item.goal_id) ?? [];
    at.push(index);
    withQuota.set(item.goal_id, at);
  });
  for (const finding of input.findings as unknown[]) {
    if (!isRecord(finding)) continue;
    if (finding['severity'] !== 'high' && finding['severity'] !== 'action') continue;
    const goalId = textOr(finding['goal_id'], 'global-registry');
    if (input.goalFilter) {
      const ids = Array.isArray(finding['goal_ids'])
        ? finding['goal_ids'].map((id) => textOr(id, '')).filter((id) => id.trim() !== '')
        : [];
      if (goalId !== input.goalFilter && !ids.includes(input.goalFilter)) continue;
    }
    const live = withQuota.get(goalId) ?? [];
    if (SOURCE_REGISTRY_SHADOW_FINDINGS.has(textOr(finding['kind'], '')) && live.length > 0) {
      for (const index of live) items[index] = withShadow(items[index] as T, finding);
      continue;
    }
    findingItems.push(findingItem(goalId, finding));
  }
  return { findingItems, items };
}
