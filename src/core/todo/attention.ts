import { z } from 'zod';
import { TERMINAL_STATUSES, type StateDocument } from '../state/document';
import type { RunIndexEntry } from '../runtime/runIndex';

/**
 * The goal's attention route (its attention status and who it waits on), in the two readings of the
 * original that LoopX keeps side by side (docs/architecture.md, "Two readings"): `quota should-run`'s
 * (`goalAttention`, first) and `loopx status`'s (`attentionRoute`, below). They share one vocabulary
 * (the tables below) but not the rules; the compatibility kit passes with both, and where they differ
 * is pinned one by one in `test/unit/todo/ruleReadings.test.ts`.
 *
 * Should-run's reading: the goal's attention status and who it waits on, as LoopX's status projection derives them
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

// The vocabulary of the attention route, shared by both readings.

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

// ---------------------------------------------------------------------------------------------
// Status's reading

/**
 * Who a goal waits on and the status its attention item shows, by LoopX's rules (docs/status.md,
 * "Attention status"): the active state's open user gates and user todos first, then the latest
 * status run (missing artifacts, the registry's own `waiting_on`, the classification's owner),
 * then the adapter. Pure.
 */

/**
 * Who a status item waits on: the route's values, and `monitor_signal` for LoopX's quiet-monitor display
 * (`monitorQuietDisplay` below; the item keeps the route in `execution_waiting_on`).
 */
export const WaitingOnSchema = z.enum([...WAITING_ON_VALUES, 'monitor_signal']);
export type WaitingOn = z.infer<typeof WaitingOnSchema>;

/** `watch`: only evidence from outside is awaited; `info`: nothing routes the goal (LoopX leaves such a goal out). */
export const AttentionSeveritySchema = z.enum(['high', 'action', 'watch', 'info']);
export type AttentionSeverity = z.infer<typeof AttentionSeveritySchema>;

/** Waits that need the owner or the controller (they count as `needs_user_or_controller`). */
export const OPERATOR_WAITS: ReadonlySet<string> = new Set(['controller', 'user_or_controller']);

/** Run classifications after which the goal's next step is the agent's (the original's CODEX_READY_CLASSIFICATIONS). */
export const CODEX_READY_CLASSIFICATIONS: ReadonlySet<string> = new Set([
  'controller_opted_in_waiting_for_run',
  'design_next_experiment',
  'inspect_eval_result',
  'inspect_result',
  'needs_more_read_only_evidence',
  'needs_validation',
  'public_harness_healthy',
  'read_only_project_map',
  'run_validation',
  'state_refreshed',
  'operator_gate_approved',
  'monitor_todo_repeat_dedupe_deployed',
]);
/** Run classifications that watch external evidence start with one of these. */
export const EXTERNAL_EVIDENCE_PREFIXES: readonly string[] = ['await_', 'external_evidence_observation_'];

export type AttentionSource = 'active_state' | 'latest_run' | 'run_history' | 'registry' | 'none';

export interface AttentionRoute {
  status: string;
  waiting_on: WaitingOn;
  severity: AttentionSeverity;
  /** What decided the route. */
  attention_source: AttentionSource;
}

export interface OpenTodoFacts {
  /** Open (not done, not deferred) todos of the role, in document order. */
  open: readonly { task_class: string | null }[];
  open_count: number;
}

export interface AttentionRouteInput {
  registryStatus: string;
  adapterStatus: string | null;
  adapterKind: string | null;
  /** The registry entry's own `waiting_on` and `attention_status`. */
  registryWaitingOn: string | null;
  attentionStatus: string | null;
  /** The latest status run (raw row), or null when the goal has none. */
  latestStatusRun: (Record<string, unknown> & { json_exists: boolean; markdown_exists: boolean }) | null;
  /** Null when the state file could not be read. */
  userTodos: OpenTodoFacts | null;
  agentTodos: OpenTodoFacts | null;
  hasProjectionGap: boolean;
}

function activeStateRoute(input: AttentionRouteInput): AttentionRoute | null {
  const { userTodos, agentTodos } = input;
  const route = (status: string, waiting_on: WaitingOn): AttentionRoute => ({
    status,
    waiting_on,
    severity: 'action',
    attention_source: 'active_state',
  });
  if (userTodos !== null) {
    if (userTodos.open.some((todo) => todo.task_class === 'user_gate'))
      return route('active_state_user_gate', 'controller');
    if (userTodos.open_count > 0) {
      // Open user todos that are all explicit user actions do not hold the goal for the controller.
      const onlyUserActions =
        userTodos.open.length > 0 && userTodos.open.every((todo) => todo.task_class === 'user_action');
      if (!onlyUserActions) return route('active_state_user_todo', 'controller');
    }
  }
  if (agentTodos !== null && agentTodos.open_count > 0) return route('active_state_agent_todo', 'codex');
  if (input.hasProjectionGap) return route('state_projection_gap', 'codex');
  return null;
}

/** `run_has_external_evidence_watch_signal`: the run watches external evidence (its state, or a legacy prefix). */
export function hasExternalEvidenceSignal(run: Record<string, unknown>): boolean {
  if (text(run['waiting_on']) === 'external_evidence' || text(run['execution_waiting_on']) === 'external_evidence')
    return true;
  const observation = run['external_evidence_observation'];
  if (typeof observation === 'object' && observation !== null && !Array.isArray(observation)) return true;
  const event = run['monitor_event'];
  if (typeof event === 'object' && event !== null && !Array.isArray(event)) {
    const e = event as Record<string, unknown>;
    if (text(e['waiting_on']) === 'external_evidence') return true;
    if (text(e['monitor_mode']).startsWith('external_') || text(e['monitor_kind']) === 'external_evidence') return true;
  }
  const classification = text(run['classification']);
  return EXTERNAL_EVIDENCE_PREFIXES.some((prefix) => classification.startsWith(prefix));
}

