import { STATUS_NEUTRAL_CLASSIFICATIONS, type RunIndexRow } from '../runtime/runIndex';

/** How many of a goal's newest runs are kept with its run-index digest (the editor's "Recent runs"). */
export const RECENT_RUNS_KEPT = 5;

/**
 * One of a goal's newest runs as the editor lists it, with what its turn spent. Computed when the
 * run index is read (and kept in the status cache with the index's digest), so showing a goal's
 * recent runs never re-reads its whole index.
 */
export interface RecentRunRow {
  generated_at: string | null;
  classification: string | null;
  agent_id: string | null;
  todo_id: string | null;
  recommended_action: string | null;
  /** As the row gives it (relative to the project, or absolute); the editor resolves and checks it. */
  markdown_path: string | null;
  /** Slots its turn spent (null: no spend record for this turn). */
  spent_slots: number | null;
  cost_usd: number | null;
  tokens: number | null;
}

function numberOr(value: unknown): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function textOr(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

/** The newest runs of an index (rows newest first), bookkeeping rows left out, each with its turn's spend. */
export function recentRunRows(rows: readonly RunIndexRow[], limit: number = RECENT_RUNS_KEPT): RecentRunRow[] {
  const spends = new Map<string, { slots: number; cost: number | null; tokens: number | null }>();
  // Spend rows carry fields the row schema does not name (turn_instance_id, slots, usage).
  const fieldsOf = (row: RunIndexRow): Record<string, unknown> => row as Record<string, unknown>;
  for (const row of rows) {
    // A reservation hold (flagged `reservation_hold`) is not a spend: its void follows it.
    if (row.classification !== 'quota_slot_spent' || fieldsOf(row)['reservation_hold'] === true) continue;
    const turn = fieldsOf(row)['turn_instance_id'];
    if (typeof turn !== 'string') continue;
    const usage = fieldsOf(row)['usage'];
    const usageRecord = typeof usage === 'object' && usage !== null ? (usage as Record<string, unknown>) : {};
    const prior = spends.get(turn);
    spends.set(turn, {
      slots: (prior?.slots ?? 0) + (numberOr(fieldsOf(row)['slots']) ?? 1),
      cost: numberOr(usageRecord['cost_usd']) ?? prior?.cost ?? null,
      tokens: numberOr(usageRecord['tokens']) ?? prior?.tokens ?? null,
    });
  }
  const runs: RecentRunRow[] = [];
  for (const row of rows) {
    if (runs.length >= limit) break;
    if (row.classification !== undefined && STATUS_NEUTRAL_CLASSIFICATIONS.has(row.classification)) continue;
    const turn = fieldsOf(row)['turn_instance_id'];
    const spend = typeof turn === 'string' ? spends.get(turn) : undefined;
    runs.push({
      generated_at: textOr(row.generated_at),
      classification: textOr(row.classification),
      agent_id: textOr(row.agent_id),
      todo_id: textOr(row.todo_id),
      recommended_action: textOr(row.recommended_action),
      markdown_path: textOr(row.markdown_path),
      spent_slots: spend?.slots ?? null,
      cost_usd: spend?.cost ?? null,
      tokens: spend?.tokens ?? null,
    });
  }
  return runs;
}

const TEXT_FIELDS = [
  'generated_at',
  'classification',
  'agent_id',
  'todo_id',
  'recommended_action',
  'markdown_path',
] as const;
const NUMBER_FIELDS = ['spent_slots', 'cost_usd', 'tokens'] as const;

/** Rows read back from the status cache: kept only when every one has the shape above (else the index is read). */
export function keptRecentRunRows(value: unknown): RecentRunRow[] | undefined {
  if (!Array.isArray(value) || value.length > RECENT_RUNS_KEPT) return undefined;
  for (const row of value) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return undefined;
    const record = row as Record<string, unknown>;
    for (const field of TEXT_FIELDS) if (record[field] !== null && typeof record[field] !== 'string') return undefined;
    for (const field of NUMBER_FIELDS)
      if (record[field] !== null && (typeof record[field] !== 'number' || !Number.isFinite(record[field])))
        return undefined;
  }
  return value as RecentRunRow[];
}
