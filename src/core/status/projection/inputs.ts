import { z } from 'zod';

/**
 * Input contracts of the projection functions. Data that mirrors on-disk JSON (run index rows,
 * quota objects, todo summaries) keeps its snake_case names and is parsed tolerantly: a field of
 * the wrong type reads as missing instead of failing the whole status read.
 */

const looseText = z.string().nullish().catch(null);

/** The parts of a `runs/index.jsonl` row the projections read. Other fields pass through. */
export const runRowSchema = z.looseObject({
  generated_at: looseText,
  goal_id: looseText,
  classification: looseText,
  recommended_action: looseText,
  recommended_action_source: looseText,
  progress_scope: looseText,
  agent_id: looseText,
  agent_lane: looseText,
  state: z
    .looseObject({
      sha256_16: looseText,
      frontmatter: z.looseObject({ updated_at: looseText }).nullish().catch(null),
    })
    .nullish()
    .catch(null),
});
export type RunRow = z.infer<typeof runRowSchema>;

/**
 * The agent-lane action a quota decision carries (`agent_lane_next_action_v0`), or a bare string.
 * Only `text` and `preserves_goal_next_action` matter here; the latter must be exactly `true`
 * (not the string "true") for the lane to count as preserving the durable route.
 */
export const agentLaneNextActionSchema = z.union([
  z.string(),
  z.looseObject({
    text: z.unknown().optional(),
    preserves_goal_next_action: z.unknown().optional(),
  }),
]);
export type AgentLaneNextAction = z.infer<typeof agentLaneNextActionSchema>;

/** A todo summary as status passes it: `open_count`, else `open`, read as an integer. */
export const todoSummarySchema = z.looseObject({
  open_count: z.unknown().optional(),
  open: z.unknown().optional(),
});
export type TodoSummary = z.infer<typeof todoSummarySchema>;

/** The quota work-lane contract; the state-action warning applies only to backlog selections. */
export const workLaneContractSchema = z.looseObject({
  lane: looseText,
  reason_codes: z.array(z.string()).nullish().catch(null),
});
export type WorkLaneContract = z.infer<typeof workLaneContractSchema>;

/** The quota summary fields that tell whether the selected backlog item is this agent's own claim. */
export const quotaClaimSummarySchema = z.looseObject({
  claim_scope: z.looseObject({ agent_id: looseText }).nullish().catch(null),
  first_executable_items: z
    .array(z.looseObject({ claimed_by: looseText }))
    .nullish()
    .catch(null),
});
export type QuotaClaimSummary = z.infer<typeof quotaClaimSummarySchema>;

export const nextActionWarningInputSchema = z.object({
  goalId: z.string().min(1).nullish(),
  activeStateNextAction: z.string().nullish(),
  latestRunRecommendedAction: z.string().nullish(),
  agentLaneNextAction: agentLaneNextActionSchema.nullish(),
});
export type NextActionWarningInput = z.input<typeof nextActionWarningInputSchema>;

export const stateActionWarningInputSchema = z.object({
  goalId: z.string().min(1).nullish(),
  /** `item.active_state_next_action`. */
  activeStateNextAction: z.string().nullish(),
  /** `project_asset.next_action`, the fallback when the item has no active next action. */
  projectAssetNextAction: z.string().nullish(),
  selectedRecommendedAction: z.string().nullish(),
  workLaneContract: workLaneContractSchema.nullish(),
  quotaSummary: quotaClaimSummarySchema.nullish(),
});
export type StateActionWarningInput = z.input<typeof stateActionWarningInputSchema>;

/** Open todo counts for one role: the summary status computed (preferred) and the Markdown checkbox count. */
export const roleOpenCountsSchema = z.object({
  summary: todoSummarySchema.nullish(),
  markdownOpenCount: z.number().int().nonnegative(),
});
export type RoleOpenCounts = z.infer<typeof roleOpenCountsSchema>;

export const stateProjectionGapInputSchema = z.object({
  goalId: z.string().min(1).nullish(),
  /** The Next Action entries in order; only the first 3 are read. */
  nextActionEntries: z.array(z.string()),
  agentTodos: roleOpenCountsSchema,
  userTodos: roleOpenCountsSchema,
});
export type StateProjectionGapInput = z.input<typeof stateProjectionGapInputSchema>;

