import { z } from 'zod';
import { analyzeGates } from '../state/gates';
import { readStateFile } from '../state/stateFile';
import { projectStateDocument } from '../state/structured';
import { parseArguments } from '../ops/arguments';
import {
  goalIdArgument,
  homeDirArgument,
  locateGoal,
  registryPathArgument,
  requireStatePath,
} from '../ops/libraryArguments';
import { GateListResultSchema, GoalStateSchema, type GateListResult, type GoalState } from '../ops/resultSchemas';

/** The goal of a registry whose ACTIVE_GOAL_STATE.md to read. */
const goalFields = {
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  homeDir: homeDirArgument,
};

const GoalArguments = z.strictObject(goalFields);
export type GoalOptions = z.input<typeof GoalArguments>;

async function readGoalStateFile(options: z.output<typeof GoalArguments>) {
  const location = await locateGoal(options);
  const statePath = requireStatePath(location);
  return { goalId: location.goalId, statePath, snapshot: await readStateFile(statePath) };
}

/**
 * Reads a goal's ACTIVE_GOAL_STATE.md (found through the registry) as its structured projection:
 * front matter, Next Action entries, user and agent todos with counts, and format diagnostics.
 * Throws LoopxError `registry_missing`, `goal_not_found`, `state_file_unresolved`,
 * `state_file_missing` or `state_file_not_utf8`.
 */
export async function loadGoalState(options: GoalOptions): Promise<GoalState> {
  const args = parseArguments(GoalArguments, options, { functionName: 'loadGoalState', root: 'options' });
  const { goalId, statePath, snapshot } = await readGoalStateFile(args);
  return GoalStateSchema.parse({
    goal_id: goalId,
    state_file: statePath,
    projection: projectStateDocument(snapshot.document, { goalId }),
  });
}

/**
 * A goal's user gates: the open ones, the resolved ones still holding work back (rejected or
 * cancelled), and for every agent todo not done or deferred whether a gate blocks it and how.
 */
export async function listGates(options: GoalOptions): Promise<GateListResult> {
  const args = parseArguments(GoalArguments, options, { functionName: 'listGates', root: 'options' });
  const { goalId, statePath, snapshot } = await readGoalStateFile(args);
  return GateListResultSchema.parse({ goal_id: goalId, state_file: statePath, ...analyzeGates(snapshot.document) });
}
