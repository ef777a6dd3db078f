import * as fs from 'node:fs';
import * as path from 'node:path';
import { hasExternalEvidenceSignal, OWNER_CLASSIFICATIONS } from '../todo/attention';
import { isRecord, pyInstant, pyText, truthy } from '../pyCompat';

/**
 * The runs the original's status reports read (`history["runs"]` of its `collect_history`): every goal's run index
 * rows (merged, the goal's id set on rows without one), sorted newest first over all goals (a stable sort of the goals
 * in id order, unparsable times last), the first `max(limit, 20)` of them. Each run is kept here as the facts the
 * reports need, all independent of the time of the answer, so a goal's newest runs can be kept with its run index's
 * digest (the persistent cache) and the windows applied when answering.
 */

/** `STATUS_CONTROL_PLANE_CONTEXT_LIMIT`: the runs the reports sample, at least. */
export const REPORT_SAMPLE_LIMIT = 20;

export const EVENT_CLASSES = ['accounting', 'decision', 'evidence', 'state', 'work'] as const;
export type EventClass = (typeof EVENT_CLASSES)[number];

/** A usage block as `collect_usage_for_run` normalizes it. */
export interface UsageSample {
  input_tokens: number;
  output_tokens: number;
  cache_tokens: number;
  cost_usd: number;
  duration_ms: number;
}

/** A promotion-readiness run's fields, as the readiness summary lists them. */
export interface ReadinessFacts {
  goal_id: unknown;
  evidence_scope: unknown;
  dashboard_readiness: unknown;
  generated_at: unknown;
  classification: unknown;
  delivery_batch_scale: unknown;
  delivery_outcome: unknown;
  recommended_action: unknown;
  json_exists: boolean;
  markdown_exists: boolean;
}

export interface SampleRun {
  /** `generated_at` as the row has it (null when not a string). */
  at: string | null;
  /** Microseconds since the epoch, null when the time does not parse. */
  us: number | null;
  /** `isoformat()` of the time in UTC (null with `us`). */
  iso: string | null;
  goal: string;
  /** The row's classification as it is (null when absent). */
  classification: unknown;
  event: EventClass;
  decisionKinds: string[];
  slots: number;
  automation: boolean;
  progress: boolean;
  usage: UsageSample | null;
  readiness?: ReadinessFacts;
}

export const PROMOTION_READINESS_CLASSIFICATION = 'canary_promotion_readiness_smoke_group';

/** `EVENT_LEDGER_DECISION_CLASSIFICATIONS`: the owner's and controller's classifications and an approved gate. */
const DECISION_CLASSIFICATIONS: ReadonlySet<string> = new Set([...OWNER_CLASSIFICATIONS, 'operator_gate_approved']);
const STATE_CLASSIFICATIONS: ReadonlySet<string> = new Set(['state_refreshed', 'public_harness_healthy']);
const EVIDENCE_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'inspect_eval_result',
  'inspect_result',
  'needs_more_read_only_evidence',
  'read_only_project_map',
]);
const EVIDENCE_HINTS = [
  'artifact',
  'blocker',
  'ci',
  'data',
  'deploy',
  'done',
  'eval',
  'evidence',
  'failure',
  'fail',
  'metric',
  'monitor',
  'validation',
];
const EVIDENCE_KEYS = [
  'active_priorities',
  'active_task_count',
  'artifact',
  'artifacts',
  'cache_check',
  'controller_readiness',
  'project_map',
];
const DECISION_PREFIXES = ['human_reward', 'reward_overlay'];
const SPEND_CLASSIFICATIONS: ReadonlySet<string> = new Set(['quota_slot_spent', 'quota_slot_voided']);
/** `VISIBLE_GOAL_SLOT_SPEND_SOURCE`: a visible goal's own spend, not automation. */
const VISIBLE_GOAL_SOURCE = 'visible-goal';

