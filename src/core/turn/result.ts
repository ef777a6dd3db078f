import { z } from 'zod';
import type { OutcomeUsage } from '../executors/types';
import { SettlementIdentitySchema } from '../quota/identity';
import type { TurnUsage } from '../quota/ledger';
import {
  journalPath,
  TurnFailureSchema,
  TurnReceiptSchema,
  ValidationReceiptSchema,
  type TurnJournal,
} from './journal';
import { EffectsSchema, SCHEDULER_OWNER, TurnPlanSchema, type Effects, type TurnPlan } from './plan';

/**
 * What `turn run-once` answers: ONE builder (`turnResult`) makes every result, whether it comes
 * from a journal (a turn that ran, stopped, failed, was cancelled or is replayed), from a plan (a
 * preview, or no turn), or from neither (busy). Messages are sentences for people and name no
 * command-line flag; what a person can do next is `next_steps`, which each surface renders its own
 * way (the CLI as flags, the editor as buttons).
 */

export const TURN_RUN_SCHEMA_VERSION = 'loopx_turn_run_v0';
export const TURN_RUN_STATUSES = [
  'preview',
  'committed',
  'stopped',
  'failed',
  'in_progress',
  'not_run',
  'busy',
  'cancelled',
] as const;
export type TurnRunStatus = (typeof TURN_RUN_STATUSES)[number];

/** What a person can do next with a turn: run the previewed turn, resume an unfinished one, retry a failed one. */
export const NEXT_STEP_KINDS = ['execute', 'resume', 'retry'] as const;
export type NextStepKind = (typeof NEXT_STEP_KINDS)[number];
export const NextStepSchema = z.object({
  kind: z.enum(NEXT_STEP_KINDS),
  /** The journaled turn the step continues (absent for `execute`, which plans a new turn). */
  turn_key: z.string().optional(),
});
export type NextStep = z.infer<typeof NextStepSchema>;

export const TurnRunResultSchema = z.object({
  ok: z.boolean(),
  schema_version: z.literal(TURN_RUN_SCHEMA_VERSION),
  status: z.enum(TURN_RUN_STATUSES),
  goal_id: z.string(),
  agent_id: z.string(),
  turn_key: z.string().nullable(),
  turn_instance_id: z.string().nullable(),
  todo_id: z.string().nullable(),
  todo_title: z.string().nullable(),
  settlement_identity: SettlementIdentitySchema.nullable(),
  route: z.string().nullable(),
  result_kind: z.string().nullable(),
  /** One sentence for people: what happened. */
  message: z.string(),
  /** What a person can do next (see `NextStepSchema`); empty when nothing is left to do with this turn. */
  next_steps: z.array(NextStepSchema),
  summary: z.string().nullable(),
  /** A finished turn was asked for again: its recorded outcome, nothing done. */
  replayed: z.boolean(),
  /** The turn continued a journal (crash, cancel or retry). */
  resumed: z.boolean(),
  validation: ValidationReceiptSchema.nullable(),
  receipt: TurnReceiptSchema.nullable(),
  /** What THIS invocation did (all false on a replay or preview). */
  effects: EffectsSchema,
  /** Spend rows of this turn's settlement identity in the run index (0 or 1). */
  quota_slot_spend_count: z.number().int().nonnegative(),
  /** The key that resumes or retries this turn. */
  resume_turn_key: z.string().nullable(),
  failure: TurnFailureSchema.nullable(),
  scheduler: z.object({ owner: z.string(), phase: z.string() }).nullable(),
  usage: z.looseObject({ estimated: z.boolean() }).nullable(),
  plan: TurnPlanSchema.nullable(),
  journal_path: z.string().nullable(),
});
export type TurnRunResult = z.infer<typeof TurnRunResultSchema>;

export const NO_EFFECTS: Effects = {
  host_invoked: false,
  state_written: false,
  quota_spent: false,
  scheduler_acknowledged: false,
};

/** Where a result comes from: a journal, a plan, or nothing but the goal and agent (busy). */
export type TurnResultSource =
  { journal: TurnJournal; goalRuntimeDir: string } | { plan: TurnPlan } | { goalId: string; agentId: string };

export interface TurnResultOptions {
  status?: TurnRunStatus;
  message?: string;
  replayed?: boolean;
  resumed?: boolean;
  effects?: Effects;
}

