/**
 * LoopX as a library: the control plane's public API for Node scripts (`require('loopx-vscode')`).
 * Documented with examples in docs/api.md.
 *
 * - Every function takes an options object (or, for the small pure helpers, one or two plain
 *   arguments), checks it with zod and throws `LoopxError` with code `invalid_argument`, naming
 *   the argument and what it accepts, before anything is read or written.
 * - Results have the shapes the `loopx` CLI prints with `--format json`; each has a zod schema
 *   exported here, so a caller can validate stored results too.
 * - Every refusal is a `LoopxError` with a stable `code` to branch on (`goal_registered`,
 *   `goal_not_found`, `registry_invalid_json`, …) and structured `details`.
 *
 * This file is the whole public surface: the operations of ./ops, their library names
 * (./ops/library.ts, ./ops/libraryFunctions.ts), never internal modules.
 */

export { LoopxError, isLoopxError } from './errors';
export { LOOPX_ERROR_CODES, type LoopxErrorCode } from './errorCodes';
export { INVALID_ARGUMENT } from './ops/arguments';
export { LOOPX_VERSION as version } from './version';

/** Every operation by catalog key, and the one way to run one: the use cases of the CLI and the editor. */
export { OPERATIONS, type OperationKey } from './ops/index';
export { processEnvironment, runOperation, type OperationMode } from './ops/run';
export type { Operation, OperationEnvironment, OperationOutput } from './ops/operation';

export {
  archiveRuntimeGoal,
  compactOrchestrationPolicy,
  findRegistryGoal,
  getGoalStatus,
  listGoals,
  loadGoalState,
  nextActionProjectionWarning,
  readJson,
  readRegistry,
  settleTurn,
  type ArchiveRuntimeGoalOptions,
  type GoalOptions,
  type GoalStatusOptions,
  type ListGoalsOptions,
  type NextActionProjectionWarningOptions,
  type SettleTurnOptions,
} from './ops/libraryFunctions';
export type { SpendSlotResult } from './quota/spend';
export { ShouldRunDecisionSchema, type ShouldRunDecision } from './scheduling/decisionContract';
/** The documented library names that are one operation each (see ./ops/library.ts). */
export {
  inspectTurnJournal,
  listGates,
  listTodos,
  planTurn,
  runTurnLoop,
  runTurnOnce,
  shouldRun,
  type InspectTurnJournalOptions,
  type ListGatesOptions,
  type ListTodosOptions,
  type PlanTurnOptions,
  type RunTurnLoopOptions,
  type RunTurnOnceOptions,
  type ShouldRunOptions,
} from './ops/library';
export { TurnEventEmitter, TurnEventSchema, type TurnEvent, type TurnEventSink } from './turn/events';
export { TurnPlanSchema, type TurnPlan } from './turn/plan';
export { TurnRunResultSchema, type TurnRunResult } from './turn/runOnce';
export { LoopResultSchema, type LoopResult } from './turn/loop';
export { JournalInspectionSchema, type JournalInspection } from './turn/inspect';

export {
  ArchiveRuntimeResultSchema,
  CompactOrchestrationSchema,
  GateListResultSchema,
  GateSchema,
  GoalStateSchema,
  GoalStatusSchema,
  GoalSummarySchema,
  NextActionProjectionWarningSchema,
  ProjectionWarningSchema,
  TodoListResultSchema,
  TodoSchema,
  type CompactOrchestration,
  type Gate,
  type GateBlock,
  type GateListResult,
  type GoalState,
  type GoalStatus,
  type Todo,
  type TodoListResult,
} from './ops/resultSchemas';
export type { ArchiveRuntimeResult } from './runtime/archive';
export type { NextActionProjectionWarning, ProjectionWarning } from './status/projection/schemas';
export type { GoalSummary } from './ops/goalRows';
export type { RegistryGoal } from './registry/schema';
export type { NormalizedQuota } from './registry/schema';
