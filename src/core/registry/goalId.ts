import * as path from 'node:path';
import { LoopxError } from '../errors';

/**
 * The goal-id check every command applies before a goal id names a folder:
 * trimmed; not empty; a single path segment (not `.`/`..`, no `/` or `\`); and equal to its own
 * last path component, which also catches Windows drive forms such as `C:x`. Returns the trimmed id.
 */
export function checkGoalIdSegment(raw: string): string {
  const goalId = raw.trim();
  if (goalId === '') throw new LoopxError('invalid_goal_id', 'goal id is required', { goal_id: raw });
  if (goalId === '.' || goalId === '..' || goalId.includes('/') || goalId.includes('\\')) {
    throw new LoopxError('invalid_goal_id', 'goal id must be a single path segment', { goal_id: raw });
  }
  if (path.win32.basename(goalId) !== goalId || path.posix.basename(goalId) !== goalId) {
    throw new LoopxError('invalid_goal_id', 'goal id must not include path traversal', { goal_id: raw });
  }
  return goalId;
}

const NEW_GOAL_ID = /^[a-z0-9][a-z0-9._-]{0,79}$/;

/**
 * The id of a goal LoopX is about to create: the segment check, then a lowercase slug of at most
 * 80 characters (letters, digits, `.`, `_`, `-`, starting with a letter or digit), so it is a
 * portable folder name and reads the same everywhere. Existing goals with other ids stay readable.
 */
export function checkNewGoalId(raw: string): string {
  const goalId = checkGoalIdSegment(raw);
  if (!NEW_GOAL_ID.test(goalId)) {
    throw new LoopxError(
      'invalid_goal_id',
      `goal id ${JSON.stringify(goalId)} must be a lowercase slug such as my-project-goal: letters a-z, digits, '.', '_' and '-', starting with a letter or digit, at most 80 characters`,
      { goal_id: raw },
    );
  }
  return goalId;
}

/** A lowercase slug of free text: runs of other characters become `-`, ends trimmed. */
export function slugify(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
