import { z } from 'zod';
import { agentLaneNextActionSchema } from '../status/projection/inputs';
import { nextActionProjectionWarning as projectNextActionWarning } from '../status/projection/nextActionWarning';
import type { NextActionProjectionWarning } from '../status/projection/schemas';
import { parseArguments } from '../ops/arguments';
import { goalIdArgument } from '../ops/libraryArguments';

const actionText = (what: string) =>
  z.string().nullish().describe(`${what} as text, or null/undefined when there is none`);

const NextActionProjectionWarningArguments = z.strictObject({
  activeStateNextAction: actionText('the durable Next Action of the state file'),
  latestRunRecommendedAction: actionText("the latest run's recommended_action"),
  agentLaneNextAction: agentLaneNextActionSchema
    .nullish()
    .describe("the agent lane's next action: text, an object { text, preserves_goal_next_action }, or null/undefined"),
  goalId: goalIdArgument
    .nullish()
    .describe('the goal the texts belong to (it becomes goal_id and part of the warning id), or null/undefined'),
});
export type NextActionProjectionWarningOptions = z.input<typeof NextActionProjectionWarningArguments>;

/**
 * Compares the durable Next Action with the latest run's recommended action (the original's
 * `next_action_projection_warning`): null when either is empty or they are aligned, otherwise a
 * `next_action_projection_warning_v0` object carrying the compared texts, the original's fixed
 * `reason` and `recommended_action`, and a human `message`. A lane that explicitly preserves the
 * durable route downgrades it to `severity: "info"`.
 */
export function nextActionProjectionWarning(
  options: NextActionProjectionWarningOptions,
): NextActionProjectionWarning | null {
  const args = parseArguments(NextActionProjectionWarningArguments, options, {
    functionName: 'nextActionProjectionWarning',
    root: 'options',
  });
  return projectNextActionWarning(args);
}
