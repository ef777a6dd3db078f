import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { ProjectionWarning } from '../core/status/projection/schemas';
import type { StatusReplanObligation, StatusTodoItem } from '../core/status/goalStatus';
import type { GoalSummary, RegistrySnapshot } from '../core/ops/goalRows';
import { gateStateWord, goalStatusWord, quotaStateWord, todoStatusWord } from '../common/words';
import { leaseLabel, type RecentRun } from '../workspace/goalExtras';
import type { FolderGoals } from '../workspace/registrySources';
import { goalKey, type WorkspaceModel } from '../workspace/workspaceModel';
import { mergeGateLaneOf } from '../core/ops/lanes';
import type { GateNode, GoalNode, TodoNode } from './nodes';

type GroupKind = 'agentTodos' | 'userTodos' | 'gates' | 'warnings' | 'runs';

export type GoalsNode =
  | GoalNode
  | { kind: 'group'; goal: GoalSummary; group: GroupKind; label: string; count: number }
  | TodoNode
  | { kind: 'run'; goal: GoalSummary; run: RecentRun; index: number }
  | GateNode
  | { kind: 'warning'; goal: GoalSummary; warning: ProjectionWarning; index: number }
  | { kind: 'replan'; goal: GoalSummary; replan: StatusReplanObligation }
  | { kind: 'detail'; id: string; label: string; description?: string; icon: string; tooltip?: string; color?: string }
  | { kind: 'registryError'; snapshot: Extract<RegistrySnapshot, { ok: false }> }
  | { kind: 'folder'; folder: FolderGoals['folder']; goals: GoalSummary[] };

const TODO_ICONS: Record<StatusTodoItem['status'], string> = {
  open: 'circle-large-outline',
  done: 'pass',
  blocked: 'circle-slash',
  deferred: 'clock',
};

/**
 * The Goals view: every goal of the workspace's registries, with its Next Action, drift warnings,
 * todos, open gates, quota and agents. Empty → the welcome content offers "Create Goal".
 */