/** `event_ledger_event_class`: accounting, decision, evidence, state or work. */
export function eventClassOf(run: Record<string, unknown>): EventClass {
  const classification = pyText(run['classification']).toLowerCase();
  if (classification === 'quota_slot_spent' || isRecord(run['quota_event'])) return 'accounting';
  if (
    DECISION_CLASSIFICATIONS.has(classification) ||
    classification.includes('operator_gate') ||
    classification.includes('reward') ||
    isRecord(run['human_reward']) ||
    isRecord(run['operator_gate']) ||
    isRecord(run['operator_gate_resume_contract'])
  )
    return 'decision';
  if (EVIDENCE_CLASSIFICATIONS.has(classification)) return 'evidence';
  if (hasExternalEvidenceSignal(run)) return 'evidence';
  if (EVIDENCE_HINTS.some((hint) => classification.includes(hint))) return 'evidence';
  if (EVIDENCE_KEYS.some((key) => Object.hasOwn(run, key))) return 'evidence';
  if (STATE_CLASSIFICATIONS.has(classification) || classification.endsWith('_refreshed')) return 'state';
  return 'work';
}

/** `decision_event_kinds`: the decision records a run carries, or its decision classification. */
export function decisionKindsOf(run: Record<string, unknown>): string[] {
  const kinds: string[] = [];
  if (isRecord(run['human_reward'])) kinds.push('human_reward');
  if (isRecord(run['operator_gate'])) kinds.push('operator_gate');
  if (isRecord(run['operator_gate_resume_contract'])) kinds.push('operator_gate_resume_contract');
  const classification = pyText(run['classification']).toLowerCase();
  if (
    kinds.length === 0 &&
    (DECISION_CLASSIFICATIONS.has(classification) || DECISION_PREFIXES.some((p) => classification.startsWith(p)))
  )
    kinds.push('decision_classification');
  return kinds;
}

/** Python's `int(value)` of a JSON number (bool excluded), or null. */
function pyInt(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value)) return null;
  return Math.trunc(value);
}

/** `quota_spend_slots`: slots a spend row adds (a void subtracts them). */
export function spendSlotsOf(run: Record<string, unknown>): number {
  const classification = pyText(run['classification']);
  if (!SPEND_CLASSIFICATIONS.has(classification)) return 0;
  const event = isRecord(run['quota_event']) ? run['quota_event'] : {};
  const raw = Object.hasOwn(event, 'slots') ? event['slots'] : 1;
  let slots: number;
  if (typeof raw === 'number' && Number.isFinite(raw)) slots = Math.max(0, Math.trunc(raw));
  else if (typeof raw === 'boolean') slots = raw ? 1 : 0;
  else if (typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw)) slots = Math.max(0, Number(raw.trim()));
  else slots = 1;
  if (classification === 'quota_slot_voided' || pyText(event['event_type']) === 'quota_slot_voided') return -slots;
  return slots;
}

/** `is_automation_run`. */
export function isAutomationRun(run: Record<string, unknown>): boolean {
  const event = isRecord(run['quota_event']) ? run['quota_event'] : {};
  const source = (pyText(event['source']) || pyText(run['source'])).toLowerCase();
  if (source === VISIBLE_GOAL_SOURCE) return false;
  if (source === 'heartbeat' || source === 'automation' || source === 'cron') return true;
  if (source.includes('heartbeat') || source.includes('automation')) return true;
  return SPEND_CLASSIFICATIONS.has(pyText(run['classification']));
}

/** `is_progress_signal_run`: a classified run that is not bookkeeping. */
export function isProgressSignalRun(run: Record<string, unknown>): boolean {
  const classification = pyText(run['classification']);
  return classification !== '' && !SPEND_CLASSIFICATIONS.has(classification) && classification !== 'state_refreshed';
}

/** `collect_usage_for_run`: the run's `usage` block normalized, null when it reports no tokens. */
export function usageOf(run: Record<string, unknown>): UsageSample | null {
  const usage = run['usage'];
  if (!isRecord(usage)) return null;
  const int = (value: unknown): number | null => {
    const n = pyInt(value);
    return n !== null && n >= 0 ? n + 0 : null;
  };
  const float = (value: unknown): number | null =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value + 0 : null;
  const input = int(usage['input_tokens']);
  const output = int(usage['output_tokens']);
  if (input === null && output === null) return null;
  return {
    input_tokens: input ?? 0,
    output_tokens: output ?? 0,
    cache_tokens: int(usage['cache_tokens']) ?? 0,
    cost_usd: float(usage['cost_usd']) ?? 0,
    duration_ms: int(usage['duration_ms']) ?? 0,
  };
}

