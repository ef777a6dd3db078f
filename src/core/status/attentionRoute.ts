import { z } from 'zod';
import {
  BLOCKING_CLASSIFICATIONS,
  CONNECTED_DELIVERY_ADAPTER_STATUSES,
  CONNECTED_READING_ADAPTER_STATUSES,
  OWNER_CLASSIFICATIONS,
  WAITING_ON_VALUES,
} from '../scheduling/goalAttention';

/**
 * Who a goal waits on and the status its attention item shows, by LoopX's rules (docs/status.md,
 * "Attention status"): the active state's open user gates and user todos first, then the latest
 * status run (missing artifacts, the registry's own `waiting_on`, the classification's owner),
 * then the adapter. Pure: the caller hands in what status already read.
 */

export { WAITING_ON_VALUES };
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

const CODEX_READY = new Set([
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
const EXTERNAL_EVIDENCE_PREFIXES = ['await_', 'external_evidence_observation_'];

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

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
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

function hasExternalEvidenceSignal(run: Record<string, unknown>): boolean {
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
  if (CODEX_READY.has(classification)) return fromRun('codex', 'action');
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
