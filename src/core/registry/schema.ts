import { z } from 'zod';

/**
 * The registry document (`.loopx/registry.json`, or the global `registry.global.json`).
 *
 * These schemas are the *reader's view*: they never reject a document for a badly typed
 * known field (the original tolerates them), they read such a field as absent instead, and
 * every unknown field passes through untouched. Writers never serialize this view; they
 * mutate the raw document (see update.ts), so nothing they do not understand is lost.
 * Rejecting and reporting bad entries is the validator's job (validate.ts).
 */

/** A string field that reads as absent when it is not a string. */
const text = () => z.string().optional().catch(undefined);
/** A loose object field that reads as absent when it is not an object. */
const looseRecord = () => z.record(z.string(), z.unknown()).optional().catch(undefined);

export const RegistryAdapterSchema = z.looseObject({ kind: text(), status: text() });

export const RegistryCoordinationSchema = z.looseObject({
  /** Only `peer_v1` is written; `legacy_hierarchy` is tolerated on read. */
  agent_model: text(),
  registered_agents: z.array(z.unknown()).optional().catch(undefined),
  peer_task_coordination: z.looseObject({ coordinator_agent_id: z.unknown().optional() }).optional().catch(undefined),
  /** A dict keyed by agent id, or a list of profile objects. */
  agent_profiles: z.unknown().optional(),
  thread_agent_bindings: z.array(z.unknown()).optional().catch(undefined),
  write_scope: z.array(z.unknown()).optional().catch(undefined),
  requires_parent_approval: z.array(z.unknown()).optional().catch(undefined),
});

/**
 * One goal as readers see it. `id` is always a non-empty string here: readers skip entries
 * without a truthy id and compare ids as strings, so a stored `7` reads as `"7"`.
 */
export const RegistryGoalSchema = z.looseObject({
  id: z.union([z.string().min(1), z.number().refine((n) => n !== 0)]).transform(String),
  domain: text(),
  /** The validator defaults it to `unknown`; writers set `active`. */
  status: text(),
  /** Defaults to `controller`. */
  role: text(),
  parent_goal_id: text(),
  display_name: text(),
  project_id: text(),
  /** Absolute path of the goal's project (`~` expanded by readers). */
  repo: text(),
  /** Relative to `repo`, or absolute; empty means the goal has no state file. */
  state_file: text(),
  adapter: RegistryAdapterSchema.optional().catch(undefined),
  spawn_policy: looseRecord(),
  coordination: RegistryCoordinationSchema.optional().catch(undefined),
  /** Raw quota settings; read them through `normalizeQuota`, never directly. */
  quota: looseRecord(),
  /** Legacy top-level compute fraction, honored by `normalizeQuota` when `quota.compute` is absent. */
  compute_quota: z.unknown().optional(),
  waiting_on: text(),
  attention_status: text(),
  operator_question: text(),
  recommended_action: text(),
  next_handoff_condition: text(),
  /** Global registry only. */
  source_registry: text(),
  synced_at: text(),
});
export type RegistryGoal = z.infer<typeof RegistryGoalSchema>;

export const RegistryDocumentSchema = z.looseObject({
  /** Not validated; writers default it to `"0.1"` (the integer `1` is also seen). */
  schema_version: z.union([z.string(), z.number()]).optional().catch(undefined),
  updated_at: text(),
  /** May be relative: it is then anchored to the registry's project root (locate.ts). */
  common_runtime_root: text(),
  registry_role: text(),
  role: text(),
  /** Readers: a non-list counts as no goals; non-objects and entries without an id are skipped. */
  goals: z.preprocess((value) => readableGoalEntries(value), z.array(RegistryGoalSchema)),
  projects: z.array(z.unknown()).optional().catch(undefined),
});
export type RegistryDocument = z.infer<typeof RegistryDocumentSchema>;

/** The goal entries a tolerant reader keeps, in order and duplicates included. */
function readableGoalEntries(goals: unknown): unknown[] {
  if (!Array.isArray(goals)) return [];
  return goals.filter((entry) => RegistryGoalSchema.safeParse(entry).success);
}

export const REGISTRY_SCHEMA_VERSION = '0.1';

/** The quota settings of a goal after normalization (docs/quota.md#slots-and-the-window). */
export const NormalizedQuotaSchema = z.object({
  compute: z.number().min(0).max(1),
  window_hours: z.number().int().min(1),
  slot_minutes: z.number().int().min(1),
  allowed_slots: z.number().int().min(0),
  /** Echoed only when the registry stores one; accounting recomputes it from the run index. */
  spent_slots: z.number().int().min(0).optional(),
});
export type NormalizedQuota = z.infer<typeof NormalizedQuotaSchema>;

