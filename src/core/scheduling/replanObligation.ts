import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isSettlementRun, type RunIndexRow } from '../runtime/runIndex';
import { TURN_ID_PLACEHOLDER } from '../quota/spend';

/**
 * Autonomous replan obligations (docs/quota.md#replan-obligations): when the latest turns of an
 * agent's lane stall — two in a row with no material progress that repeat the same action — the
 * guard owes a replan before another turn repeats it. `quota should-run` then answers
 * `autonomous_replan_required` (should_run true, normal delivery not allowed) and a heartbeat
 * receipt binds the obligation like a todo. A run that carries `replan_obligation_id` (a replan
 * result, `refresh-state --replan-obligation-id`) discharges it: history before it no longer counts.
 *
 * The rule, read from the original (`autonomous_replan_obligation_from_runs`), newest run first:
 *   - settlement rows (`quota_slot_spent`, `quota_slot_voided`, spend accounting) are skipped;
 *   - a replan result ends the scan;
 *   - a run is a stall signal when it has a classification, its delivery outcome is not progress
 *     (`outcome_progress`, `primary_goal_outcome`) and its classification, recommended action,
 *     health check or delivery outcome reads as monitoring / no progress (STALL_PATTERN);
 *   - the first run that is not a stall signal ends the streak;
 *   - two signals that share their action signature or their classification owe a replan; a lane
 *     of monitor polls only owes one after six polls of the same target (a dead monitor).
 * The original's periodic review (a replan every 20 durable runs) is not implemented.
 */

export const AUTONOMOUS_REPLAN_SCHEMA = 'autonomous_replan_obligation_v0';
export const REPLAN_STALL_THRESHOLD = 2;
export const DEAD_MONITOR_REPEAT_THRESHOLD = 6;

/** Delivery outcomes that are material progress: they end a stall streak. */
const PROGRESS_OUTCOMES: ReadonlySet<string> = new Set(['outcome_progress', 'primary_goal_outcome']);
/** Words of a turn that only watched, waited or repeated itself (English and the original's Chinese markers). */
const STALL_PATTERN =
  /monitor|observe|observation|poll|watch|quiet|no[-_ ]?op|no[-_ ]?progress|stalled?|unchanged|dependency|停转|无进展|重复|反复|观察|轮询/i;

export const ReplanTriggerSchema = z.object({
  kind: z.enum(['run_history_no_progress_repeat', 'dead_monitor_repeat']),
  section: z.literal('run_history'),
  text: z.string(),
  run_count: z.number().int(),
  latest_generated_at: z.string().nullable(),
  agent_id: z.string().nullable(),
});

export const ReplanObligationSchema = z.object({
  schema_version: z.literal(AUTONOMOUS_REPLAN_SCHEMA),
  /** `replan-<16 hex>`: stable while the same stalled runs stand, new once another streak forms. */
  obligation_id: z.string().regex(/^replan-[0-9a-f]{16}$/),
  required: z.literal(true),
  stall_threshold: z.number().int(),
  trigger_count: z.number().int(),
  triggers: z.array(ReplanTriggerSchema),
  guidance_actions: z.array(z.string()),
  stop_condition: z.string(),
  recommended_action: z.string(),
  agent_id: z.string().nullable(),
  /** The command that discharges the obligation once the replan is written. */
  discharge_command: z.string(),
});
export type ReplanObligation = z.infer<typeof ReplanObligationSchema>;

interface StallSignal {
  row: RunIndexRow;
  classification: string;
  signature: string;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.split(/\s+/).filter(Boolean).join(' ') : '';
}

/** Whether a run is a replan result (it names the obligation it discharges). */
export function isReplanResult(row: RunIndexRow): boolean {
  return text((row as Record<string, unknown>)['replan_obligation_id']) !== '';
}

function stallSignal(row: RunIndexRow): StallSignal | null {
  const classification = text(row.classification);
  if (classification === '') return null;
  const outcome = text((row as Record<string, unknown>)['delivery_outcome']);
  if (PROGRESS_OUTCOMES.has(outcome)) return null;
  const action = text(row.recommended_action);
  const combined = [classification, action, text(row.health_check), outcome].filter(Boolean).join(' ');
  if (!STALL_PATTERN.test(combined)) return null;
  return { row, classification, signature: (action === '' ? classification : action).toLowerCase() };
}

/**
 * The most non-neutral rows of a lane the scan can visit: every signal it may collect, plus the row
 * that ends it. The incremental run history keeps `RECENT_LANE_ROWS` of them (a test checks it is enough).
 */
export const REPLAN_SCAN_DEPTH = DEAD_MONITOR_REPEAT_THRESHOLD + 1;

/** The rows of the lane: the agent's own runs (all runs for an unscoped question), newest first. */
function laneRows(rowsNewestFirst: readonly RunIndexRow[], agentId: string | null): RunIndexRow[] {
  return agentId === null ? [...rowsNewestFirst] : rowsNewestFirst.filter((row) => row.agent_id === agentId);
}

