import { createHash } from 'node:crypto';
import { z } from 'zod';
import { errorMessage, isLoopxError, LoopxError } from '../errors';
import { projectGoalWarnings } from '../status/projection/goalWarnings';
import { loadRegistrySnapshot } from '../status/workspaceGoals';
import { registryProjectRoot } from '../registry/locate';
import { latestStatusRun, readGoalRuns } from '../runtime/runIndex';
import { analyzeGates } from '../state/gates';
import { readStateFile, type StateFileSnapshot } from '../state/stateFile';
import { projectStateDocument, type RoleSummary, type StructuredProjection } from '../state/structured';
import { parseArguments } from '../ops/arguments';
import {
  goalIdArgument,
  homeDirArgument,
  homeDirOf,
  locateGoal,
  registryPathArgument,
  runtimeRootOverrideArgument,
} from '../ops/libraryArguments';
import { GoalStatusSchema, type GoalStatus } from '../ops/resultSchemas';

const GoalStatusArguments = z.strictObject({
  registryPath: registryPathArgument,
  goalId: goalIdArgument,
  runtimeRootOverride: runtimeRootOverrideArgument,
  homeDir: homeDirArgument,
});
export type GoalStatusOptions = z.input<typeof GoalStatusArguments>;

/**
 * One goal at a glance, without writing anything: its registry entry (agents, normalized quota),
 * the state file's Next Action, todo counts and open gates, the run history's size and newest
 * status run, and the projection drift warnings between them. A state file that cannot be read
 * does not fail the call: `state` is null and `state_error` says why.
 */
export async function getGoalStatus(options: GoalStatusOptions): Promise<GoalStatus> {
  const args = parseArguments(GoalStatusArguments, options, { functionName: 'getGoalStatus', root: 'options' });
  const location = await locateGoal(args);
  const homeDir = homeDirOf(args.homeDir);
  const snapshot = await loadRegistrySnapshot(location.registryPath, {
    homeDir,
    ...(args.runtimeRootOverride === undefined ? {} : { runtimeRootOverride: args.runtimeRootOverride }),
  });
  const summary = snapshot.ok ? snapshot.goals.find((goal) => goal.goalId === location.goalId) : undefined;
  if (summary === undefined)
    throw new LoopxError(
      'goal_not_found',
      `goal '${location.goalId}' is not in the registry ${location.registryPath}`,
      { goal_id: location.goalId },
    );

  let state: StateFileSnapshot | null = null;
  let stateError: GoalStatus['state_error'] = null;
  if (location.statePath === null) {
    stateError = {
      code: 'state_file_unresolved',
      message: `goal '${location.goalId}' has no state_file and no absolute repo`,
    };
  } else {
    try {
      state = await readStateFile(location.statePath);
    } catch (error) {
      if (!isLoopxError(error)) throw error;
      stateError = { code: error.code, message: errorMessage(error) };
    }
  }
  const projection = state === null ? null : projectStateDocument(state.document, { goalId: location.goalId });

  // Only the latest status run's artifacts are reported, and its flags are checked when read.
  const runs = await readGoalRuns(location.runtimeRoot, location.goalId, {
    projectRoot: registryProjectRoot(location.registryPath),
    artifactChecks: 0,
  });
  const latest = latestStatusRun(runs.rows);

  const warnings = projectGoalWarnings({
    goalId: location.goalId,
    activeState:
      state === null || projection === null
        ? null
        : {
            next_action: projection.next_action.first,
            next_action_entries: projection.next_action.entries,
            updated_at: projection.frontmatter['updated_at'] ?? null,
            sha256_16: createHash('sha256').update(state.text, 'utf8').digest('hex').slice(0, 16),
          },
    latestStatusRun: latest,
    agentLaneRuns: runs.rows.filter((row) => row.progress_scope === 'agent_lane'),
    todoCounts:
      projection === null
        ? null
        : {
            agent: {
              summary: { open_count: projection.todos.agent.open_count },
              markdownOpenCount: projection.todos.agent.open_count,
            },
            user: {
              summary: { open_count: projection.todos.user.open_count },
              markdownOpenCount: projection.todos.user.open_count,
            },
          },
  });

  return GoalStatusSchema.parse({
    schema_version: 'loopx_api_goal_status_v1',
    goal: summary,
    state: state === null || projection === null ? null : stateSection(state, projection),
    state_error: stateError,
    runs: { count: runs.rows.length, latest_status_run: latest },
    warnings,
  });
}

function stateSection(state: StateFileSnapshot, projection: StructuredProjection): NonNullable<GoalStatus['state']> {
  const counts = ({ total_count, open_count, done_count, blocked_count, deferred_count }: RoleSummary) => ({
    total_count,
    open_count,
    done_count,
    blocked_count,
    deferred_count,
  });
  const { parseable, warning_count, error_count } = projection.diagnostics;
  return {
    state_file: state.path,
    updated_at: projection.frontmatter['updated_at'] ?? null,
    next_action: projection.next_action.first,
    todos: { user: counts(projection.todos.user), agent: counts(projection.todos.agent) },
    open_gate_count: analyzeGates(state.document).open_gates.length,
    diagnostics: { parseable, warning_count, error_count },
  };
}
