/**
 * What the editor's own read side (src/workspace: the workspace model, its watchers and attention
 * events; src/review: turn snapshots) takes from the core beside running operations: the live status
 * model of a registry, the registry listing, and the file places and small pure views it keys its
 * watchers and trees on. Like host.ts for agents, it is the one door: a surface folder imports
 * `core/ops`, never a core internal (test/unit/architecture.test.ts). The reads listed here
 * (`readAgentExecutorConfig`, `activeLeaseHolders`) are the workspace model's own
 * look at a goal's files, which issue 31 moves behind the goal loader.
 */

// The live status model (one per registry) and the registry listing it starts from.
export { LiveStatusModel } from '../status/liveStatus';
export { loadRegistrySnapshot } from '../status/workspaceGoals';
export { registryGoalEntries } from '../registry/read';
export { PROJECT_REGISTRY_RELATIVE_PATH } from '../registry/locate';

// Where a goal's files are, for the watchers (changedGoals.ts maps a changed file to its goal).
export { GOALS_DIR, runIndexPath } from '../runtime/layout';
export { STATUS_CACHE_DIR } from '../goal/persistentCache';

// A goal's recent runs (read through the live model), its agents' executors and its task leases (the Goals and
// Agents trees).
export { RECENT_RUNS_KEPT, recentRunRows } from '../goal/recentRuns';
export { readAgentExecutorConfig } from '../executors/config';
export { activeLeaseHolders } from '../leases/store';

// The attention notifier's vocabulary and the Gate Inbox's rows.
export { FAILURE_RESULT_KINDS } from '../protocol/contract';
export { STOPPED_GOAL_STATUSES } from '../quota/state';
export { gateInboxRows, todoAddedTimes } from '../status/gateInbox';

// Turn snapshots (src/review): the git plumbing of the review's before/after trees.
export { writeFileAtomic } from '../fs/atomicWrite';
export { git, isLoopxOwned, repoPlace, writeWorkingTree } from '../snapshots/gitSnapshot';
