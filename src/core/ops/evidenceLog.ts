import { z } from 'zod';
import {
  publishedRolloutEvents,
  readRolloutEvents,
  rolloutEventLogOf,
  type RolloutEvent,
  type SkippedEventLine,
} from '../evidence/rolloutLog';
import { checkTurnInstanceId } from '../quota/identity';
import { normalizeAgentId } from '../registry/agentIds';
import { goalIdArg, limitArg, turnInstanceIdArg } from './common';
import { quotaGoalOf, resolveGoal } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `evidence-log`: the goal's rollout event log (docs/turns.md#the-rollout-event-log), oldest first,
 * filtered by turn, agent, todo and kind (read-only). Rows written by the original LoopX read the
 * same way; a malformed line is reported in `skipped_lines` and left as it is. Credentials in a row
 * (whoever wrote it) are shown redacted.
 */

export interface EvidenceLogOutput {
  ok: true;
  schema_version: 'loopx_evidence_log_v0';
  goal_id: string;
  log_exists: boolean;
  /** Matching events, oldest first (the last `limit` of them). */
  events: RolloutEvent[];
  matched_count: number;
  total_count: number;
  truncated: boolean;
  counts_by_kind: Record<string, number>;
  skipped_lines: SkippedEventLine[];
}

export const evidenceLog = defineOperation({
  key: 'evidenceLog',
  args: z.strictObject({
    goalId: goalIdArg('the goal whose event log to read'),
    turnInstanceId: turnInstanceIdArg(
      'only the events of this turn (a heartbeat: receipt, writeback, spend)',
    ).optional(),
    agentId: z.string().optional().meta({ placeholder: 'id' }).describe('only the events of this agent'),
    todoId: z.string().optional().meta({ placeholder: 'id' }).describe('only the events of this todo'),
    eventKind: z
      .string()
      .optional()
      .meta({ placeholder: 'kind' })
      .describe('only events of this kind (quota_should_run, refresh_state, quota_spend, todo_complete, ...)'),
    limit: limitArg('the newest N matching events (default 200)').default(200),
  }),
  run: async (args, env): Promise<EvidenceLogOutput> => {
    const goal = await resolveGoal(env, args.goalId);
    const turn = args.turnInstanceId === undefined ? null : checkTurnInstanceId(args.turnInstanceId.trim());
    const agent = args.agentId === undefined ? null : (normalizeAgentId(args.agentId) ?? args.agentId.trim());
    const read = await readRolloutEvents(rolloutEventLogOf(quotaGoalOf(goal).runtimeDir));
    const kind = args.eventKind?.trim().toLowerCase().replace(/-/g, '_') ?? null;
    const matched = read.events.filter(
      (event) =>
        (turn === null || event.run_id === turn) &&
        (agent === null || event.agent_id === agent) &&
        (args.todoId === undefined || event.todo_id === args.todoId || event.details?.['todo_id'] === args.todoId) &&
        (kind === null || event.event_kind === kind),
    );
    const counts: Record<string, number> = {};
    for (const event of matched) counts[event.event_kind] = (counts[event.event_kind] ?? 0) + 1;
    const limit = args.limit;
    return {
      ok: true,
      schema_version: 'loopx_evidence_log_v0',
      goal_id: goal.goalId,
      log_exists: read.exists,
      events: publishedRolloutEvents(matched.slice(Math.max(0, matched.length - limit))),
      matched_count: matched.length,
      total_count: read.events.length,
      truncated: matched.length > limit,
      counts_by_kind: Object.fromEntries(Object.entries(counts).sort(([a], [b]) => a.localeCompare(b))),
      skipped_lines: read.skipped,
    };
  },
});
