import * as path from 'node:path';
import { z } from 'zod';
import { errorMessage, isLoopxError, LoopxError, withReadOnlyHint } from '../errors';
import { createAgentExecutor, executorTimeoutMs, type ExecutorConfig } from '../executors/config';
import type { AgentExecutor, ExecutorOutcome } from '../executors/types';
import { writeScopeForGoal } from '../registry/agentIds';
import { settleReservation } from '../quota/settlement';
import { voidReservation } from '../quota/voids';
import { formatLocalIsoSeconds } from '../runtime/time';
import {
  checkHostResult,
  checkTurnReceipt,
  isMaterialResultKind,
  TURN_PHASES,
  type HostRequest,
  type HostResult,
  type TurnPhase,
} from '../protocol/contract';
import { reserveTurnSlot } from './admission';
import { sessionBindingPath, type TurnSetup } from './context';
import { crashCheckpoint } from './crashHook';
import { turnFileIo } from './files';
import { emitTo } from './events';
import { ValidationReceiptSchema, writeJournal, type TurnFailure, type TurnJournal, type TurnReceipt } from './journal';
import { SCHEDULER_OWNER, SESSION_BINDING_SCHEMA, type Effects } from './plan';
import { journalUsage, NO_EFFECTS, turnResult, turnUsage, type TurnRunResult } from './result';
import type { RunOnceOptions } from './runOnce';
import {
  applyStopWriteback,
  applyTodoTransition,
  recordMaterialRun,
  recordTurnNote,
  validateTurn,
  validationPassed,
  type WritebackContext,
} from './writeback';
import { recordStepEvent, type StepEventInput } from '../evidence/heartbeatChain';
import { recordTurnBase, recordTurnHead } from '../snapshots/gitSnapshot';
import { commitLaneTurn, prepareLaneTurn, resetLaneTurn, type LaneRef, type LaneRunField } from '../lanes/lane';
import { ensureMergeGate } from '../lanes/gate';
import { laneGateContext, turnLaneOf } from './lanes';

/** Completion-fence refusals: the todo's task lease is no longer this turn's, so no retry of the turn can write back. */
const LEASE_REFUSALS = [
  'lease_cas_mismatch',
  'lease_not_active',
  'lease_fence_required',
  'handoff_mode_requires_lease',
  'todo_lease_conflict',
  'version_mismatch',
] as const;

/**
 * One admitted turn as a journaled transaction. Its phases are the table `PHASES` below: each
 * phase's name, what it does, and how a resumed turn treats it. Every phase is journaled when it
 * completes; a crash anywhere resumes from the journal, and every side effect is idempotent per
 * turn, so a resumed turn never spends twice. Stop results (wait, a question for the user) and
 * failures release the reservation and never spend.
 */

/** Whether the transaction goes on to the next phase or the turn ended in this one. */
type Next = 'continue' | 'ended';

interface PhaseStep {
  readonly name: TurnPhase;
  /** What the phase does. */
  readonly does: string;
  /** How a resumed turn treats it. */
  readonly onResume: string;
  /** Skip the step when the journal lists the phase as completed. */
  readonly skipWhenDone: boolean;
  readonly run: (tx: TurnTransaction) => Promise<Next>;
}

/** The phases after admission, in order (admission itself is `TurnTransaction.admit`). */
export const PHASES: readonly PhaseStep[] = [
  {
    name: 'host_execute',
    does: "the agent's executor runs one bounded turn; its answer is checked against the result contract",
    onResume: 'skipped when journaled: the recorded answer is used and the agent does not run again',
    skipWhenDone: true,
    run: (tx) => tx.hostExecute(),
  },
  {
    name: 'typed_result',
    does: 'the accepted answer is journaled; a stop result (wait, a question for a person) ends the turn unspent',
    onResume: 'the journaled answer is read again, so a stop that crashed before it was saved is finished',
    skipWhenDone: false,
    run: (tx) => tx.typedResult(),
  },
  {
    name: 'validation',
    does: "the goal's own validator runs (material results only)",
    onResume: 'skipped when journaled; otherwise the validator runs again (it has no side effect to repeat)',
    skipWhenDone: true,
    run: (tx) => tx.validation(),
  },
  {
    name: 'durable_writeback',
    does: 'todo transition, Next Action and one accountable run record',
    onResume: 'skipped when journaled; otherwise written again, idempotently per turn (existing records are found)',
    skipWhenDone: true,
    run: (tx) => tx.durableWriteback(),
  },
  {
    name: 'quota_spend',
    does: 'exactly one spend for the settlement identity goal:agent:todo:turn',
    onResume: 'skipped when journaled; otherwise settled again, which finds an existing spend instead of adding one',
    skipWhenDone: true,
    run: (tx) => tx.quotaSpend(),
  },
  {
    name: 'scheduler_apply',
    does: 'LoopX is the scheduler (outer controller): apply and acknowledge the handoff, commit the turn',
    onResume: 'completes whichever of scheduler_apply and scheduler_ack the journal does not list yet',
    skipWhenDone: false,
    run: (tx) => tx.schedulerHandoff(),
  },
];