function runRoute(input: AttentionRouteInput): AttentionRoute | null {
  const adapter = input.adapterStatus ?? '';
  const run = input.latestStatusRun;
  if (run === null) {
    if (CONNECTED_READING_ADAPTER_STATUSES.has(adapter) || CONNECTED_DELIVERY_ADAPTER_STATUSES.has(adapter))
      return {
        status: 'connected_without_run',
        waiting_on: 'codex',
        severity: 'action',
        attention_source: 'run_history',
      };
    if (adapter === 'planned' && (input.adapterKind ?? '').endsWith('_read_only_map_v0'))
      return {
        status: input.registryStatus || 'planned',
        waiting_on: 'user_or_controller',
        severity: 'action',
        attention_source: 'registry',
      };
    return {
      status: input.registryStatus || 'no_run',
      waiting_on: 'controller',
      severity: 'action',
      attention_source: 'registry',
    };
  }
  if (!run.json_exists || !run.markdown_exists)
    return { status: 'run_artifact_missing', waiting_on: 'codex', severity: 'high', attention_source: 'run_history' };
  const classification = text(run['classification']) || 'unknown';
  const registryWait = input.registryWaitingOn ?? '';
  if ((WAITING_ON_VALUES as readonly string[]).includes(registryWait)) {
    return {
      status: input.attentionStatus || classification,
      waiting_on: registryWait as WaitingOn,
      severity: registryWait === 'external_evidence' ? 'watch' : 'action',
      attention_source: 'registry',
    };
  }
  const fromRun = (waiting_on: WaitingOn, severity: AttentionSeverity): AttentionRoute => ({
    status: classification,
    waiting_on,
    severity,
    attention_source: 'latest_run',
  });
  if (BLOCKING_CLASSIFICATIONS.has(classification)) return fromRun('user_or_controller', 'high');
  if (OWNER_CLASSIFICATIONS.has(classification)) return fromRun('user_or_controller', 'action');
  if (CODEX_READY_CLASSIFICATIONS.has(classification)) return fromRun('codex', 'action');
  if (CONNECTED_DELIVERY_ADAPTER_STATUSES.has(adapter)) return fromRun('codex', 'action');
  if (hasExternalEvidenceSignal(run)) return fromRun('external_evidence', 'watch');
  if (CONNECTED_READING_ADAPTER_STATUSES.has(adapter)) return fromRun('codex', 'action');
  return null;
}

/**
 * The goal's attention route. An active-state route that waits on the owner wins; otherwise the
 * run route, else the active-state route. When neither applies (LoopX then leaves the goal out of
 * its queue) the goal still gets an item: its latest classification or registry status, `codex`, `info`.
 */
export function attentionRoute(input: AttentionRouteInput): AttentionRoute {
  const active = activeStateRoute(input);
  if (active !== null && OPERATOR_WAITS.has(active.waiting_on)) return active;
  const fromRun = runRoute(input);
  if (fromRun !== null) return fromRun;
  if (active !== null) return active;
  return {
    status: text(input.latestStatusRun?.['classification']) || input.registryStatus,
    waiting_on: 'codex',
    severity: 'info',
    attention_source: 'none',
  };
}

/** `waiting_on` of a goal whose only open work is monitors that may run now (LoopX's `monitor_signal`). */
export const MONITOR_SIGNAL_WAITING_ON = 'monitor_signal';

export interface MonitorQuietFacts {
  /** Open (not done, not deferred) user todos. */
  userOpenCount: number;
  /** Open (not done, not deferred) agent todos, in document order. */
  agentOpen: readonly { task_class: string | null; actionable: boolean }[];
}

/**
 * LoopX's quiet-monitor display (`normalize_monitor_quiet_attention_display`, applied to each status item after
 * its quota): an item routed to `codex` at severity `action` whose goal has no open user todo and whose open agent
 * todos are all `continuous_monitor`s that may run now (`status=open`, and a `resume_when` only when it holds)
 * waits on `monitor_signal` at severity `watch`: there is no agent work but watching. The quota state still follows
 * the route (`execution_waiting_on`, `execution_severity`). A todo without `task_class` is an advancement task.
 */
export function monitorQuietDisplay(
  route: Pick<AttentionRoute, 'waiting_on' | 'severity'>,
  facts: MonitorQuietFacts,
): boolean {
  if (route.waiting_on !== 'codex' || route.severity !== 'action') return false;
  if (facts.userOpenCount > 0 || facts.agentOpen.length === 0) return false;
  return facts.agentOpen.every((todo) => todo.task_class === 'continuous_monitor' && todo.actionable);
}

const QUIET_MONITOR_FALLBACK_ACTION =
  'No immediate agent work; keep the monitor quiet until a material monitor transition, regression, or concrete blocker appears.';

/** The recommended action LoopX shows on a quiet-monitor item (`quiet_monitor_display_action`). */
export function quietMonitorAction(raw: string | null): string {
  const action = (raw ?? '').trim();
  if (action === '') return QUIET_MONITOR_FALLBACK_ACTION;
  const lowered = action.toLowerCase();
  if (lowered.startsWith('no immediate agent work')) return action;
  if (lowered.startsWith('quiet monitor only until ')) {
    const suffix = action.slice('Quiet monitor only until '.length).trim();
    if (suffix !== '') return `No immediate agent work; keep the monitor quiet until ${suffix}`;
  }
  if (lowered.startsWith('wait quietly'))
    return `No immediate agent work; ${action[0]?.toLowerCase() ?? ''}${action.slice(1)}`;
  return `No immediate agent work; monitor quietly. Context: ${action}`;
}
