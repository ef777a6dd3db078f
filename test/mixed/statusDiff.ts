/**
 * Field-by-field comparison of status payloads (the original's against ours), used by status.test.ts: every key the
 * original emits is looked for in ours, at every depth; a difference is named by its rule-level path (array indexes
 * as `[]`), so one rule's difference on many todos is one entry. Keys only ours emits are not differences (ours adds
 * fields; docs/compatibility.md lists them).
 */

export type Difference = `missing ${string}` | `value ${string}` | `length ${string}`;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python's `str()` of a JSON number or boolean (`True`, `0`, `0.5`, `1e-07`). */
export function pythonStr(value: number | boolean): string {
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  return String(value).replace(/e([+-])(\d)$/u, 'e$10$2');
}

/**
 * The one value difference accepted by rule (docs/compatibility.md, `goal_channel_projection`): the original passes the
 * channel projection's quota values and todo flags through Python's `str()`, ours keeps the number or boolean. Only
 * there, and only when the original's string is exactly `str()` of our value.
 */
export const STRINGIFIED_VALUE_PATHS = /^goal_channel_projection\.(quota\.[a-z_]+|(user|agent)_todos\[\]\.[a-z_]+)$/u;

function stringifiedByTheOriginal(theirs: unknown, ours: unknown, at: string): boolean {
  return (
    typeof theirs === 'string' &&
    (typeof ours === 'number' || typeof ours === 'boolean') &&
    STRINGIFIED_VALUE_PATHS.test(at) &&
    theirs === pythonStr(ours)
  );
}

export function differences(theirs: unknown, ours: unknown, path = ''): Set<Difference> {
  const found = new Set<Difference>();
  const walk = (a: unknown, b: unknown, at: string): void => {
    if (isRecord(a) && isRecord(b)) {
      for (const [key, value] of Object.entries(a)) {
        const next = at === '' ? key : `${at}.${key}`;
        if (!Object.hasOwn(b, key)) found.add(`missing ${next}`);
        else walk(value, b[key], next);
      }
      return;
    }
    if (Array.isArray(a) && Array.isArray(b)) {
      if (a.length !== b.length) found.add(`length ${at}`);
      for (let i = 0; i < Math.min(a.length, b.length); i++) walk(a[i], b[i], `${at}[]`);
      return;
    }
    if (JSON.stringify(a) !== JSON.stringify(b) && !stringifiedByTheOriginal(a, b, at)) found.add(`value ${at}`);
  };
  walk(theirs, ours, path);
  return found;
}

/**
 * The differences left, by rule (docs/compatibility.md, "Status items field by field"): a difference would be accepted
 * when its path matches one of these. None is left: every key the original emits on an item must be equal (the
 * stringified values of the goal channel, a documented deviation, are read by `differences` itself), the todo
 * summaries' counts, `items`, lists, monitor-due fields, closure and succession reports, task orchestration authority
 * and each todo's review materials included. (The original's `monitor_writeback` appears only on summaries read from
 * its event log, `events.jsonl`, which no scenario has: docs/compatibility.md.)
 */
export const ITEM_RULES: readonly { pattern: RegExp; rule: string }[] = [];

/** Top-level keys of the original's status payload that ours does not carry (docs/compatibility.md). */
export const PAYLOAD_KEYS_NOT_CARRIED: readonly string[] = [];

/**
 * Payload keys compared by value with their time fields left out (rule `answer-time-fields`, docs/compatibility.md):
 * each program computes them at the time of its own answer (`generated_at`, a decision's `age_days`, the readiness
 * run's `age_seconds`/`age_hours`/`freshness_reference_time`, and the age in the gate's warning); every other field,
 * the windowed counts included, must be equal.
 */
export const PAYLOAD_KEYS_COMPARED_AT_ANSWER_TIME: readonly string[] = [
  'global_registry',
  'event_ledger_summary',
  'promotion_readiness_summary',
  'decision_freshness_summary',
  'usage_summary',
  'promotion_gate',
  'runtime_projection_routes',
];

const ANSWER_TIME_FIELDS = new Set([
  'generated_at',
  'age_days',
  'age_seconds',
  'age_hours',
  'freshness_reference_time',
]);

/**
 * A report without its answer-time fields. A summary's own `generated_at` is the answer's time; the readiness
 * summary's (and any deeper one) is a run's, and kept.
 */
export function withoutAnswerTime(value: unknown, key = '', depth = 0): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutAnswerTime(v, key, depth + 1));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [field, v] of Object.entries(value as Record<string, unknown>)) {
    // The summaries' own `generated_at` (depth 0) is the answer's time; a readiness run's is the run's.
    if (field === 'generated_at' && depth === 0 && key !== 'promotion_readiness_summary') continue;
    if (field !== 'generated_at' && ANSWER_TIME_FIELDS.has(field)) continue;
    out[field] =
      field === 'warning_message' && typeof v === 'string'
        ? v.replace(/, age_hours=[0-9.]+/, '')
        : withoutAnswerTime(v, key, depth + 1);
  }
  return out;
}

/**
 * Top-level reports compared by value, every key at every depth, but the named time fields (the answer's time in
 * each program: `generated_at`).
 */
export const PAYLOAD_REPORTS_COMPARED: readonly { key: string; times: readonly string[] }[] = [
  { key: 'todo_index', times: [] },
  { key: 'agent_management_projection', times: ['generated_at'] },
];

/** A report without its named time fields (top-level keys of it). */
export function withoutTimes(report: unknown, times: readonly string[]): unknown {
  if (!isRecord(report)) return report;
  return Object.fromEntries(Object.entries(report).filter(([key]) => !times.includes(key)));
}

/** Payload keys compared by value (the rest are per-run paths and times). */
export const PAYLOAD_KEYS_COMPARED: readonly string[] = [
  'ok',
  'goal_count',
  'run_count',
  'goal_filter',
  'contract_errors',
  'contract_errors_total_count',
  'contract_errors_truncated',
  'contract_warnings',
  'contract_warnings_total_count',
  'contract_warnings_truncated',
];

/** The original's check lines of its public-boundary scan (contract.py `check_contract`, `include_public_boundary_scan`). */
const PUBLIC_SCAN_CHECKS = [
  'public boundary scan clean: ',
  'credential references downgraded: ',
  'private state scan skipped: ',
  'public boundary policy allowed: ',
];

/**
 * The original's contract checks as ours carries them: its public-boundary scan (of its scan roots, by default its own
 * installed package, so the counts are its install's) replaced by the line its status hot path writes instead.
 */
export function ownChecksOf(checks: readonly string[]): string[] {
  const kept = checks.filter((check) => !PUBLIC_SCAN_CHECKS.some((prefix) => check.startsWith(prefix)));
  const at = checks.findIndex((check) => PUBLIC_SCAN_CHECKS.some((prefix) => check.startsWith(prefix)));
  if (at < 0) return kept;
  const before = checks.slice(0, at).filter((check) => !PUBLIC_SCAN_CHECKS.some((p) => check.startsWith(p))).length;
  return [...kept.slice(0, before), 'public boundary scan deferred for status hot path', ...kept.slice(before)];
}

export function unexplained(found: Iterable<Difference>): Difference[] {
  return [...found].filter((d) => !ITEM_RULES.some((r) => r.pattern.test(d.slice(d.indexOf(' ') + 1))));
}
