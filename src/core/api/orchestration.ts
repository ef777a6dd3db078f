import { z } from 'zod';
import { isPlainObject } from '../registry/agentIds';
import { compactOrchestrationPolicy as compactPolicy } from '../registry/orchestration';
import { parseArguments } from '../ops/arguments';
import { CompactOrchestrationSchema, type CompactOrchestration } from '../ops/resultSchemas';

const CompactOrchestrationPolicyArguments = z.strictObject({
  policy: z
    .custom<Record<string, unknown> | null | undefined>(
      (value) => value === null || value === undefined || isPlainObject(value),
    )
    .describe("a goal's spawn_policy object (such as { allowed: true, max_children: 3 }), or null/undefined for none"),
});

/**
 * A goal's `spawn_policy` reduced to the facts every consumer needs (the original's
 * `compact_orchestration_policy`): `mode`, `spawn_allowed`, `max_children`, and when present
 * `allowed_domains` and `explore_harness`. Spawning is allowed only by a JSON `true`;
 * `max_children` accepts whole-number strings (`"3"`).
 */
export function compactOrchestrationPolicy(policy: Record<string, unknown> | null | undefined): CompactOrchestration {
  const args = parseArguments(
    CompactOrchestrationPolicyArguments,
    { policy },
    { functionName: 'compactOrchestrationPolicy' },
  );
  return CompactOrchestrationSchema.parse(compactPolicy(args.policy));
}