/** The state file as it is now: its front-matter `updated_at` and the first 16 hex digits of its SHA-256. */
export const activeStateDigestSchema = z.object({
  updated_at: z.string().nullish(),
  sha256_16: z.string().regex(/^[0-9a-f]{16}$/u),
});
export type ActiveStateDigest = z.infer<typeof activeStateDigestSchema>;

export const staleLatestRunInputSchema = z.object({
  goalId: z.string().min(1).nullish(),
  /** Only goals in the registry are checked. */
  registryMember: z.boolean(),
  /** Null when the state file is missing or unreadable. */
  activeState: activeStateDigestSchema.nullish(),
  /** The newest status run (not status-neutral, not agent-lane). */
  latestStatusRun: runRowSchema.nullish(),
  /** The goal's agent-lane runs; any of them that already saw this state suppresses the warning. */
  agentLaneRuns: z.array(runRowSchema).default([]),
});
export type StaleLatestRunInput = z.input<typeof staleLatestRunInputSchema>;

export const latestRunRecommendationInputSchema = z.object({
  activeStateNextAction: z.string().nullish(),
  latestStatusRun: runRowSchema.nullish(),
  latestAgentLaneRun: runRowSchema.nullish(),
  /** The agent whose lane recommendation wins when it is at least as new as the status run. */
  preferredAgentId: z.string().nullish(),
});
export type LatestRunRecommendationInput = z.input<typeof latestRunRecommendationInputSchema>;

/** An Agent Todo item as the state parser reads it, in document order. */
export const agentTodoCandidateSchema = z.object({
  text: z.string(),
  status: z.enum(['open', 'done', 'blocked', 'deferred']),
  task_class: z.string().nullish(),
});
export type AgentTodoCandidate = z.infer<typeof agentTodoCandidateSchema>;

export const recommendedActionInputSchema = z.object({
  /** `--recommended-action`, when given. */
  explicitAction: z.string().nullish(),
  /** Items of the Next Action section in order (after any write-back of this refresh). */
  nextActionEntries: z.array(z.string()).default([]),
  agentTodos: z.array(agentTodoCandidateSchema).default([]),
});
export type RecommendedActionInput = z.input<typeof recommendedActionInputSchema>;

/** Everything `projectGoalWarnings` needs about one goal. */
export const goalWarningsInputSchema = z.object({
  goalId: z.string().min(1),
  /** Goals outside the registry (legacy runtime goals) get no stale-run check. */
  registryMember: z.boolean().default(true),
  /** Null when the goal has no readable state file. */
  activeState: z
    .object({
      /** The durable route: the first Next Action entry. */
      next_action: z.string().nullish(),
      /** All Next Action entries; defaults to `[next_action]`. */
      next_action_entries: z.array(z.string()).nullish(),
      updated_at: z.string().nullish(),
      sha256_16: z
        .string()
        .regex(/^[0-9a-f]{16}$/u)
        .nullish(),
    })
    .nullable(),
  latestStatusRun: runRowSchema.nullable(),
  /** The goal's agent-lane runs, newest first. */
  agentLaneRuns: z.array(runRowSchema).default([]),
  preferredAgentId: z.string().nullish(),
  /** The quota decision's agent-lane action; when it preserves the route the mismatch is only `info`. */
  agentLaneNextAction: agentLaneNextActionSchema.nullish(),
  /** Open todo counts; without them no projection gap is computed. */
  todoCounts: z.object({ agent: roleOpenCountsSchema, user: roleOpenCountsSchema }).nullish(),
  /** The quota selection; without it no state-action warning is computed. */
  quotaSelection: z
    .object({
      selectedRecommendedAction: z.string().nullish(),
      projectAssetNextAction: z.string().nullish(),
      workLaneContract: workLaneContractSchema.nullish(),
      quotaSummary: quotaClaimSummarySchema.nullish(),
    })
    .nullish(),
});
export type GoalWarningsInput = z.input<typeof goalWarningsInputSchema>;
