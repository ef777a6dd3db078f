import * as fs from 'node:fs';
import { z } from 'zod';

/**
 * LoopX's contract check as `loopx status` runs it: per-todo metadata rules of each goal's state
 * file (`statusTodoContractDiagnostics` in todo/contract.ts, kept on the goal's status item so it is cached with
 * it), the registry's problem diagnostics, and warnings (a Next Action with no todo behind it, a
 * runtime root that does not exist yet, duplicated run-index rows). Any error makes the status
 * answer `ok: false` and adds the `loopx-contract` attention item. The rules are LoopX's
 * (`loopx/contract.py`), read and rewritten here; see docs/status.md#the-contract-check.
 */

export const ContractDiagnosticSchema = z.object({
  code: z.string(),
  message: z.string(),
});
export type ContractDiagnostic = z.infer<typeof ContractDiagnosticSchema>;

/** The goal id of the attention item a failed contract check adds (the original's). */
export const CONTRACT_ITEM_GOAL_ID = 'loopx-contract';
export const CONTRACT_ITEM_STATUS = 'contract_check_failed';
export const CONTRACT_ITEM_ACTION = 'fix contract errors before advancing goal adapters';

/**
 * The attention item of a failed contract check, as LoopX adds it. It is no goal: it has no todo
 * counts, quota or run fields (readers see them as absent, as in the original), and `errors` lists
 * what failed (the first few), so a reader of the queue alone sees why.
 */
export const ContractAttentionItemSchema = z.object({
  goal_id: z.literal(CONTRACT_ITEM_GOAL_ID),
  display_name: z.string(),
  status: z.literal(CONTRACT_ITEM_STATUS),
  waiting_on: z.literal('codex'),
  severity: z.literal('high'),
  recommended_action: z.string(),
  source: z.literal('contract'),
  activation_state: z.literal('active'),
  registry_member: z.literal(false),
  errors: z.array(z.string()),
});
export type ContractAttentionItem = z.infer<typeof ContractAttentionItemSchema>;

/** How many error texts the item carries (the full list is in `contract.errors`). */
const ITEM_ERRORS_SHOWN = 5;

export function contractAttentionItem(errors: readonly string[]): ContractAttentionItem {
  return {
    goal_id: CONTRACT_ITEM_GOAL_ID,
    display_name: 'LoopX contract check',
    status: CONTRACT_ITEM_STATUS,
    waiting_on: 'codex',
    severity: 'high',
    recommended_action: CONTRACT_ITEM_ACTION,
    source: 'contract',
    activation_state: 'active',
    registry_member: false,
    errors: errors.slice(0, ITEM_ERRORS_SHOWN),
  };
}

/** Whether an attention item is the contract item rather than a goal's (registry goals are never registry_member false here). */
export function isContractAttentionItem(item: { goal_id: string; source?: unknown }): item is ContractAttentionItem {
  return item.goal_id === CONTRACT_ITEM_GOAL_ID && item.source === 'contract';
}

// ---------------------------------------------------------------------------------------------
// Run-index duplicates

/** The duplicate rows of a run index by kind, as LoopX classifies them (`run_index_duplicates.py`). */
export interface IndexDuplicateSummary {
  reward_overlay_rows: number;
  unexpected_duplicate_rows: number;
  repairable_duplicate_rows: number;
  artifact_identity_collision_rows: number;
  artifact_identity_collision_groups: number;
}

const OVERLAY_IDENTITY_KEYS = ['generated_at', 'goal_id', 'classification', 'json_path', 'markdown_path'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A canonical text of a row without `human_reward`: keys sorted at every depth. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isPlainObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function withoutReward(row: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...row };
  delete copy['human_reward'];
  return copy;
}

function isRewardOverlayBundle(rows: readonly Record<string, unknown>[]): boolean {
  const base = rows.filter((row) => !isPlainObject(row['human_reward']));
  const overlays = rows.filter((row) => isPlainObject(row['human_reward']));
  if (base.length !== 1 || overlays.length === 0) return false;
  const baseRow = base[0] as Record<string, unknown>;
  return overlays.every((overlay) => {
    const projected = withoutReward(overlay);
    if (!OVERLAY_IDENTITY_KEYS.every((key) => key in projected)) return false;
    return Object.entries(projected).every(
      ([key, value]) => key in baseRow && canonical(baseRow[key]) === canonical(value),
    );
  });
}

