import { z } from 'zod';

/**
 * A goal's lifecycle, as the original's status item carries it (`lifecycle_phase`, `lifecycle_flags`;
 * loopx/control_plane/work_items/lifecycle.py `goal_lifecycle_fields`). With a latest status run the flags come from
 * it: its classification (`state_refreshed` → refreshed, `read_only_project_map` or a `project_map` → mapped, any
 * other → adapter_inspected, none → run_recorded), a human reward (reward_judged), an operator gate (approved or
 * gated) and a controller readiness (ready or gated). Without a run, from the registry: a connected adapter, a planned
 * goal or adapter, else registered. The phase is the first flag in the original's priority order. The original dashboard
 * reads both fields.
 */

export const LIFECYCLE_PRIORITY = [
  'controller_ready',
  'reward_judged',
  'operator_approved',
  'controller_gated',
  'operator_gated',
  'adapter_inspected',
  'mapped',
  'refreshed',
  'connected',
  'registered',
  'planned',
  'run_recorded',
] as const;

export const LifecycleFieldsSchema = z.object({
  lifecycle_phase: z.string(),
  lifecycle_flags: z.array(z.string()),
});
export type LifecycleFields = z.infer<typeof LifecycleFieldsSchema>;

const CONNECTED_ADAPTER_STATUSES: ReadonlySet<string> = new Set([
  'connected',
  'connected-read-only',
  'pre-tick-runnable',
]);
const HUMAN_REWARD_FIELDS = ['recorded_at', 'decision', 'reward', 'reason_summary', 'follow_up', 'lesson'];
/** The fields of a run's operator gate and controller readiness the original compacts (projectAsset.ts reads them too). */
export const OPERATOR_GATE_FIELDS = [
  'recorded_at',
  'gate',
  'decision',
  'operator_question',
  'reason_summary',
  'follow_up',
  'agent_command',
];
export const CONTROLLER_READINESS_FIELDS = [
  'classification',
  'read_only_observer_ready',
  'decision_advisor_ready',
  'write_controller_ready',
  'missing_gates',
  'review_judgment',
  'next_handoff_condition',
];

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The original's `compact_*` of a run's block: the block when it holds one of the known fields, else null. */
function compact(value: unknown, fields: readonly string[]): Record<string, unknown> | null {
  const block = record(value);
  return block !== null && fields.some((field) => Object.hasOwn(block, field)) ? block : null;
}

/** Python truthiness of a JSON value. */
function truthy(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0;
  if (record(value) !== null) return Object.keys(value as object).length > 0;
  return value !== null && value !== undefined && value !== false && value !== 0 && value !== '';
}

export function orderedLifecycleFlags(flags: readonly string[]): string[] {
  const rank = (flag: string): number => {
    const index = (LIFECYCLE_PRIORITY as readonly string[]).indexOf(flag);
    return index < 0 ? LIFECYCLE_PRIORITY.length : index;
  };
  const unique = [...new Set(flags.filter((flag) => flag !== ''))];
  // A stable sort, as Python's.
  return unique
    .map((flag, i) => ({ flag, i }))
    .sort((a, b) => rank(a.flag) - rank(b.flag) || a.i - b.i)
    .map((x) => x.flag);
}

export function runLifecycleFlags(run: Record<string, unknown>): string[] {
  const flags: string[] = [];
  const classification = typeof run['classification'] === 'string' ? run['classification'] : '';
  if (classification === 'state_refreshed') flags.push('refreshed');
  else if (classification === 'read_only_project_map' || record(run['project_map']) !== null) flags.push('mapped');
  else if (classification !== '') flags.push('adapter_inspected');
  else flags.push('run_recorded');
  if (compact(run['human_reward'], HUMAN_REWARD_FIELDS) !== null) flags.push('reward_judged');
  const gate = compact(run['operator_gate'], OPERATOR_GATE_FIELDS);
  if (gate !== null) flags.push(gate['decision'] === 'approve' ? 'operator_approved' : 'operator_gated');
  const readiness = compact(run['controller_readiness'], CONTROLLER_READINESS_FIELDS);
  if (readiness !== null) {
    if (truthy(readiness['decision_advisor_ready']) || truthy(readiness['write_controller_ready']))
      flags.push('controller_ready');
    else if (truthy(readiness['read_only_observer_ready']) || truthy(readiness['classification']))
      flags.push('controller_gated');
  }
  return orderedLifecycleFlags(flags);
}

export function lifecycleFields(input: {
  /** The goal's latest status run (not status-neutral), or null. */
  latestStatusRun: Record<string, unknown> | null;
  adapterStatus: string | null;
  goalStatus: string;
}): LifecycleFields {
  let flags: string[];
  if (input.latestStatusRun !== null && Object.keys(input.latestStatusRun).length > 0) {
    flags = runLifecycleFlags(input.latestStatusRun);
  } else {
    const adapter = input.adapterStatus ?? '';
    if (CONNECTED_ADAPTER_STATUSES.has(adapter)) flags = ['connected'];
    else if (input.goalStatus.includes('planned') || adapter === 'planned') flags = ['planned'];
    else flags = ['registered'];
  }
  return { lifecycle_phase: flags[0] ?? 'registered', lifecycle_flags: flags };
}
