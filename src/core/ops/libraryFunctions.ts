import { z } from 'zod';
import { readFileSafe } from '../fs/safeRead';
import { LoopxError } from '../errors';
import { processGoalCache } from '../goal/cache';
import { TurnUsageSchema } from '../quota/ledger';
import { spendSlot, type SpendSlotResult } from '../quota/spend';
import { shouldRunOnGoal } from '../scheduling/shouldRun';
import { goalItems } from '../status/statusPayload';
import { isPlainObject } from '../registry/agentIds';
import { compactOrchestrationPolicy as compactPolicy } from '../registry/orchestration';
import { findRegistryGoal as findGoalEntry, parseRegistryText } from '../registry/read';
import { GoalLoader } from '../goal/loader';
import type { RegistryGoal } from '../registry/schema';
import {
  archiveRuntimeGoal as archiveGoalFolder,
  readArchiveRegistry,
  type ArchiveRuntimeResult,
} from '../runtime/archive';
import { projectStateDocument } from '../state/structured';
import { agentLaneNextActionSchema } from '../status/projection/inputs';
import { nextActionProjectionWarning as projectNextActionWarning } from '../status/projection/nextActionWarning';
import type { NextActionProjectionWarning } from '../status/projection/schemas';
import { loadRegistrySnapshot, type GoalSummary } from './goalRows';
import { parseArguments } from './arguments';
import { quotaGoalOf, requireStatePath, resolveGoal } from './goalHandle';
import {
  clockOf,
  flagArgument,
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  libraryEnvironment,
  nowArgument,
  registryPathArgument,
  resolvedPath,
  runtimeRootOverrideArgument,
} from './libraryArguments';
import { goalStatusOfItem } from './goalStatusView';
import {
  CompactOrchestrationSchema,
  GoalStateSchema,
  type CompactOrchestration,
  type GoalState,
  type GoalStatus,
} from './resultSchemas';
import { status } from './status';

/**
 * The documented library functions that are not one operation each (docs/api.md): the pure helpers
 * over a registry object, a policy or two texts, and the calls whose library contract differs from
 * the CLI's (archiving throws its refusal where `archive-runtime` answers `ok: false`; settling takes
 * `usage` as the run record's object). They were `src/core/api/`, folded here (issue 31).
 */

// ---- archiveRuntimeGoal

const ArchiveRuntimeGoalArguments = z.strictObject({
  registryPath: registryPathArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  goalId: goalIdArgument,
  archiveRoot: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((value) => value ?? undefined)
    .describe('the folder archived goals go to, or null/undefined for <runtime root>/archived-goals'),
  allowRegistered: flagArgument,
  execute: flagArgument,
  now: nowArgument,
  homeDir: homeDirArgument,
});
export type ArchiveRuntimeGoalOptions = z.input<typeof ArchiveRuntimeGoalArguments>;

/**
 * Moves a finished goal's runtime folder `<runtime root>/goals/<goalId>` to
 * `<archiveRoot>/<goalId>-<UTC stamp>[-N]` (the original's `archive_runtime_goal`). Without
 * `execute: true` it is a dry run: `dry_run: true`, `action: "would-move"`, nothing moves.
 *
 * It refuses (LoopxError) a goal the registry still lists (`goal_registered`, unless
 * `allowRegistered`), a registry it cannot read (`registry_unreadable`), a missing folder
 * (`runtime_goal_missing`), a folder outside the goals root, and an archive root on another
 * filesystem (`archive_cross_device`). It never deletes and never copies.
 */
export async function archiveRuntimeGoal(options: ArchiveRuntimeGoalOptions): Promise<ArchiveRuntimeResult> {
  const args = parseArguments(ArchiveRuntimeGoalArguments, options, {
    functionName: 'archiveRuntimeGoal',
    root: 'options',
  });
  const registry = await readArchiveRegistry(resolvedPath(args.registryPath), {
    runtimeRootOverride: args.runtimeRootOverride,
    homeDir: homeDirOf(args.homeDir),
  });
  return archiveGoalFolder(registry, {
    goalId: args.goalId,
    archiveRoot: args.archiveRoot === undefined ? undefined : resolvedPath(args.archiveRoot),
    allowRegistered: args.allowRegistered === true,
    execute: args.execute === true,
    clock: clockOf(args.now),
  });
}

// ---- loadGoalState

const GoalArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  homeDir: homeDirArgument,
});
export type GoalOptions = z.input<typeof GoalArguments>;

/**
 * Reads a goal's ACTIVE_GOAL_STATE.md (found through the registry) as its structured projection:
 * front matter, Next Action entries, user and agent todos with counts, and format diagnostics.
 * Throws LoopxError `registry_missing`, `goal_not_found`, `state_file_unresolved`,
 * `state_file_missing` or `state_file_not_utf8`.
 */