/** A row of a goal's run index (merged, with its artifact flags) as a sampled run. */
export function sampleRunOf(row: Record<string, unknown>, goalId: string): SampleRun {
  const at = typeof row['generated_at'] === 'string' ? row['generated_at'] : null;
  const instant = pyInstant(at);
  const goal = pyText(row['goal_id']) || goalId;
  const classification = row['classification'] ?? null;
  const run: SampleRun = {
    at,
    us: instant?.us ?? null,
    iso: instant?.iso ?? null,
    goal,
    classification,
    event: eventClassOf(row),
    decisionKinds: decisionKindsOf(row),
    slots: spendSlotsOf(row),
    automation: isAutomationRun(row),
    progress: isProgressSignalRun(row),
    usage: usageOf(row),
  };
  if (classification === PROMOTION_READINESS_CLASSIFICATION)
    run.readiness = {
      goal_id: goal,
      evidence_scope: row['evidence_scope'] ?? null,
      dashboard_readiness: row['dashboard_readiness'] ?? null,
      generated_at: row['generated_at'] ?? null,
      classification,
      delivery_batch_scale: row['delivery_batch_scale'] ?? null,
      delivery_outcome: row['delivery_outcome'] ?? null,
      recommended_action: row['recommended_action'] ?? null,
      json_exists: row['json_exists'] === true,
      markdown_exists: row['markdown_exists'] === true,
    };
  return run;
}

/** A goal's newest rows (newest first, as the reader returns them) as sampled runs, at most `limit`. */
export function sampleRunsOf(rows: readonly Record<string, unknown>[], goalId: string, limit: number): SampleRun[] {
  const runs: SampleRun[] = [];
  for (let i = 0; i < rows.length && i < limit; i++) runs.push(sampleRunOf(rows[i] as Record<string, unknown>, goalId));
  return runs;
}

/** Orders two runs as the original's chronology key does, newest first (unparsable times last). */
function newerFirst(a: SampleRun, b: SampleRun): number {
  if ((a.us === null) !== (b.us === null)) return a.us === null ? 1 : -1;
  if (a.us !== null && b.us !== null && a.us !== b.us) return b.us - a.us;
  const ra = a.at ?? '';
  const rb = b.at ?? '';
  return ra === rb ? 0 : ra < rb ? 1 : -1;
}

/**
 * The sample: every goal's newest runs (goals in id order, each newest first), sorted newest first (stable), the first
 * `limit`.
 */
