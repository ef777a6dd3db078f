/**
 * What the editor's own read side (src/workspace: the workspace model, its watchers and attention
 * events; src/review: turn snapshots) takes from the core beside running operations: the live status
 * model of a registry, the registry listing, and the file places and small pure views it keys its
 * watchers and trees on. Like host.ts for agents, it is the one door: a surface folder imports
 * `core/ops`, never a core internal (test/unit/architecture.test.ts). A goal's files are read
 * through the live model (`goalRuns`, `goalLeases`, `executorConfigs`), not by the workspace model itself.
 */

// The live status model (one per registry) and the registry listing it starts from.
export { LiveStatusModel } from '../status/liveStatus';
export { loadRegistrySnapshot } from './goalRows';
export { PROJECT_REGISTRY_RELATIVE_PATH } from '../registry/locate';

// Where a goal's files are, for the watchers (changedGoals.ts maps a changed file to its goal).
export { GOALS_DIR, runIndexPath } from '../runtime/layout';
export { STATUS_CACHE_DIR } from '../goal/persistentCache';

// A goal's recent runs (read through the live model, as its agents' executors and its task leases are: the Goals
// and Agents trees).
export { RECENT_RUNS_KEPT, recentRunRows } from '../goal/recentRuns';

// The attention notifier's vocabulary and the Gate Inbox's rows.
export { FAILURE_RESULT_KINDS } from '../protocol/contract';
export { STOPPED_GOAL_STATUSES } from '../quota/state';
export { gateInboxRows, rolloutLogStamp, todoAddedTimes } from '../status/gateInbox';

// Turn snapshots (src/review): the git plumbing of the review's before/after trees.
export { writeFileAtomic } from '../fs/atomicWrite';
export { git, isLoopxOwned, repoPlace, writeWorkingTree } from '../snapshots/gitSnapshot';
