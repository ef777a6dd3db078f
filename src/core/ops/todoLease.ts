import * as fs from 'node:fs';
import type { GoalRef } from '../registry/goalRef';
import { LoopxError } from '../errors';
import { withAgentLease, withCompletionFence, type FenceReceipt } from '../leases/completionFence';
import type { LeaseResult } from '../leases/verbs';
import { handoffModeOf, leasePath } from '../leases/store';
import { compactUtcStamp } from '../runtime/time';
import { parseStateDocument } from '../state/document';
import type { OperationEnvironment } from './operation';
import type { LeaseWrap } from './todoEdit';

/**
 * Lease fencing of the todo edits (docs/leases.md): complete and supersede behind the todo's task
 * lease (the completion fence), and claim in hard_lease mode behind acquiring it.
 */

function oneOf<T>(a: T | undefined, b: T | undefined, names: string): T | undefined {
  if (a !== undefined && b !== undefined && a !== b)
    throw new LoopxError('usage', `${names} name the same value; give only one`);
  return a ?? b;
}

/** The goal's handoff mode read outside any lock (the locked paths read it again). */
function handoffModeNow(goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>) {
  if (goal.statePath === null) return handoffModeOf(goal, null);
  let text: string;
  try {
    text = fs.readFileSync(goal.statePath, 'utf8');
  } catch {
    return handoffModeOf(goal, null);
  }
  return handoffModeOf(goal, parseStateDocument(text));
}

function leaseFileExists(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  todoId: string,
): boolean {
  try {
    return fs.existsSync(leasePath(goal, todoId));
  } catch {
    return false; // not a structured todo id: no lease can name it
  }
}

/**
 * complete / supersede behind the todo's task lease (docs/leases.md): with no lease file, no key
 * and no hard_lease mode there is nothing to check and no lock is taken.
 */
export function completionFence(
  env: OperationEnvironment,
  todoId: string,
  agentId: string | undefined,
  lease: {
    leaseKey?: string | undefined;
    taskLeaseIdempotencyKey?: string | undefined;
    expectedVersion?: number | undefined;
    taskLeaseExpectedVersion?: number | undefined;
  },
): LeaseWrap {
  const key = oneOf(lease.leaseKey, lease.taskLeaseIdempotencyKey, '--lease-key and --task-lease-idempotency-key');
  const version = oneOf(
    lease.expectedVersion,
    lease.taskLeaseExpectedVersion,
    '--expected-version and --task-lease-expected-version',
  );
  return async (goal, write) => {
    const leaseGoal = goal;
    if (
      key === undefined &&
      version === undefined &&
      !leaseFileExists(leaseGoal, todoId) &&
      handoffModeNow(leaseGoal) !== 'hard_lease'
    )
      return write();
    const { value, fence } = await withCompletionFence(
      leaseGoal,
      { todoId, actorAgentId: agentId ?? null, idempotencyKey: key, expectedVersion: version },
      env.clock,
      write,
    );
    return { ...value, task_lease_fence: fenceFields(fence) };
  };
}

function fenceFields(fence: FenceReceipt): Record<string, unknown> {
  return { ...fence };
}

/** claim in hard_lease mode: the claimant acquires the todo's lease first (refused when another agent holds it). */
export function claimLease(env: OperationEnvironment, todoId: string, claimant: string, takeover: boolean): LeaseWrap {
  return async (goal, write) => {
    const leaseGoal = goal;
    if (handoffModeNow(leaseGoal) !== 'hard_lease') return write();
    return withAgentLease(
      leaseGoal,
      { todoId, agentId: claimant, idempotencyKey: `claim:${claimant}:${compactUtcStamp(env.clock.now())}`, takeover },
      env.clock,
      async (lease: LeaseResult | null) => ({ ...(await write()), task_lease: lease?.lease ?? null }),
    );
  };
}