/** Classifies the rows of an index text that share an identity (generated_at, json_path, markdown_path). */
export function indexDuplicateSummary(indexText: string): IndexDuplicateSummary {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const line of indexText.split('\n')) {
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isPlainObject(row)) continue;
    const text = (value: unknown): string =>
      value === undefined || value === null || value === '' || value === false || value === 0
        ? ''
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
    const key = JSON.stringify([text(row['generated_at']), text(row['json_path']), text(row['markdown_path'])]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  const summary: IndexDuplicateSummary = {
    reward_overlay_rows: 0,
    unexpected_duplicate_rows: 0,
    repairable_duplicate_rows: 0,
    artifact_identity_collision_rows: 0,
    artifact_identity_collision_groups: 0,
  };
  for (const rows of groups.values()) {
    if (rows.length <= 1) continue;
    const extra = rows.length - 1;
    if (isRewardOverlayBundle(rows)) {
      summary.reward_overlay_rows += extra;
      continue;
    }
    const hasReward = rows.some((row) => isPlainObject(row['human_reward']));
    const distinct = new Set(rows.map((row) => canonical(withoutReward(row))));
    summary.unexpected_duplicate_rows += extra;
    if (!hasReward && distinct.size === 1) summary.repairable_duplicate_rows += extra;
    else {
      summary.artifact_identity_collision_rows += extra;
      summary.artifact_identity_collision_groups += 1;
    }
  }
  return summary;
}

export interface IndexDuplicateFinding {
  /** A contract warning (null when every extra row is a reward overlay: a check then). */
  warning: string | null;
  check: string | null;
}

/**
 * What the contract says about a goal whose index has more rows than runs (`raw > unique`): a
 * warning naming the kinds of duplicates (and lines that could not be read), unless every extra
 * row is a reward overlay of its run, which is by design (a check).
 */
export function indexDuplicateFinding(input: {
  goalId: string;
  raw: number;
  unique: number;
  skipped: number;
  indexFile: string;
}): IndexDuplicateFinding {
  let summary: IndexDuplicateSummary | null = null;
  try {
    summary = indexDuplicateSummary(fs.readFileSync(input.indexFile, 'utf8'));
  } catch {
    summary = null;
  }
  const { goalId, raw, unique } = input;
  if (
    summary !== null &&
    summary.unexpected_duplicate_rows === 0 &&
    summary.reward_overlay_rows > 0 &&
    input.skipped === 0
  )
    return {
      warning: null,
      check: `${goalId}: reward overlay rows raw=${raw} unique=${unique} overlays=${summary.reward_overlay_rows}`,
    };
  const details: string[] = [];
  if (summary !== null) {
    if (summary.unexpected_duplicate_rows) details.push(`unexpected=${summary.unexpected_duplicate_rows}`);
    if (summary.repairable_duplicate_rows) details.push(`auto_repairable=${summary.repairable_duplicate_rows}`);
    if (summary.artifact_identity_collision_groups)
      details.push(`artifact_identity_collisions=${summary.artifact_identity_collision_groups}`);
    if (summary.artifact_identity_collision_rows)
      details.push(`artifact_collision_rows=${summary.artifact_identity_collision_rows}`);
    if (summary.reward_overlay_rows) details.push(`reward_overlays=${summary.reward_overlay_rows}`);
  }
  if (input.skipped > 0) details.push(`unreadable=${input.skipped}`);
  if (details.length === 0) details.push(`duplicates=${raw - unique}`);
  return {
    warning:
      `${goalId}: duplicate index rows raw=${raw} unique=${unique} ${details.join(' ')}; ` +
      'rows with the same generated_at, json_path and markdown_path are merged (later over earlier); ' +
      'lines that are not a JSON object are skipped',
    check: null,
  };
}
