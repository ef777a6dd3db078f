import * as path from 'node:path';
import { z } from 'zod';
import { errorMessage, isLoopxError, LoopxError } from '../errors';
import { createAgentExecutor, executorTimeoutMs, type ExecutorConfig } from '../executors/config';
import type { AgentExecutor, ExecutorOutcome, OutcomeUsage } from '../executors/types';
import { tryWithFileLock, withFileLock } from '../fs/fileLock';
import { writeJsonAtomic } from '../fs/atomicWrite';
import { mkdirInside } from '../fs/contain';
import { SettlementIdentitySchema } from '../quota/identity';
import type { TurnUsage } from '../quota/ledger';
import {
  DEFAULT_RESERVATION_TTL_MINUTES,
  reserveTurn,
  settleReservation,
  voidReservation,
} from '../quota/reservations';
import { sweepGoalLeftovers } from '../runtime/sweep';
import { formatLocalIsoSeconds } from '../runtime/time';
import {
  checkHostResult,
  checkTurnReceipt,
  isMaterialResultKind,
  TURN_PHASES,
  type HostResult,
  type TurnPhase,
} from '../protocol/contract';
import {
  executorTimeoutMinutes,
  inFlightTodoIds,
  loadTurnGoal,
  planGoalTurn,
  sessionBindingPath,
  turnConcurrencyLimit,
  type TurnGoal,
  type TurnGoalOptions,
} from './context';
import { crashCheckpoint } from './crashHook';
import { emitTo, type TurnEventSink } from './events';
import {
  journalPath,
  listActiveJournals,
  readJournal,
  TURN_JOURNAL_SCHEMA,
  TurnFailureSchema,
  TurnReceiptSchema,
  turnsDir,
  ValidationReceiptSchema,
  writeJournal,
  type RecoveryKind,
  type TurnFailure,
  type TurnJournal,
  type TurnReceipt,
} from './journal';
import {
  EffectsSchema,
  SCHEDULER_OWNER,
  SESSION_BINDING_SCHEMA,
  TurnPlanSchema,
  type Effects,
  type TurnPlan,
} from './plan';
import {
  applyStopWriteback,
  applyTodoTransition,
  recordMaterialRun,
  recordTurnNote,
  validateTurn,
  validationPassed,
  type WritebackContext,
} from './writeback';

/**
 * `loopx turn run-once` (spec §3.4–§3.9): one LoopX-driven turn as a journaled transaction.
 *
 *   admission         reserve the turn's quota slot (`reserveTurn`: the limit can never be exceeded)
 *   host_execute      the agent's executor runs one bounded turn
 *   typed_result      its answer is checked against the result contract
 *   validation        the goal's own validator runs (material results only)
 *   durable_writeback todo transition, Next Action, one accountable run record
 *   quota_spend       exactly one spend for the settlement identity `goal:agent:todo:turn`
 *   scheduler_apply/ack  LoopX is the scheduler (outer controller): completed at once
 *
 * Each phase is journaled when it completes; a crash anywhere resumes from the journal, and every
 * side effect is idempotent per turn, so a resumed turn never spends twice. Stop results (wait, a
 * question for the user) and failures release the reservation and never spend.
 *
 * Deliberate fix (spec bug 10): the original's run-once spent with `source=adapter` and no turn id,
 * outside the receipt chain; here the spend carries the turn id and its settlement identity.
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
  /** The key to pass to `--resume-turn-key` to resume or retry this turn. */
  resume_turn_key: z.string().nullable(),
  failure: TurnFailureSchema.nullable(),
  scheduler: z.object({ owner: z.string(), phase: z.string() }).nullable(),
  usage: z.looseObject({ estimated: z.boolean() }).nullable(),
  plan: TurnPlanSchema.nullable(),
  journal_path: z.string().nullable(),
});
export type TurnRunResult = z.infer<typeof TurnRunResultSchema>;

export type ExecutorFactory = (config: ExecutorConfig, agentId: string) => AgentExecutor;

export interface RunOnceOptions extends TurnGoalOptions {
  /** The environment agents and validators pick their allowlisted variables from. */
  env: NodeJS.ProcessEnv;
  /** Without it: a preview, nothing is invoked or written. */
  execute?: boolean;
  turnInstanceId?: string | undefined;
  /** Reload this turn's journal (and plan) instead of planning a new turn. */
  resumeTurnKey?: string | undefined;
  /** With `resumeTurnKey`: retry a failed turn from its last safe phase. */
  retryFailedTurn?: boolean;
  /** What a failed validation asks for (`recovery_kind`); default repair_required. */
  validationFailureKind?: RecoveryKind;
  /** Cancels between phases (and stops a running agent or validator). */
  signal?: AbortSignal | undefined;
  onEvent?: TurnEventSink | undefined;
  /** How executors are built; default `createAgentExecutor`. Tests and benchmarks pass doubles. */
  executorFactory?: ExecutorFactory | undefined;
  /** argv of the built-in demo agent (see `demoAgentArgv`). */
  demoAgentArgv?: readonly string[] | undefined;
}

