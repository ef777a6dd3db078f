import * as vscode from 'vscode';
import { Disposable } from '../common/disposable';
import { leaseLabel, type AgentDetails } from '../workspace/goalExtras';
import type { LaneState } from '../workspace/laneState';
import type { WorkspaceModel } from '../workspace/workspaceModel';
import type { GoalNode } from './nodes';

export type AgentsNode =
  | { kind: 'agent'; agent: AgentDetails }
  | { kind: 'detail'; id: string; label: string; description?: string; icon: string; tooltip?: string }
  /** A goal the agent may act for: the Goals tree's goal node (nodes.ts), under its agent. */
  | (GoalNode & { agentId: string });

/**
 * The Agents view: each agent registered on the workspace's goals, with its executor, what it has
 * claimed, its last turn (when, result, spend) and the goals it may act for.
 */
export class AgentsView extends Disposable implements vscode.TreeDataProvider<AgentsNode> {
  private readonly changed = this.register(new vscode.EventEmitter<AgentsNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    viewId: string,
    private readonly model: WorkspaceModel,
    private readonly lanes?: LaneState,
  ) {
    super();
    this.register(vscode.window.createTreeView(viewId, { treeDataProvider: this }));
    this.register(model.onDidChangeGoals(() => this.changed.fire(undefined)));
    if (lanes !== undefined) this.register(lanes.onDidChange(() => this.changed.fire(undefined)));
  }

  getTreeItem(node: AgentsNode): vscode.TreeItem {
    switch (node.kind) {
      case 'agent': {
        const { agent } = node;
        const item = new vscode.TreeItem(agent.agentId, vscode.TreeItemCollapsibleState.Collapsed);
        item.id = `agent:${agent.agentId}`;
        item.description = [
          agent.goals.length === 1 ? vscode.l10n.t('1 goal') : vscode.l10n.t('{0} goals', agent.goals.length),
          agent.claims.length > 0 ? vscode.l10n.t('{0} claimed', agent.claims.length) : null,
          this.leasesHeldBy(agent.agentId).length > 0
            ? vscode.l10n.t('{0} leased', this.leasesHeldBy(agent.agentId).length)
            : null,
          agent.lastTurn?.generated_at ? vscode.l10n.t('last {0}', agent.lastTurn.generated_at) : null,
        ]
          .filter(Boolean)
          .join(' · ');
        item.contextValue = 'agent';
        item.iconPath = new vscode.ThemeIcon('person');
        return item;
      }
      case 'detail': {
        const item = new vscode.TreeItem(node.label, vscode.TreeItemCollapsibleState.None);
        item.id = node.id;
        item.description = node.description;
        item.iconPath = new vscode.ThemeIcon(node.icon);
        if (node.tooltip) item.tooltip = node.tooltip;
        return item;
      }
      case 'goal': {
        const item = new vscode.TreeItem(node.goal.displayName, vscode.TreeItemCollapsibleState.None);
        item.id = `agent:${node.agentId}:goal:${node.goal.registryPath}#${node.goal.goalId}`;
        item.description = node.goal.goalId;
        item.iconPath = new vscode.ThemeIcon('target');
        return item;
      }
    }
  }

  /** The hard task leases the agent holds now, across the workspace's goals (as of the last reload). */
  private leasesHeldBy(agentId: string): AgentsNode[] {
    const now = new Date();
    const nodes: AgentsNode[] = [];
    for (const goal of this.model.goals) {
      const status = this.model.detailsOf(goal)?.status;
      const titles = new Map(
        [...(status?.agent_todos?.items ?? []), ...(status?.user_todos?.items ?? [])].map((t) => [t.todo_id, t.title]),
      );
      for (const [todoId, lease] of this.model.leasesOf(goal)) {
        if (lease.owner !== agentId) continue;
        const label = leaseLabel(lease, now);
        nodes.push({
          kind: 'detail',
          id: `agent:${agentId}:lease:${goal.registryPath}#${goal.goalId}:${todoId}`,
          label: titles.get(todoId) ?? todoId,
          description: `${vscode.l10n.t('leased until {0}', label.until)} · ${goal.goalId}`,
          icon: 'lock',
          tooltip: `${todoId}\n${label.tooltip}`,
        });
      }
    }
    return nodes;
  }

  getChildren(node?: AgentsNode): AgentsNode[] {
    if (!node) return this.model.agentDetails().map((agent) => ({ kind: 'agent' as const, agent }));
    if (node.kind !== 'agent') return [];
    const { agent } = node;
    const id = `agent:${agent.agentId}`;
    const children: AgentsNode[] = [
      { kind: 'detail', id: `${id}:executor`, label: agent.executors.join(', '), icon: 'terminal' },
    ];
    const last = agent.lastTurn;
    children.push(
      last === null
        ? { kind: 'detail', id: `${id}:last`, label: vscode.l10n.t('No turn yet'), icon: 'history' }
        : {
            kind: 'detail',
            id: `${id}:last`,
            label: vscode.l10n.t('Last turn: {0}', last.classification ?? vscode.l10n.t('run')),
            description: [
              last.goalId,
              last.generated_at,
              last.spent_slots === null
                ? vscode.l10n.t('no spend')
                : last.spent_slots === 1
                  ? vscode.l10n.t('1 slot')
                  : vscode.l10n.t('{0} slots', last.spent_slots),
              last.cost_usd === null ? null : `$${last.cost_usd.toFixed(2)}`,
            ]
              .filter(Boolean)
              .join(' · '),
            icon: 'history',
            ...(last.recommended_action ? { tooltip: last.recommended_action } : {}),
          },
    );
    for (const claim of agent.claims)
      children.push({
        kind: 'detail',
        id: `${id}:claim:${claim.registryPath}#${claim.goalId}:${claim.todoId}`,
        label: claim.title,
        description: vscode.l10n.t('claimed · {0}', claim.goalId),
        icon: 'pinned',
        tooltip: claim.todoId,
      });
    for (const held of this.leasesHeldBy(agent.agentId)) children.push(held);
    for (const { goal, lane } of this.lanes?.lanesOfAgent(agent.agentId) ?? [])
      children.push({
        kind: 'detail',
        id: `${id}:lane:${goal.registryPath}#${goal.goalId}`,
        label: lane.branch,
        description: [
          vscode.l10n.t('{0} ahead, {1} behind', lane.ahead, lane.behind),
          lane.last_turn === null ? null : vscode.l10n.t('last turn {0}', lane.last_turn.split(':').pop() ?? ''),
          lane.merge_gate_todo_id === null ? null : vscode.l10n.t('merge pending'),
          lane.overlaps_with.length > 0 ? vscode.l10n.t('overlaps {0}', lane.overlaps_with.join(', ')) : null,
        ]
          .filter(Boolean)
          .join(' · '),
        icon: lane.overlaps_with.length > 0 || lane.conflicts.length > 0 ? 'warning' : 'git-branch',
        tooltip: [
          lane.worktree,
          lane.pending_files.length > 0 ? vscode.l10n.t('changes: {0}', lane.pending_files.join(', ')) : null,
          lane.conflicts.length > 0 ? vscode.l10n.t('conflicts with main: {0}', lane.conflicts.join(', ')) : null,
        ]
          .filter(Boolean)
          .join('\n'),
      });
    for (const listed of agent.goals) {
      const goal = this.model.findGoal(listed.goalId, listed.registryPath);
      if (goal !== undefined) children.push({ kind: 'goal', goal, agentId: agent.agentId });
    }
    return children;
  }
}
