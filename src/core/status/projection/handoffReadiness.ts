import { z } from 'zod';
import { parseIsoInstant } from '../../isoTime';
import {
  BLOCKING_CLASSIFICATIONS,
  CODEX_READY_CLASSIFICATIONS,
  EXTERNAL_EVIDENCE_PREFIXES,
  OWNER_CLASSIFICATIONS,
} from '../../todo/attention';
import { STATUS_NEUTRAL_CLASSIFICATIONS } from './latestRunRecommendation';

/**
 * The original's project-agent handoff readiness (`handoff_readiness`, loopx/control_plane/handoff/project_handoff.py
 * and work_items/project_asset.py) and its long-task cadence hint (`long_task_cadence_hint`, loopx/long_task_cadence.py),
 * per status item.
 *
 * The part that depends on the runs (`handoffRunState`) is projected with the item; the part that depends on the
 * quota (its `state`: `quota_state`, `codex_ready`, `ready`, and a blocked cadence) is applied when the quota is
 * attached (`withQuotaSignals`), so both `loopx status` and `/status.json` carry the same fields.
 *
 * What we read as the original does not have: the goal's execution profile is the original's default (no outcome
 * floor markers, a small-step threshold of 2, not fine-grained), and the project asset the checks read is the
 * original's (`next_action` = the item's recommended action, `stop_condition` never empty, its text public-safe).
 */

export const HANDOFF_INTERFACE_BUDGET = { mode: 'project_agent_handoff', max_lines: 16, max_chars: 1800 } as const;

const HANDOFF_READY_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'operator_gate_approved',
  'controller_opted_in_waiting_for_run',
]);

const BATCH_SCALES = ['test_only', 'single_surface', 'multi_surface', 'implementation'] as const;
const BATCH_SCALE_ALIASES: Record<string, string> = {
  single_segment: 'single_surface',
  bounded_segment: 'single_surface',
};
const SMALL_BATCH_SCALES: ReadonlySet<string> = new Set(['test_only', 'single_surface', 'unknown']);
const TEST_ONLY_HINTS = ['_test', '_smoke', 'readiness_test', 'integrity_test'];
const MULTI_SURFACE_HINTS = ['batch', 'cross_benchmark', 'downstream_pack', 'matrix', 'owner_handoff_consumer'];
const IMPLEMENTATION_HINTS = ['adapter', 'builder', 'consumer', 'implementation', 'runner'];
const DELIVERY_OUTCOMES = ['surface_only', 'outcome_gap', 'outcome_progress', 'primary_goal_outcome'] as const;
const TURN_KINDS = [
  'contract_only_preparation',
  'compact_evidence',
  'blocker_writeback',
  'product_path_execution',
  'outcome_gap',
  'unknown',
] as const;

/** The default execution profile's small-step threshold (`degradation_policy.small_scale_streak_threshold`). */
const SMALL_STEP_THRESHOLD = 2;

export const CadenceHintSchema = z.object({
  schema_version: z.literal('cadence_hint_v0'),
  signal: z.string(),
  recommendation: z.string(),
  reason_codes: z.array(z.string()),
});
export type CadenceHint = z.infer<typeof CadenceHintSchema>;

export const PostHandoffRunSchema = z.looseObject({
  generated_at: z.unknown().optional(),
  classification: z.unknown().optional(),
  delivery_batch_scale: z.string(),
  delivery_turn_kind: z.string(),
});

export const HandoffReadinessSchema = z.object({
  ready: z.boolean(),
  codex_ready: z.boolean(),
  source: z.literal('project_asset'),
  quota_state: z.string(),
  handoff_interface_budget: z.object({ mode: z.string(), max_lines: z.number(), max_chars: z.number() }),
  checks: z.object({
    project_asset_backed: z.boolean(),
    same_source_should_run: z.boolean(),
    codex_ready: z.boolean(),
    handoff_has_next_action: z.boolean(),
    handoff_has_stop_condition: z.boolean(),
    handoff_sanitized_surface: z.boolean(),
  }),
  handoff_status: z.enum(['post_handoff_run_seen', 'ready_waiting_for_run', 'not_ready']),
  post_handoff_run_seen: z.boolean(),
  handoff_ready_at: z.unknown().optional(),
  handoff_ready_classification: z.unknown().optional(),
  post_handoff_latest_run: PostHandoffRunSchema.optional(),
  post_handoff_recent_runs: z.array(PostHandoffRunSchema).optional(),
  post_handoff_small_scale_streak: z.number().int().optional(),
  next_probe: z.string().optional(),
});
export type HandoffReadiness = z.infer<typeof HandoffReadinessSchema>;

type Run = Record<string, unknown>;

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === null || value === undefined ? '' : String(value);
}

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