export class GoalsView extends Disposable implements vscode.TreeDataProvider<GoalsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<GoalsNode | GoalsNode[] | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly treeView: vscode.TreeView<GoalsNode>;
  /** One node object per goal, kept across reloads: VS Code refreshes a node by identity. */
  private readonly goalNodes = new Map<string, Extract<GoalsNode, { kind: 'goal' }>>();
  /** The refreshes fired, newest last (goal ids, or `*` for the whole tree), for tests through a hidden command. */
  private refreshes: string[][] = [];

  constructor(
    viewId: string,
    private readonly model: WorkspaceModel,
    /** The view handed VS Code goals: listed from the registry, or a goal with its status read. */
    private readonly onShown: (what: 'listed' | 'filled') => void = () => {},
    private readonly onRefreshed: (goalIds: readonly string[]) => void = () => {},
  ) {
    super();
    this.treeView = this.register(
      vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true }),
    );
    this.register(model.onDidChangeGoals((goals) => this.refresh(goals)));
  }

  /** Refreshes the changed goals' nodes only, or the whole tree when goals came or went. */
  private refresh(goals: 'all' | GoalSummary[]): void {
    this.updateBadge();
    const nodes = goals === 'all' ? undefined : goals.map((g) => this.goalNodes.get(goalKey(g)));
    if (nodes === undefined || nodes.some((n) => n === undefined)) {
      this.record(['*']);
      this.changed.fire(undefined);
      this.onRefreshed(['*']);
      return;
    }
    const known = nodes.filter((n) => n !== undefined);
    for (const node of known) node.goal = this.model.findGoal(node.goal.goalId, node.goal.registryPath) ?? node.goal;
    this.record(known.map((n) => n.goal.goalId));
    this.changed.fire(known);
    this.onRefreshed(known.map((n) => n.goal.goalId));
  }

  private record(entry: string[]): void {
    this.refreshes.push(entry);
    if (this.refreshes.length > 100) this.refreshes.shift();
  }

  /** The refreshes fired since the last call (and clears them). */
  takeRefreshes(): string[][] {
    const taken = this.refreshes;
    this.refreshes = [];
    return taken;
  }

  /** The view's badge: how many gates wait for a person across the workspace's goals. */
  private updateBadge(): void {
    const open = this.model.goals.reduce(
      (sum, goal) =>
        sum + (this.model.detailsOf(goal)?.status?.open_gates.filter((g) => g.gate_state === 'open').length ?? 0),
      0,
    );
    this.treeView.badge =
      open > 0
        ? {
            value: open,
            tooltip: open === 1 ? vscode.l10n.t('1 gate needs you') : vscode.l10n.t('{0} gates need you', open),
          }
        : undefined;
  }

  getTreeItem(node: GoalsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'goal':
        return this.goalItem(node.goal);
      case 'group': {
        const item = new vscode.TreeItem(
          node.label,
          node.count > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
        );
        item.id = `${goalKey(node.goal)}:${node.group}`;
        item.description = String(node.count);
        item.contextValue = `group.${node.group}`;
        item.iconPath = new vscode.ThemeIcon(
          { agentTodos: 'hubot', userTodos: 'person', gates: 'shield', warnings: 'warning', runs: 'history' }[
            node.group
          ],
        );
        return item;
      }
      case 'todo': {
        const { todo } = node;
        const item = new vscode.TreeItem(todo.title, vscode.TreeItemCollapsibleState.None);
        item.id = `${goalKey(node.goal)}:todo:${todo.todo_id}`;
        const lease = this.model.leasesOf(node.goal).get(todo.todo_id);
        const leased = lease === undefined ? null : leaseLabel(lease, new Date());
        item.description = [
          todo.priority,
          todo.status !== 'open' ? todoStatusWord(todo.status) : null,
          todo.claimed_by ? `@${todo.claimed_by}` : null,
          leased?.description ?? null,
        ]
          .filter(Boolean)
          .join(' · ');
        const heldBy = this.gatesHolding(node.goal, todo.todo_id);
        if (heldBy.length > 0)
          item.description = [item.description, vscode.l10n.t('held by gate')].filter(Boolean).join(' · ');
        item.tooltip = `${todo.text}\n\n${todo.todo_id}${todo.task_class ? ` · ${todo.task_class}` : ''}${heldBy.length > 0 ? `\n${vscode.l10n.t('held back by: {0}', heldBy.join(', '))}` : ''}${leased === null ? '' : `\n${leased.tooltip}`}`;
        item.contextValue = `todo.${todo.status}.${node.role}${lease === undefined ? '' : '.leased'}`;
        item.iconPath = new vscode.ThemeIcon(heldBy.length > 0 ? 'lock' : TODO_ICONS[todo.status]);
        return item;
      }
      case 'run':
        return this.runItem(node);
      case 'gate': {
        const { gate } = node;
        const item = new vscode.TreeItem(gate.title, vscode.TreeItemCollapsibleState.None);
        item.id = `${goalKey(node.goal)}:gate:${gate.todo_id}`;
        const holds =
          gate.blocked_todo_ids.length > 0 ? vscode.l10n.t('holds {0}', gate.blocked_todo_ids.length) : null;
        item.description = [
          gate.gate_state !== 'open' ? gateStateWord(gate.gate_state) : null,
          gate.blocks_agent ? `@${gate.blocks_agent}` : gate.global_gate ? vscode.l10n.t('all agents') : null,
          holds,
        ]
          .filter(Boolean)
          .join(' · ');
        item.tooltip = `${gate.text}\n\n${gate.todo_id}${gate.blocked_todo_ids.length > 0 ? `\n${vscode.l10n.t('holds back: {0}', gate.blocked_todo_ids.join(', '))}` : ''}`;
        // A merge-lane gate is decided by Merge Lane / Send Lane Back, not the bare Approve (docs/lanes.md).
        item.contextValue = `gate.${gate.gate_state}${mergeGateLaneOf(gate.title) === null ? '' : '.merge'}`;
        item.iconPath = new vscode.ThemeIcon('shield', new vscode.ThemeColor('list.warningForeground'));
        item.command = this.openStateFileAt(node.goal, gate.line);
        return item;
      }
      case 'warning': {
        const { warning } = node;
        const item = new vscode.TreeItem(warning.message, vscode.TreeItemCollapsibleState.None);
        item.id = `${goalKey(node.goal)}:warning:${warning.id}`;
        item.tooltip = warning.message;
        item.contextValue = `warning.${warning.kind}`;
        item.iconPath = new vscode.ThemeIcon(
          warning.severity === 'warning' ? 'warning' : 'info',
          new vscode.ThemeColor(
            warning.severity === 'warning' ? 'problemsWarningIcon.foreground' : 'problemsInfoIcon.foreground',
          ),
        );
        return item;
      }
      case 'replan':
        return this.replanItem(node);
      case 'detail': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        item.iconPath = new vscode.ThemeIcon(node.icon, node.color ? new vscode.ThemeColor(node.color) : undefined);
        if (node.tooltip) item.tooltip = node.tooltip;
        return item;
      }
      case 'registryError':
        return this.registryErrorItem(node.snapshot);
      case 'folder':
        return this.folderItem(node);
    }
  }

  getChildren(node?: GoalsNode): GoalsNode[] {
    if (!node) {
      const errors: GoalsNode[] = this.model.snapshots.flatMap((s) =>
        s.ok ? [] : [{ kind: 'registryError' as const, snapshot: s }],
      );
      const goals = this.model.goals;
      if (goals.length > 0) this.onShown('listed');
      const keys = new Set(goals.map(goalKey));
      for (const key of this.goalNodes.keys()) if (!keys.has(key)) this.goalNodes.delete(key);
      // A window with several folders: a node per folder, its goals below it.
      const byFolder = this.model.goalsByFolder();
      if (byFolder !== null) return [...errors, ...byFolder.map((entry) => ({ kind: 'folder' as const, ...entry }))];
      return [...errors, ...this.goalNodesOf(goals)];
    }
    switch (node.kind) {
      case 'goal':
        return this.goalChildren(node.goal);
      case 'group':
        return this.groupChildren(node);
      case 'folder':
        return this.goalNodesOf(node.goals);
      default:
        return [];
    }
  }

  /** The goals' nodes: one object per goal, kept across reloads. */
  private goalNodesOf(goals: readonly GoalSummary[]): GoalsNode[] {
    return goals.map((goal) => {
      const key = goalKey(goal);
      const node = this.goalNodes.get(key) ?? { kind: 'goal' as const, goal };
      node.goal = goal;
      this.goalNodes.set(key, node);
      return node;
    });
  }

  private folderItem(node: Extract<GoalsNode, { kind: 'folder' }>): vscode.TreeItem {
    const count = node.goals.length;
    const item = new vscode.TreeItem(
      node.folder.name,
      count > 0 ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `folder:${node.folder.path}`;
    item.description =
      count === 0
        ? vscode.l10n.t('no goals')
        : count === 1
          ? vscode.l10n.t('1 goal')
          : vscode.l10n.t('{0} goals', count);
    item.tooltip = node.folder.path;
    item.contextValue = 'folder';
    item.iconPath = new vscode.ThemeIcon('root-folder');
    return item;
  }

  private goalItem(goal: GoalSummary): vscode.TreeItem {
    const details = this.model.detailsOf(goal);
    const status = details?.status;
    if (status !== undefined) this.onShown('filled');
    const item = new vscode.TreeItem(goal.displayName, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `goal:${goalKey(goal)}`;
    const parts = [goal.displayName === goal.goalId ? null : goal.goalId];
    if (status) {
      parts.push(vscode.l10n.t('{0} open', status.agent_todos?.open_count ?? 0));
      if (status.open_gates.length > 0)
        parts.push(
          status.open_gates.length === 1
            ? vscode.l10n.t('1 gate')
            : vscode.l10n.t('{0} gates', status.open_gates.length),
        );
    }
    // An unreadable run index is slot use unknown, never "0/N slots".
    if (status?.run_index_unreadable !== undefined) parts.push(vscode.l10n.t('slots unknown'));
    else if (details?.quota)
      parts.push(vscode.l10n.t('{0}/{1} slots', details.quota.spent_slots, details.quota.allowed_slots));
    if (this.model.isReading(goal)) parts.push(vscode.l10n.t('reading status…'));
    const running = this.model.isLoopRunning(goal);
    if (running) parts.unshift(vscode.l10n.t('loop running'));
    else if (goal.status === 'paused' || goal.status === 'stopped') parts.unshift(goalStatusWord(goal.status));
    item.description = parts.filter(Boolean).join(' · ');
    item.contextValue = `goal.${goal.status}${running ? '.running' : ''}`;
    const attention =
      (status?.projection_warnings.some((w) => w.severity === 'warning') ?? false) ||
      (status?.replan_obligations?.length ?? 0) > 0 ||
      status?.run_index_unreadable !== undefined ||
      (details?.quota?.exceeded ?? false);
    item.iconPath = new vscode.ThemeIcon(
      running
        ? 'sync~spin'
        : goal.status === 'active'
          ? 'target'
          : goal.status === 'paused'
            ? 'debug-pause'
            : 'circle-outline',
      attention ? new vscode.ThemeColor('list.warningForeground') : undefined,
    );
    return item;
  }

  /**
   * The Markdown tooltips (goal, run, replan) are given on hover (`resolveTreeItem`), not with the
   * item: the host parses each Markdown tooltip it is handed, 100 goals at every fill on M.
   */
  resolveTreeItem(item: vscode.TreeItem, node: GoalsNode): vscode.TreeItem {
    if (item.tooltip === undefined) {
      const tooltip = this.markdownTooltip(node);
      if (tooltip !== undefined) item.tooltip = tooltip;
    }
    return item;
  }

  /** The tooltip of a goal, run or replan node (undefined for the others, whose items carry theirs). */
  private markdownTooltip(node: GoalsNode): vscode.MarkdownString | undefined {
    switch (node.kind) {
      case 'goal':
        return this.goalTooltip(node.goal);
      case 'run':
        return runTooltip(node.run);
      case 'replan':
        return replanTooltip(node.replan);
      default:
        return undefined;
    }
  }

  private goalTooltip(goal: GoalSummary): vscode.MarkdownString {
    const status = this.model.detailsOf(goal)?.status;
    const tooltip = new vscode.MarkdownString();
    tooltip
      .appendMarkdown('**')
      .appendText(goal.displayName)
      .appendMarkdown('** ')
      .appendText(
        vscode.l10n.t('({0}) — {1}, project {2}', goal.goalId, goalStatusWord(goal.status), basename(goal.projectRoot)),
      );
    if (status?.active_state_next_action)
      tooltip.appendMarkdown(`\n\n${vscode.l10n.t('Next Action: ')}`).appendText(status.active_state_next_action);
    return tooltip;
  }

  private goalChildren(goal: GoalSummary): GoalsNode[] {
    const key = goalKey(goal);
    const details = this.model.detailsOf(goal);
    const status = details?.status;
    const nodes: GoalsNode[] = [];
    if (status) {
      if (status.run_index_unreadable !== undefined)
        nodes.push({
          kind: 'detail',
          id: `${key}:runIndexUnreadable`,
          label: vscode.l10n.t('Run index unreadable'),
          description: vscode.l10n.t('runs and slot use unknown; no turn is admitted'),
          icon: 'warning',
          tooltip: status.run_index_unreadable,
        });
      // What needs a person comes first.
      if (status.open_gates.length > 0)
        nodes.push({
          kind: 'group',
          goal,
          group: 'gates',
          label: vscode.l10n.t('Needs you'),
          count: status.open_gates.length,
        });
      const next = status.active_state_next_action;
      nodes.push({
        kind: 'detail',
        id: `${key}:next`,
        label: next ?? vscode.l10n.t('No Next Action'),
        description: next ? vscode.l10n.t('Next Action') : vscode.l10n.t('add one under "## Next Action"'),
        icon: 'arrow-right',
        ...(next ? { tooltip: next } : {}),
      });
      const warningCount = status.projection_warnings.length + (status.replan_obligations?.length ?? 0);
      if (warningCount > 0)
        nodes.push({ kind: 'group', goal, group: 'warnings', label: vscode.l10n.t('Warnings'), count: warningCount });
      nodes.push({
        kind: 'group',
        goal,
        group: 'agentTodos',
        label: vscode.l10n.t('Agent Todos'),
        count: (status.agent_todos?.open_count ?? 0) + (status.agent_todos?.blocked_count ?? 0),
      });
      const userTodos = (status.user_todos?.items ?? []).filter((t) => !t.done && t.task_class !== 'user_gate');
      if (userTodos.length > 0)
        nodes.push({
          kind: 'group',
          goal,
          group: 'userTodos',
          label: vscode.l10n.t('User Todos'),
          count: userTodos.length,
        });
    } else if (this.model.isReading(goal)) {
      nodes.push({
        kind: 'detail',
        id: `${key}:reading`,
        label: vscode.l10n.t('Reading status…'),
        icon: 'loading~spin',
      });
    } else if (goal.stateFile) {
      nodes.push({
        kind: 'detail',
        id: `${key}:state`,
        label: vscode.l10n.t('State file could not be read'),
        icon: 'error',
        color: 'problemsErrorIcon.foreground',
        tooltip: goal.stateFile,
      });
    }
    const runs = this.model.recentRunsOf(goal);
    if (runs.length > 0)
      nodes.push({ kind: 'group', goal, group: 'runs', label: vscode.l10n.t('Recent runs'), count: runs.length });
    const quota = details?.quota;
    nodes.push(
      quota
        ? {
            kind: 'detail',
            id: `${key}:quota`,
            label: vscode.l10n.t('Quota'),
            icon: 'dashboard',
            description: vscode.l10n.t(
              '{0} · {1}/{2} slots in {3} h',
              quotaStateWord(quota.state),
              quota.spent_slots,
              quota.allowed_slots,
              quota.window_hours,
            ),
            tooltip: quota.reason,
            ...(quota.exceeded
              ? { color: 'problemsErrorIcon.foreground' }
              : quota.warn
                ? { color: 'problemsWarningIcon.foreground' }
                : {}),
          }
        : {
            kind: 'detail',
            id: `${key}:quota`,
            label: vscode.l10n.t('Quota'),
            icon: 'dashboard',
            description: vscode.l10n.t('{0} slots per {1} h', goal.quota.allowed_slots, goal.quota.window_hours),
          },
    );
    nodes.push({
      kind: 'detail',
      id: `${key}:agents`,
      label: vscode.l10n.t('Agents'),
      icon: 'person',
      description: goal.agents.length > 0 ? goal.agents.join(', ') : vscode.l10n.t('none registered'),
    });
    return nodes;
  }

  private groupChildren(node: Extract<GoalsNode, { kind: 'group' }>): GoalsNode[] {
    if (node.group === 'runs')
      return this.model
        .recentRunsShown(node.goal)
        .map((run, index) => ({ kind: 'run' as const, goal: node.goal, run, index }));
    const status = this.model.detailsOf(node.goal)?.status;
    if (!status) return [];
    switch (node.group) {
      case 'agentTodos':
        return (status.agent_todos?.items ?? [])
          .filter((t) => t.status === 'open' || t.status === 'blocked')
          .map((todo) => ({ kind: 'todo' as const, goal: node.goal, todo, role: 'agent' as const }));
      case 'userTodos':
        return (status.user_todos?.items ?? [])
          .filter((t) => !t.done && t.task_class !== 'user_gate')
          .map((todo) => ({ kind: 'todo' as const, goal: node.goal, todo, role: 'user' as const }));
      case 'gates':
        return status.open_gates.map((gate) => ({ kind: 'gate' as const, goal: node.goal, gate }));
      case 'warnings':
        return [
          ...(status.replan_obligations ?? []).map((replan) => ({ kind: 'replan' as const, goal: node.goal, replan })),
          ...status.projection_warnings.map((warning, index) => ({
            kind: 'warning' as const,
            goal: node.goal,
            warning,
            index,
          })),
        ];
    }
  }

  /** An open replan obligation: the lane, how many turns stalled since when; click opens the warnings panel. */
  private replanItem(node: Extract<GoalsNode, { kind: 'replan' }>): vscode.TreeItem {
    const { replan } = node;
    const item = new vscode.TreeItem(vscode.l10n.t('Replan required'), vscode.TreeItemCollapsibleState.None);
    item.id = `${goalKey(node.goal)}:replan:${replan.obligation.obligation_id}`;
    item.description = [
      replan.agent_id ? `@${replan.agent_id}` : null,
      replan.stalled_runs.length === 1
        ? vscode.l10n.t('1 stalled turn')
        : vscode.l10n.t('{0} stalled turns', replan.stalled_runs.length),
      replan.since ? vscode.l10n.t('since {0}', replan.since) : null,
    ]
      .filter(Boolean)
      .join(' · ');
    item.contextValue = 'warning.replan';
    item.iconPath = new vscode.ThemeIcon('warning', new vscode.ThemeColor('problemsWarningIcon.foreground'));
    item.command = { command: 'loopx.showProjectionWarnings', title: vscode.l10n.t('Show Projection Warnings') };
    return item;
  }

  /** The open gates that hold a todo back until a person approves them (the status lists open gates only). */
  private gatesHolding(goal: GoalSummary, todoId: string): string[] {
    const gates = this.model.detailsOf(goal)?.status?.open_gates ?? [];
    return gates.filter((g) => g.blocked_todo_ids.includes(todoId)).map((g) => g.todo_id);
  }

  private runItem(node: Extract<GoalsNode, { kind: 'run' }>): vscode.TreeItem {
    const { run } = node;
    const item = new vscode.TreeItem(run.classification ?? vscode.l10n.t('run'), vscode.TreeItemCollapsibleState.None);
    item.id = `${goalKey(node.goal)}:run:${node.index}:${run.generated_at ?? ''}`;
    const spend =
      run.spent_slots === null
        ? vscode.l10n.t('no spend')
        : [
            run.spent_slots === 1 ? vscode.l10n.t('1 slot') : vscode.l10n.t('{0} slots', run.spent_slots),
            run.cost_usd === null ? null : `$${run.cost_usd.toFixed(2)}`,
            run.tokens === null ? null : vscode.l10n.t('{0} tokens', run.tokens),
          ]
            .filter(Boolean)
            .join(', ');
    item.description = [run.agent_id ? `@${run.agent_id}` : null, run.generated_at, spend].filter(Boolean).join(' · ');
    item.contextValue = run.markdown_file ? 'run.evidence' : 'run.none';
    item.iconPath = new vscode.ThemeIcon(run.spent_slots === null ? 'circle-small' : 'credit-card');
    if (run.markdown_file)
      item.command = { command: 'loopx.openRunEvidence', title: vscode.l10n.t('Open Run Evidence'), arguments: [node] };
    return item;
  }

  private openStateFileAt(goal: GoalSummary, line: number): vscode.Command | undefined {
    if (!goal.stateFile) return undefined;
    const position = new vscode.Range(line - 1, 0, line - 1, 0);
    return {
      command: 'vscode.open',
      title: vscode.l10n.t('Open State File'),
      arguments: [vscode.Uri.file(goal.stateFile), { selection: position }],
    };
  }

  private registryErrorItem(snapshot: Extract<RegistrySnapshot, { ok: false }>): vscode.TreeItem {
    const item = new vscode.TreeItem(
      vscode.l10n.t('{0}: registry cannot be read', basename(dirname(dirname(snapshot.registryPath)))),
      vscode.TreeItemCollapsibleState.None,
    );
    item.id = `registryError:${snapshot.registryPath}`;
    item.description = snapshot.error.code;
    item.tooltip = snapshot.error.message;
    item.iconPath = new vscode.ThemeIcon('error', new vscode.ThemeColor('problemsErrorIcon.foreground'));
    const line = Math.max(0, (snapshot.error.line ?? 1) - 1);
    const column = Math.max(0, (snapshot.error.column ?? 1) - 1);
    item.command = {
      command: 'vscode.open',
      title: vscode.l10n.t('Open Registry'),
      arguments: [vscode.Uri.file(snapshot.registryPath), { selection: new vscode.Range(line, column, line, column) }],
    };
    return item;
  }
}

function replanTooltip(replan: StatusReplanObligation): vscode.MarkdownString {
  const tooltip = new vscode.MarkdownString();
  tooltip.appendText(replan.obligation.triggers[0]?.text ?? vscode.l10n.t('the lane stalled'));
  tooltip.appendMarkdown('\n\n').appendText(replan.obligation.recommended_action);
  for (const run of replan.stalled_runs)
    tooltip
      .appendMarkdown('\n\n- ')
      .appendText(
        `${run.generated_at ?? '?'} ${run.classification ?? ''}${run.turn_instance_id ? ` ${vscode.l10n.t('(turn {0})', run.turn_instance_id)}` : ''}`,
      );
  tooltip
    .appendMarkdown('\n\n')
    .appendText(vscode.l10n.t('{0} — click to open the warnings panel.', replan.obligation.obligation_id));
  return tooltip;
}

function runTooltip(run: RecentRun): vscode.MarkdownString {
  const tooltip = new vscode.MarkdownString();
  tooltip.appendText(
    `${run.classification ?? vscode.l10n.t('run')} — ${run.generated_at ?? vscode.l10n.t('time unknown')}`,
  );
  if (run.todo_id) tooltip.appendMarkdown(`\n\n${vscode.l10n.t('Todo: ')}`).appendText(run.todo_id);
  if (run.recommended_action)
    tooltip.appendMarkdown(`\n\n${vscode.l10n.t('Recommends: ')}`).appendText(run.recommended_action);
  tooltip
    .appendMarkdown('\n\n')
    .appendText(
      run.markdown_file ? vscode.l10n.t('Click to open its evidence.') : vscode.l10n.t('No Markdown record.'),
    );
  return tooltip;
}
