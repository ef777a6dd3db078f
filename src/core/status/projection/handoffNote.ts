import { createHash } from 'node:crypto';
import { normalizedClaim } from './claimedCounts';
import { todoId } from './standingDecisionAuthority';

/**
 * The original's typed handoff note of a todo row (loopx/control_plane/todos/handoff_note.py
 * `build_todo_handoff_note`): a read model over the row, present only when the row carries a handoff
 * signal (a raw `handoff`/`handoff_note`, `excluded_agents`, `successor_todo_ids`, `unblocks_todo_id` or
 * `superseded_by`). A note already on the row is read as the raw handoff, so attaching twice (as the todo
 * index does, with the goal and the source) keeps what the first note said and adds the goal and source.
 */

export const HANDOFF_NOTE_SCHEMA_VERSION = 'handoff_note_v0';

export type TodoRow = Record<string, unknown>;

const INLINE_CREDENTIAL =
  /(?:\bbearer\s+\S+|\bauthorization\s*:|\b(?:ak|sk|api[_-]?key|access[_-]?key(?:[_-]?id)?|secret(?:[_-]?key)?|token|password)\b\s*[:=]\s*\S+)/iu;

/** Python's `str(value or "")`, for the strings, numbers and booleans rows hold. */
function pyStr(value: unknown): string {
  if (value === null || value === undefined || value === false || value === '' || value === 0) return '';
  if (value === true) return 'True';
  return String(value);
}

/** `_compact_text`: whitespace collapsed; null when empty or holding an inline credential; cut with `...`. */
export function handoffCompactText(value: unknown, limit = 220): string | null {
  const text = pyStr(value).trim().split(/\s+/u).filter(Boolean).join(' ');
  if (text === '' || INLINE_CREDENTIAL.test(text)) return null;
  const chars = Array.from(text);
  if (chars.length <= limit) return text;
  return `${chars
    .slice(0, limit - 1)
    .join('')
    .trimEnd()}...`;
}

