import { withTurnLease } from './leases';
import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { DEFAULT_RESERVATION_TTL_MINUTES } from '../quota/reservations';
import { profileEstimate, reserveTurn } from '../quota/admission';
import { sweepGoalLeftovers } from '../runtime/sweep';
import { formatLocalIsoSeconds } from '../runtime/time';
import {
  executorTimeoutMinutes,
  inFlightTodoIds,
  loadTurnGoal,
  loadTurnSnapshot,
  planLoadedTurn,
  turnConcurrencyLimit,
  type TurnSetup,
} from './context';
import { turnFileIo } from './files';
import { journalPath, readJournal, TURN_JOURNAL_SCHEMA, turnsDir, writeJournal, type TurnJournal } from './journal';
import type { TurnPlan } from './plan';

/**
 * Admission of a turn: the goal's leftovers are swept, the turn takes its agent's lock and one of
 * the goal's turn lanes, a new turn is planned under the goal's admission lock (so two agents never
 * take the same todo), and the turn's quota slot is reserved together with its budget estimates.
 */

/** Makes the goal's turns folder and sweeps what a killed run left (a dead holder's lock, temp files, an unindexed spend). */
export async function prepareTurnsDir(turnGoal: TurnSetup, clock: Clock): Promise<void> {
  const { goal } = turnGoal;
  await turnFileIo(goal.runtimeDir, { kind: 'mkdir', dir: turnsDir(goal.runtimeDir) });
  // The state file's leftovers too: a loop killed mid-writeback leaves its lock there.
  await sweepGoalLeftovers(goal.runtimeRoot, goal.goalId, { clock, files: [turnGoal.statePath] });
}

/**
 * Runs `fn` holding this agent's turn lock and one of the goal's turn lanes (the spawn policy's
 * `maxConcurrentTurns`), or returns null at once when the agent is busy or every lane is taken.
 */
export async function withTurnSlot<T>(turnGoal: TurnSetup, clock: Clock, fn: () => Promise<T>): Promise<T | null> {
  const dir = turnsDir(turnGoal.goal.runtimeDir);
  const lockOptions = { agentId: turnGoal.agentId, clock };
  const limit = turnConcurrencyLimit(turnGoal.goal);
  const held = await turnFileIo(turnGoal.goal.runtimeDir, {
    kind: 'tryLock',
    file: path.join(dir, `.agent-${turnGoal.agentId}`),
    lock: { ...lockOptions, operation: 'turn_agent' },
    work: async () => {
      for (let lane = 0; lane < limit; lane++) {
        const inLane = await turnFileIo(turnGoal.goal.runtimeDir, {
          kind: 'tryLock',
          file: path.join(dir, `.lane-${lane}`),
          lock: { ...lockOptions, operation: 'turn_lane' },
          work: fn,
        });
        if (inLane !== null) return inLane;
      }
      return null;
    },
  });
  return held?.value?.value ?? null;
}

/** Why no slot was free, for people. */
export function noSlotMessage(turnGoal: TurnSetup): string {
  const limit = turnConcurrencyLimit(turnGoal.goal);
  return `no turn started: ${limit === 1 ? 'another turn of this goal (or of this agent) is running' : `${limit} turns of this goal are already running (or this agent is busy)`}; the goal's spawn policy allows ${limit} at once`;
}

/**
 * Plans a new turn under the goal's admission lock and writes its journal, or answers the plan that
 * runs no turn. The goal's registry entry is read again under the lock (stop flag, quota, budgets,
 * executor): the turn is admitted on the current files, and runs with the goal it was admitted on.
 */
