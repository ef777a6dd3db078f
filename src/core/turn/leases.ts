import type { GoalRef } from '../registry/goalRef';
import * as fs from 'node:fs';
import type { Clock } from '../clock';
import { handoffModeOf, leasePath } from '../leases/store';
import { DEFAULT_LEASE_TTL_SECONDS, MAX_LEASE_TTL_SECONDS } from '../leases/rules';
import { withAgentLease, withCompletionFence } from '../leases/completionFence';
import { parseStateDocument } from '../state/document';
import { executorTimeoutMinutes, type TurnSetup } from './context';

/**
 * How the turn driver honors hard task leases (docs/leases.md): selection skips todos leased to
 * other agents (todo/runnable.ts), admission in `hard_lease` mode acquires the selected todo's lease
 * for the turn's agent, and a writeback that completes a leased todo goes through the completion
 * fence, which releases the lease once the todo is done.
 */

export function turnLeaseGoal(turnGoal: TurnSetup): Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'> {
  const { goal } = turnGoal;
  return {
    goalId: goal.goalId,
    runtimeRoot: goal.runtimeRoot,
    statePath: turnGoal.statePath,
    rawEntry: goal.rawEntry,
  };
}

/** The idempotency key of the lease a turn acquires: derived from its turn key, so a retry presents the same one. */
export function turnLeaseKey(turnKey: string): string {
  return `turn:${turnKey.slice(0, 32)}`;
}

/** The turn's lease lasts the default 45 minutes, or the executor's timeout plus 10 minutes when longer (at most 24 h). */
function turnLeaseTtl(turnGoal: TurnSetup): number {
  const timeout = turnGoal.executorConfig === null ? 0 : executorTimeoutMinutes(turnGoal.executorConfig);
  return Math.min(MAX_LEASE_TTL_SECONDS, Math.max(DEFAULT_LEASE_TTL_SECONDS, (timeout + 10) * 60));
}

function hardLease(
  goal: Pick<GoalRef, 'goalId' | 'runtimeRoot' | 'statePath' | 'rawEntry'>,
  stateText: string | null,
): boolean {
  let text = stateText;
  if (text === null) {
    try {
      text = fs.readFileSync(goal.statePath ?? '', 'utf8');
    } catch {
      return handoffModeOf(goal, null) === 'hard_lease';
    }
  }
  return handoffModeOf(goal, parseStateDocument(text)) === 'hard_lease';
}

/** Admission: in hard_lease mode the agent takes the selected todo's lease (under the lease lock) before `admit` runs. */
export async function withTurnLease<T>(
  turnGoal: TurnSetup,
  input: { todoId: string | null; turnKey: string; stateText: string },
  clock: Clock,
  admit: () => Promise<T>,
): Promise<T> {
  const goal = turnLeaseGoal(turnGoal);
  if (input.todoId === null || !hardLease(goal, input.stateText)) return admit();
  return withAgentLease(
    goal,
    {
      todoId: input.todoId,
      agentId: turnGoal.agentId,
      idempotencyKey: turnLeaseKey(input.turnKey),
      ttlSeconds: turnLeaseTtl(turnGoal),
    },
    clock,
    () => admit(),
  );
}

/**
 * Writeback of a completion: behind the todo's lease when one exists (or the goal is hard_lease).
 * The turn proves itself by its agent id (it holds that agent's turn lock, so no other turn of the
 * agent runs) and takes the lease's current version.
 */
export async function withTurnCompletionFence<T>(
  turnGoal: TurnSetup,
  input: { todoId: string; stateText: string | null },
  clock: Clock,
  write: () => Promise<T>,
): Promise<T> {
  const goal = turnLeaseGoal(turnGoal);
  let exists: boolean;
  try {
    exists = fs.existsSync(leasePath(goal, input.todoId));
  } catch {
    exists = false;
  }
  if (!exists && !hardLease(goal, input.stateText)) return write();
  const { value } = await withCompletionFence(
    goal,
    { todoId: input.todoId, actorAgentId: turnGoal.agentId, trustOwner: true, expectedVersion: 'current' },
    clock,
    write,
  );
  return value;
}
