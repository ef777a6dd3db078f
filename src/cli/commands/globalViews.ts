import { globalGates, globalMarkdown, globalRisks, globalSummary, globalTodos } from '../../core/ops/global';
import { operationCommand } from '../operationHandler';

/**
 * `loopx global-summary | global-gates | global-todos | global-risks`: the global view operations.
 * Exit 1 with `ok:false, error:"Global status source unavailable."` when the registry cannot be
 * read; 2 for bad arguments.
 */
export const globalSummaryCommand = operationCommand(globalSummary, globalMarkdown);
export const globalGatesCommand = operationCommand(globalGates, globalMarkdown);
export const globalTodosCommand = operationCommand(globalTodos, globalMarkdown);
export const globalRisksCommand = operationCommand(globalRisks, globalMarkdown);
