import { registeredAgentsForGoal } from '../registry/agentIds';
import type { GoalRef } from '../registry/goalRef';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { normalizeAgentId, AGENT_ID_RULE } from '../registry/agentIds';
import type { StateDocument, TodoItem } from '../state/document';
import {
  assertExpectedVersion,
  buildLease,
  leaseEpoch,
  leaseIsActive,
  leaseVersion,
  normalizeIdempotencyKey,
  normalizeTtlSeconds,
  normalizeWriteScopes,
  ownerConstraint,
  releasedLease,
  requireExpectedVersion,
  writeScopesOverlap,
  type HandoffMode,
  type TaskLeaseRecord,
} from './rules';
import {
  handoffModeOf,
  leaseFiles,
  leasePath,
  readGoalDocument,
  readLease,
  todoOf,
  withLeaseLock,
  writeLease,
} from './store';

/**
 * The five lease verbs (acquire, renew, transfer, release, inspect); the completion fence is
 * `completionFence.ts`. Every verb that writes runs under the goal's lease lock, re-reads the lease and the todo inside
 * it, and either writes one new record atomically or refuses with nothing written.
 */

export type LeaseAction = 'acquire' | 'renew' | 'transfer' | 'release' | 'inspect';

export interface LeaseResult {
  ok: true;
  schema_version: 'task_lease_v0';
  action: LeaseAction;
  goal_id: string;
  todo_id: string;
  lease: TaskLeaseRecord | null;
  lease_path: string;
  handoff_mode: HandoffMode;
  active?: boolean;
  acquired?: boolean;
  renewed?: boolean;
  transferred?: boolean;
  released?: boolean;
  idempotent?: boolean;
  missing?: boolean;
  executor_constraint?: { effective: false; reason: string; detail: string };
}

export function requireOwner(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  value: string,
  field: string,
): string {
  const id = normalizeAgentId(value);
  if (id === null)
    throw new LoopxError('agent_id_invalid', `${field} must be an agent id: ${AGENT_ID_RULE}`, { field });
  const roster = registeredAgentsForGoal(goal.rawEntry);
  if (roster.length === 0) {
    throw new LoopxError(
      'agent_registry_roster_missing',
      `goal '${goal.goalId}' has no coordination.registered_agents, so no agent can hold a task lease; register ${id} first (loopx configure-goal --goal-id ${goal.goalId} --registered-agent ${id} --execute)`,
      { field, agent_id: id, goal_id: goal.goalId },
    );
  }
  if (!roster.includes(id)) {
    throw new LoopxError(
      'agent_not_registered',
      `${field}='${id}' is not registered for goal '${goal.goalId}'; registered_agents=${roster.join(', ')}`,
      { field, agent_id: id, goal_id: goal.goalId, registered_agents: [...roster] },
    );
  }
  return id;
}

function requireEligible(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todo: TodoItem | null,
  todoId: string,
  owner: string,
  options: { takeover?: boolean } = {},
): TodoItem {
  const constraint = ownerConstraint(todo, owner, registeredAgentsForGoal(goal.rawEntry));
  if (constraint.effective) return todo as TodoItem;
  // A claim takeover may lease a todo another agent soft-claimed, as long as no lease of theirs is in force.
  if (options.takeover === true && constraint.reason === 'owner_conflicts_with_claim') return todo as TodoItem;
  throw new LoopxError(constraint.reason, `task lease for ${owner} on ${todoId} refused: ${constraint.detail}`, {
    goal_id: goal.goalId,
    todo_id: todoId,
    owner,
    reason: constraint.reason,
  });
}

function forbidInSoftClaim(
  mode: HandoffMode,
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todoId: string,
  action: LeaseAction,
): void {
  if (mode !== 'soft_claim') return;
  throw new LoopxError(
    'handoff_mode_forbids_lease',
    `goal '${goal.goalId}' uses handoff_mode soft_claim, which forbids task lease ${action}; release and inspect stay available for leftovers`,
    { goal_id: goal.goalId, todo_id: todoId, action, handoff_mode: mode },
  );
}

