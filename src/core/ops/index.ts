import type { z } from 'zod';
import type { CommandKey } from '../commands/catalog';
import type { Operation, OperationEnvironment, OperationOutput } from './operation';
import { agentOnboard } from './agentOnboard';
import { archiveRuntime } from './archiveRuntime';
import { showCommands } from './commands';
import { configureAgent, removeAgent } from './configureAgent';
import { configureGoal } from './configureGoal';
import { doctor } from './doctor';
import { createGoal } from './createGoal';
import { globalGates, globalRisks, globalSummary, globalTodos } from './global';
import { heartbeatPrompt } from './heartbeat';
import { mcpInstall } from './mcpInstall';
import { evidenceLog } from './evidenceLog';
import { registerAgent } from './registerAgent';
import { pauseGoal } from './pauseGoal';
import { goalLifecycle } from './goalLifecycle';
import { version } from './version';
import { quotaHistory, quotaPlan, quotaShouldRun, quotaSpendSlot, quotaStatus, quotaVoidSlot } from './quota';
import { resumeGoal } from './resumeGoal';
import { reviewList, reviewRevert } from './review';
import { refreshState } from './refresh';
import { registryPrivacy, validateRegistry } from './registry';
import { slashCommands } from './slashCommands';
import { status } from './status';
import { syncGlobal } from './syncGlobal';
import { handoffModeSet, handoffModeShow } from './handoffMode';
import { taskLeaseAcquire, taskLeaseInspect, taskLeaseRelease, taskLeaseRenew, taskLeaseTransfer } from './taskLease';
import { todoAdd, todoClaim, todoComplete, todoDefer, todoList, todoSupersede, todoUpdate } from './todo';
import { turnInspectJournal, turnLoop, turnPlan, turnRunOnce } from './turn';

/** Every LoopX operation (see operation.ts), for surfaces that look one up by its catalog key. */

export * from './agentOnboard';
export * from './archiveRuntime';
export * from './commands';
export * from './configureAgent';
export * from './configureGoal';
export * from './doctor';
export * from './createGoal';
export * from './global';
export * from './heartbeat';
export * from './mcpInstall';
export * from './evidenceLog';
export * from './pauseGoal';
export * from './goalLifecycle';
export * from './version';
export * from './quota';
export * from './resumeGoal';
export * from './review';
export * from './registerAgent';
export * from './refresh';
export * from './registry';
export * from './slashCommands';
export * from './status';
export * from './syncGlobal';
export * from './taskLease';
export * from './handoffMode';
export * from './todo';
export * from './turn';
export { defineOperation } from './operation';
export type { Operation, OperationArgs, OperationEnvironment, OperationOutput, OperationResult } from './operation';
export { mutationOf, runOperation, type OperationMode } from './run';
export { previewThenApplyWith, type PreviewThenApplyOutcome, type PreviewThenApplySteps } from './previewThenApply';

/** What every operation is, whatever its argument and result types (which `Operation` keeps exact). */
interface AnyOperation {
  readonly key: CommandKey;
  readonly args: z.ZodObject;
  run(args: never, env: OperationEnvironment): Promise<OperationOutput>;
}

/** Each entry must be the operation whose `key` is the entry's own name (a mismatch does not compile). */
function keyed<T extends { [K in keyof T]: K extends CommandKey ? AnyOperation & { readonly key: K } : never }>(
  operations: T,
): T {
  return operations;
}

/** The operations that exist so far, keyed by catalog key. */
export const OPERATIONS = keyed({
  showCommands,
  validateRegistry,
  registryPrivacy,
  todoAdd,
  todoList,
  todoClaim,
  todoUpdate,
  todoComplete,
  todoSupersede,
  todoDefer,
  handoffModeShow,
  handoffModeSet,
  taskLeaseAcquire,
  taskLeaseRenew,
  taskLeaseTransfer,
  taskLeaseRelease,
  taskLeaseInspect,
  status,
  globalSummary,
  globalGates,
  globalTodos,
  globalRisks,
  heartbeatPrompt,
  quotaStatus,
  quotaShouldRun,
  quotaSpendSlot,
  quotaVoidSlot,
  quotaHistory,
  quotaPlan,
  evidenceLog,
  refreshState,
  turnPlan,
  turnInspectJournal,
  createGoal,
  registerAgent,
  configureGoal,
  configureAgent,
  removeAgent,
  doctor,
  agentOnboard,
  syncGlobal,
  slashCommands,
  mcpInstall,
  archiveRuntime,
  reviewList,
  reviewRevert,
  pauseGoal,
  resumeGoal,
  goalLifecycle,
  version,
  turnRunOnce,
  turnLoop,
});

export type OperationKey = keyof typeof OPERATIONS;

/** The operation of a catalog key (its exact types erased), or undefined while that command is not an operation yet. */
export function operationByKey(key: CommandKey): Operation | undefined {
  return (OPERATIONS as Partial<Record<CommandKey, AnyOperation>>)[key] as Operation | undefined;
}