function oneOf<T extends string>(values: readonly T[], value: unknown): T | null {
  const s = text(value).trim();
  return (values as readonly string[]).includes(s) ? (s as T) : null;
}

function batchScaleOf(value: unknown): string | null {
  const s = text(value).trim();
  return BATCH_SCALE_ALIASES[s] ?? oneOf(BATCH_SCALES, s);
}

/** The original's `delivery_batch_scale_for_run`: the run's own scale, else guessed from its classification. */
export function deliveryBatchScale(run: Run): string {
  const explicit = batchScaleOf(run['delivery_batch_scale']);
  if (explicit !== null) return explicit;
  if (text(run['delivery_batch_scale']).trim() !== '') return 'unknown';
  const classification = text(run['classification']).toLowerCase();
  if (classification === '') return 'unknown';
  if (TEST_ONLY_HINTS.some((h) => classification.includes(h))) return 'test_only';
  if (MULTI_SURFACE_HINTS.some((h) => classification.includes(h))) return 'multi_surface';
  if (IMPLEMENTATION_HINTS.some((h) => classification.includes(h))) return 'implementation';
  return 'single_surface';
}

/** The run's delivery outcome; with the default profile (no outcome floor markers) only an explicit one counts. */
function deliveryOutcome(run: Run): string {
  const explicit = oneOf(DELIVERY_OUTCOMES, run['delivery_outcome']);
  if (explicit !== null) return explicit;
  if (text(run['delivery_outcome']).trim() !== '') return 'unknown';
  return 'not_configured';
}

/** The original's `delivery_turn_kind_for_run`. */
export function deliveryTurnKind(run: Run, outcome: string): string {
  const raw = text(run['delivery_turn_kind']).trim();
  if (raw !== '') return oneOf(TURN_KINDS, raw) ?? 'unknown';
  const classification = text(run['classification']).trim().toLowerCase();
  const searchable = [classification, text(run['health_check']).trim().toLowerCase()]
    .concat(text(run['recommended_action']).trim().toLowerCase())
    .filter((part) => part !== '')
    .join(' ');
  if (outcome === 'primary_goal_outcome') return 'product_path_execution';
  const truthy = (v: unknown): boolean =>
    v !== null && v !== undefined && v !== false && v !== 0 && v !== '' && !(Array.isArray(v) && v.length === 0);
  if (outcome === 'outcome_progress' || truthy(run['case_result']) || truthy(run['compact_evidence']))
    return 'compact_evidence';
  if (['blocker', 'blocked', 'cannot proceed', "can't proceed"].some((h) => searchable.includes(h)))
    return 'blocker_writeback';
  if (
    outcome === 'surface_only' ||
    ['contract', 'prep', 'preparation', 'protocol', 'policy', 'surface', 'smoke', 'setup'].some((h) =>
      classification.includes(h),
    )
  )
    return 'contract_only_preparation';
  if (outcome === 'outcome_gap') return 'outcome_gap';
  return 'unknown';
}

function isStatusNeutral(run: Run): boolean {
  return STATUS_NEUTRAL_CLASSIFICATIONS.has(text(run['classification'])) || run['progress_scope'] === 'agent_lane';
}

function isHandoffReadyRun(run: Run): boolean {
  if (HANDOFF_READY_CLASSIFICATIONS.has(text(run['classification']))) return true;
  const gate = record(run['operator_gate']);
  return gate !== null && gate['decision'] === 'approve' && text(gate['agent_command']) !== '';
}

function watchesExternalEvidence(run: Run): boolean {
  if (text(run['waiting_on']).trim() === 'external_evidence') return true;
  if (text(run['execution_waiting_on']).trim() === 'external_evidence') return true;
  if (record(run['external_evidence_observation']) !== null) return true;
  const event = record(run['monitor_event']);
  if (event !== null) {
    if (text(event['waiting_on']).trim() === 'external_evidence') return true;
    if (text(event['monitor_mode']).trim().startsWith('external_')) return true;
    if (text(event['monitor_kind']).trim() === 'external_evidence') return true;
  }
  const classification = text(run['classification']);
  return EXTERNAL_EVIDENCE_PREFIXES.some((prefix) => classification.startsWith(prefix));
}

function isCustomPostHandoffWorkRun(run: Run): boolean {
  const classification = text(run['classification']);
  if (classification === '') return false;
  if (isStatusNeutral(run) || isHandoffReadyRun(run)) return false;
  if (CODEX_READY_CLASSIFICATIONS.has(classification)) return false;
  if (OWNER_CLASSIFICATIONS.has(classification) || BLOCKING_CLASSIFICATIONS.has(classification)) return false;
  return !watchesExternalEvidence(run);
}