/** Whether the lease counts now: time-active and its owner still eligible for the todo. */
export function effective(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  doc: StateDocument,
  lease: TaskLeaseRecord | null,
  todoId: string,
  now: Date,
): boolean {
  return (
    leaseIsActive(lease, now) &&
    ownerConstraint(todoOf(doc, todoId), lease?.owner, registeredAgentsForGoal(goal.rawEntry)).effective
  );
}

function casMismatch(lease: TaskLeaseRecord, file: string): LoopxError {
  return new LoopxError(
    'lease_cas_mismatch',
    `the lease on ${lease.todo_id ?? 'this todo'} is held by ${lease.owner ?? '?'} under another idempotency key; only the execution that acquired it may change it (nothing was written)`,
    {
      lease_owner: lease.owner ?? null,
      lease_version: leaseVersion(lease),
      lease_epoch: leaseEpoch(lease),
      lease_path: file,
    },
  );
}

function notActive(file: string, todoId: string): LoopxError {
  return new LoopxError(
    'lease_not_active',
    `the task lease on ${todoId} is missing, released or expired; acquire a new one`,
    {
      todo_id: todoId,
      lease_path: file,
    },
  );
}

export function base(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todoId: string,
  action: LeaseAction,
  file: string,
  mode: HandoffMode,
) {
  return {
    ok: true as const,
    schema_version: 'task_lease_v0' as const,
    action,
    goal_id: goal.goalId,
    todo_id: todoId,
    lease_path: file,
    handoff_mode: mode,
  };
}

/** Write-scope conflicts with the goal's other effective leases. */
async function scopeConflicts(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  doc: StateDocument,
  todoId: string,
  scopes: string[],
  now: Date,
) {
  if (scopes.length === 0) return [];
  const conflicts: Record<string, unknown>[] = [];
  for (const file of leaseFiles(goal)) {
    const other = await readLease(file);
    if (other === null || other.todo_id === todoId || !effective(goal, doc, other, other.todo_id ?? '', now)) continue;
    const theirs = normalizeWriteScopes(other.write_scopes);
    if (!writeScopesOverlap(scopes, theirs)) continue;
    conflicts.push({
      todo_id: other.todo_id ?? null,
      owner: other.owner ?? null,
      expires_at: other.expires_at ?? null,
      version: leaseVersion(other),
      lease_epoch: leaseEpoch(other),
      write_scopes: theirs,
      lease_path: file,
    });
  }
  return conflicts;
}

export interface AcquireInput {
  todoId: string;
  owner: string;
  idempotencyKey: string;
  ttlSeconds?: number | undefined;
  writeScopes?: readonly string[] | undefined;
  expectedVersion?: number | undefined;
  /** `todo claim --takeover`: the todo may be soft-claimed by another agent (not leased). */
  takeover?: boolean | undefined;
}

export async function acquireLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  input: AcquireInput,
  clock: Clock,
): Promise<LeaseResult> {
  const owner = requireOwner(goal, input.owner, 'owner');
  const key = normalizeIdempotencyKey(input.idempotencyKey);
  const ttl = normalizeTtlSeconds(input.ttlSeconds);
  const scopes = normalizeWriteScopes(input.writeScopes);
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(goal, { clock, agentId: owner, operation: 'task_lease_acquire' }, async () => {
    const now = clock.now();
    const doc = await readGoalDocument(goal);
    const mode = handoffModeOf(goal, doc);
    forbidInSoftClaim(mode, goal, input.todoId, 'acquire');
    return acquireHeld(
      goal,
      doc,
      mode,
      { ...input, owner, idempotencyKey: key, ttlSeconds: ttl, writeScopes: scopes },
      now,
      file,
    );
  });
}