export async function admitNewTurn(
  snapshot: TurnSetup,
  options: { clock: Clock; turnInstanceId?: string | undefined; availableCapabilities?: readonly string[] | undefined },
): Promise<{ journal: TurnJournal; stateText: string | null; turnGoal: TurnSetup } | { notRun: TurnPlan }> {
  return turnFileIo(snapshot.goal.runtimeDir, {
    kind: 'lock',
    file: path.join(turnsDir(snapshot.goal.runtimeDir), '.admission'),
    lock: { operation: 'turn_admission', agentId: snapshot.agentId, clock: options.clock },
    work: async () => {
      // Other agents' turns in flight first, then the files: a turn commits its writeback before its journal, so a
      // todo no journal holds any longer is already written back in the state file read next.
      const inFlight = await inFlightTodoIds(snapshot.goal, snapshot.agentId);
      // The goal as the registry says it now, with its files: one load serves the setup, the decision and the plan.
      const loaded = await loadTurnSnapshot(snapshot, options.clock, true);
      const turnGoal = loadTurnGoal({
        ...snapshot.source,
        goal: loaded.goal,
        registryDocument: loaded.registryDocument,
      });
      const { goal } = turnGoal;
      const { plan, stateText } = await planLoadedTurn(turnGoal, loaded, {
        clock: options.clock,
        turnInstanceId: options.turnInstanceId,
        availableCapabilities: options.availableCapabilities,
        inFlightTodoIds: inFlight,
      });
      if (!plan.would_invoke_host || plan.settlement_identity === null) return { notRun: plan };
      const existing = await readJournal(journalPath(goal.runtimeDir, plan.turn_key));
      if (existing !== null) return { journal: existing, stateText: null, turnGoal };
      const todoId = plan.selected_todo?.todo_id ?? null;
      const settlementIdentity = plan.settlement_identity;
      // hard_lease: the agent takes the todo's lease before the turn exists (refused when another agent holds it).
      return withTurnLease(turnGoal, { todoId, turnKey: plan.turn_key, stateText }, options.clock, async () => {
        const at = formatLocalIsoSeconds(options.clock.now());
        const journal: TurnJournal = {
          schema_version: TURN_JOURNAL_SCHEMA,
          turn_key: plan.turn_key,
          goal_id: goal.goalId,
          agent_id: turnGoal.agentId,
          todo_id: todoId,
          turn_instance_id: plan.turn_instance_id,
          settlement_identity: settlementIdentity,
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
        await writeJournal(goal.runtimeDir, journal);
        return { journal, stateText, turnGoal };
      });
    },
  });
}

/** The journal of `turnKey`, which must belong to the turn goal's agent. */
export async function requireJournal(turnGoal: TurnSetup, turnKey: string): Promise<TurnJournal> {
  const journal = await readJournal(journalPath(turnGoal.goal.runtimeDir, turnKey));
  if (journal === null) {
    throw new LoopxError(
      'turn_journal_not_found',
      `goal '${turnGoal.goal.goalId}' has no journal for turn ${turnKey}; the goal's turn journals list the turns it has`,
      { turn_key: turnKey },
    );
  }
  if (journal.agent_id !== turnGoal.agentId) {
    throw new LoopxError(
      'usage',
      `turn ${turnKey} belongs to agent ${journal.agent_id}, not ${turnGoal.agentId}; resume it as ${journal.agent_id}`,
      { turn_key: turnKey, agent_id: journal.agent_id },
    );
  }
  return journal;
}

/**
 * Reserves the turn's quota slot (`reserveTurn`: the limit can never be exceeded) with its budget
 * estimate, so parallel turns cannot overspend max_cost_usd / max_tokens.
 */
export async function reserveTurnSlot(turnGoal: TurnSetup, journal: TurnJournal, clock: Clock) {
  const config = turnGoal.executorConfig;
  const timeout = config === null ? 0 : executorTimeoutMinutes(config);
  return reserveTurn(turnGoal.goal, clock, {
    identity: journal.settlement_identity,
    // The agent's profile estimate, as `quota should-run` applies it (a command override keeps it).
    estimate: {
      ...profileEstimate(turnGoal.goal, journal.agent_id),
      ...(config?.estimated_cost_usd !== undefined ? { cost_usd: config.estimated_cost_usd } : {}),
      ...(config?.estimated_tokens !== undefined ? { tokens: config.estimated_tokens } : {}),
    },
    estimateMissing: true,
    ttlMinutes: Math.max(DEFAULT_RESERVATION_TTL_MINUTES, timeout + 10),
    lock: { agentId: journal.agent_id },
  });
}
