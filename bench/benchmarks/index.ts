import type { Benchmark } from '../core/types';
import { appendContention } from './appendContention';
import { eventLogAppendContention } from './eventLog';
import { quotaShouldRunReceiptCli } from './heartbeat';
import { taskLeaseAcquireCli, taskLeaseContentionCli } from './leases';
import { cliRegistry, cliStartup, cliTodoList } from './cli';
import {
  extensionActivation,
  extensionActivationEmpty,
  extensionExternalChange,
  extensionWebviewGoalDetail,
  extensionWebviewWarnings,
} from './extension';
import { globalSummaryAgents } from './globalViews';
import { mcpHeartbeat, mcpServerMemory, mcpShouldRun } from './mcp';
import { reprojectionOneGoal } from './reprojection';
import { quotaShouldRunCli, quotaShouldRunInProcess } from './quota';
import { refreshStateCli, refreshStateInProcess } from './refreshState';
import { registryLoad } from './registryLoad';
import { registryValidate } from './registryValidate';
import { runIndexRead } from './runIndexRead';
import { stateProjectAll } from './stateProjectAll';
import { statusCli, statusCliWarm, statusInProcess } from './status';
import { statusServerFreshness, statusServerHealthz, statusServerStatusJson } from './statusServer';
import { turnAtTenThousand, turnLoopGrowth, turnOverhead } from './turn';
import { reviewViewFill, turnSnapshot } from './review';

/**
 * Every benchmark, in the order they run and are documented. To add one: write
 * benchmarks/<name>.ts exporting a RunnableBenchmark and list it here (replacing its pending entry).
 */
export const BENCHMARKS: readonly Benchmark[] = [
  registryLoad,
  registryValidate,
  stateProjectAll,
  runIndexRead,
  appendContention,
  eventLogAppendContention,
  cliStartup,
  cliRegistry,
  cliTodoList,
  statusCli,
  statusCliWarm,
  statusInProcess,
  globalSummaryAgents,
  quotaShouldRunCli,
  quotaShouldRunInProcess,
  quotaShouldRunReceiptCli,
  mcpShouldRun,
  mcpServerMemory,
  mcpHeartbeat,
  refreshStateCli,
  refreshStateInProcess,
  taskLeaseAcquireCli,
  taskLeaseContentionCli,
  reprojectionOneGoal,
  turnOverhead,
  turnLoopGrowth,
  turnAtTenThousand,
  turnSnapshot,
  reviewViewFill,
  statusServerStatusJson,
  statusServerHealthz,
  statusServerFreshness,
  extensionActivation,
  extensionActivationEmpty,
  extensionExternalChange,
  extensionWebviewWarnings,
  extensionWebviewGoalDetail,
];

export function findBenchmark(name: string): Benchmark | undefined {
  return BENCHMARKS.find((benchmark) => benchmark.name === name);
}
