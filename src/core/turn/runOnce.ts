import { LoopxError } from '../errors';
import type { ExecutorConfig } from '../executors/config';
import type { AgentExecutor } from '../executors/types';
import { admitNewTurn, noSlotMessage, prepareTurnsDir, requireJournal, withTurnSlot } from './admission';
import { loadTurnGoal, planGoalTurn, type TurnSetup, type TurnSetupOptions } from './context';
import type { TurnEventSink } from './events';
import { journalPath, listActiveJournals, readJournal, type RecoveryKind, type TurnJournal } from './journal';
import { turnFileIo } from './files';
import { turnResult, type TurnRunResult } from './result';
import { TurnTransaction } from './transaction';

export {
  NEXT_STEP_KINDS,
  NextStepSchema,
  notRunMessage,
  TURN_RUN_SCHEMA_VERSION,
  TURN_RUN_STATUSES,
  TurnRunResultSchema,
  type NextStep,
  type NextStepKind,
  type TurnRunResult,
  type TurnRunStatus,
} from './result';

/**
 * `loopx turn run-once`: one LoopX-driven turn. Admission (admission.ts) sweeps the goal's
 * leftovers, takes a turn slot, plans a new turn or picks up an unfinished one and reserves its
 * quota slot; the transaction (transaction.ts) runs the phases from the journal; every answer is
 * built by `turnResult` (result.ts).
 *
 * Deliberate fix: the original's run-once spent with `source=adapter` and no turn id, outside the
 * receipt chain; here the spend carries the turn id and its settlement identity.
 */

/** What an executor factory learns of the turn it builds an executor for. */
export interface ExecutorTurnContext {
  goalId: string;
  /** The project root the agent works in. */
  projectRoot: string;
  /** The goal's `coordination.write_scope` globs, relative to the project root ([] when none is set). */
  writeScope: string[];
}

export type ExecutorFactory = (config: ExecutorConfig, agentId: string, turn: ExecutorTurnContext) => AgentExecutor;

export interface RunOnceOptions extends TurnSetupOptions {
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
  /** How executors are built; default `createAgentExecutor` (the demo agent as the composition root installed it). */
  executorFactory?: ExecutorFactory | undefined;
}

function isFinished(journal: TurnJournal): boolean {
  return journal.status !== 'in_progress';
}

function retrying(journal: TurnJournal, options: RunOnceOptions): boolean {
  return journal.status === 'failed' && options.retryFailedTurn === true;
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
  const goalRuntimeDir = turnGoal.goal.runtimeDir;

  if (options.resumeTurnKey !== undefined) {
    const journal = await requireJournal(turnGoal, options.resumeTurnKey);
    if (options.execute !== true || (isFinished(journal) && !retrying(journal, options))) {
      return turnResult(
        { journal, goalRuntimeDir },
        { replayed: isFinished(journal), ...(options.execute !== true ? { status: 'preview' as const } : {}) },
      );
    }
  }
  if (options.execute !== true) {
    const { plan } = await planGoalTurn(turnGoal, {
      clock: options.clock,
      turnInstanceId: options.turnInstanceId,
      availableCapabilities: options.availableCapabilities,
    });
    return turnResult({ plan }, { status: 'preview' });
  }

  await prepareTurnsDir(turnGoal, options.clock);
  const inSlot = await withTurnSlot(turnGoal, options.clock, () => turnInSlot(turnGoal, options));
  return (
    inSlot ??
    turnResult(
      { goalId: turnGoal.goal.goalId, agentId: turnGoal.agentId },
      { status: 'busy', message: noSlotMessage(turnGoal) },
    )
  );
}

/** Holding a turn slot: resume this agent's unfinished turn (or the one asked for), else admit a new one, then run it. */
async function turnInSlot(resolved: TurnSetup, options: RunOnceOptions): Promise<TurnRunResult> {
  // A turn in flight keeps the goal it started with; a new one runs with the goal it was admitted on.
  let turnGoal = resolved;
  const goalRuntimeDir = turnGoal.goal.runtimeDir;
  let journal: TurnJournal | null = null;
  let resumed = false;
  let stateText: string | null = null;
  if (options.resumeTurnKey !== undefined) {
    journal = await requireJournal(turnGoal, options.resumeTurnKey);
    resumed = true;
    if (isFinished(journal) && !retrying(journal, options))
      return turnResult({ journal, goalRuntimeDir }, { replayed: true });
  } else {
    // An unfinished turn of this agent (a crash, a cancel) is finished before a new one starts.
    journal = (await listActiveJournals(goalRuntimeDir)).find((j) => j.agent_id === turnGoal.agentId) ?? null;
    resumed = journal !== null;
  }
  if (journal === null) {
    const admitted = await admitNewTurn(turnGoal, options);
    if ('notRun' in admitted) return turnResult({ plan: admitted.notRun }, { status: 'not_run' });
    journal = admitted.journal;
    stateText = admitted.stateText;
    turnGoal = admitted.turnGoal;
  }
  const file = journalPath(goalRuntimeDir, journal.turn_key);
  const admittedJournal = journal;
  const held = await turnFileIo(goalRuntimeDir, {
    kind: 'tryLock',
    file,
    lock: { operation: 'turn_run', agentId: turnGoal.agentId, clock: options.clock },
    work: async () => {
      const current = (await readJournal(file)) ?? admittedJournal;
      return new TurnTransaction(turnGoal, options, current, resumed, stateText).run();
    },
  });
  return (
    held?.value ??
    turnResult(
      { goalId: turnGoal.goal.goalId, agentId: turnGoal.agentId },
      { status: 'busy', message: `turn ${journal.turn_key} is being run by another process; nothing was done` },
    )
  );
}
