import { registryGoalEntries } from '../../registry/read';
import type { GoalStatusItem } from '../goalStatus';
import { agentManagementProjection } from './agentManagement';
import { todoIndex, TODO_INDEX_ITEM_LIMIT, type GoalTodoIndex, type TodoIndex } from './todoIndex';
import type { TodoRow } from '../projection/handoffNote';

/**
 * The original's top-level status reports built from the goals' items (no file is read here: each goal's part was
 * projected with its item, from the files its loader read): `todo_index` (todoIndex.ts) and
 * `agent_management_projection` (agentManagement.ts). Their times (`generated_at`) are the answer's.
 */

export interface StatusReports {
  todo_index: TodoIndex;
  agent_management_projection?: Record<string, unknown>;
}

export function statusReports(input: {
  items: readonly Pick<GoalStatusItem, 'goal_id' | 'agent_todos'>[];
  /** Each item's `goalAgentRows` when the caller keeps them (in the items' order); computed here otherwise. */
  agentRows?: readonly (readonly TodoRow[] | undefined)[];
  /** Each item's part of the todo index, in the items' order. */
  goalIndexes: readonly (GoalTodoIndex | undefined)[];
  registry: Record<string, unknown>;
  goalFilter: string | null;
  /** Status asked for one agent: the index lists no items (the original's compaction). */
  agentLane: boolean;
  /** The run display limit (the index lists max(240, limit)). */
  limit: number | undefined;
  now?: Date;
}): StatusReports {
  const parts = input.goalIndexes.map(
    (part) => part ?? { budget: [], rows: [], current_count: 0, rollout_event_count: 0 },
  );
  const limit = Math.max(TODO_INDEX_ITEM_LIMIT, input.limit ?? 0);
  const full = todoIndex(parts, { limit });
  const entries = registryGoalEntries(input.registry);
  const management = agentManagementProjection({
    goals: input.items.map((item, i) => {
      const coordination = entries.get(item.goal_id)?.['coordination'];
      const agents =
        typeof coordination === 'object' && coordination !== null
          ? (coordination as Record<string, unknown>)['registered_agents']
          : undefined;
      return {
        goalId: item.goal_id,
        registeredAgents: Array.isArray(agents) ? agents : [],
        agentTodos: (item.agent_todos as Record<string, unknown> | null) ?? null,
        budget: parts[i]?.budget ?? [],
        ...(input.agentRows?.[i] !== undefined ? { rows: input.agentRows[i] } : {}),
      };
    }),
    todoIndexItems: full.items,
    goalFilter: input.goalFilter,
    now: input.now ?? new Date(),
  });
  return {
    todo_index: input.agentLane ? todoIndex(parts, { limit, agentLane: true }) : full,
    ...(management !== null ? { agent_management_projection: management } : {}),
  };
}
