import { z } from 'zod';
import { GoalChannelProjectionSchema, goalChannelProjection } from './channelProjection';
import { goalStopped } from '../quota/state';
import type { RegistryGoal } from '../registry/schema';
import { StatusTodoItemSchema, todosOrEmpty, type GoalStatusItem } from './goalStatus';

export {
  GOAL_CHANNEL_PROJECTION_SCHEMA,
  GoalChannelProjectionSchema,
  goalChannelProjection,
  type GoalChannelProjection,
} from './channelProjection';

/**
 * The per-goal blocks existing LoopX dashboards read from every `attention_queue.items[]` entry
 * besides the status item itself: `project_asset`, `activation_state` and the read-only
 * `goal_channel_projection`. Pure functions of the status item and the goal's registry entry;
 * field names and types follow status-contract-fields.txt. No paths: sources are named by
 * their file names only.
 */

export const ActivationStateSchema = z.enum(['active', 'stopped']);
export type ActivationState = z.infer<typeof ActivationStateSchema>;

export const ProjectAssetQuotaSchema = z.object({
  state: z.string(),
  compute: z.number(),
  window_hours: z.number(),
  slot_minutes: z.number(),
  allowed_slots: z.number(),
  spent_slots: z.number(),
});
export type ProjectAssetQuota = z.infer<typeof ProjectAssetQuotaSchema>;

export const ProjectAssetSchema = z.object({
  owner: z.string(),
  gate: z.string(),
  next_action: z.string(),
  stop_condition: z.string(),
  quota: ProjectAssetQuotaSchema.optional(),
  user_todos: z.object({ items: z.array(StatusTodoItemSchema) }),
  agent_todos: z.object({ items: z.array(StatusTodoItemSchema) }),
});
export type ProjectAsset = z.infer<typeof ProjectAssetSchema>;

export const DashboardGoalFieldsSchema = z.object({
  project_asset: ProjectAssetSchema,
  activation_state: ActivationStateSchema,
  goal_channel_projection: GoalChannelProjectionSchema,
});
export type DashboardGoalFields = z.infer<typeof DashboardGoalFieldsSchema>;

const DEFAULT_STOP_CONDITION =
  'stop when every agent todo is done or deferred, or when the remaining work waits on an open user gate';

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : null;
}

export function activationState(goal: Record<string, unknown> | undefined): ActivationState {
  return goal !== undefined && goalStopped(goal) ? 'stopped' : 'active';
}

function assetQuota(quota: GoalStatusItem['quota']): ProjectAssetQuota | undefined {
  if (quota === undefined) return undefined;
  const {
    state,
    compute,
    window_hours: windowHours,
    slot_minutes: slotMinutes,
    allowed_slots: allowed,
    spent_slots: spent,
  } = quota;
  if (
    typeof state !== 'string' ||
    compute === undefined ||
    windowHours === undefined ||
    slotMinutes === undefined ||
    allowed === undefined ||
    spent === undefined
  )
    return undefined;
  return {
    state,
    compute,
    window_hours: windowHours,
    slot_minutes: slotMinutes,
    allowed_slots: allowed,
    spent_slots: spent,
  };
}

/** `project_asset`: who owns the goal, what gates it, its route, when to stop, its quota and its first open todos. */
export function projectAsset(item: GoalStatusItem, goal: RegistryGoal | undefined): ProjectAsset {
  const firstGate = item.open_gates[0];
  const quota = assetQuota(item.quota);
  return {
    owner: text(goal?.['owner']) ?? 'user',
    gate: firstGate === undefined ? 'none' : `${firstGate.todo_id}: ${firstGate.title}`,
    next_action: item.active_state_next_action ?? item.recommended_action,
    stop_condition: text(goal?.['stop_condition']) ?? DEFAULT_STOP_CONDITION,
    ...(quota !== undefined ? { quota } : {}),
    user_todos: { items: todosOrEmpty(item.user_todos).items },
    agent_todos: { items: todosOrEmpty(item.agent_todos).items },
  };
}

export function dashboardGoalFields(
  item: GoalStatusItem,
  goal: RegistryGoal | undefined,
  hardLeases?: Parameters<typeof goalChannelProjection>[2],
): DashboardGoalFields {
  return {
    project_asset: projectAsset(item, goal),
    activation_state: activationState(goal),
    goal_channel_projection: goalChannelProjection(item, goal, hardLeases),
  };
}