export function sampleOf(perGoal: ReadonlyMap<string, readonly SampleRun[]>, limit: number): SampleRun[] {
  const ids = [...perGoal.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const all: SampleRun[] = [];
  for (const id of ids) all.push(...(perGoal.get(id) as readonly SampleRun[]).slice(0, limit));
  return all.sort(newerFirst).slice(0, limit);
}

function isUsage(value: unknown): value is UsageSample | null {
  if (value === null) return true;
  if (!isRecord(value)) return false;
  return ['input_tokens', 'output_tokens', 'cache_tokens', 'cost_usd', 'duration_ms'].every(
    (key) => typeof value[key] === 'number',
  );
}

/** Sampled runs read back from the status cache: kept only when every one has the shape above (else the index is read). */
export function keptSampleRuns(value: unknown): SampleRun[] | undefined {
  if (!Array.isArray(value) || value.length > REPORT_SAMPLE_LIMIT) return undefined;
  for (const run of value) {
    if (!isRecord(run)) return undefined;
    if (
      (run['at'] !== null && typeof run['at'] !== 'string') ||
      (run['us'] !== null && typeof run['us'] !== 'number') ||
      (run['iso'] !== null && typeof run['iso'] !== 'string') ||
      typeof run['goal'] !== 'string' ||
      !(EVENT_CLASSES as readonly unknown[]).includes(run['event']) ||
      !Array.isArray(run['decisionKinds']) ||
      typeof run['slots'] !== 'number' ||
      typeof run['automation'] !== 'boolean' ||
      typeof run['progress'] !== 'boolean' ||
      !isUsage(run['usage']) ||
      !Object.hasOwn(run, 'classification') ||
      (run['readiness'] !== undefined && !isRecord(run['readiness']))
    )
      return undefined;
  }
  return value as SampleRun[];
}

export type ReadinessSource = 'runtime_release_ledger' | 'goal_run_history_legacy';

/** A readiness run as the full scan reports it. */
export interface ReadinessEvent {
  available: true;
  source: ReadinessSource;
  goal_id: string | null;
  generated_at: unknown;
  classification: string;
  evidence_scope: unknown;
  dashboard_readiness: unknown;
  delivery_batch_scale: unknown;
  delivery_outcome: unknown;
  recommended_action: unknown;
  json_exists: boolean;
  markdown_exists: boolean;
}

/** `Path(str(value or "")).exists()`: an empty path is `.` (it exists); a relative one is read from the project. */
function artifactExists(value: unknown, projectRoot: string): boolean {
  const text = pyText(value);
  return text === '' ? true : fs.existsSync(path.resolve(projectRoot, text));
}

/**
 * The newest readiness row of one index (by its `generated_at` text; on a tie the first of the file), or null.
 * `rows`: newest first as the reader returns them; `goalId`: the goal folder's id (null for the release ledger).
 */
export function latestReadinessOfRows(
  rows: readonly Record<string, unknown>[],
  goalId: string | null,
  projectRoot: string,
): ReadinessEvent | null {
  let best: Record<string, unknown> | null = null;
  let bestKey = '';
  for (const row of rows) {
    if (pyText(row['classification']) !== PROMOTION_READINESS_CLASSIFICATION) continue;
    const key = pyText(row['generated_at']);
    // Rows come newest first, a tie later line first: `>=` keeps the earliest line of a tie.
    if (best === null || key >= bestKey) {
      best = row;
      bestKey = key;
    }
  }
  if (best === null) return null;
  return {
    available: true,
    source: goalId === null ? 'runtime_release_ledger' : 'goal_run_history_legacy',
    goal_id: pyText(best['goal_id']) || goalId || null,
    generated_at: best['generated_at'] ?? null,
    classification: PROMOTION_READINESS_CLASSIFICATION,
    evidence_scope: truthy(best['evidence_scope'])
      ? best['evidence_scope']
      : goalId !== null
        ? 'goal_run_history'
        : 'runtime_release',
    dashboard_readiness: best['dashboard_readiness'] ?? null,
    delivery_batch_scale: best['delivery_batch_scale'] ?? null,
    delivery_outcome: best['delivery_outcome'] ?? null,
    recommended_action: best['recommended_action'] ?? null,
    json_exists: artifactExists(best['json_path'], projectRoot),
    markdown_exists: artifactExists(best['markdown_path'], projectRoot),
  };
}

/** What the status reports take from one goal's run index: its newest runs and its newest readiness run. */
export interface GoalReportFacts {
  /** The newest `REPORT_SAMPLE_LIMIT` runs (or more when a status asked for more), newest first. */
  sample: SampleRun[];
  /** How many runs `sample` was cut at (it holds all of the index's runs when shorter). */
  limit: number;
  readiness: ReadinessEvent | null;
}

/** The report facts of a goal's run index rows (newest first, as the reader returns them). */
export function reportFactsOfRows(
  rows: readonly Record<string, unknown>[],
  goalId: string,
  projectRoot: string,
  limit: number = REPORT_SAMPLE_LIMIT,
): GoalReportFacts {
  return {
    sample: sampleRunsOf(rows, goalId, limit),
    limit,
    readiness: latestReadinessOfRows(rows, goalId, projectRoot),
  };
}

/** Report facts read back from the status cache: kept only when well-formed (else the index is read). */
export function keptReportFacts(value: unknown): GoalReportFacts | undefined {
  if (!isRecord(value) || typeof value['limit'] !== 'number') return undefined;
  const sample = keptSampleRuns(value['sample']);
  if (sample === undefined) return undefined;
  const readiness = value['readiness'];
  if (readiness !== null && !(isRecord(readiness) && readiness['available'] === true)) return undefined;
  return { sample, limit: value['limit'], readiness: readiness as ReadinessEvent | null };
}