/** Acquire, with the lease lock already held and the document read inside it. */
export async function acquireHeld(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  doc: StateDocument,
  mode: HandoffMode,
  input: AcquireInput & { ttlSeconds: number; writeScopes: string[] },
  now: Date,
  file: string,
): Promise<LeaseResult> {
  requireEligible(goal, todoOf(doc, input.todoId), input.todoId, input.owner, { takeover: input.takeover === true });
  const existing = await readLease(file);
  assertExpectedVersion(existing, input.expectedVersion);
  if (existing !== null && effective(goal, doc, existing, input.todoId, now)) {
    if (existing.owner === input.owner && existing.idempotency_key === input.idempotencyKey) {
      const sameScopes =
        normalizeWriteScopes(existing.write_scopes).sort().join('\n') === [...input.writeScopes].sort().join('\n');
      const sameTtl = existing.acquire_ttl_seconds === undefined || existing.acquire_ttl_seconds === input.ttlSeconds;
      if (!sameScopes || !sameTtl) {
        throw new LoopxError(
          'idempotency_key_reuse',
          'this idempotency key already acquired the lease with other write scopes or another TTL; use the same parameters to retry, or a new key',
          {
            lease: existing,
            lease_path: file,
            requested_write_scopes: input.writeScopes,
            requested_ttl_seconds: input.ttlSeconds,
          },
        );
      }
      return { ...base(goal, input.todoId, 'acquire', file, mode), acquired: false, idempotent: true, lease: existing };
    }
    throw new LoopxError(
      'todo_lease_conflict',
      `todo ${input.todoId} is already leased to ${existing.owner ?? '?'} until ${existing.expires_at ?? '?'} (version ${leaseVersion(existing)}); wait for it to expire or ask the holder to release or transfer it`,
      { lease: existing, lease_path: file },
    );
  }
  if (existing !== null && existing.idempotency_key === input.idempotencyKey) {
    throw new LoopxError(
      'idempotency_key_reuse',
      'this idempotency key belongs to an expired or released lease generation; a new execution must use a new key',
      { lease: existing, lease_path: file },
    );
  }
  const conflicts = await scopeConflicts(goal, doc, input.todoId, input.writeScopes, now);
  if (conflicts.length > 0) {
    throw new LoopxError(
      'write_scope_conflict',
      `write scopes ${input.writeScopes.join(', ')} overlap another active task lease (${conflicts.map((c) => `${String(c['todo_id'])} held by ${String(c['owner'])}`).join('; ')}); nothing was written`,
      { conflicts },
    );
  }
  const lease = buildLease({
    goalId: goal.goalId,
    todoId: input.todoId,
    owner: input.owner,
    idempotencyKey: input.idempotencyKey,
    writeScopes: input.writeScopes,
    ttlSeconds: input.ttlSeconds,
    previous: existing,
    now,
  });
  await writeLease(goal, file, lease);
  return { ...base(goal, input.todoId, 'acquire', file, mode), acquired: true, idempotent: false, lease };
}

export interface RenewInput {
  todoId: string;
  owner: string;
  idempotencyKey: string;
  ttlSeconds?: number | undefined;
  expectedVersion?: number | undefined;
}

export async function renewLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  input: RenewInput,
  clock: Clock,
): Promise<LeaseResult> {
  const owner = requireOwner(goal, input.owner, 'owner');
  const key = normalizeIdempotencyKey(input.idempotencyKey);
  const ttl = normalizeTtlSeconds(input.ttlSeconds);
  const expected = requireExpectedVersion(input.expectedVersion, 'renew');
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(goal, { clock, agentId: owner, operation: 'task_lease_renew' }, async () => {
    const now = clock.now();
    const doc = await readGoalDocument(goal);
    const mode = handoffModeOf(goal, doc);
    forbidInSoftClaim(mode, goal, input.todoId, 'renew');
    requireEligible(goal, todoOf(doc, input.todoId), input.todoId, owner);
    const lease = await readLease(file);
    assertExpectedVersion(lease, expected);
    if (lease === null || !leaseIsActive(lease, now)) throw notActive(file, input.todoId);
    if (lease.owner !== owner || lease.idempotency_key !== key) throw casMismatch(lease, file);
    const renewed: TaskLeaseRecord = {
      ...lease,
      version: leaseVersion(lease) + 1,
      lease_epoch: leaseEpoch(lease),
      updated_at: isoNow(now),
      expires_at: isoNow(new Date(now.getTime() + ttl * 1000)),
    };
    await writeLease(goal, file, renewed);
    return { ...base(goal, input.todoId, 'renew', file, mode), renewed: true, lease: renewed };
  });
}

