import { LaneDecorations } from './views/laneDecorations';
import { LaneState } from './workspace/laneState';
import { mergeLaneCommand, rejectLaneCommand, removeLaneCommand, showLanesCommand } from './commands/laneActions';
import * as vscode from 'vscode';
import { Disposable } from './common/disposable';
import { ActivationTimings } from './common/timings';
import { CONTEXT_KEYS, VIEW_IDS } from './core/commands/ids';
import { agentOnboardCommand } from './commands/agentOnboard';
import {
  configureAgentCommand,
  doctorCommand,
  removeAgentCommand,
  showAgentLastRunCommand,
} from './commands/agentSetup';
import { configureGoalCommand } from './commands/configureGoal';
import { connectAgentOverMcpCommand } from './commands/mcpInstall';
import { createGoal } from './commands/createGoal';
import { startGoalCommand } from './commands/startGoal';
import { registerAgentCommand } from './commands/registerAgent';
import { CommandFailures, registerPaletteCommands } from './commands/registerCommands';
import { showAllCommands } from './commands/showCommands';
import { refreshStateCommand, showQuotaCommand, showStatusCommand } from './commands/status';
import { addTodoCommand, listTodosCommand } from './commands/todos';
import {
  archiveRuntimeCommand,
  changePriorityCommand,
  claimTodoCommand,
  completeTodoCommand,
  decideGateCommand,
  deferTodoCommand,
  openInStateFileCommand,
  openRunEvidenceCommand,
  stopLoopCommand,
  supersedeTodoCommand,
} from './commands/treeActions';
import { releaseLeaseCommand, renewLeaseCommand, transferLeaseCommand } from './commands/leaseActions';
import { TerminalCli } from './terminal/cliPath';
import { TurnTerminals } from './terminal/turnTerminal';
import { TurnReviews } from './review/turnReview';
import { RestrictedModeView } from './views/restrictedView';
import { bundleDirOf, runLoopCommand, runOneTurnCommand, type TurnSurfaces } from './commands/turns';
import { installDemoAgentFrom } from './core/ops/host';
import { validateRegistries } from './commands/validateRegistry';
import { answerChat, RecordedAnswer, registerChatParticipant } from './chat/participant';
import { languageModelToolsApi, mcpProviderApi } from './lm/hostApi';
import { registerLanguageModelTools, type ToolEvent } from './lm/languageModelTools';
import { mcpServerDefinitions, registerMcpServerProvider } from './lm/mcpServerProvider';
import { createExtensionApi } from './api/extensionApi';
import { statusEvents } from './api/statusEvents';
import type { LoopxExtensionApi } from './api/types';
import { LOOPX_VERSION } from './core/version';
import { showGlobalView } from './server/globalViewCommands';
import { StatusServerController } from './server/statusServerController';
import { AgentsView } from './views/agentsView';
import { ReviewView } from './views/reviewView';
import { ReviewQueue, reviewTarget } from './review/reviewQueue';
import { GoalsView } from './views/goalsView';
import { setStopFlagCommand } from './commands/goalStopFlag';
import { quotaOverviewCommand } from './commands/quotaOverview';
import { pickGoal } from './commands/pickers';
import { QuotaIndicator } from './statusBar/quotaIndicator';
import { GoalDetailWebviews } from './webviews/goalDetail/goalDetailWebview';
import { WarningsWebviews } from './webviews/warnings/warningsWebview';
import { snapshotTree } from './views/treeSnapshot';
import { WorkspaceModel } from './workspace/workspaceModel';
import { GateInboxView } from './views/gateInboxView';
import { gateInboxCommand, setGateDueCommand } from './commands/gateInbox';
import { AttentionNotifier } from './notifications/attentionNotifier';

/** Wires the surfaces to the control plane. Owns every registration it makes. */
export class LoopxApp extends Disposable {
  readonly model: WorkspaceModel;
  private extensionApi: LoopxExtensionApi | undefined;

  private readonly timings: ActivationTimings;

