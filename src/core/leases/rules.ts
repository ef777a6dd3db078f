import { z } from 'zod';
import { LoopxError } from '../errors';
import { isoSeconds } from '../clock';
import { parseIsoInstant } from '../isoTime';
import { normalizeAgentId } from '../registry/agentIds';
import { metaList } from '../state/gates';
import type { TodoItem } from '../state/document';

/**
 * Hard task leases (`task_lease_v0`, one JSON file per todo in `<runtime>/goals/<goal>/task-leases/`):
 * the pure rules. Who may hold a lease, when it counts, how write scopes overlap, and the
 * compare-and-swap checks. The file format and field names are the original's, so a lease written
 * by either implementation is read by the other (docs/leases.md).
 */

export const TASK_LEASE_SCHEMA = 'task_lease_v0';
export const DEFAULT_LEASE_TTL_SECONDS = 45 * 60;
export const MAX_LEASE_TTL_SECONDS = 24 * 60 * 60;
const IDEMPOTENCY_KEY = /^[A-Za-z0-9_.:@/-]{1,160}$/;

export const HANDOFF_MODES = ['legacy', 'soft_claim', 'hard_lease'] as const;
export type HandoffMode = (typeof HANDOFF_MODES)[number];

/**
 * A lease record as read: the known fields checked, everything else kept (a rewrite never drops a
 * field another implementation added). `version` and `lease_epoch` must be real integers: a bool or
 * a string is corruption, not a number.
 */
export const TaskLeaseRecord = z.looseObject({
  schema_version: z.string().optional(),
  goal_id: z.string().optional(),
  todo_id: z.string().optional(),
  owner: z.string().optional(),
  idempotency_key: z.string().optional(),
  write_scopes: z.array(z.string()).optional(),
  acquire_ttl_seconds: z.number().int().optional(),
  version: z.number().int().min(0).optional(),
  lease_epoch: z.number().int().min(1).optional(),
  acquired_at: z.string().optional(),
  updated_at: z.string().optional(),
  expires_at: z.string().optional(),
  status: z.string().optional(),
  released_at: z.string().optional(),
});
export type TaskLeaseRecord = z.infer<typeof TaskLeaseRecord>;

export function normalizeIdempotencyKey(value: string, field = 'idempotency_key'): string {
  const key = value.trim();
  if (!IDEMPOTENCY_KEY.test(key)) {
    throw new LoopxError(
      'invalid_idempotency_key',
      `${field} must be 1–160 characters from A-Z a-z 0-9 _ . : @ / - (a public-safe token), got ${JSON.stringify(value.slice(0, 40))}`,
      { field },
    );
  }
  return key;
}

export function normalizeTtlSeconds(value: number | undefined): number {
  const ttl = value ?? DEFAULT_LEASE_TTL_SECONDS;
  if (!Number.isInteger(ttl) || ttl <= 0 || ttl > MAX_LEASE_TTL_SECONDS) {
    throw new LoopxError(
      'invalid_ttl',
      `--ttl-seconds must be a whole number from 1 to ${MAX_LEASE_TTL_SECONDS} (24 h), got ${String(value)}`,
      { ttl_seconds: value ?? null, max_ttl_seconds: MAX_LEASE_TTL_SECONDS },
    );
  }
  return ttl;
}

/** Trimmed, de-duplicated, non-empty write scopes in first-seen order. */
export function normalizeWriteScopes(scopes: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const raw of scopes ?? []) {
    for (const part of raw.split(',')) {
      const scope = part.trim();
      if (scope !== '' && !out.includes(scope)) out.push(scope);
    }
  }
  return out;
}

/** The lease generation: 0 before any lease, 1 for a record written before epochs existed. */
export function leaseEpoch(lease: TaskLeaseRecord | null): number {
  if (lease === null) return 0;
  return lease.lease_epoch ?? 1;
}

export function leaseVersion(lease: TaskLeaseRecord | null): number {
  return lease?.version ?? 0;
}

/** Active = our schema, status `active`, and not yet expired at `now`. */
export function leaseIsActive(lease: TaskLeaseRecord | null, now: Date): boolean {
  if (lease === null || lease.schema_version !== TASK_LEASE_SCHEMA || lease.status !== 'active') return false;
  const expires = parseIsoInstant(lease.expires_at);
  return expires !== null && expires > now.getTime();
}

export type OwnerConstraint =
  | { effective: true }
  | {
      effective: false;
      reason:
        | 'todo_not_found'
        | 'todo_not_open'
        | 'agent_id_invalid'
        | 'agent_not_registered'
        | 'owner_excluded_from_todo'
        | 'owner_conflicts_with_claim';
      detail: string;
    };

/**
 * Whether `owner` may hold (or keep holding) a lease on `todo`: the todo exists and is open, the
 * owner is a registered agent, not excluded from the todo, and not at odds with its soft claim.
 * A lease whose owner fails this no longer counts (the todo was claimed away or finished).
 */