/** The one builder of turn results. */
export function turnResult(source: TurnResultSource, options: TurnResultOptions = {}): TurnRunResult {
  const effects = { ...(options.effects ?? NO_EFFECTS) };
  const replayed = options.replayed ?? false;
  const resumed = options.resumed ?? false;
  if ('journal' in source) {
    const { journal } = source;
    const status = options.status ?? journal.status;
    const validation = journal.phases.validation;
    return {
      ok: status !== 'failed',
      schema_version: TURN_RUN_SCHEMA_VERSION,
      status,
      goal_id: journal.goal_id,
      agent_id: journal.agent_id,
      turn_key: journal.turn_key,
      turn_instance_id: journal.turn_instance_id,
      todo_id: journal.todo_id,
      todo_title: journal.plan.selected_todo?.title ?? null,
      settlement_identity: journal.settlement_identity,
      route: journal.plan.route,
      result_kind: journal.result_kind,
      message: options.message ?? journalMessage(journal),
      next_steps: journalNextSteps(journal),
      summary: journal.summary,
      replayed,
      resumed,
      validation: validation === undefined ? null : ValidationReceiptSchema.parse(validation),
      receipt: journal.receipt,
      effects,
      // The spend is exactly-once per settlement identity (settleReservation), so the journal knows the count.
      quota_slot_spend_count: journal.completed_phases.includes('quota_spend') ? 1 : 0,
      resume_turn_key: journal.turn_key,
      failure: journal.failure,
      scheduler:
        journal.phases.scheduler_ack === undefined
          ? null
          : { owner: `${SCHEDULER_OWNER}_owned`, phase: journal.phases.scheduler_ack.status },
      usage: journalUsage(journal),
      plan: journal.plan,
      journal_path: journalPath(source.goalRuntimeDir, journal.turn_key),
    };
  }
  const plan = 'plan' in source ? source.plan : null;
  const status = options.status ?? 'not_run';
  const preview = plan !== null && status === 'preview';
  return {
    ok: plan === null ? true : plan.ok,
    schema_version: TURN_RUN_SCHEMA_VERSION,
    status,
    goal_id: plan?.goal_id ?? ('goalId' in source ? source.goalId : ''),
    agent_id: plan?.agent_id ?? ('agentId' in source ? source.agentId : ''),
    turn_key: preview ? plan.turn_key : null,
    turn_instance_id: preview ? plan.turn_instance_id : null,
    todo_id: plan?.selected_todo?.todo_id ?? null,
    todo_title: plan?.selected_todo?.title ?? null,
    settlement_identity: plan?.settlement_identity ?? null,
    route: plan === null ? 'wait' : plan.route,
    result_kind: null,
    message: options.message ?? (plan === null ? '' : planMessage(plan, status)),
    next_steps: preview && plan.would_invoke_host ? [{ kind: 'execute' }] : [],
    summary: null,
    replayed,
    resumed,
    validation: null,
    receipt: null,
    effects,
    quota_slot_spend_count: 0,
    resume_turn_key: null,
    failure: null,
    scheduler: null,
    usage: null,
    plan,
    journal_path: null,
  };
}

/** What can be done next with a journaled turn: resume it while unfinished, retry it when it failed. */
function journalNextSteps(journal: TurnJournal): NextStep[] {
  if (journal.status === 'in_progress') return [{ kind: 'resume', turn_key: journal.turn_key }];
  if (journal.status === 'failed') return [{ kind: 'retry', turn_key: journal.turn_key }];
  return [];
}

function planMessage(plan: TurnPlan, status: TurnRunStatus): string {
  return status === 'preview' && plan.would_invoke_host
    ? `would run ${plan.agent_id} on ${plan.selected_todo?.todo_id ?? '(no todo)'}`
    : notRunMessage(plan);
}

/** Why the plan does not run a turn, for people. */
export function notRunMessage(plan: TurnPlan): string {
  if (!plan.ok) return `no turn: the plan is broken (${plan.contract_problems.join('; ')})`;
  const gates = plan.open_gates.filter((g) =>
    plan.skipped_todos.some((s) => s.reason === 'gate_blocked' && g.blocked_todo_ids.includes(s.todo_id)),
  );
  const parts = [`no turn for ${plan.agent_id} (${plan.route}): ${plan.decision.reason}`];
  if (gates.length > 0) parts.push(`waiting on ${gates.map((g) => `${g.todo_id} "${g.title}"`).join(', ')}`);
  return parts.join('; ');
}

export function journalMessage(journal: TurnJournal): string {
  const todo = journal.todo_id === null ? '' : ` on ${journal.todo_id}`;
  switch (journal.status) {
    case 'committed':
      return `turn${todo} committed: ${journal.result_kind ?? ''}, validated, written back and spent once`;
    case 'stopped':
      if (journal.reservation.status === 'refused')
        return `turn${todo} not admitted: ${journal.summary ?? 'quota refused'}; the agent did not run and nothing was spent`;
      return journal.result_kind === 'user_action_required'
        ? `turn${todo} stopped: the agent needs a person${journal.stop_writeback?.gate_todo_id ? ` (gate ${journal.stop_writeback.gate_todo_id})` : ''}; nothing was spent`
        : `turn${todo} stopped (${journal.result_kind ?? 'wait'}); nothing was spent`;
    case 'failed': {
      const spent =
        journal.failure?.duration_ms !== undefined
          ? "no slot was spent, and what the agent used counts against the goal's budgets"
          : 'nothing was spent';
      return `turn${todo} failed at ${journal.failed_phase ?? '?'} (${journal.failure?.reason ?? journal.result_kind ?? ''}): ${journal.failure?.message ?? ''}; ${spent}; it can be retried from its last safe phase`;
    }
    case 'in_progress':
      return `turn${todo} is in progress after ${journal.completed_phases.at(-1) ?? 'admission'}; it can be resumed`;
  }
}

export function journalUsage(journal: TurnJournal): TurnUsage | null {
  const host = journal.phases.host_execute;
  if (host === undefined) {
    // A turn whose agent ran and failed: what it used (counted against the budgets, no slot).
    const failure = journal.failure;
    if (failure?.duration_ms === undefined) return null;
    return turnUsage((failure.usage ?? null) as OutcomeUsage | null, failure.duration_ms);
  }
  return turnUsage(host.usage as OutcomeUsage | null, host.duration_ms);
}

/** What the spend records: the agent's tokens and cost (when reported) and the measured turn minutes. */
export function turnUsage(usage: OutcomeUsage | null, durationMs: number): TurnUsage {
  const out: TurnUsage = {
    minutes: Math.round((durationMs / 60_000) * 10_000) / 10_000,
    estimated: usage?.estimated ?? false,
  };
  if (usage !== null) {
    out.tokens = usage.input_tokens + usage.output_tokens;
    if (usage.cost_usd !== null) out.cost_usd = usage.cost_usd;
  }
  return out;
}
