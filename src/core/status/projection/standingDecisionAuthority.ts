import { z } from 'zod';
import { statusFromMarker, type TodoItem } from '../../state/document';
import { DECISION_GRANULARITIES, DECISION_KINDS } from '../../state/gates';
import { collapseWhitespace } from './text';

/**
 * The original's `standing_decision_authority` (loopx/control_plane/todos/decision_scope.py
 * `build_standing_decision_authority`, attached by active_state_todo_parser.py): the user gates a person has already
 * decided for good, compiled into receipts an agent may reuse. A user todo of the User Todo sections (not the archive)
 * is a receipt when it is a user gate, its status is `done`, it names no `unblocks_todo_id`, it has a valid
 * `decision_scope` of granularity goal, project or global and a `decision_outcome`, a `todo_id`, and it is goal-wide
 * (`global_gate`) or names its lane (`blocks_agent`). One receipt per scope (kind, granularity, key) and owner
 * (`global` or the agent): a later gate replaces an earlier one in its place. `active` is true for `approve` only.
 * Absent when no gate qualifies. Every value is read with the original's normalizers (lower-cased, whitespace
 * collapsed, tokens checked against its patterns), so a value it drops is dropped here.
 */

export const STANDING_DECISION_AUTHORITY_SCHEMA_VERSION = 'standing_decision_authority_v0';
export const STANDING_DECISION_RECEIPT_SCHEMA_VERSION = 'standing_decision_receipt_v0';
const STANDING_GRANULARITIES = new Set(['goal', 'project', 'global']);

const DECISION_KIND_SET: ReadonlySet<string> = new Set(DECISION_KINDS);
const DECISION_GRANULARITY_SET: ReadonlySet<string> = new Set(DECISION_GRANULARITIES);
const DECISION_OUTCOMES = new Set(['approve', 'reject', 'cancel']);
const TODO_STATUSES = new Set(['open', 'done', 'blocked', 'deferred']);
const TASK_CLASSES = new Set(['advancement_task', 'continuous_monitor', 'user_gate', 'user_action', 'blocker']);
const SCOPE_KEY = /^(?:\*|[a-z0-9][a-z0-9_.:@*/-]{0,95})$/;
const TODO_ID = /^todo_[a-z0-9_-]{3,64}$/;
const AGENT = /^[a-z][a-z0-9_.:@-]{0,79}$/;
const ACTION_KIND = /^[a-z][a-z0-9_-]{0,63}$/;
const GATE_ACTION_KIND_HINTS = [
  'approval',
  'approve',
  'boundary',
  'gate',
  'blocker',
  'credential',
  'private',
  'production',
  'leaderboard',
  'submission',
  'public_claim',
];

export const DecisionScopeSchema = z.object({
  schema_version: z.literal('decision_scope_v0'),
  kind: z.string(),
  granularity: z.string(),
  scope_key: z.string(),
});
export type DecisionScope = z.infer<typeof DecisionScopeSchema>;

export const StandingDecisionReceiptSchema = z.object({
  schema_version: z.literal(STANDING_DECISION_RECEIPT_SCHEMA_VERSION),
  source_todo_id: z.string(),
  decision_scope: DecisionScopeSchema,
  outcome: z.enum(['approve', 'reject', 'cancel']),
  active: z.boolean(),
  global_gate: z.boolean(),
  blocks_agent: z.string().optional(),
  completed_at: z.string().optional(),
  updated_at: z.string().optional(),
});
export type StandingDecisionReceipt = z.infer<typeof StandingDecisionReceiptSchema>;

export const StandingDecisionAuthoritySchema = z.object({
  schema_version: z.literal(STANDING_DECISION_AUTHORITY_SCHEMA_VERSION),
  active_count: z.number().int(),
  inactive_count: z.number().int(),
  entries: z.array(StandingDecisionReceiptSchema),
});
export type StandingDecisionAuthority = z.infer<typeof StandingDecisionAuthoritySchema>;

/** contract.py `compact_todo_text` then `.lower()`. */
function token(value: string | undefined): string {
  return collapseWhitespace(value ?? '').toLowerCase();
}

/** contract.py `normalize_todo_id` (strip, lower, pattern). */
export function todoId(value: string | undefined): string | null {
  const candidate = (value ?? '').trim().toLowerCase();
  return candidate !== '' && TODO_ID.test(candidate) ? candidate : null;
}