const NO_EFFECTS: Effects = {
  host_invoked: false,
  state_written: false,
  quota_spent: false,
  scheduler_acknowledged: false,
};

function nowText(options: RunOnceOptions): string {
  return formatLocalIsoSeconds(options.clock.now());
}

// ---------------------------------------------------------------------------------------------
// Results

function journalUsage(journal: TurnJournal): TurnUsage | null {
  const host = journal.phases.host_execute;
  if (host === undefined) return null;
  return turnUsage(host.usage as OutcomeUsage | null, host.duration_ms);
}

/** What the spend records: the agent's tokens and cost (when reported) and the measured turn minutes. */
function turnUsage(usage: OutcomeUsage | null, durationMs: number): TurnUsage {
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

function journalMessage(journal: TurnJournal): string {
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
    case 'failed':
      return `turn${todo} failed at ${journal.failed_phase ?? '?'} (${journal.failure?.reason ?? journal.result_kind ?? ''}): ${journal.failure?.message ?? ''}; nothing was spent. Retry: --resume-turn-key ${journal.turn_key} --retry-failed-turn`;
    case 'in_progress':
      return `turn${todo} is in progress after ${journal.completed_phases.at(-1) ?? 'admission'}; resume it with --resume-turn-key ${journal.turn_key}`;
  }
}

async function resultFromJournal(
  turnGoal: TurnGoal,
  journal: TurnJournal,
  extra: { status?: TurnRunStatus; replayed: boolean; resumed: boolean; effects: Effects; message?: string },
): Promise<TurnRunResult> {
  const status: TurnRunStatus = extra.status ?? journal.status;
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
    message: extra.message ?? journalMessage(journal),
    summary: journal.summary,
    replayed: extra.replayed,
    resumed: extra.resumed,
    validation: validation === undefined ? null : ValidationReceiptSchema.parse(validation),
    receipt: journal.receipt,
    effects: extra.effects,
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
    journal_path: journalPath(turnGoal.goal.goalRuntimeDir, journal.turn_key),
  };
}

function planResult(plan: TurnPlan, status: 'preview' | 'not_run' | 'busy', message: string): TurnRunResult {
  return {
    ok: plan.ok,
    schema_version: TURN_RUN_SCHEMA_VERSION,
    status,
    goal_id: plan.goal_id,
    agent_id: plan.agent_id,
    turn_key: status === 'preview' ? plan.turn_key : null,
    turn_instance_id: status === 'preview' ? plan.turn_instance_id : null,
    todo_id: plan.selected_todo?.todo_id ?? null,
    todo_title: plan.selected_todo?.title ?? null,
    settlement_identity: plan.settlement_identity,
    route: plan.route,
    result_kind: null,
    message,
    summary: null,
    replayed: false,
    resumed: false,
    validation: null,
    receipt: null,
    effects: { ...NO_EFFECTS },
    quota_slot_spend_count: 0,
    resume_turn_key: null,
    failure: null,
    scheduler: null,
    usage: null,
    plan,
    journal_path: null,
  };
}

