import { z } from 'zod';
import { DEFAULT_QUOTA, isRecord, normalizeQuota, type NormalizedQuota } from '../registry/schema';

/**
 * A goal's quota configuration: the original's slot settings (`compute`, `window_hours`,
 * `slot_minutes`, `allowed_slots`, normalized by `normalizeQuota`, docs/quota.md) plus the optional
 * budgets per rolling window users ask for (`max_cost_usd`, `max_tokens`, `max_turn_minutes`) and
 * the warning threshold `warn_ratio`. Nothing is normalized silently: every value that was not
 * used as written is reported in `config_warnings` (the original clamped `compute > 1` and
 * truncated `window_hours` without a word).
 */

export const DEFAULT_WARN_RATIO = 0.8;
export const BUDGET_FIELDS = ['max_cost_usd', 'max_tokens', 'max_turn_minutes'] as const;
export type BudgetField = (typeof BUDGET_FIELDS)[number];

export const ConfigWarningSchema = z.object({
  field: z.string(),
  value: z.unknown(),
  used: z.unknown(),
  message: z.string(),
});
export type ConfigWarning = z.infer<typeof ConfigWarningSchema>;

export const QuotaBudgetsSchema = z.object({
  max_cost_usd: z.number().positive().nullable(),
  max_tokens: z.number().int().positive().nullable(),
  max_turn_minutes: z.number().positive().nullable(),
});
export type QuotaBudgets = z.infer<typeof QuotaBudgetsSchema>;

export interface QuotaConfig {
  slots: NormalizedQuota;
  budgets: QuotaBudgets;
  warn_ratio: number;
  config_warnings: ConfigWarning[];
}

/** A finite number or numeric string, as `normalizeQuota` reads numbers. */
const NumericInput = z
  .union([z.number(), z.string().trim().min(1).transform(Number)])
  .pipe(z.number().refine(Number.isFinite));

const PositiveBudget = NumericInput.pipe(z.number().positive());
const WarnRatio = NumericInput.pipe(z.number().gt(0).max(1));

export function readQuotaConfig(goal: unknown): QuotaConfig {
  const goalRecord = isRecord(goal) ? goal : {};
  const raw = isRecord(goalRecord['quota']) ? goalRecord['quota'] : {};
  const slots = normalizeQuota(goalRecord);
  const warnings: ConfigWarning[] = [];
  slotWarnings(goalRecord, raw, slots, warnings);

  const budgets: QuotaBudgets = { max_cost_usd: null, max_tokens: null, max_turn_minutes: null };
  for (const field of BUDGET_FIELDS) {
    const value = raw[field];
    if (value === undefined || value === null) continue;
    const parsed = PositiveBudget.safeParse(value);
    if (!parsed.success) {
      warnings.push({
        field: `quota.${field}`,
        value,
        used: null,
        message: `quota.${field} must be a positive number; ${describe(value)} was ignored, so this budget is off`,
      });
      continue;
    }
    if (field === 'max_tokens' && !Number.isInteger(parsed.data)) {
      const used = Math.max(1, Math.floor(parsed.data));
      warnings.push({
        field: 'quota.max_tokens',
        value,
        used,
        message: `quota.max_tokens counts whole tokens; ${describe(value)} was read as ${used}`,
      });
      budgets.max_tokens = used;
      continue;
    }
    budgets[field] = parsed.data;
  }

  let warnRatio = DEFAULT_WARN_RATIO;
  const rawWarn = raw['warn_ratio'];
  if (rawWarn !== undefined && rawWarn !== null) {
    const parsed = WarnRatio.safeParse(rawWarn);
    if (parsed.success) warnRatio = parsed.data;
    else
      warnings.push({
        field: 'quota.warn_ratio',
        value: rawWarn,
        used: DEFAULT_WARN_RATIO,
        message: `quota.warn_ratio must be a number above 0 and at most 1; ${describe(rawWarn)} was replaced by ${DEFAULT_WARN_RATIO}`,
      });
  }
  return { slots, budgets, warn_ratio: warnRatio, config_warnings: warnings };
}

/** Reports every slot setting that `normalizeQuota` did not use as written. */
function slotWarnings(
  goal: Record<string, unknown>,
  raw: Record<string, unknown>,
  slots: NormalizedQuota,
  warnings: ConfigWarning[],
): void {
  const computeField = 'compute' in raw ? 'quota.compute' : 'compute_quota';
  const computeRaw = 'compute' in raw ? raw['compute'] : goal['compute_quota'];
  compare(
    computeField,
    computeRaw,
    slots.compute,
    DEFAULT_QUOTA.compute,
    'compute is a fraction from 0 to 1 with 2 decimals',
    warnings,
  );
  compare(
    'quota.window_hours',
    raw['window_hours'],
    slots.window_hours,
    DEFAULT_QUOTA.window_hours,
    'window_hours is a whole number of hours, at least 1',
    warnings,
  );
  compare(
    'quota.slot_minutes',
    raw['slot_minutes'],
    slots.slot_minutes,
    DEFAULT_QUOTA.slot_minutes,
    'slot_minutes is a whole number of minutes, at least 1',
    warnings,
  );
  if ('allowed_slots' in raw)
    compare(
      'quota.allowed_slots',
      raw['allowed_slots'],
      slots.allowed_slots,
      null,
      'allowed_slots is a whole number, at least 0',
      warnings,
    );
}

function compare(
  field: string,
  value: unknown,
  used: number,
  fallback: number | null,
  rule: string,
  warnings: ConfigWarning[],
): void {
  if (value === undefined || value === null) return;
  const asNumber =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value.trim())
        : Number.NaN;
  if (asNumber === used) return;
  const replaced = Number.isFinite(asNumber)
    ? `read as ${used}`
    : fallback === null
      ? `ignored (default ${used} used)`
      : `replaced by the default ${fallback}`;
  warnings.push({ field, value, used, message: `${rule}; ${describe(value)} was ${replaced}` });
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