export const DEFAULT_QUOTA = { compute: 1, window_hours: 24, slot_minutes: 1 } as const;

/**
 * Normalizes a goal's quota settings. Accepts the raw goal (any shape). Rules:
 *
 * - A setting is read from `goal.quota`; `compute` falls back to the legacy top-level
 *   `compute_quota` when `quota.compute` is absent.
 * - Numbers and numeric strings (`"0.5"`) are accepted. Booleans, empty strings, non-numeric
 *   text, NaN and infinities are unparsable and fall back to the setting's default.
 * - `compute`: default 1.0; clamped to [0, 1]; rounded to 2 decimals, half to even (as Python's
 *   `round`, so 0.125 → 0.12). A stored 0 is kept: it pauses the goal.
 * - `window_hours`: default 24; truncated to an integer (accounting works in whole hours, so
 *   0.5 → 0 → 1); at least 1.
 * - `slot_minutes`: default 1; truncated to an integer; at least 1.
 * - `allowed_slots`: an explicit value (truncated, at least 0) overrides the default
 *   `round(window_hours·60 / slot_minutes · compute)`, rounded half to even like the original
 *   (1440 at full compute, 14 at compute 0.01).
 * - `spent_slots`: echoed (truncated, at least 0) only when stored and parsable; quota
 *   accounting never trusts it and recomputes it from the run index.
 */
export function normalizeQuota(goal: unknown): NormalizedQuota {
  const goalRecord = isRecord(goal) ? goal : {};
  const quota = isRecord(goalRecord['quota']) ? goalRecord['quota'] : {};
  const storedCompute = 'compute' in quota ? quota['compute'] : goalRecord['compute_quota'];

  const computeValue = parseNumber(storedCompute);
  const compute = computeValue === undefined ? DEFAULT_QUOTA.compute : roundHalfEven(clamp(computeValue, 0, 1), 2);
  const windowValue = parseNumber(quota['window_hours']);
  const window_hours = windowValue === undefined ? DEFAULT_QUOTA.window_hours : Math.max(1, Math.trunc(windowValue));
  const slotValue = parseNumber(quota['slot_minutes']);
  const slot_minutes = slotValue === undefined ? DEFAULT_QUOTA.slot_minutes : Math.max(1, Math.trunc(slotValue));
  const allowedValue = parseNumber(quota['allowed_slots']);
  const allowed_slots =
    allowedValue === undefined
      ? roundHalfEven(((window_hours * 60) / slot_minutes) * compute, 0)
      : Math.max(0, Math.trunc(allowedValue));

  const normalized: NormalizedQuota = { compute, window_hours, slot_minutes, allowed_slots };
  const spentValue = parseNumber(quota['spent_slots']);
  if (spentValue !== undefined) normalized.spent_slots = Math.max(0, Math.trunc(spentValue));
  return normalized;
}

/** A finite number from a number or numeric string; undefined for anything else (booleans included). */
function parseNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const parsed = Number(value.trim());
    return Number.isFinite(parsed) ? parsed : undefined;
  }
  return undefined;
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(max, Math.max(min, value));
}

/**
 * Rounds to `decimals` places like Python's `round`: the nearest value of the exact binary
 * number, and on an exact tie the even neighbour. A decimal tie is exact only when the value is
 * an odd multiple of 1/(2·10^decimals) that binary can hold, which `scaled` then holds exactly too.
 */
export function roundHalfEven(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  const scaled = value * factor;
  const floor = Math.floor(scaled);
  if (isExactHalfStep(value, decimals)) return (floor % 2 === 0 ? floor : floor + 1) / factor;
  return Number(value.toFixed(decimals));
}

/** True when `value` is exactly k + 0.5 units of 10^-decimals (e.g. 0.125 at 2 decimals). */
function isExactHalfStep(value: number, decimals: number): boolean {
  if (decimals === 0) return Number.isInteger(value * 2) && !Number.isInteger(value);
  // value·2·10^d must be an odd integer; with 10^d = 2^d·5^d the exact test is on value·2^(d+1)·5^d.
  const doubled = value * 2 ** (decimals + 1);
  if (!Number.isInteger(doubled)) return false;
  const units = doubled * 5 ** decimals;
  return Number.isSafeInteger(units) && Math.abs(units % 2) === 1;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