function busyResult(turnGoal: TurnGoal, message: string): TurnRunResult {
  return {
    ok: true,
    schema_version: TURN_RUN_SCHEMA_VERSION,
    status: 'busy',
    goal_id: turnGoal.goal.goalId,
    agent_id: turnGoal.agentId,
    turn_key: null,
    turn_instance_id: null,
    todo_id: null,
    todo_title: null,
    settlement_identity: null,
    route: 'wait',
    result_kind: null,
    message,
    summary: null,
    replayed: false,
    resumed: false,
    validation: null,
    receipt: null,
    effects: { ...NO_EFFECTS },
    quota_slot_spend_count: 0,
    resume_turn_key: null,
    failure: null,
    scheduler: null,
    usage: null,
    plan: null,
    journal_path: null,
  };
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

// ---------------------------------------------------------------------------------------------
// Entry point

function isFinished(journal: TurnJournal): boolean {
  return journal.status !== 'in_progress';
}

export async function runOnce(options: RunOnceOptions): Promise<TurnRunResult> {
  if (options.resumeTurnKey !== undefined && options.turnInstanceId !== undefined) {
    throw new LoopxError(
      'usage',
      '--resume-turn-key reloads the journaled plan; it cannot be combined with --turn-instance-id',
    );
  }
  if (options.retryFailedTurn === true && options.resumeTurnKey === undefined) {
    throw new LoopxError('usage', '--retry-failed-turn needs --resume-turn-key: name the failed turn to retry');
  }
  const turnGoal = await loadTurnGoal(options);
  const { goal } = turnGoal;

  if (options.resumeTurnKey !== undefined) {
    const journal = await requireJournal(turnGoal, options.resumeTurnKey);
    const retry = journal.status === 'failed' && options.retryFailedTurn === true;
    if (options.execute !== true || (isFinished(journal) && !retry)) {
      return resultFromJournal(turnGoal, journal, {
        replayed: isFinished(journal),
        resumed: false,
        effects: { ...NO_EFFECTS },
        ...(options.execute !== true ? { status: 'preview' as const } : {}),
      });
    }
  }
  if (options.execute !== true) {
    const { plan } = await planGoalTurn(turnGoal, {
      clock: options.clock,
      turnInstanceId: options.turnInstanceId,
      availableCapabilities: options.availableCapabilities,
    });
    return planResult(
      plan,
      'preview',
      plan.would_invoke_host
        ? `would run ${plan.agent_id} on ${plan.selected_todo?.todo_id ?? '(no todo)'} (add --execute to run it)`
        : notRunMessage(plan),
    );
  }

  const dir = turnsDir(goal.goalRuntimeDir);
  await mkdirInside(goal.runtimeRoot, dir);
  // Leftovers of a killed run (a dead holder's turn lock, temp files, an unindexed spend) go first.
  await sweepGoalLeftovers(goal.runtimeRoot, goal.goalId, { clock: options.clock });
  const slot = await withTurnSlot(turnGoal, options, async () => {
    let journal: TurnJournal | null = null;
    let resumed = false;
    if (options.resumeTurnKey !== undefined) {
      journal = await requireJournal(turnGoal, options.resumeTurnKey);
      resumed = true;
      if (isFinished(journal) && !(journal.status === 'failed' && options.retryFailedTurn === true)) {
        return resultFromJournal(turnGoal, journal, { replayed: true, resumed: false, effects: { ...NO_EFFECTS } });
      }
    } else {
      // An unfinished turn of this agent (a crash, a cancel) is finished before a new one starts.
      journal = (await listActiveJournals(goal.goalRuntimeDir)).find((j) => j.agent_id === turnGoal.agentId) ?? null;
      resumed = journal !== null;
    }
    if (journal === null) {
      const admitted = await admitNewTurn(turnGoal, options);
      if ('notRun' in admitted) return admitted.notRun;
      journal = admitted.journal;
    }
    const file = journalPath(goal.goalRuntimeDir, journal.turn_key);
    const held = await tryWithFileLock(
      file,
      { operation: 'turn_run', agentId: turnGoal.agentId, clock: options.clock },
      async () => {
        const current = (await readJournal(file)) ?? journal;
        return new TurnTransaction(turnGoal, options, current, resumed).run();
      },
    );
    return held === null
      ? busyResult(turnGoal, `turn ${journal.turn_key} is being run by another process; nothing was done`)
      : held.value;
  });
  if (slot === null) {
    const limit = turnConcurrencyLimit(goal);
    return busyResult(
      turnGoal,
      `no turn started: ${limit === 1 ? 'another turn of this goal (or of this agent) is running' : `${limit} turns of this goal are already running (or this agent is busy)`}; the goal's spawn policy allows ${limit} at once`,
    );
  }
  return slot;
}

async function requireJournal(turnGoal: TurnGoal, turnKey: string): Promise<TurnJournal> {
  const journal = await readJournal(journalPath(turnGoal.goal.goalRuntimeDir, turnKey));
  if (journal === null) {
    throw new LoopxError(
      'turn_journal_not_found',
      `goal '${turnGoal.goal.goalId}' has no journal for turn ${turnKey}; list the turns with loopx turn inspect-journal --goal-id ${turnGoal.goal.goalId}`,
      { turn_key: turnKey },
    );
  }
  if (journal.agent_id !== turnGoal.agentId) {
    throw new LoopxError(
      'usage',
      `turn ${turnKey} belongs to agent ${journal.agent_id}, not ${turnGoal.agentId}; resume it with --agent-id ${journal.agent_id}`,
      { turn_key: turnKey, agent_id: journal.agent_id },
    );
  }
  return journal;
}

/**
 * Runs `fn` holding this agent's turn lock and one of the goal's turn lanes (the spawn policy's
 * `maxConcurrentTurns`), or returns null at once when the agent is busy or every lane is taken.
 */
async function withTurnSlot<T>(turnGoal: TurnGoal, options: RunOnceOptions, fn: () => Promise<T>): Promise<T | null> {
  const dir = turnsDir(turnGoal.goal.goalRuntimeDir);
  const lockOptions = { agentId: turnGoal.agentId, clock: options.clock };
  const limit = turnConcurrencyLimit(turnGoal.goal);
  const held = await tryWithFileLock(
    path.join(dir, `.agent-${turnGoal.agentId}`),
    { ...lockOptions, operation: 'turn_agent' },
    async () => {
      for (let lane = 0; lane < limit; lane++) {
        const inLane = await tryWithFileLock(
          path.join(dir, `.lane-${lane}`),
          { ...lockOptions, operation: 'turn_lane' },
          fn,
        );
        if (inLane !== null) return inLane;
      }
      return null;
    },
  );
  return held?.value?.value ?? null;
}

/** Plans a new turn under the goal's admission lock (so two agents never take the same todo) and writes its journal. */
async function admitNewTurn(
  turnGoal: TurnGoal,
  options: RunOnceOptions,
): Promise<{ journal: TurnJournal } | { notRun: TurnRunResult }> {
  const { goal } = turnGoal;
  return withFileLock(
    path.join(turnsDir(goal.goalRuntimeDir), '.admission'),
    { operation: 'turn_admission', agentId: turnGoal.agentId, clock: options.clock },
    async () => {
      const inFlight = await inFlightTodoIds(goal, turnGoal.agentId);
      const { plan } = await planGoalTurn(turnGoal, {
        clock: options.clock,
        turnInstanceId: options.turnInstanceId,
        availableCapabilities: options.availableCapabilities,
        inFlightTodoIds: inFlight,
      });
      if (!plan.would_invoke_host || plan.settlement_identity === null)
        return { notRun: planResult(plan, 'not_run', notRunMessage(plan)) };
      const existing = await readJournal(journalPath(goal.goalRuntimeDir, plan.turn_key));
      if (existing !== null) return { journal: existing };
      const at = nowText(options);
      const journal: TurnJournal = {
        schema_version: TURN_JOURNAL_SCHEMA,
        turn_key: plan.turn_key,
        goal_id: goal.goalId,
        agent_id: turnGoal.agentId,
        todo_id: plan.selected_todo?.todo_id ?? null,
        turn_instance_id: plan.turn_instance_id,
        settlement_identity: plan.settlement_identity,
        created_at: at,
        updated_at: at,
        attempts: 1,
        status: 'in_progress',
        plan,
        reservation: { status: 'none', expires_at: null },
        completed_phases: [],
        phases: {},
        stop_writeback: null,
        result_kind: null,
        failed_phase: null,
        failure: null,
        receipt: null,
        summary: null,
      };
      await writeJournal(goal.goalRuntimeDir, journal);
      return { journal };
    },
  );
}

// ---------------------------------------------------------------------------------------------
// The transaction

/** Phases from which a failed turn is retried, and what is kept. */
const RETRY_FROM: Readonly<Record<string, TurnPhase>> = {
  host_execute: 'host_execute',
  validation: 'validation',
  durable_writeback: 'durable_writeback',
  quota_spend: 'quota_spend',
};

class Cancelled extends Error {
  override readonly name = 'Cancelled';
}

class TurnTransaction {
  private readonly effects: Effects = { ...NO_EFFECTS };
  private readonly ctx: WritebackContext;
  private readonly dir: string;

  constructor(
    private readonly turnGoal: TurnGoal,
    private readonly options: RunOnceOptions,
    private journal: TurnJournal,
    private readonly resumed: boolean,
  ) {
    this.dir = turnGoal.goal.goalRuntimeDir;
    this.ctx = {
      turnGoal,
      clock: options.clock,
      identity: journal.settlement_identity,
      turnKey: journal.turn_key,
      turnInstanceId: journal.turn_instance_id,
      todoId: journal.todo_id,
      mayHaveRecords: resumed || journal.attempts > 1,
    };
  }

  private get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  private done(phase: TurnPhase): boolean {
    return this.journal.completed_phases.includes(phase);
  }

  private async save(): Promise<void> {
    this.journal.updated_at = nowText(this.options);
    await writeJournal(this.dir, this.journal);
  }

  private event(phase: 'admission' | TurnPhase, detail: string): void {
    emitTo(this.options.onEvent, {
      type: 'phase_done',
      goal_id: this.journal.goal_id,
      agent_id: this.journal.agent_id,
      at: nowText(this.options),
      turn_key: this.journal.turn_key,
      phase,
      detail,
    });
  }

  private async completePhase(phase: TurnPhase, record: Record<string, unknown>, detail: string): Promise<void> {
    (this.journal.phases as Record<string, unknown>)[phase] = { completed_at: nowText(this.options), ...record };
    if (!this.done(phase)) this.journal.completed_phases.push(phase);
    await this.save();
    this.event(phase, detail);
    crashCheckpoint(this.env, phase);
  }

  private checkCancelled(): void {
    if (this.options.signal?.aborted === true) throw new Cancelled();
  }

  async run(): Promise<TurnRunResult> {
    if (this.journal.status === 'failed') this.resetForRetry();
    else if (this.resumed) this.journal.attempts += 1;
    if (this.journal.status !== 'in_progress') return this.finish();
    const plan = this.journal.plan;
    emitTo(this.options.onEvent, {
      type: 'turn_started',
      goal_id: this.journal.goal_id,
      agent_id: this.journal.agent_id,
      at: nowText(this.options),
      turn_key: this.journal.turn_key,
      turn_instance_id: this.journal.turn_instance_id,
      todo_id: this.journal.todo_id,
      todo_title: plan.selected_todo?.title ?? null,
      resumed: this.resumed,
    });
    try {
      await this.admit();
      if (this.journal.status === 'in_progress') await this.steps();
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error;
      return this.cancelled();
    }
    return this.finish();
  }

  private resetForRetry(): void {
    const from = RETRY_FROM[this.journal.failed_phase ?? ''] ?? 'host_execute';
    const keep = TURN_PHASES.slice(0, TURN_PHASES.indexOf(from));
    this.journal.completed_phases = this.journal.completed_phases.filter((p) => keep.includes(p));
    for (const phase of TURN_PHASES)
      if (!keep.includes(phase)) delete (this.journal.phases as Record<string, unknown>)[phase];
    this.journal.status = 'in_progress';
    this.journal.result_kind = null;
    this.journal.failed_phase = null;
    this.journal.failure = null;
    this.journal.receipt = null;
    this.journal.attempts += 1;
  }

  /** Holds the turn's slot (again, after a void or an expiry) until it is settled or released. */
  private async admit(): Promise<void> {
    if (this.done('quota_spend')) return;
    const timeout = this.turnGoal.executorConfig === null ? 0 : executorTimeoutMinutes(this.turnGoal.executorConfig);
    const config = this.turnGoal.executorConfig;
    const reserved = await reserveTurn(this.turnGoal.goal, this.options.clock, {
      identity: this.journal.settlement_identity,
      // The budget estimate is held with the slot, so parallel turns cannot overspend max_cost_usd / max_tokens.
      estimate: {
        ...(config?.estimated_cost_usd !== undefined ? { cost_usd: config.estimated_cost_usd } : {}),
        ...(config?.estimated_tokens !== undefined ? { tokens: config.estimated_tokens } : {}),
      },
      estimateMissing: true,
      ttlMinutes: Math.max(DEFAULT_RESERVATION_TTL_MINUTES, timeout + 10),
      lock: { agentId: this.journal.agent_id },
    });
    if (reserved.status === 'refused' && !this.done('host_execute')) {
      // Not admitted: the quota is used up. The turn stops before anything ran.
      this.journal.reservation = { status: 'refused', expires_at: null };
      this.journal.status = 'stopped';
      this.journal.result_kind = 'wait';
      this.journal.summary = reserved.reason;
      this.journal.receipt = this.receipt();
      await this.save();
      return;
    }
    // Recorded with the next phase: a crash before it reserves again, which finds this reservation.
    const estimate = reserved.reservation?.estimate ?? this.journal.reservation.estimate;
    this.journal.reservation = {
      status: reserved.admitted ? 'reserved' : reserved.status === 'already_settled' ? 'settled' : 'refused',
      expires_at: reserved.reservation?.expires_at ?? null,
      ...(estimate !== undefined ? { estimate } : {}),
    };
    this.event('admission', reserved.reason);
    crashCheckpoint(this.env, 'admission');
  }

  private async steps(): Promise<void> {
    if (!this.done('host_execute')) {
      const stopped = await this.hostExecute();
      if (stopped) return;
    }
    if (!this.done('typed_result')) {
      const accepted = this.hostRecordResult();
      await this.completePhase('typed_result', { result: accepted }, `${accepted.result_kind}: ${accepted.summary}`);
    }
    const result = this.hostResult();
    if (!isMaterialResultKind(result.result_kind)) {
      await this.stop(result);
      return;
    }
    if (!this.done('validation')) {
      this.checkCancelled();
      const validation = await validateTurn({
        argv: this.turnGoal.validationCommand,
        cwd: this.turnGoal.projectRoot,
        env: this.env,
        homeDir: this.turnGoal.homeDir,
        result,
        failureKind: this.options.validationFailureKind ?? 'repair_required',
        signal: this.options.signal,
      });
      this.checkCancelled();
      if (!validationPassed(validation)) {
        (this.journal.phases as Record<string, unknown>)['validation'] = {
          completed_at: nowText(this.options),
          ...validation,
        };
        await this.fail(
          'validation_failed',
          'validation',
          {
            kind: 'validation_failed',
            reason: validation.status,
            message: validation.reason,
            output_excerpt: validation.output_excerpt,
            problems: [],
          },
          true,
        );
        return;
      }
      await this.completePhase('validation', validation, validation.reason);
    }
    if (!this.done('durable_writeback')) {
      this.checkCancelled();
      try {
        const transition = await applyTodoTransition(this.ctx, result);
        const validation = ValidationReceiptSchema.parse(this.journal.phases.validation);
        const run = await recordMaterialRun(this.ctx, {
          result,
          validation,
          usage: journalUsage(this.journal),
          executor: this.journal.phases.host_execute?.executor ?? '',
          transition: transition.value,
        });
        if (transition.written || run.written) this.effects.state_written = true;
        crashCheckpoint(this.env, 'durable_writeback:effect');
        await this.completePhase(
          'durable_writeback',
          run.record,
          `recorded ${run.record.run_classification} (${run.record.todo_transition}) at ${run.record.run_generated_at}`,
        );
      } catch (error) {
        if (error instanceof Cancelled) throw error;
        await this.fail('writeback_failed', 'durable_writeback', failureOf('writeback_failed', error), false);
        return;
      }
    }
    if (!this.done('quota_spend')) {
      this.checkCancelled();
      const writeback = this.journal.phases.durable_writeback;
      const usage = journalUsage(this.journal);
      try {
        const settled = await settleReservation(this.turnGoal.goal, this.options.clock, {
          identity: this.journal.settlement_identity,
          source: 'heartbeat',
          recommendedAction: result.recommended_action ?? result.next_action,
          ...(usage !== null ? { usage } : {}),
          deliveryRun:
            writeback === undefined
              ? null
              : { generated_at: writeback.run_generated_at, classification: writeback.run_classification },
          decision: {
            should_run: this.journal.plan.decision.should_run,
            state: this.journal.plan.decision.state,
            effective_action: this.journal.plan.decision.effective_action,
          },
          lock: { agentId: this.journal.agent_id },
        });
        if (!settled.ok) {
          await this.fail(
            'quota_spend_failed',
            'quota_spend',
            {
              kind: 'quota_spend_failed',
              reason: 'quota_spend_rejected',
              message: settled.reason,
              output_excerpt: '',
              problems: [],
            },
            false,
          );
          return;
        }
        if (settled.appended) this.effects.quota_spent = true;
        crashCheckpoint(this.env, 'quota_spend:effect');
        this.journal.reservation = { ...this.journal.reservation, status: 'settled', expires_at: null };
        await this.completePhase(
          'quota_spend',
          {
            status: settled.status,
            appended: settled.appended,
            effect_id: settled.effect_id,
            spend_generated_at:
              typeof settled.record?.['generated_at'] === 'string' ? settled.record['generated_at'] : null,
            usage,
          },
          settled.reason,
        );
      } catch (error) {
        await this.fail('quota_spend_failed', 'quota_spend', failureOf('quota_spend_failed', error), false);
        return;
      }
    }
    // LoopX is the scheduler here (outer controller): applying and acknowledging the handoff is
    // immediate and has no side effect, so both phases and the commit are journaled in one write.
    const at = nowText(this.options);
    const phases = this.journal.phases as Record<string, unknown>;
    for (const phase of ['scheduler_apply', 'scheduler_ack'] as const) {
      if (this.done(phase)) continue;
      phases[phase] = { completed_at: at, owner: SCHEDULER_OWNER, status: 'completed' };
      this.journal.completed_phases.push(phase);
      if (phase === 'scheduler_ack') this.effects.scheduler_acknowledged = true;
    }
    this.journal.status = 'committed';
    this.journal.result_kind = result.result_kind;
    this.journal.summary = result.summary;
    this.journal.receipt = this.receipt();
    await this.save();
    this.event('scheduler_apply', 'outer controller: nothing to apply');
    crashCheckpoint(this.env, 'scheduler_apply');
    this.event('scheduler_ack', 'outer controller: handoff acknowledged');
    crashCheckpoint(this.env, 'scheduler_ack');
  }

  private hostRecordResult(): HostResult {
    const record = this.journal.phases.host_execute;
    if (record === undefined)
      throw new LoopxError(
        'turn_journal_invalid',
        `the journal of turn ${this.journal.turn_key} has no host_execute record`,
        { turn_key: this.journal.turn_key },
      );
    return record.result;
  }

  private hostResult(): HostResult {
    const record = this.journal.phases.typed_result;
    if (record === undefined)
      throw new LoopxError(
        'turn_journal_invalid',
        `the journal of turn ${this.journal.turn_key} has host_execute but no typed_result`,
        { turn_key: this.journal.turn_key },
      );
    return record.result;
  }

  private executor(): { executor: AgentExecutor; config: ExecutorConfig } {
    const config = this.turnGoal.executorConfig;
    if (config === null)
      throw new LoopxError(
        'executor_missing',
        this.turnGoal.executorProblem ?? `agent ${this.journal.agent_id} has no executor`,
        { agent_id: this.journal.agent_id },
      );
    const factory = this.options.executorFactory;
    const executor =
      factory !== undefined
        ? factory(config, this.journal.agent_id)
        : createAgentExecutor(
            config,
            this.options.demoAgentArgv === undefined ? {} : { demoAgentArgv: this.options.demoAgentArgv },
          );
    return { executor, config };
  }

  /** Runs the agent; returns true when the turn ended here (failure or cancel). */
  private async hostExecute(): Promise<boolean> {
    this.checkCancelled();
    const request = this.journal.plan.host_request;
    if (request === null)
      throw new LoopxError('turn_journal_invalid', `turn ${this.journal.turn_key} has no host request in its plan`, {
        turn_key: this.journal.turn_key,
      });
    let outcome: ExecutorOutcome;
    try {
      const { executor, config } = this.executor();
      outcome = await executor.run(request, {
        signal: this.options.signal ?? new AbortController().signal,
        timeoutMs: executorTimeoutMs(config),
        cwd: this.turnGoal.projectRoot,
        env: this.env,
      });
    } catch (error) {
      await this.fail('host_failure', 'host_execute', failureOf('host_failure', error), true);
      return true;
    }
    this.effects.host_invoked = true;
    this.checkCancelled();
    if (!outcome.ok) {
      await this.fail(
        'host_failure',
        'host_execute',
        {
          kind: 'host_failure',
          reason: outcome.reason,
          message: outcome.message,
          output_excerpt: [
            outcome.output_excerpt,
            outcome.stderr_excerpt === '' ? '' : `[stderr]\n${outcome.stderr_excerpt}`,
          ]
            .filter((p) => p !== '')
            .join('\n'),
          problems: outcome.problems,
        },
        true,
        outcome,
      );
      return true;
    }
    const check = checkHostResult(outcome.result, {
      turn_key: this.journal.turn_key,
      selected_todo: this.journal.todo_id === null ? null : { todo_id: this.journal.todo_id },
    });
    if (!check.ok) {
      await this.fail(
        'host_failure',
        'host_execute',
        {
          kind: 'host_failure',
          reason: check.reason,
          message: `the result breaks the contract: ${check.problems.slice(0, 3).join('; ')}`,
          output_excerpt: outcome.output_excerpt,
          problems: check.problems,
        },
        true,
        outcome,
      );
      return true;
    }
    await this.completePhase(
      'host_execute',
      {
        executor: outcome.executor,
        exit_code: outcome.exit_code,
        duration_ms: outcome.duration_ms,
        usage: outcome.usage,
        session_id: outcome.session_id,
        output_excerpt: outcome.output_excerpt,
        stderr_excerpt: outcome.stderr_excerpt,
        result: check.result,
      },
      `${outcome.executor} answered ${check.result.result_kind} in ${Math.round(outcome.duration_ms)} ms`,
    );
    if (outcome.session_id !== null) await this.bindSession(outcome.session_id);
    return false;
  }

  private async bindSession(sessionId: string): Promise<void> {
    const file = sessionBindingPath(this.turnGoal.goal, this.journal.agent_id, this.journal.todo_id);
    await mkdirInside(this.turnGoal.goal.runtimeRoot, path.dirname(file));
    await writeJsonAtomic(file, {
      schema_version: SESSION_BINDING_SCHEMA,
      goal_id: this.journal.goal_id,
      agent_id: this.journal.agent_id,
      todo_id: this.journal.todo_id,
      session_id: sessionId,
      updated_at: nowText(this.options),
    });
  }

  /** A stop result (wait, a question for a person): release the slot, turn a question into a gate, never spend. */
  private async stop(result: HostResult): Promise<void> {
    await this.release();
    if (result.result_kind === 'user_action_required') {
      const parked = await applyStopWriteback(this.ctx, result);
      if (parked.written) this.effects.state_written = true;
      const question = result.todo !== undefined && 'question' in result.todo ? result.todo.question : result.summary;
      const at = await recordTurnNote(this.ctx, {
        classification: 'user_action_required',
        attempt: this.journal.attempts,
        recommendedAction:
          parked.value.gate_todo_id === null
            ? result.next_action
            : `resolve user gate ${parked.value.gate_todo_id}, then run the next turn`,
        healthCheck: `the agent asked a person: ${question}`,
        details: { summary: result.summary, gate_todo_id: parked.value.gate_todo_id },
      });
      this.journal.stop_writeback = {
        gate_todo_id: parked.value.gate_todo_id,
        todo_transition: parked.value.transition,
        run_generated_at: at,
      };
    }
    this.journal.status = 'stopped';
    this.journal.result_kind = result.result_kind;
    this.journal.summary = result.summary;
    this.journal.receipt = this.receipt();
    await this.save();
  }

  private async release(): Promise<void> {
    if (this.journal.reservation.status !== 'reserved') return;
    await voidReservation(this.turnGoal.goal, this.options.clock, {
      effectId: this.journal.settlement_identity.effect_id,
      lock: { agentId: this.journal.agent_id },
    });
    this.journal.reservation = { ...this.journal.reservation, status: 'voided', expires_at: null };
  }

  /**
   * Ends the turn as failed (never spent). Failures before the work is accepted release the slot;
   * writeback and spend failures keep it, so a retry can still account for the validated work.
   */
  private async fail(
    kind: string,
    phase: string,
    failure: TurnFailure,
    releaseSlot: boolean,
    outcome?: ExecutorOutcome,
  ): Promise<void> {
    if (releaseSlot) await this.release();
    this.journal.status = 'failed';
    this.journal.result_kind = kind;
    this.journal.failed_phase = phase;
    this.journal.failure = failure;
    this.journal.summary = failure.message;
    this.journal.receipt = this.receipt();
    const retry = `loopx turn run-once --goal-id ${this.journal.goal_id} --agent-id ${this.journal.agent_id} --resume-turn-key ${this.journal.turn_key} --retry-failed-turn --execute`;
    await recordTurnNote(this.ctx, {
      classification: kind,
      attempt: this.journal.attempts,
      recommendedAction: `fix the cause, then retry: ${retry}`,
      healthCheck: `turn failed at ${phase} (${failure.reason}): ${failure.message}`,
      details: {
        failed_phase: phase,
        failure_reason: failure.reason,
        output_excerpt: failure.output_excerpt,
        problems: failure.problems.slice(0, 10),
        ...(outcome ? { exit_code: outcome.exit_code, duration_ms: outcome.duration_ms } : {}),
      },
    });
    await this.save();
  }

  private receipt(): TurnReceipt {
    const j = this.journal;
    const resultKind = j.result_kind ?? 'wait';
    const check = checkTurnReceipt(
      {
        turn_key: j.turn_key,
        result_kind: resultKind,
        completed_phases: j.completed_phases,
        failed_phase: j.failed_phase,
      },
      j.turn_key,
    );
    return {
      turn_key: j.turn_key,
      result_kind: resultKind,
      completed_phases: [...j.completed_phases],
      failed_phase: j.failed_phase,
      status: check.status,
      ok: check.ok,
      problems: check.problems,
    };
  }

  /** Cancelled between phases: before the agent's work is accepted the slot is released; the journal stays resumable. */
  private async cancelled(): Promise<TurnRunResult> {
    if (!this.done('host_execute')) await this.release();
    await this.save();
    return resultFromJournal(this.turnGoal, this.journal, {
      status: 'cancelled',
      replayed: false,
      resumed: this.resumed,
      effects: this.effects,
      message: `cancelled after ${this.journal.completed_phases.at(-1) ?? 'admission'}; nothing is half-written. Resume with --resume-turn-key ${this.journal.turn_key}`,
    });
  }

  private async finish(): Promise<TurnRunResult> {
    const result = await resultFromJournal(this.turnGoal, this.journal, {
      replayed: false,
      resumed: this.resumed,
      effects: this.effects,
    });
    emitTo(this.options.onEvent, {
      type: 'turn_ended',
      goal_id: this.journal.goal_id,
      agent_id: this.journal.agent_id,
      at: nowText(this.options),
      turn_key: this.journal.turn_key,
      status: result.status,
      result_kind: result.result_kind,
      summary: result.message,
      spent: this.done('quota_spend'),
    });
    return result;
  }
}

function failureOf(kind: string, error: unknown): TurnFailure {
  return {
    kind,
    reason: isLoopxError(error) ? error.code : 'internal_error',
    message: errorMessage(error),
    output_excerpt: '',
    problems: [],
  };
}
