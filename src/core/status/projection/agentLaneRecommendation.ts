import { z } from 'zod';
import { publicSafeCompact } from './text';

/**
 * The original's `agent_lane_recommendation` (loopx/control_plane/agents/agent_lane_recommendation.py
 * `compact_agent_lane_recommendation` of `latest_agent_lane_run`): the newest agent-lane run among the goal's listed
 * runs, compacted: its recommended action (public-safe, 220 characters) and the lane's identity. Absent when there is
 * no such run or its action is empty or not public-safe.
 */

export const AgentLaneRecommendationSchema = z.looseObject({
  schema_version: z.literal('agent_lane_recommendation_v0'),
  progress_scope: z.literal('agent_lane'),
  recommended_action: z.string(),
});
export type AgentLaneRecommendation = z.infer<typeof AgentLaneRecommendationSchema>;

const CARRIED = [
  'agent_id',
  'agent_lane',
  'classification',
  'generated_at',
  'delivery_batch_scale',
  'delivery_outcome',
] as const;

export function agentLaneRecommendation(
  listedRunsNewestFirst: readonly Record<string, unknown>[],
): AgentLaneRecommendation | null {
  const run = listedRunsNewestFirst.find((row) => row['progress_scope'] === 'agent_lane');
  if (run === undefined) return null;
  const raw = run['recommended_action'];
  const action = publicSafeCompact(typeof raw === 'string' ? raw : null, 220);
  if (action === null) return null;
  const compact: AgentLaneRecommendation = {
    schema_version: 'agent_lane_recommendation_v0',
    progress_scope: 'agent_lane',
    recommended_action: action,
  };
  for (const field of CARRIED) if (run[field] !== null && run[field] !== undefined) compact[field] = run[field];
  return compact;
}