export function ownerConstraint(
  todo: TodoItem | null,
  owner: string | undefined,
  roster: readonly string[],
): OwnerConstraint {
  if (todo === null) return { effective: false, reason: 'todo_not_found', detail: 'the todo is not in the state file' };
  if (todo.status !== 'open')
    return { effective: false, reason: 'todo_not_open', detail: `the todo is ${todo.status}, not open` };
  const id = normalizeAgentId(owner);
  if (id === null) return { effective: false, reason: 'agent_id_invalid', detail: 'the owner is not an agent id' };
  if (!roster.includes(id))
    return {
      effective: false,
      reason: 'agent_not_registered',
      detail: `${id} is not in the goal's registered agents (${roster.join(', ') || 'none'})`,
    };
  if (metaList(todo.meta['excluded_agents']).includes(id))
    return { effective: false, reason: 'owner_excluded_from_todo', detail: `the todo excludes ${id}` };
  const claim = normalizeAgentId(todo.meta['claimed_by']);
  if (claim !== null && claim !== id)
    return { effective: false, reason: 'owner_conflicts_with_claim', detail: `the todo is claimed by ${claim}` };
  return { effective: true };
}

const GLOB = /[*?[]/;
const EVERYTHING = new Set(['*', '**', './']);

function literalPrefix(scope: string): string {
  const at = scope.search(GLOB);
  return at < 0 ? scope : scope.slice(0, at);
}

/** A glob over relative paths: `*` and `?` stay inside one segment, `**` crosses them, `[…]` is a class. */
function globMatches(pattern: string, candidate: string): boolean {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i] as string;
    if (c === '*') {
      if (pattern[i + 1] === '*') {
        source += '.*';
        i++;
      } else source += '[^/]*';
    } else if (c === '?') source += '[^/]';
    else if (c === '[') {
      const end = pattern.indexOf(']', i + 1);
      if (end < 0) source += '\\[';
      else {
        source += `[${pattern
          .slice(i + 1, end)
          .replace(/\\/g, '\\\\')
          .replace(/^!/, '^')}]`;
        i = end;
      }
    } else source += c.replace(/[.+^${}()|\\]/g, '\\$&');
  }
  return new RegExp(`^${source}$`).test(candidate);
}

/** Whether two write scopes can touch the same file (conservative: when in doubt, they overlap). */
export function scopesOverlap(left: string, right: string): boolean {
  if (left === right || EVERYTHING.has(left) || EVERYTHING.has(right)) return true;
  const leftGlob = GLOB.test(left);
  const rightGlob = GLOB.test(right);
  if (leftGlob && rightGlob) {
    const a = literalPrefix(left);
    const b = literalPrefix(right);
    return a === '' || b === '' || a.startsWith(b) || b.startsWith(a);
  }
  if (leftGlob || rightGlob) {
    const [pattern, plain] = leftGlob ? [left, right] : [right, left];
    const prefix = literalPrefix(pattern);
    if (globMatches(pattern, plain)) return true;
    if (prefix.endsWith('/') && plain.replace(/\/+$/, '') === prefix.replace(/\/+$/, '')) return true;
    // A folder scope covers every file under it, so it overlaps a glob rooted inside it.
    return plain.endsWith('/') && prefix.startsWith(plain);
  }
  const a = left.replace(/\/+$/, '');
  const b = right.replace(/\/+$/, '');
  return (left.endsWith('/') && right.startsWith(`${a}/`)) || (right.endsWith('/') && left.startsWith(`${b}/`));
}

export function writeScopesOverlap(left: readonly string[], right: readonly string[]): boolean {
  return left.some((l) => right.some((r) => scopesOverlap(l, r)));
}

export function assertExpectedVersion(lease: TaskLeaseRecord | null, expected: number | undefined): void {
  if (expected === undefined) return;
  const actual = leaseVersion(lease);
  if (actual !== expected) {
    throw new LoopxError(
      'version_mismatch',
      `lease version mismatch: expected ${expected}, the lease is at version ${actual}; inspect it (loopx task-lease inspect) and retry with the current version — nothing was written`,
      { expected_version: expected, actual_version: actual },
    );
  }
}

export function requireExpectedVersion(expected: number | undefined, action: string): number {
  if (expected === undefined) {
    throw new LoopxError(
      'version_required',
      `task lease ${action} needs the current lease version: pass --expected-version <n> (loopx task-lease inspect shows it)`,
      { action },
    );
  }
  return expected;
}

export interface NewLeaseInput {
  goalId: string;
  todoId: string;
  owner: string;
  idempotencyKey: string;
  writeScopes: string[];
  ttlSeconds: number;
  previous: TaskLeaseRecord | null;
  now: Date;
}

/** A fresh generation: version and epoch one above the previous record's. */
export function buildLease(input: NewLeaseInput): TaskLeaseRecord {
  const at = isoSeconds(input.now);
  return {
    schema_version: TASK_LEASE_SCHEMA,
    goal_id: input.goalId,
    todo_id: input.todoId,
    owner: input.owner,
    idempotency_key: input.idempotencyKey,
    write_scopes: input.writeScopes,
    acquire_ttl_seconds: input.ttlSeconds,
    version: leaseVersion(input.previous) + 1,
    lease_epoch: leaseEpoch(input.previous) + 1,
    acquired_at: at,
    updated_at: at,
    expires_at: isoSeconds(new Date(input.now.getTime() + input.ttlSeconds * 1000)),
    status: 'active',
  };
}

export function releasedLease(lease: TaskLeaseRecord, now: Date): TaskLeaseRecord {
  const at = isoSeconds(now);
  return { ...lease, lease_epoch: leaseEpoch(lease), status: 'released', released_at: at, updated_at: at };
}