export async function loadGoalState(options: GoalOptions): Promise<GoalState> {
  const args = parseArguments(GoalArguments, options, { functionName: 'loadGoalState', root: 'options' });
  const goal = await resolveGoal(libraryEnvironment(args), args.goalId);
  const statePath = requireStatePath(goal);
  const snapshot = await processGoalCache().stateFile(statePath);
  return GoalStateSchema.parse({
    goal_id: goal.goalId,
    state_file: statePath,
    projection: projectStateDocument(snapshot.document, { goalId: goal.goalId }),
  });
}

// ---- compactOrchestrationPolicy

const CompactOrchestrationPolicyArguments = z.strictObject({
  policy: z
    .custom<Record<string, unknown> | null | undefined>(
      (value) => value === null || value === undefined || isPlainObject(value),
    )
    .describe("a goal's spawn_policy object (such as { allowed: true, max_children: 3 }), or null/undefined for none"),
});

/**
 * A goal's `spawn_policy` reduced to the facts every consumer needs (the original's
 * `compact_orchestration_policy`): `mode`, `spawn_allowed`, `max_children`, and when present
 * `allowed_domains` and `explore_harness`. Spawning is allowed only by a JSON `true`;
 * `max_children` accepts whole-number strings (`"3"`).
 */
export function compactOrchestrationPolicy(policy: Record<string, unknown> | null | undefined): CompactOrchestration {
  const args = parseArguments(
    CompactOrchestrationPolicyArguments,
    { policy },
    { functionName: 'compactOrchestrationPolicy' },
  );
  return CompactOrchestrationSchema.parse(compactPolicy(args.policy));
}

// ---- nextActionProjectionWarning

const actionText = (what: string) =>
  z.string().nullish().describe(`${what} as text, or null/undefined when there is none`);

const NextActionProjectionWarningArguments = z.strictObject({
  activeStateNextAction: actionText('the durable Next Action of the state file'),
  latestRunRecommendedAction: actionText("the latest run's recommended_action"),
  agentLaneNextAction: agentLaneNextActionSchema
    .nullish()
    .describe("the agent lane's next action: text, an object { text, preserves_goal_next_action }, or null/undefined"),
  goalId: goalIdArgument
    .nullish()
    .describe('the goal the texts belong to (it becomes goal_id and part of the warning id), or null/undefined'),
});
export type NextActionProjectionWarningOptions = z.input<typeof NextActionProjectionWarningArguments>;

/**
 * Compares the durable Next Action with the latest run's recommended action (the original's
 * `next_action_projection_warning`): null when either is empty or they are aligned, otherwise a
 * `next_action_projection_warning_v0` object carrying the compared texts, the original's fixed
 * `reason` and `recommended_action`, and a human `message`. A lane that explicitly preserves the
 * durable route downgrades it to `severity: "info"`.
 */
export function nextActionProjectionWarning(
  options: NextActionProjectionWarningOptions,
): NextActionProjectionWarning | null {
  const args = parseArguments(NextActionProjectionWarningArguments, options, {
    functionName: 'nextActionProjectionWarning',
    root: 'options',
  });
  return projectNextActionWarning(args);
}

// ---- settleTurn

const SettleTurnArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  agentId: z.string().trim().min(1).describe('the registered agent whose turn is settled'),
  turnInstanceId: z
    .string()
    .trim()
    .min(1)
    .describe('the id of the turn being settled (with agentId and todoId it forms the settlement identity)'),
  todoId: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .transform((value) => value ?? null)
    .describe('the todo the turn worked on, or null/undefined'),
  slots: z.number().int().min(1).default(1).describe('a whole number of slots, at least 1 (default 1)'),
  usage: TurnUsageSchema.optional().describe('{ tokens?, cost_usd?, minutes?, estimated } as the agent reported it'),
  execute: z.boolean().default(false).describe('true to write the spend; false (default) previews'),
  runtimeRootOverride: runtimeRootOverrideArgument,
  now: nowArgument,
  homeDir: homeDirArgument,
});
export type SettleTurnOptions = z.input<typeof SettleTurnArguments>;

/**
 * Settles a finished turn (`loopx quota spend-slot`): checks that the spend is allowed and, with
 * `execute: true`, writes exactly one spend record for the settlement identity
 * `goal:agent:todo:turn`. Settling the same turn again is an idempotent replay (`idempotent_replay: true`,
 * nothing written). The turn driver (`runTurnOnce`) settles its own turns; this is for hosts that run
 * turns themselves.
 */
export async function settleTurn(options: SettleTurnOptions): Promise<SpendSlotResult> {
  const args = parseArguments(SettleTurnArguments, options, { functionName: 'settleTurn', root: 'options' });
  const env = libraryEnvironment(args);
  const goal = quotaGoalOf(await resolveGoal(env, args.goalId));
  const decision = await shouldRunOnGoal(goal, {
    agentId: args.agentId,
    clock: env.clock,
    turnInstanceId: args.turnInstanceId,
  });
  return spendSlot(goal, env.clock, {
    decision,
    agentId: args.agentId,
    todoId: args.todoId,
    turnInstanceId: args.turnInstanceId,
    slots: args.slots,
    source: 'heartbeat',
    execute: args.execute,
    ...(args.usage === undefined ? {} : { usage: args.usage }),
  });
}

