import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { registeredAgentsForGoal, requireRegisteredAgent } from '../registry/agentIds';
import { maxConcurrentTurns } from '../registry/orchestration';
import type { Clock } from '../clock';
import { isoSeconds } from '../clock';
import { errorMessage, LoopxError } from '../errors';
import { DEFAULT_TIMEOUT_MINUTES, readAgentExecutorConfig, type ExecutorConfig } from '../executors/config';
import { readValidationCommand } from '../registry/validationCommand';
import { decideShouldRun } from '../scheduling/shouldRun';
import type { ShouldRunDecision } from '../scheduling/decisionContract';
import { GoalLoader } from '../goal/loader';
import type { GoalSnapshot } from '../goal/snapshot';
import type { GoalRef } from '../goal/ref';
import { quotaConfigOf } from '../quota/goal';
import type { QuotaStatus } from '../quota/state';
import { resolveRepo } from '../registry/locate';
import { runIndexPath } from '../runtime/layout';
import { RunIndexRow } from '../runtime/runIndex';
import type { BudgetBrief } from '../protocol/contract';
import type { StateFileSnapshot } from '../state/stateFile';
import { listActiveJournals, SESSIONS_DIR } from './journal';
import { newTurnInstanceId, planTurn, sessionBindingName, type TurnPlan } from './plan';
import { SMALL_FILE_BYTES } from '../fs/safeRead';
import { turnFileIo } from './files';

/**
 * Loading what a turn needs from disk: the goal (registry), the agent, its executor config, the
 * validator, the decision, the state file, the runs and the journals of turns in flight.
 */

export interface TurnSetupOptions {
  /** The goal as the caller resolved it (the operation's goal handle): never read again here. */
  goal: GoalRef;
  /** The registry document the goal was resolved from, when the caller has it (the run record reuses it). */
  registryDocument?: Record<string, unknown> | undefined;
  agentId: string;
  clock: Clock;
  /** For `~` in the registry's paths; default the goal reference's. */
  homeDir?: string | undefined;
  runtimeRootOverride?: string | undefined;
  /** Replaces the agent's registry executor by a `command` executor with this argv (`--host-adapter-command-json`). */
  hostAdapterCommand?: readonly string[] | undefined;
  /** Replaces the goal's `validation_command` (`--validation-command-json`). */
  validationCommand?: readonly string[] | undefined;
  availableCapabilities?: readonly string[] | undefined;
}

/**
 * How one agent runs turns of a goal: the goal (its `GoalRef`, as resolved or last reloaded), the
 * agent, where it works, its executor and the validator (or why they are unusable).
 */
export interface TurnSetup {
  goal: GoalRef;
  registryDocument: Record<string, unknown> | undefined;
  agentId: string;
  homeDir: string;
  runtimeRootOverride: string | undefined;
  /** Where agents and validators run: the goal's repo, else the registry's project. */
  projectRoot: string;
  statePath: string;
  executorConfig: ExecutorConfig | null;
  executorProblem: string | null;
  validationCommand: string[] | null;
  validationProblem: string | null;
  /**
   * What it was loaded with (the agent and the overrides), to load it again from the current registry: the setup's
   * own fields only, never the caller's wider options (a run-once's environment, signal or executor factory).
   */
  source: TurnSetupOptions;
}

/**
 * The turn goal as the registry says it now (`GoalLoader.reload`), for the loop between turns, so a pause, a
 * lowered limit or a changed executor holds for the next turn of a running loop. Admission reads the entry again
 * together with the goal's files (`loadTurnSnapshot`).
 */
export async function reloadTurnGoal(turnGoal: TurnSetup): Promise<TurnSetup> {
  const current = await new GoalLoader().reload({ ...turnGoal.goal, homeDir: turnGoal.homeDir });
  return loadTurnGoal({ ...turnGoal.source, goal: current.goal, registryDocument: current.document });
}