function rawHandoff(item: TodoRow): Record<string, unknown> {
  const handoff = truthy(item['handoff']) ? item['handoff'] : item['handoff_note'];
  return isRecord(handoff) ? handoff : {};
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Python truthiness for JSON values. */
function truthy(value: unknown): boolean {
  if (value === null || value === undefined || value === false || value === 0 || value === '') return false;
  if (Array.isArray(value)) return value.length > 0;
  if (isRecord(value)) return Object.keys(value).length > 0;
  return true;
}

/** Python's `repr` of a tuple element (strings, ints, None). */
function pyRepr(value: unknown): string {
  if (value === null || value === undefined) return 'None';
  if (typeof value === 'number' || typeof value === 'boolean') return value === true ? 'True' : String(value);
  const text = String(value);
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  const escaped = text.replace(/\\/gu, '\\\\').replace(/\n/gu, '\\n').replace(/\r/gu, '\\r').replace(/\t/gu, '\\t');
  return quote + (quote === "'" ? escaped.replace(/'/gu, "\\'") : escaped) + quote;
}

function handoffId(item: TodoRow): string {
  const id = todoId(typeof item['todo_id'] === 'string' ? item['todo_id'] : undefined);
  if (id !== null) return `handoff_${id.startsWith('todo_') ? id.slice('todo_'.length) : id}`;
  const textValue = truthy(item['text']) ? item['text'] : item['title'];
  const tuple = `(${[item['goal_id'], item['role'], item['index'], textValue].map(pyRepr).join(', ')})`;
  return `handoff_${createHash('sha1').update(tuple, 'utf8').digest('hex').slice(0, 12)}`;
}

function firstText(item: TodoRow, keys: readonly string[], limit = 220): string | null {
  const handoff = rawHandoff(item);
  for (const key of keys) {
    const value = Object.hasOwn(handoff, key) ? handoff[key] : item[key];
    const text = handoffCompactText(value, limit);
    if (text !== null) return text;
  }
  return null;
}

function agentList(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[,;|\s]+/u) : [];
  const out: string[] = [];
  for (const entry of raw) {
    const agent = normalizedClaim(typeof entry === 'string' ? entry : null);
    if (agent !== null && !out.includes(agent)) out.push(agent);
  }
  return out;
}

function todoIdList(value: unknown): string[] {
  const raw = Array.isArray(value) ? value : typeof value === 'string' ? value.split(/[,;|\s]+/u) : [];
  const out: string[] = [];
  for (const entry of raw) {
    const id = todoId(typeof entry === 'string' ? entry : undefined);
    if (id !== null && !out.includes(id)) out.push(id);
  }
  return out;
}

function evidenceRefs(item: TodoRow, id: string | null): string[] {
  const refs: string[] = [];
  const handoff = rawHandoff(item);
  const raw = truthy(handoff['evidence_refs']) ? handoff['evidence_refs'] : item['evidence_refs'];
  if (Array.isArray(raw))
    for (const entry of raw) {
      const ref = handoffCompactText(entry, 180);
      if (ref !== null && !refs.includes(ref)) refs.push(ref);
    }
  if (truthy(item['evidence']) && id !== null) refs.push(`todo:${id}:evidence`);
  if (truthy(item['note']) && id !== null) refs.push(`todo:${id}:note`);
  const latestKind = handoffCompactText(item['latest_event_kind'], 80);
  if (latestKind !== null && id !== null) refs.push(`rollout_event:${latestKind}:${id}`);
  return refs.slice(0, 6);
}

type Scope = { kind?: unknown; granularity?: unknown; scope_key?: unknown };

function unresolvedDecisions(item: TodoRow): unknown[] {
  const decisions: unknown[] = Array.isArray(item['required_decision_scopes'])
    ? [...(item['required_decision_scopes'] as unknown[])]
    : [];
  const single = item['decision_scope'];
  if (isRecord(single)) {
    const s = single as Scope;
    const same = decisions.some((d) => {
      const o = (isRecord(d) ? d : {}) as Scope;
      return o.kind === s.kind && o.granularity === s.granularity && o.scope_key === s.scope_key;
    });
    if (!same) decisions.push(single);
  }
  return decisions;
}

/** `build_todo_handoff_note`: the note of a row, or null when the row carries no handoff signal. */
export function todoHandoffNote(
  item: TodoRow,
  options: { goalId?: string | null; source?: string | null } = {},
): Record<string, unknown> | null {
  const handoff = rawHandoff(item);
  const id = todoId(typeof item['todo_id'] === 'string' ? item['todo_id'] : undefined);
  const claimedBy = normalizedClaim(typeof item['claimed_by'] === 'string' ? item['claimed_by'] : null);
  const excluded = agentList(item['excluded_agents']);
  const fromRaw = truthy(handoff['from_agent']) ? handoff['from_agent'] : item['agent_id'];
  const fromAgent = normalizedClaim(typeof fromRaw === 'string' ? fromRaw : null);
  const explicitTo = normalizedClaim(typeof handoff['to_agent'] === 'string' ? handoff['to_agent'] : null);
  const successors = todoIdList(item['successor_todo_ids']);
  const unblocks = todoId(typeof item['unblocks_todo_id'] === 'string' ? item['unblocks_todo_id'] : undefined);
  const supersededBy = todoId(typeof item['superseded_by'] === 'string' ? item['superseded_by'] : undefined);
  if (
    Object.keys(handoff).length === 0 &&
    excluded.length === 0 &&
    successors.length === 0 &&
    unblocks === null &&
    supersededBy === null
  )
    return null;
  const actionKind = typeof item['action_kind'] === 'string' ? item['action_kind'].trim().toLowerCase() : '';
  const resumeWhen = typeof item['resume_when'] === 'string' ? item['resume_when'].trim() : '';
  const payload: Record<string, unknown> = {
    schema_version: HANDOFF_NOTE_SCHEMA_VERSION,
    handoff_id: handoffId(item),
    todo_id: id,
    goal_id: handoffCompactText(truthy(options.goalId) ? options.goalId : item['goal_id'], 180),
    from_agent: fromAgent,
    to_agent: explicitTo ?? claimedBy,
    intent:
      firstText(item, ['intent'], 80) ||
      (actionKind !== '' ? actionKind : null) ||
      handoffCompactText(item['task_class'], 80) ||
      'continue',
    summary: firstText(item, ['summary', 'note', 'reason', 'evidence', 'title', 'text'], 280),
    evidence_refs: evidenceRefs(item, id),
    unresolved_decisions: unresolvedDecisions(item),
    blocked_on:
      firstText(item, ['blocked_on'], 180) ||
      (resumeWhen !== '' ? resumeWhen : null) ||
      (unblocks !== null ? `todo:${unblocks}` : null) ||
      (supersededBy !== null ? `todo:${supersededBy}` : null),
    suggested_next_action: firstText(item, ['suggested_next_action', 'title', 'text'], 260),
    source: handoffCompactText(truthy(options.source) ? options.source : item['source'], 120),
  };
  if (successors.length > 0) payload['successor_todo_ids'] = successors;
  if (unblocks !== null) payload['unblocks_todo_id'] = unblocks;
  if (excluded.length > 0) payload['excluded_agents'] = excluded;
  return Object.fromEntries(Object.entries(payload).filter(([, value]) => truthy(value)));
}

/** `attach_todo_handoff_note`: sets the row's `handoff_note` when it has one (in place; returns the row). */
export function attachHandoffNote<T extends TodoRow>(
  item: T,
  options: { goalId?: string | null; source?: string | null } = {},
): T {
  const note = todoHandoffNote(item, options);
  if (note !== null) (item as TodoRow)['handoff_note'] = note;
  return item;
}
