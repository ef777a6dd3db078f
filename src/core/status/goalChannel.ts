import { z } from 'zod';
import {
  GoalChannelProjectionSchema,
  goalChannelBase,
  withChannelTime,
  type GoalChannelBase,
  type HardLeaseRead,
} from './channelProjection';
import { goalStopped } from '../quota/state';
import type { RegistryGoal } from '../registry/schema';
import type { GoalStatusItem } from './goalStatus';
import { projectAssetBase, ProjectAssetSchema, withAssetQuota, type ProjectAssetBase } from './projection/projectAsset';

export {
  GOAL_CHANNEL_PROJECTION_SCHEMA,
  GoalChannelProjectionSchema,
  goalChannelProjection,
  type GoalChannelProjection,
} from './channelProjection';
export { ProjectAssetSchema, type ProjectAsset } from './projection/projectAsset';

/**
 * The per-goal blocks existing LoopX dashboards read from every `attention_queue.items[]` entry
 * besides the status item itself: `project_asset` (projection/projectAsset.ts), `activation_state` and the read-only
 * `goal_channel_projection` (channelProjection.ts), each built by the original's rules. Pure functions of the status
 * item, the goal's registry entry and (the projection) its active hard task leases.
 */

export const ActivationStateSchema = z.enum(['active', 'stopped']);
export type ActivationState = z.infer<typeof ActivationStateSchema>;

export const DashboardGoalFieldsSchema = z.object({
  project_asset: ProjectAssetSchema,
  activation_state: ActivationStateSchema,
  goal_channel_projection: GoalChannelProjectionSchema,
});
export type DashboardGoalFields = z.infer<typeof DashboardGoalFieldsSchema>;

export function activationState(goal: Record<string, unknown> | undefined): ActivationState {
  return goal !== undefined && goalStopped(goal) ? 'stopped' : 'active';
}

export function dashboardGoalFields(
  item: GoalStatusItem,
  goal: RegistryGoal | undefined,
  hardLeases?: { reads: readonly HardLeaseRead[]; now: Date },
): DashboardGoalFields {
  return dashboardFieldsOf(dashboardBase(item, goal), item, hardLeases);
}

/**
 * The blocks of an item without what changes with the time (its quota, and what the quota's state sets; its hard
 * leases): a pure function of the item as projected (with its monitor-due fields) and the goal's registry entry, so
 * status keeps it with the item (goalStatus.ts `itemParts`) and puts the rest in when answering (`dashboardFieldsOf`).
 */
export interface DashboardBase {
  project_asset: ProjectAssetBase;
  activation_state: ActivationState;
  goal_channel: GoalChannelBase;
}

export function dashboardBase(
  item: Omit<GoalStatusItem, 'quota'> & Partial<Pick<GoalStatusItem, 'quota'>>,
  goal: RegistryGoal | undefined,
): DashboardBase {
  return {
    project_asset: projectAssetBase(item, goal),
    activation_state: activationState(goal),
    goal_channel: goalChannelBase(item, goal),
  };
}

/** The blocks of `item` (its quota attached) from the base of the same item: new objects for the time-dependent parts. */
export function dashboardFieldsOf(
  base: DashboardBase,
  item: GoalStatusItem,
  hardLeases?: { reads: readonly HardLeaseRead[]; now: Date },
): DashboardGoalFields {
  return {
    project_asset: withAssetQuota(base.project_asset, item),
    activation_state: base.activation_state,
    goal_channel_projection: withChannelTime(base.goal_channel, item, hardLeases),
  };
}