export function loadTurnGoal(options: TurnSetupOptions): TurnSetup {
  const goal = options.goal;
  const homeDir = options.homeDir ?? goal.homeDir;
  // Its quota window is refused up front (`quota_window_out_of_range`), before anything is planned or read.
  quotaConfigOf(goal);
  const agentId = requireRegisteredAgent(goal.rawEntry, options.agentId, { field: 'agent_id' });
  if (goal.statePath === null) {
    throw new LoopxError(
      'state_file_unresolved',
      `goal '${goal.goalId}' has no state_file LoopX can find; set state_file (and an absolute repo) in ${goal.registryPath}`,
      { goal_id: goal.goalId },
    );
  }
  let executorConfig: ExecutorConfig | null = null;
  let executorProblem: string | null = null;
  if (options.hostAdapterCommand !== undefined) {
    executorConfig = { preset: 'command', command: [...options.hostAdapterCommand] };
  } else {
    try {
      executorConfig = readAgentExecutorConfig(goal.rawEntry, agentId);
      if (executorConfig === null)
        executorProblem = `agent ${agentId} has no executor; configure one with loopx agent configure --goal-id ${goal.goalId} --agent-id ${agentId} --preset <claude-code|codex|opencode|command|demo> --execute (LoopX: Configure Agent…), which sets coordination.agent_profiles.${agentId}.executor in ${goal.registryPath} (see docs/executors.md)`;
    } catch (error) {
      executorProblem = errorMessage(error);
    }
  }
  let validationCommand: string[] | null = null;
  let validationProblem: string | null = null;
  if (options.validationCommand !== undefined) {
    validationCommand = [...options.validationCommand];
  } else {
    try {
      validationCommand = readValidationCommand(goal.rawEntry);
    } catch (error) {
      validationProblem = errorMessage(error);
    }
  }
  // Every field of TurnSetupOptions named (the compiler checks a new one is not dropped on reload), nothing else.
  const source: { [K in keyof Required<TurnSetupOptions>]: TurnSetupOptions[K] } = {
    goal,
    registryDocument: options.registryDocument,
    agentId: options.agentId,
    clock: options.clock,
    homeDir: options.homeDir,
    runtimeRootOverride: options.runtimeRootOverride,
    hostAdapterCommand: options.hostAdapterCommand,
    validationCommand: options.validationCommand,
    availableCapabilities: options.availableCapabilities,
  };
  return {
    goal,
    registryDocument: options.registryDocument,
    agentId,
    homeDir,
    runtimeRootOverride: options.runtimeRootOverride,
    projectRoot: resolveRepo(goal.rawEntry, homeDir) ?? goal.projectRoot,
    statePath: goal.statePath,
    executorConfig,
    executorProblem,
    validationCommand,
    validationProblem,
    source,
  };
}

export function executorTimeoutMinutes(config: ExecutorConfig): number {
  return config.timeout_minutes ?? DEFAULT_TIMEOUT_MINUTES[config.preset];
}

/** How many turns of this goal may run at once: its spawn policy, bounded by its registered agents. */
export function turnConcurrencyLimit(goal: Pick<GoalRef, 'rawEntry'>): number {
  return maxConcurrentTurns(goal.rawEntry['spawn_policy'], registeredAgentsForGoal(goal.rawEntry).length);
}

export interface PlanContext {
  decision: ShouldRunDecision;
  plan: TurnPlan;
  /** The state file's text the plan was made from. */
  stateText: string;
}

/** The state file a turn plans on, as the goal was loaded: parsed, or the error reading it met. */
function loadedStateFile(loaded: GoalSnapshot): StateFileSnapshot {
  if (loaded.state.kind === 'unreadable') throw loaded.state.error;
  if (loaded.state.kind === 'read') return loaded.state.file;
  // A turn goal always has a state file (`loadTurnGoal`); kept for the type.
  throw new LoopxError('state_file_unresolved', `goal '${loaded.goal.goalId}' has no state_file LoopX can find`, {
    goal_id: loaded.goal.goalId,
  });
}

export interface PlanOptions {
  clock: Clock;
  turnInstanceId?: string | undefined;
  availableCapabilities?: readonly string[] | undefined;
  inFlightTodoIds?: ReadonlySet<string>;
}

/**
 * The turn's one read of its goal through the loader: the goal's files as the setup has it, or (`reread`,
 * admission) with its registry entry read again first (`GoalLoader.reload`): the snapshot's `goal` is then the
 * goal as the registry says it now, and its `registryDocument` the document it came from.
 */
export async function loadTurnSnapshot(turnGoal: TurnSetup, clock: Clock, reread: boolean): Promise<GoalSnapshot> {
  const goal = reread ? { ...turnGoal.goal, homeDir: turnGoal.homeDir } : turnGoal.goal;
  return new GoalLoader().load(goal, { clock, reread });
}

/** Reads the goal's files and plans one turn (read-only). */
export async function planGoalTurn(turnGoal: TurnSetup, options: PlanOptions): Promise<PlanContext> {
  // One load of the goal serves the decision and the plan.
  return planLoadedTurn(turnGoal, await loadTurnSnapshot(turnGoal, options.clock, false), options);
}

