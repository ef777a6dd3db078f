import * as fs from 'node:fs';
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
  type LeaseGoal,
} from './store';

/**
 * The five lease verbs (acquire, renew, transfer, release, inspect) and the completion fence.
 * Every verb that writes runs under the goal's lease lock, re-reads the lease and the todo inside
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

function requireOwner(goal: LeaseGoal, value: string, field: string): string {
  const id = normalizeAgentId(value);
  if (id === null)
    throw new LoopxError('agent_id_invalid', `${field} must be an agent id: ${AGENT_ID_RULE}`, { field });
  if (goal.roster.length === 0) {
    throw new LoopxError(
      'agent_registry_roster_missing',
      `goal '${goal.goalId}' has no coordination.registered_agents, so no agent can hold a task lease; register ${id} first (loopx configure-goal --goal-id ${goal.goalId} --registered-agent ${id} --execute)`,
      { field, agent_id: id, goal_id: goal.goalId },
    );
  }
  if (!goal.roster.includes(id)) {
    throw new LoopxError(
      'agent_not_registered',
      `${field}='${id}' is not registered for goal '${goal.goalId}'; registered_agents=${goal.roster.join(', ')}`,
      { field, agent_id: id, goal_id: goal.goalId, registered_agents: [...goal.roster] },
    );
  }
  return id;
}

function requireEligible(
  goal: LeaseGoal,
  todo: TodoItem | null,
  todoId: string,
  owner: string,
  options: { takeover?: boolean } = {},
): TodoItem {
  const constraint = ownerConstraint(todo, owner, goal.roster);
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

function forbidInSoftClaim(mode: HandoffMode, goal: LeaseGoal, todoId: string, action: LeaseAction): void {
  if (mode !== 'soft_claim') return;
  throw new LoopxError(
    'handoff_mode_forbids_lease',
    `goal '${goal.goalId}' uses handoff_mode soft_claim, which forbids task lease ${action}; release and inspect stay available for leftovers`,
    { goal_id: goal.goalId, todo_id: todoId, action, handoff_mode: mode },
  );
}

/** Whether the lease counts now: time-active and its owner still eligible for the todo. */
function effective(
  goal: LeaseGoal,
  doc: StateDocument,
  lease: TaskLeaseRecord | null,
  todoId: string,
  now: Date,
): boolean {
  return leaseIsActive(lease, now) && ownerConstraint(todoOf(doc, todoId), lease?.owner, goal.roster).effective;
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

function base(goal: LeaseGoal, todoId: string, action: LeaseAction, file: string, mode: HandoffMode) {
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
async function scopeConflicts(goal: LeaseGoal, doc: StateDocument, todoId: string, scopes: string[], now: Date) {
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

export async function acquireLease(goal: LeaseGoal, input: AcquireInput, clock: Clock): Promise<LeaseResult> {
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
async function acquireHeld(
  goal: LeaseGoal,
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

export async function renewLease(goal: LeaseGoal, input: RenewInput, clock: Clock): Promise<LeaseResult> {
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

export async function transferLease(goal: LeaseGoal, input: TransferInput, clock: Clock): Promise<LeaseResult> {
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
export async function releaseLease(goal: LeaseGoal, input: ReleaseInput, clock: Clock): Promise<LeaseResult> {
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

export async function inspectLease(goal: LeaseGoal, todoId: string, clock: Clock): Promise<LeaseResult> {
  const file = leasePath(goal, todoId);
  const lease = await readLease(file);
  const doc = await readGoalDocument(goal);
  const mode = handoffModeOf(goal, doc);
  let active = leaseIsActive(lease, clock.now());
  const result: LeaseResult = { ...base(goal, todoId, 'inspect', file, mode), active, lease };
  if (active) {
    const constraint = ownerConstraint(todoOf(doc, todoId), lease?.owner, goal.roster);
    if (!constraint.effective) {
      active = false;
      result.active = false;
      result.executor_constraint = constraint;
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// The completion fence

export interface FenceInput {
  todoId: string;
  /** The agent completing the todo (must be the lease owner when a lease is in force). */
  actorAgentId: string | null;
  /** The lease's idempotency key (`--lease-key`). */
  idempotencyKey?: string | undefined;
  /**
   * The lease version the writer last saw (`--expected-version`). `'current'` skips the version
   * check for a writer that proves itself by its key alone (the turn driver, which acquired the
   * lease itself under a key derived from its turn).
   */
  expectedVersion?: number | 'current' | undefined;
  /**
   * The writer proves itself by its agent id alone: the lease's owner suffices, no key. Only for
   * the turn driver, which holds its agent's turn lock, so no other execution of that agent runs.
   */
  trustOwner?: boolean;
}

export interface FenceReceipt {
  schema_version: 'task_lease_v0';
  handoff_mode: HandoffMode;
  required: boolean;
  active: boolean;
  owner?: string;
  version?: number;
  lease_epoch?: number;
  execution_instance_verified?: boolean;
  /** hard_lease: the fence minted the lease for the acting agent (a user gate's decision). */
  auto_acquired?: boolean;
  released?: boolean;
}

/**
 * Runs one terminal write of a todo (complete, supersede) behind its lease: under the lease lock,
 * when a lease is in force the writer must present its owner, key and expected version
 * (compare-and-swap); in `hard_lease` mode an agent todo without a lease cannot be completed. Any
 * refusal happens before `write` runs, so nothing is written. After `write` commits, the lease is
 * released (the terminal record fences the next generation).
 */
export async function withCompletionFence<T>(
  goal: LeaseGoal,
  input: FenceInput,
  clock: Clock,
  write: () => Promise<T>,
): Promise<{ value: T; fence: FenceReceipt }> {
  const requestedKey =
    input.idempotencyKey === undefined ? undefined : normalizeIdempotencyKey(input.idempotencyKey, 'lease key');
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(
    goal,
    { clock, agentId: input.actorAgentId, operation: 'task_lease_completion_fence' },
    async () => {
      const now = clock.now();
      const doc = await readGoalDocument(goal);
      const mode = handoffModeOf(goal, doc);
      const todo = todoOf(doc, input.todoId);
      let lease = await readLease(file);
      let inForce = lease !== null && effective(goal, doc, lease, input.todoId, now);
      const details = { goal_id: goal.goalId, todo_id: input.todoId, handoff_mode: mode, lease_path: file };
      let key = requestedKey;
      let autoAcquired = false;
      let previousRecord: TaskLeaseRecord | null = null;
      if (!inForce && mode === 'hard_lease' && todo !== null && isUserGate(todo) && todo.status === 'open') {
        // The original's rule: a user gate's decision needs no key carried across the wait for the human. The
        // fence mints one for the acting agent under this lock, and never displaces a time-active lease.
        if (!leaseIsActive(lease, now)) {
          previousRecord = lease;
          lease = autoAcquireForGate(goal, todo, input, key, lease, now, details);
          await writeLease(goal, file, lease);
          key = lease.idempotency_key;
          inForce = true;
          autoAcquired = true;
        }
      }
      if (lease === null || !inForce) {
        // In hard_lease every open todo (agent todos, user actions, gates) needs a lease in force.
        if (mode === 'hard_lease' && todo !== null && todo.role !== 'archive' && todo.status === 'open') {
          const diverged = lease !== null && leaseIsActive(lease, now);
          throw new LoopxError(
            'handoff_mode_requires_lease',
            diverged
              ? `goal '${goal.goalId}' uses hard_lease and the lease on ${input.todoId} (held by ${lease?.owner ?? '?'}) no longer matches the todo's claim; release or transfer it, or restore claimed_by, before completing`
              : `goal '${goal.goalId}' uses hard_lease: completing ${input.todoId} needs an active task lease; acquire one (loopx task-lease acquire) and pass --lease-key and --expected-version`,
            { ...details, reason: diverged ? 'lease_claim_divergence' : 'no_active_lease' },
          );
        }
        // A retried completion by the holder after its lease was released by the first attempt: replay.
        const replay =
          lease !== null &&
          lease.status === 'released' &&
          key !== undefined &&
          lease.idempotency_key === key &&
          lease.owner === normalizeAgentId(input.actorAgentId) &&
          todo !== null &&
          todo.status === 'done';
        if (replay) {
          const value = await write();
          return {
            value,
            fence: {
              schema_version: 'task_lease_v0',
              handoff_mode: mode,
              required: true,
              active: false,
              released: true,
            },
          };
        }
        if (key !== undefined || typeof input.expectedVersion === 'number') {
          throw new LoopxError(
            'lease_not_active',
            `a lease key or version was given for ${input.todoId}, but no task lease is in force on it (missing, released or expired); nothing was written`,
            details,
          );
        }
        const value = await write();
        return {
          value,
          fence: { schema_version: 'task_lease_v0', handoff_mode: mode, required: false, active: false },
        };
      }
      // The turn driver presents no key: a lease held by anyone else is a mismatch below.
      if (key === undefined && input.trustOwner !== true) {
        throw new LoopxError(
          'lease_fence_required',
          `todo ${input.todoId} is leased to ${lease.owner ?? '?'} (version ${leaseVersion(lease)}); completing or superseding it needs --lease-key and --expected-version from the holder`,
          {
            ...details,
            lease_owner: lease.owner ?? null,
            lease_version: leaseVersion(lease),
            lease_epoch: leaseEpoch(lease),
          },
        );
      }
      const actor = normalizeAgentId(input.actorAgentId);
      if (lease.owner !== actor || (key !== undefined && lease.idempotency_key !== key)) {
        throw new LoopxError(
          'lease_cas_mismatch',
          `todo ${input.todoId} is leased to ${lease.owner ?? '?'}; the lease key and --agent-id must be the holder's (got agent ${actor ?? 'none'}); nothing was written`,
          { ...details, lease_owner: lease.owner ?? null, actor_agent_id: actor, lease_version: leaseVersion(lease) },
        );
      }
      // A lease the fence just minted has the version it was given; there is nothing older to compare.
      if (!autoAcquired && input.expectedVersion !== 'current') {
        assertExpectedVersion(lease, requireExpectedVersion(input.expectedVersion, 'completion'));
      }
      let value: T;
      try {
        value = await write();
      } catch (error) {
        // A refused decision leaves no lease behind: the previous record comes back (or none).
        if (autoAcquired) await restoreLease(goal, file, previousRecord);
        throw error;
      }
      const fence: FenceReceipt = {
        schema_version: 'task_lease_v0',
        handoff_mode: mode,
        required: true,
        active: true,
        owner: lease.owner,
        version: leaseVersion(lease),
        lease_epoch: leaseEpoch(lease),
        execution_instance_verified: true,
        ...(autoAcquired ? { auto_acquired: true } : {}),
      };
      try {
        await writeLease(goal, file, releasedLease(lease, clock.now()));
        fence.released = true;
      } catch {
        // The todo write committed; a lease left active expires on its own or is released explicitly.
        fence.released = false;
      }
      return { value, fence };
    },
  );
}

async function restoreLease(goal: LeaseGoal, file: string, previous: TaskLeaseRecord | null): Promise<void> {
  if (previous !== null) await writeLease(goal, file, previous);
  else await fs.promises.rm(file, { force: true });
}

/** A user todo of class `user_gate` (the original's test: the explicit class, not hints in its text). */
function isUserGate(todo: TodoItem): boolean {
  return todo.role === 'user' && (todo.meta['task_class'] ?? '').trim() === 'user_gate';
}

/**
 * hard_lease, a user gate decided without a lease: a fresh lease generation for the acting agent (the
 * given key, else `auto-<todo_id>`; the default TTL), refused without an eligible registered actor.
 */
function autoAcquireForGate(
  goal: LeaseGoal,
  todo: TodoItem,
  input: FenceInput,
  key: string | undefined,
  previous: TaskLeaseRecord | null,
  now: Date,
  details: Record<string, unknown>,
): TaskLeaseRecord {
  const actor = normalizeAgentId(input.actorAgentId);
  if (actor === null) {
    throw new LoopxError(
      'handoff_mode_requires_lease',
      `goal '${goal.goalId}' uses hard_lease: deciding the gate ${input.todoId} takes a task lease for the acting agent; pass --agent-id (a registered agent)`,
      { ...details, reason: 'missing_actor' },
    );
  }
  const constraint = ownerConstraint(todo, actor, goal.roster);
  if (!constraint.effective) {
    throw new LoopxError(
      'handoff_mode_requires_lease',
      `goal '${goal.goalId}' uses hard_lease: ${actor} cannot take the lease to decide the gate ${input.todoId}: ${constraint.detail}`,
      { ...details, reason: constraint.reason, actor_agent_id: actor },
    );
  }
  return buildLease({
    goalId: goal.goalId,
    todoId: input.todoId,
    owner: actor,
    idempotencyKey: key ?? `auto-${input.todoId}`,
    writeScopes: [],
    ttlSeconds: normalizeTtlSeconds(undefined),
    previous,
    now,
  });
}

// ---------------------------------------------------------------------------------------------
// hard_lease: acquiring for the acting agent

export interface AutoAcquireInput {
  todoId: string;
  agentId: string;
  idempotencyKey: string;
  ttlSeconds?: number | undefined;
  /** `todo claim --takeover`: lease a todo another agent soft-claimed (never one it holds a lease on). */
  takeover?: boolean | undefined;
}

/**
 * In `hard_lease` mode, makes sure `agentId` holds the todo's lease (acquiring it under
 * `idempotencyKey` when no lease is in force) and runs `then` under the same lock, so the claim or
 * turn that follows cannot race another agent's acquire. Outside hard_lease it only runs `then`
 * (with a null lease). A lease held by another agent is refused (`handoff_mode_requires_lease`).
 */
export async function withAgentLease<T>(
  goal: LeaseGoal,
  input: AutoAcquireInput,
  clock: Clock,
  then: (lease: LeaseResult | null) => Promise<T>,
): Promise<T> {
  const agent = requireOwner(goal, input.agentId, 'agent_id');
  const key = normalizeIdempotencyKey(input.idempotencyKey);
  const ttl = normalizeTtlSeconds(input.ttlSeconds);
  const file = leasePath(goal, input.todoId);
  return withLeaseLock(goal, { clock, agentId: agent, operation: 'task_lease_auto_acquire' }, async () => {
    const now = clock.now();
    const doc = await readGoalDocument(goal);
    const mode = handoffModeOf(goal, doc);
    if (mode !== 'hard_lease') return then(null);
    const existing = await readLease(file);
    if (existing !== null && effective(goal, doc, existing, input.todoId, now)) {
      if (existing.owner !== agent) {
        throw new LoopxError(
          'handoff_mode_requires_lease',
          `goal '${goal.goalId}' uses hard_lease and ${input.todoId} is leased to ${existing.owner ?? '?'} until ${existing.expires_at ?? '?'}; ${agent} cannot take it`,
          {
            goal_id: goal.goalId,
            todo_id: input.todoId,
            reason: 'lease_owner_mismatch',
            lease_owner: existing.owner ?? null,
          },
        );
      }
      return then({
        ...base(goal, input.todoId, 'acquire', file, mode),
        acquired: false,
        idempotent: true,
        lease: existing,
      });
    }
    const acquired = await acquireHeld(
      goal,
      doc,
      mode,
      {
        todoId: input.todoId,
        owner: agent,
        idempotencyKey: key,
        ttlSeconds: ttl,
        writeScopes: [],
        takeover: input.takeover,
      },
      now,
      file,
    );
    return then(acquired);
  });
}