function nowText(options: RunOnceOptions): string {
  return formatLocalIsoSeconds(options.clock.now());
}

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

export class TurnTransaction {
  private readonly effects: Effects = { ...NO_EFFECTS };
  private readonly ctx: WritebackContext;
  private readonly dir: string;

  constructor(
    private readonly turnGoal: TurnSetup,
    private readonly options: RunOnceOptions,
    private journal: TurnJournal,
    private readonly resumed: boolean,
    /** The state file's text the new turn was planned from (null: unknown, the turn is resumed). */
    stateText: string | null,
  ) {
    this.dir = turnGoal.goal.runtimeDir;
    this.ctx = {
      turnGoal,
      clock: options.clock,
      identity: journal.settlement_identity,
      turnKey: journal.turn_key,
      turnInstanceId: journal.turn_instance_id,
      todoId: journal.todo_id,
      mayHaveRecords: resumed || journal.attempts > 1,
      stateText,
    };
  }

  private get env(): NodeJS.ProcessEnv {
    return this.options.env;
  }

  done(phase: TurnPhase): boolean {
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

  /**
   * Appends the turn's rollout event (docs/turns.md#the-rollout-event-log) once per kind and
   * settlement effect id, so `loopx evidence-log` shows editor-run turns beside heartbeat ones. A
   * resumed turn finds its event and appends none. The journal stays the authority for the turn:
   * an event that cannot be written (a full disk, a log locked too long) does not fail a turn whose
   * effects are already durable; the next phase's event (or a resume) writes what it can.
   */
  private async rolloutEvent(
    kind: StepEventInput['kind'],
    status: string,
    classification: string | null,
    summary: string,
    details: StepEventInput['details'] = {},
  ): Promise<void> {
    const identity = this.journal.settlement_identity;
    try {
      await recordStepEvent(
        {
          goalId: this.journal.goal_id,
          goalDir: this.dir,
          agentId: this.journal.agent_id,
          turnInstanceId: this.journal.turn_instance_id,
        },
        {
          todoId: this.journal.todo_id,
          replanObligationId: identity.replan_obligation_id ?? null,
          receipt: null,
          effectId: identity.effect_id,
        },
        {
          kind,
          clock: this.options.clock,
          status,
          classification,
          summary,
          details: { ...details, turn_key: this.journal.turn_key, driver: 'loopx_turn' },
          lock: { clock: this.options.clock, env: this.env, operation: `turn ${kind}` },
        },
      );
    } catch {
      // See above: the audit log never fails a durable turn.
    }
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
      if (this.journal.status === 'in_progress') await this.phases();
    } catch (error) {
      if (!(error instanceof Cancelled)) throw error;
      return this.cancelled();
    }
    return this.finish();
  }

  private resetForRetry(): void {
    // Claims the working tree did not bear out are the agent's to redo: it runs again.
    // A lane's failed turn was reset to its commit before it (docs/lanes.md), so its agent runs again.
    const from =
      this.journal.failure?.reason === CLAIMED_CHANGES_UNVERIFIED || this.journal.phases.host_execute?.['lane'] != null
        ? 'host_execute'
        : (RETRY_FROM[this.journal.failed_phase ?? ''] ?? 'host_execute');
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
    const reserved = await reserveTurnSlot(this.turnGoal, this.journal, this.options.clock);
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
    // The estimate stays in the journal: the documented budget bound is "spent ≤ limit + overruns of estimates".
    const estimate = reserved.reservation?.estimate ?? this.journal.reservation.estimate;
    this.journal.reservation = {
      status: reserved.admitted ? 'reserved' : reserved.status === 'already_settled' ? 'settled' : 'refused',
      expires_at: reserved.reservation?.expires_at ?? null,
      ...(estimate !== undefined ? { estimate } : {}),
    };
    this.event('admission', reserved.reason);
    const decision = this.journal.plan.decision;
    await this.rolloutEvent(
      'quota_should_run',
      decision.state,
      decision.effective_action,
      `turn admitted: ${decision.effective_action} bound to ${this.journal.todo_id ?? 'no todo'}`,
      {
        should_run: decision.should_run,
        effective_action: decision.effective_action,
        todo_id: this.journal.todo_id ?? undefined,
      },
    );
    crashCheckpoint(this.env, 'admission');
  }