/** contract.py `normalize_todo_claimed_by` (also `blocks_agent`). */
function agent(value: string | undefined): string | null {
  const candidate = token(value).replaceAll(' ', '-');
  return candidate !== '' && AGENT.test(candidate) ? candidate : null;
}

/** contract.py `normalize_todo_global_gate`: true, false or unset. */
function globalGate(value: string | undefined): boolean {
  return ['1', 'true', 'yes', 'y', 'global_gate', 'global-gate'].includes(token(value));
}

/** contract.py `normalize_todo_decision_scope` on the metadata's `kind:granularity:scope_key` text. */
export function decisionScope(value: string | undefined): z.infer<typeof DecisionScopeSchema> | null {
  const candidate = token(value);
  const first = candidate.indexOf(':');
  const second = first < 0 ? -1 : candidate.indexOf(':', first + 1);
  if (second < 0) return null;
  const kind = token(candidate.slice(0, first));
  const granularity = token(candidate.slice(first + 1, second));
  const scopeKey = token(candidate.slice(second + 1));
  if (!DECISION_KIND_SET.has(kind) || !DECISION_GRANULARITY_SET.has(granularity) || !SCOPE_KEY.test(scopeKey))
    return null;
  return { schema_version: 'decision_scope_v0', kind, granularity, scope_key: scopeKey };
}

/** user_gate.py `is_user_gate_todo_item`: an explicit (valid) task class decides; without one, the action kind's hints. */
function isUserGate(item: TodoItem): boolean {
  const taskClass = (item.meta['task_class'] ?? '').trim().toLowerCase();
  if (TASK_CLASSES.has(taskClass)) return taskClass === 'user_gate';
  const actionKind = (item.meta['action_kind'] ?? '').trim().toLowerCase();
  if (!ACTION_KIND.test(actionKind)) return false;
  return GATE_ACTION_KIND_HINTS.some((hint) => actionKind.includes(hint));
}

/** The status the original's parser reads: a valid `status=` value, else the checkbox. */
function status(item: TodoItem): string {
  const fromMeta = (item.meta['status'] ?? '').trim().toLowerCase();
  return TODO_STATUSES.has(fromMeta) ? fromMeta : statusFromMarker(item.marker);
}

function receipt(item: TodoItem): { identity: string; receipt: StandingDecisionReceipt } | null {
  if (item.role !== 'user' || !isUserGate(item) || status(item) !== 'done') return null;
  if (todoId(item.meta['unblocks_todo_id']) !== null) return null;
  const scope = decisionScope(item.meta['decision_scope']);
  const outcome = token(item.meta['decision_outcome']);
  const source = todoId(item.meta['todo_id']);
  if (scope === null || !DECISION_OUTCOMES.has(outcome) || source === null) return null;
  if (!STANDING_GRANULARITIES.has(scope.granularity)) return null;
  const isGlobal = globalGate(item.meta['global_gate']);
  const blocksAgent = agent(item.meta['blocks_agent']);
  if (!isGlobal && blocksAgent === null) return null;
  const value: StandingDecisionReceipt = {
    schema_version: STANDING_DECISION_RECEIPT_SCHEMA_VERSION,
    source_todo_id: source,
    decision_scope: scope,
    outcome: outcome as StandingDecisionReceipt['outcome'],
    active: outcome === 'approve',
    global_gate: isGlobal,
  };
  if (blocksAgent !== null) value.blocks_agent = blocksAgent;
  for (const key of ['completed_at', 'updated_at'] as const) {
    const text = collapseWhitespace(item.meta[key] ?? '');
    if (text !== '') value[key] = text;
  }
  const owner = isGlobal ? 'global' : `agent:${blocksAgent}`;
  return { identity: JSON.stringify([scope.kind, scope.granularity, scope.scope_key, owner]), receipt: value };
}

/** The goal's standing decision receipts, or null when none of its user gates is one. */
export function standingDecisionAuthority(todos: readonly TodoItem[]): StandingDecisionAuthority | null {
  // A Map keeps an identity's first position when a later gate replaces its receipt, as the original's dict does.
  const latest = new Map<string, StandingDecisionReceipt>();
  for (const item of todos) {
    const found = receipt(item);
    if (found !== null) latest.set(found.identity, found.receipt);
  }
  if (latest.size === 0) return null;
  const entries = [...latest.values()];
  return {
    schema_version: STANDING_DECISION_AUTHORITY_SCHEMA_VERSION,
    active_count: entries.filter((entry) => entry.active).length,
    inactive_count: entries.filter((entry) => !entry.active).length,
    entries,
  };
}