function isoNow(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export interface TransferInput extends RenewInput {
  newOwner: string;
  newIdempotencyKey: string;
}

export async function transferLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  input: TransferInput,
  clock: Clock,
): Promise<LeaseResult> {
  const owner = requireOwner(goal, input.owner, 'owner');
  const key = normalizeIdempotencyKey(input.idempotencyKey);
  const newOwner = requireOwner(goal, input.newOwner, 'new_owner');
  const newKey = normalizeIdempotencyKey(input.newIdempotencyKey, 'new_idempotency_key');
  const ttl = normalizeTtlSeconds(input.ttlSeconds);
  const expected = requireExpectedVersion(input.expectedVersion, 'transfer');
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(goal, { clock, agentId: owner, operation: 'task_lease_transfer' }, async () => {
    const now = clock.now();
    const doc = await readGoalDocument(goal);
    const mode = handoffModeOf(goal, doc);
    forbidInSoftClaim(mode, goal, input.todoId, 'transfer');
    requireEligible(goal, todoOf(doc, input.todoId), input.todoId, newOwner);
    const lease = await readLease(file);
    assertExpectedVersion(lease, expected);
    if (lease === null || !leaseIsActive(lease, now)) throw notActive(file, input.todoId);
    if (lease.owner !== owner || lease.idempotency_key !== key) throw casMismatch(lease, file);
    if (newKey === key) {
      throw new LoopxError('idempotency_key_reuse', 'a transfer must mint a new idempotency key for the new owner', {
        lease,
        lease_path: file,
      });
    }
    const moved: TaskLeaseRecord = {
      ...lease,
      owner: newOwner,
      idempotency_key: newKey,
      version: leaseVersion(lease) + 1,
      lease_epoch: leaseEpoch(lease) + 1,
      updated_at: isoNow(now),
      expires_at: isoNow(new Date(now.getTime() + ttl * 1000)),
    };
    await writeLease(goal, file, moved);
    return { ...base(goal, input.todoId, 'transfer', file, mode), transferred: true, lease: moved };
  });
}

export interface ReleaseInput {
  todoId: string;
  owner: string;
  idempotencyKey: string;
  expectedVersion?: number | undefined;
}

/** Release stays allowed in every handoff mode (cleaning up leftovers). */
export async function releaseLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  input: ReleaseInput,
  clock: Clock,
): Promise<LeaseResult> {
  const owner = normalizeAgentId(input.owner);
  if (owner === null)
    throw new LoopxError('agent_id_invalid', `owner must be an agent id: ${AGENT_ID_RULE}`, { field: 'owner' });
  const key = normalizeIdempotencyKey(input.idempotencyKey);
  const expected = requireExpectedVersion(input.expectedVersion, 'release');
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(goal, { clock, agentId: owner, operation: 'task_lease_release' }, async () => {
    const now = clock.now();
    const mode = handoffModeOf(goal, goal.statePath === null ? null : await readGoalDocument(goal));
    const lease = await readLease(file);
    assertExpectedVersion(lease, expected);
    const head = base(goal, input.todoId, 'release', file, mode);
    if (lease === null) return { ...head, released: false, missing: true, lease: null };
    if (lease.owner !== owner || lease.idempotency_key !== key) throw casMismatch(lease, file);
    if (lease.status === 'released') return { ...head, released: true, idempotent: true, lease };
    const released = releasedLease(lease, now);
    await writeLease(goal, file, released);
    return { ...head, released: true, idempotent: false, lease: released };
  });
}

export async function inspectLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todoId: string,
  clock: Clock,
): Promise<LeaseResult> {
  const file = leasePath(goal, todoId);
  const lease = await readLease(file);
  const doc = await readGoalDocument(goal);
  const mode = handoffModeOf(goal, doc);
  let active = leaseIsActive(lease, clock.now());
  const result: LeaseResult = { ...base(goal, todoId, 'inspect', file, mode), active, lease };
  if (active) {
    const constraint = ownerConstraint(todoOf(doc, todoId), lease?.owner, registeredAgentsForGoal(goal.rawEntry));
    if (!constraint.effective) {
      active = false;
      result.active = false;
      result.executor_constraint = constraint;
    }
  }
  return result;
}
