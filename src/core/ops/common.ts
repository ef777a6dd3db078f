import { z } from 'zod';
import { normalizeAgentId } from '../registry/agentIds';
import { checkGoalIdSegment } from '../registry/goalId';

/**
 * Argument fields and error mapping shared by the read-only operations (status, global views,
 * quota status, turn plan, heartbeat prompt). Their `.describe()` texts finish the sentence
 * "--flag must be …" of a usage error, and are the option's help.
 */

/** A goal id: one path segment. */
export function goalIdArg(what: string) {
  return z
    .string()
    .refine((value) => {
      try {
        checkGoalIdSegment(value);
        return true;
      } catch {
        return false;
      }
    })
    .meta({ placeholder: 'id' })
    .describe(`a goal id (one path segment, e.g. "my-goal"): ${what}`);
}

/** An agent id as people type it: lowercased, spaces become "-" (`normalizeAgentId`); refused when it is not one. */
export function agentIdArg(what: string) {
  return z
    .string()
    .transform((value, ctx) => {
      const id = normalizeAgentId(value);
      if (id === null) {
        ctx.addIssue({ code: 'custom', message: 'not a valid agent id' });
        return z.NEVER;
      }
      return id;
    })
    .meta({ placeholder: 'agent' })
    .describe(`an agent id (a letter a-z first; a-z, 0-9, "_", ".", ":", "@", "-"): ${what}`);
}

/** A row limit, 1…1000. */
export function limitArg(what: string) {
  return z.number().int().min(1).max(1000).describe(`a whole number from 1 to 1000: ${what}`);
}

/**
 * A turn instance id: any text but a blank one. An empty `--turn-instance-id ""` (an unset shell
 * variable) is a usage error, never read as "no turn": the turn's receipts and its one spend hang on it.
 */
export function turnInstanceIdArg(what: string) {
  return z
    .string()
    .refine((value) => value.trim() !== '')
    .meta({ placeholder: 'id' })
    .describe(`a turn id that is not blank: ${what}`);
}

/** A failed preview-then-apply operation's JSON fields: nothing changed, nothing written. */
export function nothingWrittenFields(input: Record<string, unknown>) {
  return { dry_run: input['execute'] !== true, changed: false, written: false };
}