function compactPostHandoffRun(run: Run): z.infer<typeof PostHandoffRunSchema> {
  const compact: Record<string, unknown> = {};
  for (const field of ['generated_at', 'classification', 'health_check', 'json_exists', 'markdown_exists'])
    if (Object.hasOwn(run, field) || field in run) compact[field] = run[field];
  compact['delivery_batch_scale'] = deliveryBatchScale(run);
  const outcome = deliveryOutcome(run);
  if (outcome !== 'not_configured') compact['delivery_outcome'] = outcome;
  compact['delivery_turn_kind'] = deliveryTurnKind(run, outcome);
  return compact as z.infer<typeof PostHandoffRunSchema>;
}

/** What the quota does not decide: the checks without `codex_ready`, and the runs after the handoff. */
export type HandoffRunState = Omit<HandoffReadiness, 'ready' | 'codex_ready' | 'quota_state' | 'checks'> & {
  checks: Omit<HandoffReadiness['checks'], 'codex_ready'>;
};

/**
 * The handoff state of a goal from its latest runs (newest first, as many as the item lists) and its status item's
 * recommended action. `stateTraceReady` is the original's: every check but `codex_ready` holds (the quota is there).
 */
export function handoffRunState(input: {
  goalId: string;
  recommendedAction: string;
  latestRuns: readonly Run[];
  latestValidation: { generated_at?: unknown; classification?: unknown } | null;
}): HandoffRunState {
  const nextAction = input.recommendedAction.trim();
  const checks = {
    project_asset_backed: true,
    same_source_should_run: nextAction !== '',
    handoff_has_next_action: nextAction !== '',
    handoff_has_stop_condition: true,
    handoff_sanitized_surface: true,
  };
  const ready = Object.values(checks).every(Boolean);
  const parsed = input.latestRuns
    .map((run) => ({ run, at: parseIsoInstant(text(run['generated_at'])) }))
    .filter((entry): entry is { run: Run; at: number } => entry.at !== null && !Number.isNaN(entry.at))
    .sort((a, b) => b.at - a.at);
  let handoffRun: Run | null = null;
  let handoffAt: number | null = null;
  for (const { run, at } of parsed) {
    if (isHandoffReadyRun(run)) {
      handoffRun = run;
      handoffAt = at;
      break;
    }
  }
  let postRun: Run | null = null;
  let recent: Run[] = [];
  if (handoffAt === null && ready) {
    recent = parsed.filter(({ run }) => isCustomPostHandoffWorkRun(run)).map(({ run }) => run);
    if (recent.length > 0) postRun = recent[0] ?? null;
    const validation = input.latestValidation;
    if (validation !== null && postRun === null) {
      const validationRun: Run = { generated_at: validation.generated_at, classification: validation.classification };
      if (isCustomPostHandoffWorkRun(validationRun)) {
        postRun = validationRun;
        recent = [validationRun];
      } else {
        handoffAt = parseIsoInstant(text(validation.generated_at));
        handoffRun = validationRun;
      }
    }
  }
  if (handoffAt !== null && postRun === null) {
    for (const { run, at } of parsed) {
      if (at <= handoffAt) continue;
      if (isStatusNeutral(run) || isHandoffReadyRun(run)) continue;
      recent.push(run);
    }
    if (recent.length > 0) postRun = recent[0] ?? null;
  }
  if (postRun !== null && recent.length === 0) recent = [postRun];
  recent = recent.slice(0, 3);
  const state: HandoffRunState = {
    source: 'project_asset',
    handoff_interface_budget: { ...HANDOFF_INTERFACE_BUDGET },
    checks,
    handoff_status: postRun !== null ? 'post_handoff_run_seen' : ready ? 'ready_waiting_for_run' : 'not_ready',
    post_handoff_run_seen: postRun !== null,
  };
  if (handoffRun !== null && text(handoffRun['generated_at']) !== '')
    state.handoff_ready_at = handoffRun['generated_at'];
  if (handoffRun !== null && text(handoffRun['classification']) !== '')
    state.handoff_ready_classification = handoffRun['classification'];
  if (postRun !== null) state.post_handoff_latest_run = compactPostHandoffRun(postRun);
  if (recent.length > 0) {
    state.post_handoff_recent_runs = recent.map(compactPostHandoffRun);
    let streak = 0;
    for (const run of recent) {
      if (!SMALL_BATCH_SCALES.has(deliveryBatchScale(run))) break;
      streak += 1;
    }
    state.post_handoff_small_scale_streak = streak;
  }
  if (input.goalId.trim() !== '') state.next_probe = `loopx review-packet --goal-id ${input.goalId} --handoff-only`;
  return state;
}

