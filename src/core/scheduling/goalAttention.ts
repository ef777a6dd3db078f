import { TERMINAL_STATUSES, type StateDocument } from '../state/document';
import type { RunIndexEntry } from '../runtime/runIndex';

/**
 * The goal's attention status and who it waits on, as LoopX's status projection derives them
 * (docs/compatibility.md, "Kit: quota"). `quota should-run` answers with this `status` and takes the
 * quota state from this `waiting_on`. First match wins:
 *   1. an open user gate in the active state        → active_state_user_gate, controller
 *   2. an open user todo that is not only user_action → active_state_user_todo, controller
 *   3. no status run yet: a connected adapter        → connected_without_run, codex
 *                         otherwise                  → the goal's status, controller
 *   4. the latest run's artifacts are missing        → run_artifact_missing, codex (severity high: blocked_health)
 *   5. the registry's waiting_on override            → the run's classification, that waiting_on
 *   6. the run's classification: blocked_by_safety or an operator classification → user_or_controller;
 *      a codex-ready classification or a connected adapter → codex
 *   7. open agent todos                              → active_state_agent_todo, codex
 */

// The vocabulary of the attention route, shared with the status projection's route
// (status/attentionRoute.ts), which applies its own rules to the same tables (docs/architecture.md,
// "Known debt").

/** Adapter statuses of an adapter that is connected and reads (status routes these to codex). */
export const CONNECTED_READING_ADAPTER_STATUSES: ReadonlySet<string> = new Set([
  'connected',
  'connected-read-only',
  'pre-tick-runnable',
]);
/** Adapter statuses of a connected adapter that delivers (status routes these to codex before any other signal). */
export const CONNECTED_DELIVERY_ADAPTER_STATUSES: ReadonlySet<string> = new Set(['connected-delivery']);
export const CONNECTED_ADAPTER_STATUSES: ReadonlySet<string> = new Set([
  ...CONNECTED_READING_ADAPTER_STATUSES,
  ...CONNECTED_DELIVERY_ADAPTER_STATUSES,
]);
/** Who a goal can wait on (the values of `waiting_on`); a registry entry's own `waiting_on` among them overrides the latest run's. */
export const WAITING_ON_VALUES = ['controller', 'user_or_controller', 'codex', 'external_evidence'] as const;
const REGISTRY_WAITING_ON_OVERRIDES: ReadonlySet<string> = new Set(WAITING_ON_VALUES);
/** Run classifications that block on safety: the owner or the controller must act (status: severity high). */
export const BLOCKING_CLASSIFICATIONS: ReadonlySet<string> = new Set(['blocked_by_safety']);
/** Run classifications that hand the goal to its owner or the controller. */
export const OWNER_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'needs_human_reward',
  'needs_controller_opt_in',
  'needs_user_relay',
  'ready_for_controller_opt_in',
  'ready_for_user_relay',
  'operator_gate_deferred',
  'operator_gate_rejected',
  'dreaming_exploration_proposal',
  'dreaming_memory_consolidation',
  'dreaming_refactor_warning',
  'dreaming_archive_suggestion',
]);
const OPERATOR_CLASSIFICATIONS: ReadonlySet<string> = new Set([...BLOCKING_CLASSIFICATIONS, ...OWNER_CLASSIFICATIONS]);

export interface GoalAttention {
  status: string;
  waiting_on: string;
  /**
   * LoopX's attention severity, `high` for a latest run whose artifacts are missing and for a
   * safety-blocking classification: the quota state is then `blocked_health`, before any gate,
   * wait or throttle (the original's `quota_status`).
   */
  severity?: 'high';
}

export interface GoalAttentionInput {
  goal: Record<string, unknown>;
  /** The newest status run (not status-neutral, not an agent lane), or null. */
  latestRun: RunIndexEntry | null;
  /** The goal's active state, when it could be read. */
  doc: StateDocument | null;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

function adapterStatus(goal: Record<string, unknown>): string {
  const adapter = goal['adapter'];
  const nested = adapter !== null && typeof adapter === 'object' ? (adapter as Record<string, unknown>)['status'] : '';
  return text(goal['adapter_status']) || text(nested);
}

function openTodos(doc: StateDocument | null, role: 'user' | 'agent'): StateDocument['todos'] {
  if (doc === null) return [];
  return doc.todos.filter((t) => t.role === role && !TERMINAL_STATUSES.has(t.status));
}

export function goalAttention(input: GoalAttentionInput): GoalAttention {
  const { goal, latestRun, doc } = input;
  const userOpen = openTodos(doc, 'user');
  if (userOpen.some((t) => t.meta['task_class'] === 'user_gate'))
    return { status: 'active_state_user_gate', waiting_on: 'controller' };
  if (userOpen.length > 0 && !userOpen.every((t) => t.meta['task_class'] === 'user_action'))
    return { status: 'active_state_user_todo', waiting_on: 'controller' };
  const connected = CONNECTED_ADAPTER_STATUSES.has(adapterStatus(goal));
  if (latestRun === null) {
    if (connected) return { status: 'connected_without_run', waiting_on: 'codex' };
    return { status: text(goal['status']) || 'no_run', waiting_on: 'controller' };
  }
  if (!latestRun.json_exists || !latestRun.markdown_exists)
    return { status: 'run_artifact_missing', waiting_on: 'codex', severity: 'high' };
  const classification = text(latestRun.classification) || 'unknown';
  const override = text(goal['waiting_on']).toLowerCase();
  if (REGISTRY_WAITING_ON_OVERRIDES.has(override))
    return { status: text(goal['attention_status']) || classification, waiting_on: override };
  if (BLOCKING_CLASSIFICATIONS.has(classification))
    return { status: classification, waiting_on: 'user_or_controller', severity: 'high' };
  if (OPERATOR_CLASSIFICATIONS.has(classification)) return { status: classification, waiting_on: 'user_or_controller' };
  if (connected) return { status: classification, waiting_on: 'codex' };
  if (openTodos(doc, 'agent').length > 0) return { status: 'active_state_agent_todo', waiting_on: 'codex' };
  return { status: classification, waiting_on: text(latestRun['waiting_on' as keyof RunIndexEntry]) || 'codex' };
}