  constructor(
    context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    activateStartedAt: number = performance.now(),
    private readonly stopActivationProfile: (() => void) | undefined = undefined,
  ) {
    super();
    this.timings = new ActivationTimings(activateStartedAt);
    this.model = this.register(new WorkspaceModel(log));
    this.timings.phase('model');
    const goalsView = this.register(
      new GoalsView(
        VIEW_IDS.goals,
        this.model,
        (what) => (what === 'listed' ? this.timings.goalsShown() : this.timings.goalsFilledShown()),
        (goalIds) => {
          const started = this.model.reloadStartedAt;
          this.timings.mark(
            'tree-refresh',
            goalIds.join(','),
            started === undefined ? null : performance.now() - started,
          );
        },
      ),
    );
    // Hidden command for the integration tests: which goal nodes the tree refreshed since the last call.
    this.register(vscode.commands.registerCommand('_loopx.takeTreeRefreshes', () => goalsView.takeRefreshes()));
    this.register(new RestrictedModeView(VIEW_IDS.restricted));
    const terminalCli = this.register(new TerminalCli(context, log));
    this.timings.phase('cliPath');
    // Hidden command for the integration tests: the launcher, the decision, and the PATH and LOOPX_CLI changes new terminals get.
    this.register(
      vscode.commands.registerCommand('_loopx.terminalCliPath', () => ({
        ...terminalCli.state,
        path: context.environmentVariableCollection.get('PATH'),
        loopxCli: context.environmentVariableCollection.get('LOOPX_CLI'),
      })),
    );
    const warnings = this.register(
      new WarningsWebviews(context.extensionUri, this.model, log, (event) => this.timings.mark(event, 'warnings')),
    );
    const goalDetail = this.register(
      new GoalDetailWebviews(context.extensionUri, this.model, log, (event) => this.timings.mark(event, 'goal-detail')),
    );
    const reviewQueue = this.register(new ReviewQueue(this.model, context.workspaceState, log));
    const gateInbox = this.register(new GateInboxView(VIEW_IDS.gateInbox, this.model));
    this.register(new AttentionNotifier(this.model, log));
    // Hidden command for the tests: the Gate Inbox view's rows, as rendered.
    this.register(
      vscode.commands.registerCommand('_loopx.gateInboxSnapshot', async () => {
        await gateInbox.settled();
        return snapshotTree(gateInbox, 1);
      }),
    );
    const indicator = this.register(
      new QuotaIndicator(
        this.model,
        () => warnings.count,
        () => reviewQueue.unreviewed().length,
        () => gateInbox.overdueCount,
        gateInbox.onDidChangeTreeData,
      ),
    );
    const reviewView = this.register(new ReviewView(VIEW_IDS.review, reviewQueue));
    this.register(reviewQueue.onDidChangeQueue(() => indicator.refresh()));
    // Hidden commands: the Review view as rendered (after a fresh read of the queue), for tests.
    this.register(
      vscode.commands.registerCommand('_loopx.review.snapshot', async () => {
        await reviewQueue.reload();
        return reviewView.snapshot();
      }),
    );
    this.timings.phase('webviews+statusBar');
    this.register(
      goalsView.treeView.onDidChangeSelection((e) => {
        const node = e.selection[0];
        indicator.select(node !== undefined && 'goal' in node ? node.goal : undefined);
      }),
    );
    // Hidden (underscore) command for the benchmark harness; not part of the catalog.
    this.register(vscode.commands.registerCommand('_loopx.activationTimings', () => this.timings.snapshot()));
    const lanes = this.register(new LaneState(this.model));
    const laneDecorations = this.register(new LaneDecorations(lanes));
    // Hidden command for the integration tests: the files lanes change (decorated) and the edit banners shown.
    this.register(
      vscode.commands.registerCommand('_loopx.laneDecorations', async () => {
        await lanes.refresh();
        return {
          files: lanes.changedFiles().map((f) => ({
            file: f.file,
            agents: f.agents,
            badge: laneDecorations.provideFileDecoration(vscode.Uri.file(f.file))?.badge ?? null,
          })),
          banners: laneDecorations.bannersShown,
        };
      }),
    );
    const agentsView = this.register(new AgentsView(VIEW_IDS.agents, this.model, lanes));
    // Hidden command for the integration tests: what the Goals or Agents view renders, item by item.
    this.register(
      // It reads the filled views: after the reloads asked for so far (both passes: listed, then status read).
      vscode.commands.registerCommand(
        '_loopx.treeSnapshot',
        async (view: unknown, depth: unknown, tooltips: unknown) => {
          await this.model.settled();
          const levels = typeof depth === 'number' ? depth : 3;
          return view === 'agents'
            ? snapshotTree(agentsView, levels, undefined, tooltips === true)
            : snapshotTree(goalsView, levels, undefined, tooltips === true);
        },
      ),
    );
    const validation = this.register(vscode.languages.createDiagnosticCollection('loopx-validation'));
    const statusServer = this.register(new StatusServerController(context, this.model, log));
    // Hidden commands for the integration tests: the servers with their handed-out URLs; the extra file watchers.
    this.register(vscode.commands.registerCommand('_loopx.statusServers', () => statusServer.served()));
    this.register(vscode.commands.registerCommand('_loopx.watchedPaths', () => this.model.watchedPaths));
    this.timings.phase('agents+statusServer');
    const failures = new CommandFailures();
    // Hidden command for the integration tests: the quick picks the status bar's click showed since the last call.
    let quickPicksShown: { title: string; labels: string[] }[] = [];
    this.register(
      vscode.commands.registerCommand('_loopx.takeQuotaOverviewPicks', () => {
        const taken = quickPicksShown;
        quickPicksShown = [];
        return taken;
      }),
    );
    // Hidden command: the palette commands that failed or were refused since the last call (tests read it).
    this.register(vscode.commands.registerCommand('_loopx.takeCommandFailures', () => failures.take()));
    // The composition root: the built-in demo agent is the bundle installed with the extension.
    installDemoAgentFrom(bundleDirOf(context));
    this.timings.phase('demoAgent');
    const turns: TurnSurfaces = {
      model: this.model,
      log,
      terminals: this.register(new TurnTerminals()),
      reviews: this.register(new TurnReviews()),
      lmAccess: context.languageModelAccessInformation,
    };
    this.register(registerChatParticipant(this.model, context.extensionUri));
    // Tools for agents in the editor (feature-checked: absent before VS Code 1.95 / 1.101, nothing registered).
    const toolEvents: ToolEvent[] = [];
    this.register(
      registerLanguageModelTools(
        {
          registryOf: (goalId) =>
            this.model.findGoal(goalId)?.registryPath ??
            (this.model.snapshots.length === 1 ? this.model.snapshots[0]?.registryPath : undefined),
        },
        (event) => toolEvents.push(event),
      ),
    );
    this.register(registerMcpServerProvider(context.extensionPath, this.model.onDidChange));
    // Hidden commands for the integration tests: the MCP servers the provider offers; what the tools went through since the last call.
    this.register(
      vscode.commands.registerCommand('_loopx.mcpServerDefinitions', () => mcpServerDefinitions(context.extensionPath)),
    );
    this.register(vscode.commands.registerCommand('_loopx.takeToolEvents', () => toolEvents.splice(0)));
    this.register(
      vscode.commands.registerCommand('_loopx.agentToolSupport', () => ({
        languageModelTools: languageModelToolsApi() !== undefined,
        mcpProvider: mcpProviderApi() !== undefined,
      })),
    );
    this.timings.phase('chat');
    // Hidden command: runs @loopx's handler on a recorder, for tests and where the chat view cannot be driven.
    this.register(
      vscode.commands.registerCommand('_loopx.chatRequest', async (command?: string, prompt = '') => {
        const answer = new RecordedAnswer();
        const source = new vscode.CancellationTokenSource();
        try {
          const result = await answerChat(this.model, { command, prompt }, answer, source.token);
          return { result, parts: answer.parts };
        } finally {
          source.dispose();
        }
      }),
    );
    for (const d of registerPaletteCommands(
      {
        showCommands: () => showAllCommands(),
        refresh: () => this.model.reload(),
        showLog: () => this.log.show(),
        validateRegistry: () => validateRegistries(this.model, validation, this.log),
        createGoal: (arg) => createGoal(this.model, this.log, arg),
        startGoal: (arg) => startGoalCommand(this.model, this.log, arg),
        agentOnboard: () => agentOnboardCommand(this.model),
        mcpInstall: (arg) => connectAgentOverMcpCommand(context.extensionPath, arg),
        registerAgent: (arg) => registerAgentCommand(this.model, arg),
        configureGoal: (arg) => configureGoalCommand(this.model, arg),
        configureAgent: (arg) => configureAgentCommand(this.model, arg),
        removeAgent: (arg) => removeAgentCommand(this.model, arg),
        laneList: (arg) => showLanesCommand(this.model, arg),
        laneMerge: (arg) => mergeLaneCommand(this.model, arg),
        laneReject: (arg) => rejectLaneCommand(this.model, arg),
        laneRemove: (arg) => removeLaneCommand(this.model, arg),
        showAgentLastRun: (arg) => showAgentLastRunCommand(arg),
        doctor: () => doctorCommand(this.model, () => statusServer.served()),
        todoAdd: (arg) => addTodoCommand(this.model, arg),
        todoList: (arg) => listTodosCommand(this.model, arg),
        status: () => showStatusCommand(this.model),
        refreshState: (arg) => refreshStateCommand(this.model, arg),
        quotaStatus: (arg) => showQuotaCommand(this.model, arg),
        turnRunOnce: (arg) => runOneTurnCommand(turns, arg),
        turnLoop: (arg) => runLoopCommand(turns, arg),
        stopLoop: (arg) => stopLoopCommand(this.model, arg),
        gateApprove: (arg) => decideGateCommand(this.model, arg, 'approve'),
        gateReject: (arg) => decideGateCommand(this.model, arg, 'reject'),
        gateSetDue: (arg) => setGateDueCommand(this.model, gateInbox, arg),
        gateInbox: (arg) => gateInboxCommand(this.model, gateInbox, arg),
        todoComplete: (arg) => completeTodoCommand(this.model, arg),
        todoClaim: (arg) => claimTodoCommand(this.model, arg),
        todoDefer: (arg) => deferTodoCommand(this.model, arg),
        todoSupersede: (arg) => supersedeTodoCommand(this.model, arg),
        todoUpdate: (arg) => changePriorityCommand(this.model, arg),
        taskLeaseRenew: (arg) => renewLeaseCommand(this.model, arg),
        taskLeaseTransfer: (arg) => transferLeaseCommand(this.model, arg),
        taskLeaseRelease: (arg) => releaseLeaseCommand(this.model, arg),
        openInStateFile: (arg) => openInStateFileCommand(this.model, arg),
        openRunEvidence: (arg) => openRunEvidenceCommand(arg),
        reviewList: () => vscode.commands.executeCommand(`${VIEW_IDS.review}.focus`),
        reviewRevert: (arg) => reviewQueue.revert(reviewTarget(arg)),
        reviewMarkReviewed: (arg) => reviewQueue.markReviewed(reviewTarget(arg), false),
        reviewMarkAllReviewed: (arg) => reviewQueue.markReviewed(reviewTarget(arg), true),
        reviewOpenDiff: (arg) => reviewQueue.openDiff(reviewTarget(arg)),
        reviewOpenEvidence: (arg) => reviewQueue.openEvidence(reviewTarget(arg)),
        archiveRuntime: (arg) => archiveRuntimeCommand(this.model, arg),
        globalSummary: () => showGlobalView(this.model, 'global-summary'),
        globalGates: () => showGlobalView(this.model, 'global-gates'),
        globalTodos: () => showGlobalView(this.model, 'global-todos'),
        globalRisks: () => showGlobalView(this.model, 'global-risks'),
        copyStatusServerUrl: (arg) => statusServer.copyUrl(arg),
        pauseGoal: (arg) => setStopFlagCommand(this.model, arg, 'pause'),
        resumeGoal: (arg) => setStopFlagCommand(this.model, arg, 'resume'),
        showProjectionWarnings: () => warnings.show(),
        showGoalDetail: async (arg) =>
          goalDetail.show(await pickGoal(this.model, arg, vscode.l10n.t('Show the detail of which goal?'))),
        quotaOverview: () =>
          quotaOverviewCommand(
            this.model,
            (goal) => indicator.inputOf(goal),
            (title, labels) => quickPicksShown.push({ title, labels: [...labels] }),
          ),
      },
      log,
      failures,
    ))
      this.register(d);
    this.timings.phase('commands');
    this.register(
      this.model.onDidChange(() => {
        void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.hasGoals, this.model.goals.length > 0);
      }),
    );
  }

  async start(): Promise<void> {
    this.log.info(
      `LoopX ${LOOPX_VERSION} activating (VS Code ${vscode.version}, trusted: ${vscode.workspace.isTrusted})`,
    );
    this.timings.phase('constructed');
    // activate() returns once the goals are listed from the registry; their status and quota fill in
    // after (the model's second pass refreshes their nodes; `_loopx.treeSnapshot` waits for it).
    await new Promise<void>((resolve, reject) => {
      this.model.reload({ listed: resolve }).then(
        () => {
          this.timings.phase('loaded');
          this.timings.modelLoaded(this.model.goals.length);
          this.stopActivationProfile?.();
          this.log.info(
            `loaded ${this.model.goals.length} goal(s) in ${this.timings.snapshot().activateToModelMs?.toFixed(0) ?? '?'} ms`,
          );
          resolve();
        },
        (error: unknown) => {
          this.log.error(`loading the goals failed: ${String(error)}`);
          reject(error);
        },
      );
    });
    this.timings.phase('listed');
    // Not awaited: the context key reaches the window's renderer on its own, and a round trip to a
    // busy renderer would count in activation (measured: ~120 ms of 200 ms on a loaded machine).
    void vscode.commands.executeCommand('setContext', CONTEXT_KEYS.ready, true);
    this.timings.started();
  }

  /** The API other extensions get from `getExtension(...).exports`. */
  get api(): LoopxExtensionApi {
    return (this.extensionApi ??= createExtensionApi(this.model, statusEvents(this.model.onDidChangeStatus)));
  }
}
