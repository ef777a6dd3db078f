import { basename, dirname } from 'node:path';
import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import type { ProjectionWarning } from '../core/status/projection/schemas';
import type { StatusGate, StatusTodoItem } from '../core/status/goalStatus';
import type { GoalSummary, RegistrySnapshot } from '../core/status/workspaceGoals';
import { goalKey, type WorkspaceModel } from '../workspace/workspaceModel';

type GroupKind = 'agentTodos' | 'userTodos' | 'gates' | 'warnings';

export type GoalsNode =
  | { kind: 'goal'; goal: GoalSummary }
  | { kind: 'group'; goal: GoalSummary; group: GroupKind; label: string; count: number }
  | { kind: 'todo'; goal: GoalSummary; todo: StatusTodoItem }
  | { kind: 'gate'; goal: GoalSummary; gate: StatusGate }
  | { kind: 'warning'; goal: GoalSummary; warning: ProjectionWarning; index: number }
  | { kind: 'detail'; id: string; label: string; description?: string; icon: string; tooltip?: string; color?: string }
  | { kind: 'registryError'; snapshot: Extract<RegistrySnapshot, { ok: false }> };

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
  private readonly changed = this.register(new vscode.EventEmitter<GoalsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;
  readonly treeView: vscode.TreeView<GoalsNode>;

  constructor(
    viewId: string,
    private readonly model: WorkspaceModel,
    private readonly onGoalsShown: () => void = () => {},
  ) {
    super();
    this.treeView = this.register(
      vscode.window.createTreeView(viewId, { treeDataProvider: this, showCollapseAll: true }),
    );
    this.register(model.onDidChange(() => this.changed.fire(undefined)));
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
          { agentTodos: 'hubot', userTodos: 'person', gates: 'shield', warnings: 'warning' }[node.group],
        );
        return item;
      }
      case 'todo': {
        const { todo } = node;
        const item = new vscode.TreeItem(todo.title, vscode.TreeItemCollapsibleState.None);
        item.id = `${goalKey(node.goal)}:todo:${todo.todo_id}`;
        item.description = [
          todo.priority,
          todo.status !== 'open' ? todo.status : null,
          todo.claimed_by ? `@${todo.claimed_by}` : null,
        ]
          .filter(Boolean)
          .join(' · ');
        item.tooltip = `${todo.text}\n\n${todo.todo_id}${todo.task_class ? ` · ${todo.task_class}` : ''}`;
        item.contextValue = `todo.${todo.status}`;
        item.iconPath = new vscode.ThemeIcon(TODO_ICONS[todo.status]);
        return item;
      }
      case 'gate': {
        const { gate } = node;
        const item = new vscode.TreeItem(gate.title, vscode.TreeItemCollapsibleState.None);
        item.id = `${goalKey(node.goal)}:gate:${gate.todo_id}`;
        const holds = gate.blocked_todo_ids.length > 0 ? `holds ${gate.blocked_todo_ids.length}` : null;
        item.description = [
          gate.gate_state !== 'open' ? gate.gate_state : null,
          gate.blocks_agent ? `@${gate.blocks_agent}` : gate.global_gate ? 'all agents' : null,
          holds,
        ]
          .filter(Boolean)
          .join(' · ');
        item.tooltip = `${gate.text}\n\n${gate.todo_id}${gate.blocked_todo_ids.length > 0 ? `\nholds back: ${gate.blocked_todo_ids.join(', ')}` : ''}`;
        item.contextValue = `gate.${gate.gate_state}`;
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
    }
  }

  getChildren(node?: GoalsNode): GoalsNode[] {
    if (!node) {
      const errors: GoalsNode[] = this.model.snapshots.flatMap((s) =>
        s.ok ? [] : [{ kind: 'registryError' as const, snapshot: s }],
      );
      const goals = this.model.goals;
      if (goals.length > 0) this.onGoalsShown();
      return [...errors, ...goals.map((goal) => ({ kind: 'goal' as const, goal }))];
    }
    switch (node.kind) {
      case 'goal':
        return this.goalChildren(node.goal);
      case 'group':
        return this.groupChildren(node);
      default:
        return [];
    }
  }

  private goalItem(goal: GoalSummary): vscode.TreeItem {
    const details = this.model.detailsOf(goal);
    const status = details?.status;
    const item = new vscode.TreeItem(goal.displayName, vscode.TreeItemCollapsibleState.Collapsed);
    item.id = `goal:${goalKey(goal)}`;
    const parts = [goal.displayName === goal.goalId ? null : goal.goalId];
    if (status) {
      parts.push(`${status.agent_todos.open_count} open`);
      if (status.open_gates.length > 0)
        parts.push(`${status.open_gates.length} gate${status.open_gates.length === 1 ? '' : 's'}`);
    }
    if (details?.quota) parts.push(`${details.quota.spent_slots}/${details.quota.allowed_slots} slots`);
    item.description = parts.filter(Boolean).join(' · ');
    item.contextValue = `goal.${goal.status}`;
    const attention =
      (status?.projection_warnings.some((w) => w.severity === 'warning') ?? false) ||
      (details?.quota?.exceeded ?? false);
    item.iconPath = new vscode.ThemeIcon(
      goal.status === 'active' ? 'target' : 'circle-outline',
      attention ? new vscode.ThemeColor('list.warningForeground') : undefined,
    );
    const tooltip = new vscode.MarkdownString();
    tooltip
      .appendMarkdown('**')
      .appendText(goal.displayName)
      .appendMarkdown('** ')
      .appendText(`(${goal.goalId}) — ${goal.status}, project ${basename(goal.projectRoot)}`);
    if (status?.active_state_next_action)
      tooltip.appendMarkdown('\n\nNext Action: ').appendText(status.active_state_next_action);
    item.tooltip = tooltip;
    return item;
  }

  private goalChildren(goal: GoalSummary): GoalsNode[] {
    const key = goalKey(goal);
    const details = this.model.detailsOf(goal);
    const status = details?.status;
    const nodes: GoalsNode[] = [];
    if (status) {
      const next = status.active_state_next_action;
      nodes.push({
        kind: 'detail',
        id: `${key}:next`,
        label: next ?? 'No Next Action',
        description: next ? 'Next Action' : 'add one under "## Next Action"',
        icon: 'arrow-right',
        ...(next ? { tooltip: next } : {}),
      });
      if (status.projection_warnings.length > 0)
        nodes.push({
          kind: 'group',
          goal,
          group: 'warnings',
          label: 'Warnings',
          count: status.projection_warnings.length,
        });
      nodes.push({
        kind: 'group',
        goal,
        group: 'agentTodos',
        label: 'Agent Todos',
        count: status.agent_todos.open_count + status.agent_todos.blocked_count,
      });
      if (status.open_gates.length > 0)
        nodes.push({ kind: 'group', goal, group: 'gates', label: 'Gates', count: status.open_gates.length });
      const userTodos = status.user_todos.items.filter((t) => t.task_class !== 'user_gate');
      if (userTodos.length > 0)
        nodes.push({ kind: 'group', goal, group: 'userTodos', label: 'User Todos', count: userTodos.length });
    } else if (goal.stateFile) {
      nodes.push({
        kind: 'detail',
        id: `${key}:state`,
        label: 'State file could not be read',
        icon: 'error',
        color: 'problemsErrorIcon.foreground',
        tooltip: goal.stateFile,
      });
    }
    const quota = details?.quota;
    nodes.push(
      quota
        ? {
            kind: 'detail',
            id: `${key}:quota`,
            label: 'Quota',
            icon: 'dashboard',
            description: `${quota.state} · ${quota.spent_slots}/${quota.allowed_slots} slots in ${quota.window_hours} h`,
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
            label: 'Quota',
            icon: 'dashboard',
            description: `${goal.quota.allowed_slots} slots per ${goal.quota.window_hours} h`,
          },
    );
    nodes.push({
      kind: 'detail',
      id: `${key}:agents`,
      label: 'Agents',
      icon: 'person',
      description: goal.agents.length > 0 ? goal.agents.join(', ') : 'none registered',
    });
    return nodes;
  }

  private groupChildren(node: Extract<GoalsNode, { kind: 'group' }>): GoalsNode[] {
    const status = this.model.detailsOf(node.goal)?.status;
    if (!status) return [];
    switch (node.group) {
      case 'agentTodos':
        return status.agent_todos.items
          .filter((t) => t.status === 'open' || t.status === 'blocked')
          .map((todo) => ({ kind: 'todo' as const, goal: node.goal, todo }));
      case 'userTodos':
        return status.user_todos.items
          .filter((t) => t.task_class !== 'user_gate')
          .map((todo) => ({ kind: 'todo' as const, goal: node.goal, todo }));
      case 'gates':
        return status.open_gates.map((gate) => ({ kind: 'gate' as const, goal: node.goal, gate }));
      case 'warnings':
        return status.projection_warnings.map((warning, index) => ({
          kind: 'warning' as const,
          goal: node.goal,
          warning,
          index,
        }));
    }
  }

  private openStateFileAt(goal: GoalSummary, line: number): vscode.Command | undefined {
    if (!goal.stateFile) return undefined;
    const position = new vscode.Range(line - 1, 0, line - 1, 0);
    return {
      command: 'vscode.open',
      title: 'Open State File',
      arguments: [vscode.Uri.file(goal.stateFile), { selection: position }],
    };
  }

  private registryErrorItem(snapshot: Extract<RegistrySnapshot, { ok: false }>): vscode.TreeItem {
    const item = new vscode.TreeItem(
      `${basename(dirname(dirname(snapshot.registryPath)))}: registry cannot be read`,
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
      title: 'Open Registry',
      arguments: [vscode.Uri.file(snapshot.registryPath), { selection: new vscode.Range(line, column, line, column) }],
    };
    return item;
  }
}
