import type { Command } from 'commander';
import type { CliCommandKey } from '../../core/commands/catalog';
import type { CliContext, CommandOutput, GlobalOptions } from '../context';

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

/** Loads a command's module and returns its handler. */
export type CliHandlerLoader = () => Promise<CliHandler>;

/**
 * One handler per catalog entry with a CLI form; the type makes a missing one a compile error.
 * Each is loaded on demand: a command module builds its operation's schemas when it is first
 * imported, so `loopx quota should-run` loads (and pays for) the quota commands only, not every
 * command's. The bundle (scripts/build.mjs) keeps these `import()`s lazy: esbuild wraps each
 * command module and what only it uses in an initializer that runs on the first import.
 */
export const CLI_HANDLERS: Record<CliCommandKey, CliHandlerLoader> = {
  showCommands: () => import('./showCommands.js').then((m) => m.showCommandsCommand),
  version: () => import('./version.js').then((m) => m.versionCommand),
  validateRegistry: () => import('./registry.js').then((m) => m.validateRegistryCommand),
  createGoal: () => import('./bootstrap.js').then((m) => m.bootstrapCommand),
  registryPrivacy: () => import('./privacy.js').then((m) => m.registryPrivacyCommand),
  syncGlobal: () => import('./syncGlobal.js').then((m) => m.syncGlobalCommand),
  agentOnboard: () => import('./agentOnboard.js').then((m) => m.agentOnboardCommand),
  registerAgent: () => import('./registerAgent.js').then((m) => m.registerAgentCommand),
  configureGoal: () => import('./configureGoal.js').then((m) => m.configureGoalCommand),
  configureAgent: () => import('./agent.js').then((m) => m.configureAgentCommand),
  removeAgent: () => import('./agent.js').then((m) => m.removeAgentCommand),
  laneList: () => import('./lanes.js').then((m) => m.laneListCommand),
  laneMerge: () => import('./lanes.js').then((m) => m.laneMergeCommand),
  laneReject: () => import('./lanes.js').then((m) => m.laneRejectCommand),
  laneRemove: () => import('./lanes.js').then((m) => m.laneRemoveCommand),
  doctor: () => import('./doctor.js').then((m) => m.doctorCommand),
  archiveRuntime: () => import('./archiveRuntime.js').then((m) => m.archiveRuntimeCommand),
  reviewList: () => import('./review.js').then((m) => m.reviewListCommand),
  reviewRevert: () => import('./review.js').then((m) => m.reviewRevertCommand),
  todoAdd: () => import('./todo.js').then((m) => m.todoAddCommand),
  todoList: () => import('./todo.js').then((m) => m.todoListCommand),
  todoClaim: () => import('./todo.js').then((m) => m.todoClaimCommand),
  todoUpdate: () => import('./todo.js').then((m) => m.todoUpdateCommand),
  todoComplete: () => import('./todo.js').then((m) => m.todoCompleteCommand),
  todoSupersede: () => import('./todo.js').then((m) => m.todoSupersedeCommand),
  todoDefer: () => import('./todo.js').then((m) => m.todoDeferCommand),
  gateSetDue: () => import('./gate.js').then((m) => m.gateSetDueCommand),
  gateInbox: () => import('./gate.js').then((m) => m.gateInboxCommand),
  handoffModeShow: () => import('./handoffMode.js').then((m) => m.handoffModeShowCommand),
  handoffModeSet: () => import('./handoffMode.js').then((m) => m.handoffModeSetCommand),
  taskLeaseAcquire: () => import('./taskLease.js').then((m) => m.taskLeaseAcquireCommand),
  taskLeaseRenew: () => import('./taskLease.js').then((m) => m.taskLeaseRenewCommand),
  taskLeaseTransfer: () => import('./taskLease.js').then((m) => m.taskLeaseTransferCommand),
  taskLeaseRelease: () => import('./taskLease.js').then((m) => m.taskLeaseReleaseCommand),
  taskLeaseInspect: () => import('./taskLease.js').then((m) => m.taskLeaseInspectCommand),
  status: () => import('./status.js').then((m) => m.statusCommand),
  globalSummary: () => import('./globalViews.js').then((m) => m.globalSummaryCommand),
  globalGates: () => import('./globalViews.js').then((m) => m.globalGatesCommand),
  globalTodos: () => import('./globalViews.js').then((m) => m.globalTodosCommand),
  globalRisks: () => import('./globalViews.js').then((m) => m.globalRisksCommand),
  serveStatus: () => import('./serveStatus.js').then((m) => m.serveStatusCommand),
  mcpServe: () => import('./mcp.js').then((m) => m.mcpCommand),
  slashCommands: () => import('./slashCommands.js').then((m) => m.slashCommandsCommand),
  mcpInstall: () => import('./mcpInstall.js').then((m) => m.mcpInstallCommand),
  refreshState: () => import('./refreshState.js').then((m) => m.refreshStateCommand),
  heartbeatPrompt: () => import('./heartbeatPrompt.js').then((m) => m.heartbeatPromptCommand),
  quotaPlan: () => import('./quota.js').then((m) => m.quotaPlanCommand),
  evidenceLog: () => import('./evidenceLog.js').then((m) => m.evidenceLogCommand),
  quotaStatus: () => import('./quota.js').then((m) => m.quotaStatusCommand),
  quotaShouldRun: () => import('./quota.js').then((m) => m.quotaShouldRunCommand),
  quotaSpendSlot: () => import('./quota.js').then((m) => m.quotaSpendSlotCommand),
  quotaVoidSlot: () => import('./quota.js').then((m) => m.quotaVoidSlotCommand),
  quotaHistory: () => import('./quota.js').then((m) => m.quotaHistoryCommand),
  pauseGoal: () => import('./goalStopFlag.js').then((m) => m.pauseGoalCommand),
  resumeGoal: () => import('./goalStopFlag.js').then((m) => m.resumeGoalCommand),
  goalLifecycle: () => import('./goalStopFlag.js').then((m) => m.goalLifecycleCommand),
  turnPlan: () => import('./turn.js').then((m) => m.turnPlanCommand),
  turnRunOnce: () => import('./turn.js').then((m) => m.turnRunOnceCommand),
  turnLoop: () => import('./turn.js').then((m) => m.turnLoopCommand),
  turnInspectJournal: () => import('./turn.js').then((m) => m.turnInspectJournalCommand),
};
