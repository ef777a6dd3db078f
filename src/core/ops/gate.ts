import { z } from 'zod';
import { gateInboxRows, GateInboxRowSchema, todoAddedTimes, type InboxGateInput } from '../status/gateInbox';
import { goalItems, loadStatus, readStatusRegistry } from '../status/statusPayload';
import { persistentCacheEnabled } from '../goal/persistentCache';
import { redactCredentialsShared } from '../privacy/scrub';
import { locateRegistryOf } from './goalHandle';
import { defineOperation } from './operation';

/**
 * `gate inbox`: every open gate of every goal of the registry, longest blocked first, with its due
 * time and the agent time it holds back (core/status/gateInbox.ts says how the wait is measured).
 * The editor's Gate Inbox view and quick pick show the same rows from its live status model.
 */
export const GateInboxResultSchema = z.object({
  ok: z.literal(true),
  registry: z.string(),
  now: z.string(),
  gate_count: z.number().int().nonnegative(),
  overdue_count: z.number().int().nonnegative(),
  gates: z.array(GateInboxRowSchema),
});
export type GateInboxResult = z.infer<typeof GateInboxResultSchema>;

export const gateInbox = defineOperation({
  key: 'gateInbox',
  args: z.strictObject({}),
  run: async (_args, env): Promise<GateInboxResult> => {
    const registryPath = locateRegistryOf(env).path;
    const payload = redactCredentialsShared(
      await loadStatus({
        registry: await readStatusRegistry({
          registryPath,
          homeDir: env.homeDir,
          runtimeRootOverride: env.runtimeRootOverride ?? null,
        }),
        goalId: null,
        agentId: null,
        persistentCache: persistentCacheEnabled(env.env),
        redact: true,
        clock: env.clock,
      }),
    );
    const inputs: InboxGateInput[] = [];
    for (const item of goalItems(payload)) {
      const added = await todoAddedTimes(
        payload.runtime_root,
        item.goal_id,
        item.open_gates.map((gate) => gate.todo_id),
      );
      for (const gate of item.open_gates)
        inputs.push({ goalId: item.goal_id, registryPath, gate, addedAt: added.get(gate.todo_id) ?? null });
    }
    const now = env.clock.now();
    const gates = gateInboxRows(inputs, now.getTime());
    return {
      ok: true,
      registry: registryPath,
      now: now.toISOString(),
      gate_count: gates.length,
      overdue_count: gates.filter((gate) => gate.overdue).length,
      gates,
    };
  },
});

// Surfaces render durations and rows through these exports, not from core/status.
export { gateInboxRows, overdueRows, shortDuration, todoAddedTimes } from '../status/gateInbox';
export type { GateInboxRow, InboxGateInput } from '../status/gateInbox';
export {
  ATTENTION_KINDS,
  attentionEvents,
  coalesceEvents,
  DEFAULT_LEASE_WARNING_MS,
  withoutOwnActions,
} from '../status/attentionEvents';
export type {
  AttentionEvent,
  AttentionGoalFacts,
  AttentionKind,
  AttentionNotice,
  AttentionSnapshot,
  OwnActionMark,
} from '../status/attentionEvents';