  /** Runs the phases of `PHASES` the journal has not completed, until one ends the turn. */
  private async phases(): Promise<void> {
    for (const step of PHASES) {
      if (step.skipWhenDone && this.done(step.name)) continue;
      if ((await step.run(this)) === 'ended') return;
    }
  }

  async typedResult(): Promise<Next> {
    if (!this.done('typed_result')) {
      const accepted = this.hostRecordResult();
      await this.completePhase('typed_result', { result: accepted }, `${accepted.result_kind}: ${accepted.summary}`);
    }
    const result = this.hostResult();
    if (!isMaterialResultKind(result.result_kind)) {
      await this.stop(result);
      return 'ended';
    }
    return 'continue';
  }

  async validation(): Promise<Next> {
    const result = this.hostResult();
    this.checkCancelled();
    // The agent's claims first: a change it says it made that the working tree does not show (or
    // its CLI refused) is never validated, whatever the validator says.
    const claimed = ClaimedChangesRecord.safeParse(this.journal.phases.host_execute?.['claimed_changes']);
    if (claimed.success && claimed.data.problems.length > 0) {
      await this.fail(
        'validation_failed',
        'validation',
        {
          kind: 'validation_failed',
          reason: CLAIMED_CHANGES_UNVERIFIED,
          message: `the agent's claimed changes do not match the working tree: ${claimed.data.problems.slice(0, 3).join('; ')}`,
          output_excerpt: '',
          problems: claimed.data.problems,
        },
        true,
      );
      return 'ended';
    }
    const validation = await validateTurn({
      argv: this.turnGoal.validationCommand,
      cwd: this.laneOf()?.worktree ?? this.turnGoal.projectRoot,
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
      return 'ended';
    }
    await this.completePhase('validation', validation, validation.reason);
    return 'continue';
  }

  async durableWriteback(): Promise<Next> {
    const result = this.hostResult();
    this.checkCancelled();
    try {
      await this.takeHeadSnapshot();
      const lane = await this.commitLane(result.summary);
      const transition = await applyTodoTransition(this.ctx, result);
      const validation = ValidationReceiptSchema.parse(this.journal.phases.validation);
      const run = await recordMaterialRun(this.ctx, {
        result,
        validation,
        usage: journalUsage(this.journal),
        executor: this.journal.phases.host_execute?.executor ?? '',
        transition: transition.value,
        lane,
      });
      if (transition.written || run.written) this.effects.state_written = true;
      if (lane?.commit != null) await this.openMergeGate();
      crashCheckpoint(this.env, 'durable_writeback:effect');
      await this.rolloutEvent(
        'refresh_state',
        'recorded',
        result.result_kind,
        `writeback of turn ${this.journal.turn_instance_id}: ${result.result_kind}`,
        { todo_transition: String(run.record.todo_transition) },
      );
      await this.completePhase(
        'durable_writeback',
        run.record,
        `recorded ${run.record.run_classification} (${run.record.todo_transition}) at ${run.record.run_generated_at}`,
      );
    } catch (error) {
      if (error instanceof Cancelled) throw error;
      // A writeback the todo's task lease refused (taken over, expired, released) can never be retried
      // by this turn: its slot is released now instead of being held until the reservation expires.
      const leaseRefused = isLoopxError(error) && (LEASE_REFUSALS as readonly string[]).includes(error.code);
      await this.fail('writeback_failed', 'durable_writeback', failureOf('writeback_failed', error), leaseRefused);
      return 'ended';
    }
    return 'continue';
  }

  async quotaSpend(): Promise<Next> {
    const result = this.hostResult();
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
        return 'ended';
      }
      if (settled.appended) this.effects.quota_spent = true;
      crashCheckpoint(this.env, 'quota_spend:effect');
      await this.rolloutEvent(
        'quota_spend',
        'spent',
        'quota_slot_spent',
        `1 slot settled for turn ${this.journal.turn_instance_id}`,
        { source: 'heartbeat' },
      );
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
      return 'ended';
    }
    return 'continue';
  }

  async schedulerHandoff(): Promise<Next> {
    const result = this.hostResult();
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
    return 'ended';
  }

  private laneCache: LaneRef | null | undefined;

  /** The agent's lane when it works in a worktree of its own (docs/lanes.md), else null. */
  private laneOf(): LaneRef | null {
    if (this.laneCache === undefined) this.laneCache = turnLaneOf(this.turnGoal);
    return this.laneCache;
  }

  /**
   * Where the turn's review snapshots are taken: the lane's worktree for a lane turn (the agent works
   * there, the main checkout stays as it was), else the project. The snapshot refs and objects live in
   * the repository the worktrees share, so the review queue reads them from the main checkout.
   */
  private snapshotRoot(): string {
    try {
      return this.laneOf()?.worktree ?? this.turnGoal.projectRoot;
    } catch {
      return this.turnGoal.projectRoot; // an invalid isolation setting: the turn fails before the agent runs
    }
  }

  /** Commits the validated turn on the lane's branch (idempotent per turn: a resumed turn finds its commit). */
  private async commitLane(summary: string): Promise<LaneRunField | null> {
    const lane = this.laneOf();
    if (lane === null) return null;
    const committed = await commitLaneTurn(
      lane,
      { effectId: this.journal.settlement_identity.effect_id, summary },
      this.env,
    );
    crashCheckpoint(this.env, 'lane_commit');
    return { branch: lane.branch, worktree: lane.worktree, commit: committed.commit };
  }

  /** The lane has a validated commit main lacks: its merge gate (idempotent). */
  private async openMergeGate(): Promise<void> {
    const lane = this.laneOf();
    if (lane === null) return;
    await ensureMergeGate(lane, {
      statePath: this.turnGoal.statePath,
      context: laneGateContext(this.turnGoal, nowText(this.options)),
      lock: { agentId: this.journal.agent_id },
    });
    // The state file changed under the writeback's cached text: the next edit reads it afresh.
    this.ctx.stateText = null;
  }

  /** A failed or voided turn: the lane's worktree goes back to the commit before the turn. */
  private async resetLane(): Promise<void> {
    let lane: LaneRef | null;
    try {
      lane = this.laneOf();
    } catch {
      return; // an invalid isolation setting: the turn never ran in a lane
    }
    if (lane === null) return;
    await resetLaneTurn(lane, this.journal.settlement_identity.effect_id, this.env);
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
        ? factory(config, this.journal.agent_id, {
            goalId: this.journal.goal_id,
            projectRoot: this.turnGoal.projectRoot,
            writeScope: writeScopeForGoal(this.turnGoal.goal.rawEntry),
          })
        : createAgentExecutor(config);
    return { executor, config };
  }

  /** Runs the agent; ends the turn on a failure. */
  async hostExecute(): Promise<Next> {
    this.checkCancelled();
    const request = this.journal.plan.host_request;
    if (request === null)
      throw new LoopxError('turn_journal_invalid', `turn ${this.journal.turn_key} has no host request in its plan`, {
        turn_key: this.journal.turn_key,
      });
    // The turn's base (docs/review.md): kept from its first start, so a retry's diff still shows the whole turn.
    // A lane turn's base is taken in its worktree once the lane is clean at its branch's commit (below).
    if (this.snapshotRoot() === this.turnGoal.projectRoot)
      await recordTurnBase(this.turnGoal.projectRoot, this.journal.goal_id, this.journal.turn_instance_id);
    let outcome: ExecutorOutcome;
    let laneBase: string | null = null;
    try {
      const { executor, config } = this.executor();
      const lane = this.laneOf();
      // A lane starts every run of its agent clean at its branch's commit (what a killed turn left is removed).
      if (lane !== null) {
        laneBase = await prepareLaneTurn(lane, this.env);
        await recordTurnBase(lane.worktree, this.journal.goal_id, this.journal.turn_instance_id);
      }
      outcome = await executor.run(lane === null ? request : { ...request, lane: laneBrief(lane) }, {
        signal: this.options.signal ?? new AbortController().signal,
        timeoutMs: executorTimeoutMs(config),
        cwd: lane?.worktree ?? this.turnGoal.projectRoot,
        env: this.env,
        // The folders the agent's own `loopx` calls write (docs/executors.md#codex-and-its-sandbox).
        writableRoots: [path.dirname(this.turnGoal.statePath), this.turnGoal.goal.runtimeDir],
        ...(lane === null
          ? {}
          : {
              lane: {
                branch: lane.branch,
                worktree: lane.worktree,
                registryPath: lane.registryPath,
                projectRoot: lane.projectRoot,
              },
            }),
      });
    } catch (error) {
      await this.fail('host_failure', 'host_execute', failureOf('host_failure', error), true);
      return 'ended';
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
      return 'ended';
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
      return 'ended';
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
        ...(outcome.claimed_changes !== undefined ? { claimed_changes: outcome.claimed_changes } : {}),
        ...(laneBase !== null ? { lane: { branch: this.laneOf()?.branch, base_commit: laneBase } } : {}),
      },
      `${outcome.executor} answered ${check.result.result_kind} in ${Math.round(outcome.duration_ms)} ms`,
    );
    if (outcome.session_id !== null) await this.bindSession(outcome.session_id);
    return 'continue';
  }

  private async bindSession(sessionId: string): Promise<void> {
    const file = sessionBindingPath(this.turnGoal.goal, this.journal.agent_id, this.journal.todo_id);
    const goalDir = this.turnGoal.goal.runtimeDir;
    await turnFileIo(goalDir, { kind: 'mkdir', dir: path.dirname(file) });
    await turnFileIo(goalDir, {
      kind: 'writeJson',
      file,
      value: {
        schema_version: SESSION_BINDING_SCHEMA,
        goal_id: this.journal.goal_id,
        agent_id: this.journal.agent_id,
        todo_id: this.journal.todo_id,
        session_id: sessionId,
        updated_at: nowText(this.options),
      },
    });
  }

  /** The turn's head snapshot, paired with its base, for the run record (none without git or a base). */
  private async takeHeadSnapshot(): Promise<void> {
    if (this.ctx.snapshot !== undefined) return;
    this.ctx.snapshot = await recordTurnHead(this.snapshotRoot(), this.journal.goal_id, this.journal.turn_instance_id, [
      this.turnGoal.statePath,
    ]);
  }

  /** A stop result (wait, a question for a person): release the slot, turn a question into a gate, never spend. */
  private async stop(result: HostResult): Promise<void> {
    await this.release();
    await this.resetLane();
    if (result.result_kind === 'user_action_required') {
      await this.takeHeadSnapshot();
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
   * writeback and spend failures keep it, so a retry can still account for the validated work (except a
   * writeback the task lease refused, which no retry of this turn can complete).
   */
  private async fail(
    kind: string,
    phase: string,
    failure: TurnFailure,
    releaseSlot: boolean,
    outcome?: ExecutorOutcome,
  ): Promise<void> {
    if (releaseSlot) {
      await this.release();
      await this.resetLane();
    }
    // What the agent spent before it failed stays on the record and counts against the budgets.
    const spent =
      outcome === undefined
        ? undefined
        : {
            usage: outcome.usage,
            session_id: outcome.session_id,
            exit_code: outcome.exit_code,
            duration_ms: outcome.duration_ms,
          };
    this.journal.status = 'failed';
    this.journal.result_kind = kind;
    this.journal.failed_phase = phase;
    this.journal.failure = { ...failure, ...spent };
    this.journal.summary = failure.message;
    this.journal.receipt = this.receipt();
    if (this.done('typed_result') || outcome !== undefined) await this.takeHeadSnapshot();
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
        ...(outcome
          ? {
              exit_code: outcome.exit_code,
              duration_ms: outcome.duration_ms,
              session_id: outcome.session_id,
              executor: outcome.executor,
            }
          : {}),
      },
      ...(outcome !== undefined ? { usage: turnUsage(outcome.usage, outcome.duration_ms) } : {}),
    });
    if (outcome?.session_id != null) await this.bindSession(outcome.session_id);
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
    if (!this.done('host_execute')) {
      await this.release();
      await this.resetLane();
    }
    await this.save();
    return turnResult(
      { journal: this.journal, goalRuntimeDir: this.dir },
      {
        status: 'cancelled',
        resumed: this.resumed,
        effects: this.effects,
        message: `cancelled after ${this.journal.completed_phases.at(-1) ?? 'admission'}; nothing is half-written and the turn can be resumed`,
      },
    );
  }

  private finish(): TurnRunResult {
    const result = turnResult(
      { journal: this.journal, goalRuntimeDir: this.dir },
      { resumed: this.resumed, effects: this.effects },
    );
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

function laneBrief(lane: LaneRef): NonNullable<HostRequest['lane']> {
  return { branch: lane.branch, worktree: lane.worktree, main_checkout: lane.projectRoot, registry: lane.registryPath };
}

/** The failure reason of a turn whose claimed changes the working tree does not show. */
export const CLAIMED_CHANGES_UNVERIFIED = 'claimed_changes_unverified';
const ClaimedChangesRecord = z.looseObject({ problems: z.array(z.string()) });

function failureOf(kind: string, thrown: unknown): TurnFailure {
  const error = withReadOnlyHint(thrown);
  return {
    kind,
    reason: isLoopxError(error) ? error.code : 'internal_error',
    message: errorMessage(error),
    output_excerpt: '',
    problems: [],
  };
}
