import type { GoalRef } from '../registry/goalRef';
import { isoSeconds, type Clock } from '../clock';
import { isLoopxError, LoopxError } from '../errors';
import { parseStateDocument, TERMINAL_STATUSES } from '../state/document';
import { setFrontMatterField } from '../state/nextAction';
import { applyStateEdit, readStateText } from '../state/stateFile';
import { HANDOFF_MODES, leaseIsActive, type HandoffMode } from './rules';
import { handoffModeOf, leaseFiles, readLease, withLeaseLock } from './store';

/**
 * `loopx handoff-mode show|set` (the original's command, schema `goal_handoff_mode_v0`): the goal's
 * `handoff_mode` lives in its ACTIVE_GOAL_STATE.md front matter, the file that travels between hosts.
 * A change needs a quiescent goal — no open todo with `claimed_by` and no time-active task lease —
 * checked under the lease lock and written under the state file's lock, so no acquire or claim slips
 * in between. `set` previews unless `execute`; a refused or unchanged set writes nothing.
 */

export const HANDOFF_MODE_SCHEMA = 'goal_handoff_mode_v0' as const;

export interface ClaimedTodo {
  todo_id: string;
  claimed_by: string;
  status: string;
}

export interface ActiveLeaseView {
  todo_id: string;
  owner: string;
  expires_at: string;
}

export interface HandoffModeShow {
  ok: true;
  schema_version: typeof HANDOFF_MODE_SCHEMA;
  action: 'show';
  goal_id: string;
  handoff_mode: HandoffMode;
  /** `frontmatter` when the state file sets it, `registry` when only the registry entry does, else `default`. */
  source: 'frontmatter' | 'registry' | 'default';
  state_file: string;
}

export interface HandoffModeSet {
  ok: true;
  schema_version: typeof HANDOFF_MODE_SCHEMA;
  action: 'set';
  goal_id: string;
  previous_mode: string;
  previous_mode_valid: boolean;
  handoff_mode: HandoffMode;
  changed: boolean;
  dry_run: boolean;
  written: boolean;
  state_file: string;
}

function frontMatterMode(text: string): string | null {
  const value = parseStateDocument(text).frontMatter?.fields['handoff_mode'];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

export async function showHandoffMode(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'> & { statePath: string },
): Promise<HandoffModeShow> {
  const text = await readStateText(goal.statePath);
  const mode = handoffModeOf(goal, parseStateDocument(text));
  const registry = goal.rawEntry['handoff_mode'];
  const source =
    frontMatterMode(text) !== null
      ? 'frontmatter'
      : registry !== undefined && registry !== null && registry !== ''
        ? 'registry'
        : 'default';
  return {
    ok: true,
    schema_version: HANDOFF_MODE_SCHEMA,
    action: 'show',
    goal_id: goal.goalId,
    handoff_mode: mode,
    source,
    state_file: goal.statePath,
  };
}

/** What keeps the goal from being quiescent: open todos with a claim, and time-active leases. */
export function quiescenceOffenders(
  text: string,
  now: Date,
  leases: readonly { file: string; lease: Awaited<ReturnType<typeof readLease>> }[],
): { claimed: ClaimedTodo[]; leases: ActiveLeaseView[] } {
  const doc = parseStateDocument(text);
  const claimed = doc.todos
    .filter((t) => (t.role === 'agent' || t.role === 'user') && !TERMINAL_STATUSES.has(t.status))
    .filter((t) => (t.meta['claimed_by'] ?? '').trim() !== '')
    .map((t) => ({ todo_id: t.todoId, claimed_by: (t.meta['claimed_by'] ?? '').trim(), status: t.status }));
  const active = leases
    .filter((entry) => entry.lease !== null && leaseIsActive(entry.lease, now))
    .map(({ lease }) => ({
      todo_id: lease?.todo_id ?? '',
      owner: lease?.owner ?? '',
      expires_at: lease?.expires_at ?? '',
    }));
  return { claimed, leases: active };
}

export async function setHandoffMode(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'> & { statePath: string },
  requested: HandoffMode,
  options: { execute: boolean; clock: Clock },
): Promise<HandoffModeSet> {
  if (!(HANDOFF_MODES as readonly string[]).includes(requested))
    throw new LoopxError('invalid_handoff_mode', `unsupported handoff_mode ${JSON.stringify(requested)}`, {
      handoff_mode: requested,
      supported: [...HANDOFF_MODES],
    });
  return withLeaseLock(goal, { clock: options.clock, operation: 'handoff_mode_set' }, async () => {
    const text = await readStateText(goal.statePath);
    const rawPrevious = frontMatterMode(text);
    let previous: string;
    let previousValid = true;
    try {
      previous = handoffModeOf(goal, parseStateDocument(text));
    } catch (error) {
      if (!isLoopxError(error, 'invalid_handoff_mode')) throw error;
      previous = rawPrevious ?? String(goal.rawEntry['handoff_mode']);
      previousValid = false;
    }
    const base = {
      ok: true as const,
      schema_version: HANDOFF_MODE_SCHEMA,
      action: 'set' as const,
      goal_id: goal.goalId,
      previous_mode: previous,
      previous_mode_valid: previousValid,
      handoff_mode: requested,
      dry_run: !options.execute,
      state_file: goal.statePath,
    };
    // Already so in the front matter (where the mode travels): nothing to change.
    if (previous === requested && rawPrevious === requested) return { ...base, changed: false, written: false };
    if (parseStateDocument(text).frontMatter === null)
      throw new LoopxError(
        'state_frontmatter_missing',
        `${goal.statePath} has no YAML front matter; add one (--- lines at the top) before setting handoff_mode`,
        { path: goal.statePath },
      );
    const leases = [];
    for (const file of leaseFiles(goal)) leases.push({ file, lease: await readLease(file) });
    const offenders = quiescenceOffenders(text, options.clock.now(), leases);
    if (offenders.claimed.length > 0 || offenders.leases.length > 0) {
      throw new LoopxError(
        'handoff_mode_not_quiescent',
        `handoff_mode can only change while the goal is quiescent: ${offenders.claimed.length} claimed open todo(s), ${offenders.leases.length} time-active lease(s); release the leases (loopx task-lease release) and the claims, then retry`,
        {
          goal_id: goal.goalId,
          handoff_mode: requested,
          previous_mode: previous,
          claimed_todos: offenders.claimed,
          active_leases: offenders.leases,
          checked_at: isoSeconds(options.clock.now()),
        },
      );
    }
    if (!options.execute) return { ...base, changed: true, written: false };
    const result = await applyStateEdit(goal.statePath, () => setFrontMatterField(text, 'handoff_mode', requested), {
      operation: 'handoff-mode set',
      expectedText: text,
      lock: { clock: options.clock },
    });
    return { ...base, changed: true, written: result.written };
  });
}
