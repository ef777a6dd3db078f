import type { Command } from 'commander';
import type { CliCommandKey } from '../../core/commands/catalog';
import type { CliContext, CommandOutput, GlobalOptions } from '../context';
import { showCommandsCommand } from './showCommands';
import { agentOnboardCommand } from './agentOnboard';
import { registerAgentCommand } from './registerAgent';
import { configureGoalCommand } from './configureGoal';
import { registryPrivacyCommand } from './privacy';
import { syncGlobalCommand } from './syncGlobal';
import { validateRegistryCommand } from './registry';
import { bootstrapCommand } from './bootstrap';
import { archiveRuntimeCommand } from './archiveRuntime';
import { refreshStateCommand } from './refreshState';
import { statusCommand } from './status';
import { globalGatesCommand, globalRisksCommand, globalSummaryCommand, globalTodosCommand } from './globalViews';
import { serveStatusCommand } from './serveStatus';
import { slashCommandsCommand } from './slashCommands';
import { heartbeatPromptCommand } from './heartbeatPrompt';
import { pauseGoalCommand, resumeGoalCommand } from './goalStopFlag';
import {
  evidenceLogCommand,
  quotaPlanCommand,
  quotaHistoryCommand,
  quotaShouldRunCommand,
  quotaSpendSlotCommand,
  quotaStatusCommand,
  quotaVoidSlotCommand,
} from './quota';
import { turnInspectJournalCommand, turnLoopCommand, turnPlanCommand, turnRunOnceCommand } from './turn';
import {
  taskLeaseAcquireCommand,
  taskLeaseInspectCommand,
  taskLeaseReleaseCommand,
  taskLeaseRenewCommand,
  taskLeaseTransferCommand,
} from './taskLease';
import { handoffModeSetCommand, handoffModeShowCommand } from './handoffMode';
import {
  todoAddCommand,
  todoClaimCommand,
  todoCompleteCommand,
  todoDeferCommand,
  todoListCommand,
  todoSupersedeCommand,
  todoUpdateCommand,
} from './todo';

export interface CliInvocation {
  /** The command's own options, as commander parsed them. */
  options: Record<string, unknown>;
  /** Positional arguments, in order. */
  args: string[];
  globals: GlobalOptions;
  ctx: CliContext;
}

export interface CliHandler {
  /** Adds the command's arguments and options. */
  configure?: (command: Command) => void;
  run: (invocation: CliInvocation) => Promise<CommandOutput> | CommandOutput;
}

/** One handler per catalog entry with a CLI form; the type makes a missing one a compile error. */
export const CLI_HANDLERS: Record<CliCommandKey, CliHandler> = {
  showCommands: showCommandsCommand,
  validateRegistry: validateRegistryCommand,
  createGoal: bootstrapCommand,
  registryPrivacy: registryPrivacyCommand,
  syncGlobal: syncGlobalCommand,
  agentOnboard: agentOnboardCommand,
  registerAgent: registerAgentCommand,
  configureGoal: configureGoalCommand,
  archiveRuntime: archiveRuntimeCommand,
  todoAdd: todoAddCommand,
  todoList: todoListCommand,
  todoClaim: todoClaimCommand,
  todoUpdate: todoUpdateCommand,
  todoComplete: todoCompleteCommand,
  todoSupersede: todoSupersedeCommand,
  todoDefer: todoDeferCommand,
  handoffModeShow: handoffModeShowCommand,
  handoffModeSet: handoffModeSetCommand,
  taskLeaseAcquire: taskLeaseAcquireCommand,
  taskLeaseRenew: taskLeaseRenewCommand,
  taskLeaseTransfer: taskLeaseTransferCommand,
  taskLeaseRelease: taskLeaseReleaseCommand,
  taskLeaseInspect: taskLeaseInspectCommand,
  status: statusCommand,
  globalSummary: globalSummaryCommand,
  globalGates: globalGatesCommand,
  globalTodos: globalTodosCommand,
  globalRisks: globalRisksCommand,
  serveStatus: serveStatusCommand,
  slashCommands: slashCommandsCommand,
  refreshState: refreshStateCommand,
  heartbeatPrompt: heartbeatPromptCommand,
  quotaPlan: quotaPlanCommand,
  evidenceLog: evidenceLogCommand,
  quotaStatus: quotaStatusCommand,
  quotaShouldRun: quotaShouldRunCommand,
  quotaSpendSlot: quotaSpendSlotCommand,
  quotaVoidSlot: quotaVoidSlotCommand,
  quotaHistory: quotaHistoryCommand,
  pauseGoal: pauseGoalCommand,
  resumeGoal: resumeGoalCommand,
  turnPlan: turnPlanCommand,
  turnRunOnce: turnRunOnceCommand,
  turnLoop: turnLoopCommand,
  turnInspectJournal: turnInspectJournalCommand,
};