// ---- the registry: readJson, readRegistry, findRegistryGoal, listGoals

const pathArgument = z
  .string()
  .trim()
  .min(1)
  .describe('the path of a JSON file (absolute, or relative to the current directory)');

/**
 * Reads a JSON file whose root must be an object (the original's `read_json`). Throws LoopxError
 * `file_not_found` for a missing file, `registry_invalid_json` (with line and column) for bad JSON,
 * `registry_not_object` for another root.
 */
export async function readJson(filePath: string): Promise<Record<string, unknown>> {
  const args = parseArguments(z.strictObject({ path: pathArgument }), { path: filePath }, { functionName: 'readJson' });
  const absolute = resolvedPath(args.path);
  let text: string;
  try {
    text = await readFileSafe(absolute);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new LoopxError('file_not_found', `${absolute} does not exist.`, { path: absolute });
    throw error;
  }
  return parseRegistryText(text, absolute);
}

/** Reads a registry file as its raw JSON object, every field kept; a missing file reads as `{}` (the original's `load_registry`). */
export async function readRegistry(registryPath: string): Promise<Record<string, unknown>> {
  const args = parseArguments(
    z.strictObject({ registryPath: registryPathArgument }),
    { registryPath },
    { functionName: 'readRegistry' },
  );
  return new GoalLoader().registry(resolvedPath(args.registryPath));
}

/**
 * The first goal whose id, as a string, equals `goalId` (so a stored `7` matches `"7"`), or
 * undefined. Known fields are typed; unknown ones (such as `description`) are kept as they are.
 */
export function findRegistryGoal(registry: Record<string, unknown>, goalId: string | number): RegistryGoal | undefined {
  const args = parseArguments(
    z.strictObject({
      registry: z
        .custom<Record<string, unknown>>(isPlainObject)
        .describe('a registry object, as readJson or readRegistry return it'),
      goalId: z
        .union([z.number().finite(), goalIdArgument])
        .describe('a goal id such as "my-goal-id" (a number matches the same id stored as a string)'),
    }),
    { registry, goalId },
    { functionName: 'findRegistryGoal' },
  );
  return findGoalEntry(args.registry, args.goalId);
}

const ListGoalsArguments = z.strictObject({
  registryPath: registryPathArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
});
export type ListGoalsOptions = z.input<typeof ListGoalsArguments>;

/**
 * The goals of a registry as the editor's Goals view shows them: names, status, state file, runtime
 * root, registered agents and normalized quota. A missing registry has no goals; an unreadable one
 * throws its LoopxError (`registry_invalid_json`, `registry_not_object`).
 */
export async function listGoals(options: ListGoalsOptions): Promise<GoalSummary[]> {
  const args = parseArguments(ListGoalsArguments, options, { functionName: 'listGoals', root: 'options' });
  return goalSummaries(args);
}

async function goalSummaries(args: z.output<typeof ListGoalsArguments>): Promise<GoalSummary[]> {
  const registryPath = resolvedPath(args.registryPath);
  const snapshot = await loadRegistrySnapshot(registryPath, {
    homeDir: homeDirOf(args.homeDir),
    ...(args.runtimeRootOverride === undefined ? {} : { runtimeRootOverride: args.runtimeRootOverride }),
  });
  if (!snapshot.ok) {
    const { code, message, ...position } = snapshot.error;
    throw new LoopxError(code, message, { registry: registryPath, ...position });
  }
  return snapshot.goals;
}

// ---- getGoalStatus: the goal's item of `status` (the one status model), as the library's summary

const GoalStatusArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
});
export type GoalStatusOptions = z.input<typeof GoalStatusArguments>;

/**
 * One goal at a glance: its registry entry (agents, normalized quota), the state file's Next Action,
 * todo counts and open gates, the run history's size and newest status run, and the projection drift
 * warnings between them. It is the goal's item of the `status` operation (`goalStatusOfItem`), the
 * same model the CLI, the editor and the status server read. A state file that cannot be read does
 * not fail the call: `state` is null and `state_error` says why.
 */
export async function getGoalStatus(options: GoalStatusOptions): Promise<GoalStatus> {
  const args = parseArguments(GoalStatusArguments, options, { functionName: 'getGoalStatus', root: 'options' });
  const env = libraryEnvironment(args);
  const goal = await resolveGoal(env, args.goalId);
  const summary = (await goalSummaries(args)).find((candidate) => candidate.goalId === goal.goalId);
  if (summary === undefined)
    throw new LoopxError('goal_not_found', `goal '${goal.goalId}' is not in the registry ${goal.registryPath}`, {
      goal_id: goal.goalId,
    });
  const payload = await status.run({ goalId: goal.goalId }, env);
  const item = goalItems(payload).find((candidate) => candidate.goal_id === goal.goalId);
  if (item === undefined)
    throw new LoopxError('goal_not_found', `goal '${goal.goalId}' has no status in ${goal.registryPath}`, {
      goal_id: goal.goalId,
    });
  return goalStatusOfItem(summary, item);
}