/** The readiness with the quota's state (the original's `project_asset_handoff_readiness`). */
export function handoffReadiness(
  state: HandoffRunState,
  quota: { state?: unknown } | undefined,
  waitingOn: string,
): HandoffReadiness {
  const quotaState = text(quota?.state).trim();
  const codexReady = waitingOn === 'codex' && quotaState === 'eligible';
  const checks = {
    project_asset_backed: state.checks.project_asset_backed,
    // Without a quota the original's should-run source is missing.
    same_source_should_run: state.checks.same_source_should_run && quota !== undefined,
    codex_ready: codexReady,
    handoff_has_next_action: state.checks.handoff_has_next_action,
    handoff_has_stop_condition: state.checks.handoff_has_stop_condition,
    handoff_sanitized_surface: state.checks.handoff_sanitized_surface,
  };
  const { checks: _stateChecks, source, handoff_interface_budget, ...rest } = state;
  return {
    ready: Object.values(checks).every(Boolean),
    codex_ready: codexReady,
    source,
    quota_state: quotaState === '' ? 'unknown' : quotaState,
    handoff_interface_budget,
    checks,
    ...rest,
  };
}

const BLOCKED_QUOTA_STATES: ReadonlySet<string> = new Set([
  'blocked',
  'blocked_health',
  'focus_wait',
  'monitor_only',
  'operator_gate',
  'paused',
  'throttled',
  'user_gate',
  'waiting',
]);
const SMALL_GRANULARITIES: ReadonlySet<string> = new Set(['status_only', 'single_surface']);
const MATERIAL_GRANULARITIES: ReadonlySet<string> = new Set([
  'multi_surface',
  'implementation_plus_validation',
  'milestone',
]);

function progressGranularity(run: Run | undefined): string {
  if (run === undefined || Object.keys(run).length === 0) return 'status_only';
  const outcome = oneOf(DELIVERY_OUTCOMES, run['delivery_outcome']);
  const kind = oneOf(TURN_KINDS, run['delivery_turn_kind']);
  const scale = batchScaleOf(run['delivery_batch_scale']);
  if (outcome === 'primary_goal_outcome') return 'milestone';
  if (outcome === 'outcome_progress') return 'implementation_plus_validation';
  if (kind === 'product_path_execution') return 'implementation_plus_validation';
  if (scale === 'implementation') return 'implementation_plus_validation';
  if (scale === 'multi_surface' || kind === 'compact_evidence') return 'multi_surface';
  if (scale === 'test_only' || scale === 'single_surface') return 'single_surface';
  if (kind === 'contract_only_preparation') return 'single_surface';
  return 'status_only';
}

/**
 * The original's `build_long_task_cadence_hint`: `blocked`/`wait` when the quota state blocks; else from the recent
 * runs after the handoff (or the latest runs): thin progress (keep, or widen after the small-step threshold), material
 * progress (keep), or unknown (keep).
 */
export function longTaskCadenceHint(input: {
  quotaState: string | null;
  userOpenCount: number | null;
  handoff: Pick<HandoffReadiness, 'post_handoff_recent_runs' | 'post_handoff_latest_run'> | null;
  latestRuns: readonly Run[];
}): CadenceHint {
  const schema_version = 'cadence_hint_v0' as const;
  const quotaState = (input.quotaState ?? '').trim();
  if (BLOCKED_QUOTA_STATES.has(quotaState)) {
    const reason_codes = [`quota_state_${quotaState}`];
    if (input.userOpenCount !== null && input.userOpenCount > 0) reason_codes.push('open_user_todos_visible');
    return { schema_version, signal: 'blocked', recommendation: 'wait', reason_codes };
  }
  const compactRuns = input.handoff?.post_handoff_recent_runs ?? [];
  const latest = input.handoff?.post_handoff_latest_run;
  const runs: Run[] =
    compactRuns.length > 0 ? [...compactRuns] : latest !== undefined ? [latest] : [...input.latestRuns];
  if (runs.length === 0)
    return { schema_version, signal: 'unknown', recommendation: 'keep', reason_codes: ['missing_recent_runs'] };
  const granularity = progressGranularity(runs[0]);
  if (SMALL_GRANULARITIES.has(granularity)) {
    let streak = 0;
    for (const run of runs) {
      if (oneOf(TURN_KINDS, run['delivery_turn_kind']) === 'blocker_writeback') break;
      if (!SMALL_GRANULARITIES.has(progressGranularity(run))) break;
      streak += 1;
    }
    const widen = streak >= SMALL_STEP_THRESHOLD;
    return {
      schema_version,
      signal: 'thin_progress',
      recommendation: widen ? 'widen' : 'keep',
      reason_codes: [widen ? 'repeated_surface_only' : `${granularity}_latest_turn`],
    };
  }
  if (MATERIAL_GRANULARITIES.has(granularity))
    return {
      schema_version,
      signal: 'material_progress',
      recommendation: 'keep',
      reason_codes: [`${granularity}_latest_turn`],
    };
  return { schema_version, signal: 'unknown', recommendation: 'keep', reason_codes: [`${granularity}_latest_turn`] };
}
