import { z } from 'zod';
import { acquireLease, inspectLease, releaseLease, renewLease, transferLease, type LeaseResult } from '../leases/verbs';
import { MAX_LEASE_TTL_SECONDS } from '../leases/rules';
import { goalIdArg } from './common';
import { resolveGoal, type ResolvedGoal } from './goalHandle';
import { defineOperation, type OperationEnvironment } from './operation';

/**
 * `loopx task-lease acquire|renew|transfer|release|inspect`: hard task leases on one todo
 * (`task_lease_v0`, the original's format and rules; docs/leases.md). Every verb but inspect
 * writes one lease file under the goal's lease lock, or refuses with nothing written.
 */

const goalId = goalIdArg('the goal whose todo is leased');
const todoId = z.string().trim().min(1).meta({ placeholder: 'id' }).describe('the leased todo, e.g. todo_ab12cd34ef56');
const owner = z
  .string()
  .trim()
  .min(1)
  .meta({ placeholder: 'agent' })
  .describe('the registered agent that holds the lease');
const key = z
  .string()
  .trim()
  .min(1)
  .meta({ placeholder: 'key' })
  .describe("the execution instance's public-safe token: retries reuse it, completion presents it");
const ttl = z
  .number()
  .int()
  .optional()
  .meta({ placeholder: 'seconds' })
  .describe(`lease length in seconds (default 2700 = 45 min, at most ${MAX_LEASE_TTL_SECONDS} = 24 h)`);
const expected = z
  .number()
  .int()
  .min(0)
  .meta({ placeholder: 'n' })
  .describe('the lease version you last saw (compare-and-swap: a different current version is refused)');

export const LeaseResultSchema = z.looseObject({
  ok: z.literal(true),
  schema_version: z.literal('task_lease_v0'),
  action: z.enum(['acquire', 'renew', 'transfer', 'release', 'inspect']),
  goal_id: z.string(),
  todo_id: z.string(),
  lease: z.record(z.string(), z.unknown()).nullable(),
  lease_path: z.string(),
  handoff_mode: z.enum(['legacy', 'soft_claim', 'hard_lease']),
});
export type LeaseOutput = LeaseResult;

/** A resolved goal is a `GoalRef`: lease code takes it as is. */
async function leaseGoal(env: OperationEnvironment, id: string): Promise<ResolvedGoal> {
  return resolveGoal(env, id);
}

function checked(result: LeaseResult): LeaseOutput {
  LeaseResultSchema.parse(result);
  return result;
}

export const taskLeaseAcquire = defineOperation({
  key: 'taskLeaseAcquire',
  args: z.strictObject({
    goalId,
    todoId,
    owner,
    idempotencyKey: key,
    ttlSeconds: ttl,
    writeScope: z
      .array(z.string())
      .optional()
      .meta({ split: true, placeholder: 'scope' })
      .describe(
        'a relative path or glob this lease protects (e.g. src/core/**); overlapping active leases are refused',
      ),
    expectedVersion: expected.optional(),
  }),
  run: async (args, env) =>
    checked(
      await acquireLease(
        await leaseGoal(env, args.goalId),
        {
          todoId: args.todoId,
          owner: args.owner,
          idempotencyKey: args.idempotencyKey,
          ttlSeconds: args.ttlSeconds,
          writeScopes: args.writeScope,
          expectedVersion: args.expectedVersion,
        },
        env.clock,
      ),
    ),
});

export const taskLeaseRenew = defineOperation({
  key: 'taskLeaseRenew',
  args: z.strictObject({
    goalId,
    todoId,
    owner,
    idempotencyKey: key,
    ttlSeconds: ttl,
    expectedVersion: expected.optional(),
  }),
  run: async ({ goalId: id, ...request }, env) =>
    checked(await renewLease(await leaseGoal(env, id), request, env.clock)),
});

export const taskLeaseTransfer = defineOperation({
  key: 'taskLeaseTransfer',
  args: z.strictObject({
    goalId,
    todoId,
    owner,
    idempotencyKey: key,
    newOwner: owner.describe('the registered agent that takes the lease over'),
    newIdempotencyKey: key.describe("the new holder's own key (must differ from the old one)"),
    ttlSeconds: ttl,
    expectedVersion: expected.optional(),
  }),
  run: async ({ goalId: id, ...request }, env) =>
    checked(await transferLease(await leaseGoal(env, id), request, env.clock)),
});

export const taskLeaseRelease = defineOperation({
  key: 'taskLeaseRelease',
  args: z.strictObject({ goalId, todoId, owner, idempotencyKey: key, expectedVersion: expected.optional() }),
  run: async ({ goalId: id, ...request }, env) =>
    checked(await releaseLease(await leaseGoal(env, id), request, env.clock)),
});

export const taskLeaseInspect = defineOperation({
  key: 'taskLeaseInspect',
  args: z.strictObject({ goalId, todoId }),
  run: async (args, env) => checked(await inspectLease(await leaseGoal(env, args.goalId), args.todoId, env.clock)),
});