export interface ReplanObligationInput {
  goalId: string;
  agentId: string | null;
  /** The goal's run index rows, newest first. */
  rowsNewestFirst: readonly RunIndexRow[];
}

/** The obligation the lane's run history owes now, or null. Pure: reads nothing, writes nothing. */
export function replanObligationFromRuns(input: ReplanObligationInput): ReplanObligation | null {
  return replanObligationWithRuns(input)?.obligation ?? null;
}

/** The obligation and the stalled runs that owe it (newest first), or null. Pure. */
export function replanObligationWithRuns(
  input: ReplanObligationInput,
): { obligation: ReplanObligation; stalledRuns: RunIndexRow[] } | null {
  const signals: StallSignal[] = [];
  for (const row of laneRows(input.rowsNewestFirst, input.agentId)) {
    // Settlement bookkeeping says nothing about progress: skipped.
    if (isSettlementRun(row)) continue;
    if (isReplanResult(row)) break;
    const signal = stallSignal(row);
    if (signal === null) break;
    signals.push(signal);
    if (signals.length >= DEAD_MONITOR_REPEAT_THRESHOLD) break;
  }
  const stalled = signals.slice(0, REPLAN_STALL_THRESHOLD);
  if (stalled.length < REPLAN_STALL_THRESHOLD) return null;
  const signatures = new Set(stalled.map((s) => s.signature));
  const classifications = new Set(stalled.map((s) => s.classification));
  if (signatures.size > 1 && classifications.size > 1) return null;

  const monitorOnly = classifications.size === 1 && classifications.has('quota_monitor_poll');
  if (monitorOnly) {
    const polls = signals.slice(0, DEAD_MONITOR_REPEAT_THRESHOLD);
    if (polls.length < DEAD_MONITOR_REPEAT_THRESHOLD) return null;
    if (polls.some((s) => s.classification !== 'quota_monitor_poll')) return null;
    const targets = new Set(polls.map((s) => text(s.row.todo_id)));
    if (targets.size !== 1) return null;
    return withRuns(
      build(input, polls, {
        kind: 'dead_monitor_repeat',
        text: `the latest ${polls.length} monitor polls repeated the same target without a material change`,
        threshold: DEAD_MONITOR_REPEAT_THRESHOLD,
        guidance: ['set_watch_expiry', 'write_blocker', 'supersede_monitor', 'create_successor'],
        recommended:
          'end the dead monitor loop: give the watch an expiry, record a concrete blocker, supersede the monitor todo or add a runnable successor before polling again',
      }),
      polls,
    );
  }
  const action = stalled[0]?.signature ?? 'the same action';
  return withRuns(
    build(input, stalled, {
      kind: 'run_history_no_progress_repeat',
      text: `the latest ${stalled.length} runs repeated ${action.slice(0, 120)} without material progress`,
      threshold: REPLAN_STALL_THRESHOLD,
      guidance: ['keep', 'split', 'add', 'retire', 'ask_decision'],
      recommended:
        'replan before another turn repeats the stalled action: pick the next validated slice, update the todos, and record the replan result',
    }),
    stalled,
  );
}

function withRuns(
  obligation: ReplanObligation,
  signals: readonly StallSignal[],
): { obligation: ReplanObligation; stalledRuns: RunIndexRow[] } {
  return { obligation, stalledRuns: signals.map((s) => s.row) };
}

interface TriggerSpec {
  kind: ReplanObligation['triggers'][number]['kind'];
  text: string;
  threshold: number;
  guidance: string[];
  recommended: string;
}

function build(input: ReplanObligationInput, signals: readonly StallSignal[], spec: TriggerSpec): ReplanObligation {
  const agentIds = new Set(signals.map((s) => text(s.row.agent_id)).filter(Boolean));
  const agentId = input.agentId ?? (agentIds.size === 1 ? [...agentIds][0]! : null);
  const hash = createHash('sha256');
  hash.update(`${input.goalId}\n${agentId ?? ''}\n${spec.kind}\n`);
  for (const s of signals) hash.update(`${text(s.row.generated_at)}|${s.classification}|${s.signature}\n`);
  const obligationId = `replan-${hash.digest('hex').slice(0, 16)}`;
  const agentFlag = agentId === null ? '' : ` --agent-id ${agentId}`;
  return {
    schema_version: AUTONOMOUS_REPLAN_SCHEMA,
    obligation_id: obligationId,
    required: true,
    stall_threshold: spec.threshold,
    trigger_count: 1,
    triggers: [
      {
        kind: spec.kind,
        section: 'run_history',
        text: spec.text,
        run_count: signals.length,
        latest_generated_at: text(signals[0]?.row.generated_at) || null,
        agent_id: agentId,
      },
    ],
    guidance_actions: spec.guidance,
    stop_condition:
      'stop if the replan needs private material, credentials, destructive git, production actions or a decision only the owner can make',
    recommended_action: spec.recommended,
    agent_id: agentId,
    discharge_command: `loopx refresh-state --goal-id ${input.goalId} --classification autonomous_replan --replan-obligation-id ${obligationId} --turn-instance-id ${TURN_ID_PLACEHOLDER}${agentFlag}`,
  };
}