/** Plans one turn on the goal as loaded (`loadTurnSnapshot`); reads the brief's recent runs and the session binding. */
export async function planLoadedTurn(
  turnGoal: TurnSetup,
  loaded: GoalSnapshot,
  options: PlanOptions,
): Promise<PlanContext> {
  const { goal, agentId } = turnGoal;
  const snapshot = loadedStateFile(loaded);
  const decision = decideShouldRun(loaded, agentId, options.clock.now(), {
    ...(options.availableCapabilities === undefined ? {} : { availableCapabilities: options.availableCapabilities }),
  });
  const runs = await recentRuns(goal);
  const now = options.clock.now();
  const turnInstanceId = options.turnInstanceId ?? newTurnInstanceId(now, randomBytes(4).toString('hex'));
  const selectedId = decision.selected_todo?.todo_id ?? null;
  const sessionBinding = selectedId === null ? null : await readSessionBinding(goal, agentId, selectedId);
  const plan = planTurn({
    goalId: goal.goalId,
    agentId,
    goal: goal.rawEntry,
    decision,
    doc: snapshot.document,
    runs,
    budget: budgetOf(decision.quota, decision.state),
    executor:
      turnGoal.executorConfig === null
        ? null
        : { kind: turnGoal.executorConfig.preset, timeoutMinutes: executorTimeoutMinutes(turnGoal.executorConfig) },
    executorProblem: turnGoal.executorProblem,
    validationCommand: turnGoal.validationCommand,
    validationProblem: turnGoal.validationProblem,
    inFlightTodoIds: options.inFlightTodoIds ?? new Set(),
    leaseHolders: loaded.leases,
    sessionBinding,
    turnInstanceId,
    generatedAt: isoSeconds(now),
    now: now.getTime(),
  });
  return { decision, plan, stateText: snapshot.text };
}

export function sessionBindingPath(
  goal: Pick<GoalRef, 'goalId' | 'runtimeDir'>,
  agentId: string,
  todoId: string | null,
): string {
  return path.join(goal.runtimeDir, SESSIONS_DIR, sessionBindingName(goal.goalId, agentId, todoId));
}

async function readSessionBinding(
  goal: Pick<GoalRef, 'goalId' | 'runtimeDir'>,
  agentId: string,
  todoId: string,
): Promise<unknown> {
  try {
    const file = sessionBindingPath(goal, agentId, todoId);
    return JSON.parse(
      await turnFileIo(goal.runtimeDir, { kind: 'readText', file, read: { maxBytes: SMALL_FILE_BYTES } }),
    ) as unknown;
  } catch {
    // No binding (or an unreadable one): the agent starts a new session.
    return null;
  }
}

/** Todos that unfinished turns of OTHER agents hold. */
export async function inFlightTodoIds(goal: Pick<GoalRef, 'runtimeDir'>, agentId: string): Promise<Set<string>> {
  const journals = await listActiveJournals(goal.runtimeDir);
  return new Set(journals.filter((j) => j.agent_id !== agentId && j.todo_id !== null).map((j) => j.todo_id as string));
}

/** The quota part of a turn brief, from the decision's quota status (no second read of the run index). */
export function budgetOf(quota: QuotaStatus | null, state: string): BudgetBrief | null {
  if (quota === null) return null;
  const { max_tokens: tokens, max_cost_usd: cost } = quota.budgets;
  const reported = tokens.used > 0 || cost.used > 0;
  return {
    window_hours: quota.window_hours,
    allowed_slots: quota.allowed_slots,
    spent_slots: quota.spent_slots,
    remaining_slots: quota.remaining_slots,
    state,
    spent_tokens: reported ? tokens.used : null,
    spent_cost_usd: reported ? cost.used : null,
    usage_estimated: tokens.estimated || cost.estimated,
    max_tokens: tokens.limit,
    max_cost_usd: cost.limit,
    turn_timeout_minutes: null,
  };
}

/** How much of the end of the run index the brief's recent evidence is read from. */
const RECENT_RUNS_BYTES = 64 * 1024;

/**
 * The newest rows of the goal's run index (newest first), read from the file's last 64 KB only:
 * the brief shows the latest evidence, and a turn should not cost more as the history grows.
 */
export async function recentRuns(goal: Pick<GoalRef, 'runtimeRoot' | 'goalId'>): Promise<RunIndexRow[]> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(runIndexPath(goal.runtimeRoot, goal.goalId), 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  try {
    const { size } = await handle.stat();
    const start = Math.max(0, size - RECENT_RUNS_BYTES);
    const buffer = Buffer.alloc(size - start);
    await handle.read(buffer, 0, buffer.length, start);
    const lines = buffer.toString('utf8').split('\n');
    if (start > 0) lines.shift(); // a partial first line
    const rows: RunIndexRow[] = [];
    for (const line of lines) {
      if (line.trim() === '') continue;
      try {
        const parsed = RunIndexRow.safeParse(JSON.parse(line));
        if (parsed.success) rows.push(parsed.data);
      } catch {
        // A torn or foreign line: the full reader reports it; the brief just skips it.
      }
    }
    return rows.reverse();
  } finally {
    await handle.close();
  }
}
