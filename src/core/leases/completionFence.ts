import { registeredAgentsForGoal } from '../registry/agentIds';
import type { GoalRef } from '../registry/goalRef';
import * as fs from 'node:fs';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { normalizeAgentId } from '../registry/agentIds';
import type { TodoItem } from '../state/document';
import {
  assertExpectedVersion,
  buildLease,
  leaseEpoch,
  leaseIsActive,
  leaseVersion,
  normalizeIdempotencyKey,
  normalizeTtlSeconds,
  ownerConstraint,
  releasedLease,
  requireExpectedVersion,
  type HandoffMode,
  type TaskLeaseRecord,
} from './rules';
import { handoffModeOf, leasePath, readGoalDocument, readLease, todoOf, withLeaseLock, writeLease } from './store';
import { acquireHeld, base, effective, requireOwner, type LeaseResult } from './verbs';

/**
 * The completion fence: a todo's terminal write (complete, supersede) behind its task lease, and in
 * `hard_lease` mode the lease acquired for the acting agent (`withAgentLease`). The verbs are `verbs.ts`.
 */

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
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
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

async function restoreLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  file: string,
  previous: TaskLeaseRecord | null,
): Promise<void> {
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
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
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
  const constraint = ownerConstraint(todo, actor, registeredAgentsForGoal(goal.rawEntry));
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
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
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
