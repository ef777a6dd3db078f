import { z } from 'zod';
import { GoalChannelProjectionSchema, goalChannelProjection } from './channelProjection';
import { goalStopped } from '../quota/state';
import type { RegistryGoal } from '../registry/schema';
import type { GoalStatusItem } from './goalStatus';
import { projectAsset, ProjectAssetSchema } from './projection/projectAsset';

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
  hardLeases?: Parameters<typeof goalChannelProjection>[2],
): DashboardGoalFields {
  return {
    project_asset: projectAsset(item, goal),
    activation_state: activationState(goal),
    goal_channel_projection: goalChannelProjection(item, goal, hardLeases),
  };
}
