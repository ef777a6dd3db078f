import { z } from 'zod';
import { LoopxError } from '../errors';
import type { GoalRef } from '../registry/goalRef';
import { journalPath, listJournals, readJournal, TurnJournalSchema, type TurnJournal } from './journal';

/** `loopx turn inspect-journal`: the goal's turn journals (read-only), or one of them in full. */

export const JOURNAL_INSPECTION_SCHEMA = 'loopx_turn_journal_inspection_v0';

export const JournalSummarySchema = z.object({
  turn_key: z.string(),
  status: z.string(),
  agent_id: z.string(),
  todo_id: z.string().nullable(),
  turn_instance_id: z.string(),
  effect_id: z.string(),
  result_kind: z.string().nullable(),
  completed_phases: z.array(z.string()),
  failed_phase: z.string().nullable(),
  attempts: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
  summary: z.string().nullable(),
});
export type JournalSummary = z.infer<typeof JournalSummarySchema>;

export const JournalInspectionSchema = z.object({
  ok: z.literal(true),
  schema_version: z.literal(JOURNAL_INSPECTION_SCHEMA),
  goal_id: z.string(),
  turns: z.array(JournalSummarySchema),
  /** The full journal when one turn key was asked for. */
  journal: TurnJournalSchema.nullable(),
});
export type JournalInspection = z.infer<typeof JournalInspectionSchema>;

export function summarizeJournal(journal: TurnJournal): JournalSummary {
  return {
    turn_key: journal.turn_key,
    status: journal.status,
    agent_id: journal.agent_id,
    todo_id: journal.todo_id,
    turn_instance_id: journal.turn_instance_id,
    effect_id: journal.settlement_identity.effect_id,
    result_kind: journal.result_kind,
    completed_phases: journal.completed_phases,
    failed_phase: journal.failed_phase,
    attempts: journal.attempts,
    created_at: journal.created_at,
    updated_at: journal.updated_at,
    summary: journal.summary,
  };
}

/** The goal's turn journals (its runtime folder, as the operation's goal handle located it), or `turnKey`'s in full. */
export async function inspectJournal(
  goal: Pick<GoalRef, 'goalId' | 'runtimeDir'>,
  turnKey: string | undefined,
): Promise<JournalInspection> {
  if (turnKey !== undefined) {
    const journal = await readJournal(journalPath(goal.runtimeDir, turnKey));
    if (journal === null)
      throw new LoopxError(
        'turn_journal_not_found',
        `goal '${goal.goalId}' has no journal for turn ${turnKey}; run loopx turn inspect-journal --goal-id ${goal.goalId} to list its turns`,
        { turn_key: turnKey },
      );
    return {
      ok: true,
      schema_version: JOURNAL_INSPECTION_SCHEMA,
      goal_id: goal.goalId,
      turns: [summarizeJournal(journal)],
      journal,
    };
  }
  const journals = await listJournals(goal.runtimeDir);
  return {
    ok: true,
    schema_version: JOURNAL_INSPECTION_SCHEMA,
    goal_id: goal.goalId,
    turns: journals.map(summarizeJournal),
    journal: null,
  };
}
