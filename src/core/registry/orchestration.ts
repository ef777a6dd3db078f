import { isPlainObject, normalizeAgentId, type GoalRecord } from './agentIds';

/**
 * Orchestration (docs/agents.md): the goal's `spawn_policy` compacted to the few facts every consumer
 * needs, the explore-harness gate, the peer-coordinator opt-in and the turn driver's concurrency.
 *
 * Deliberate fixes of the original's coercions (docs/agents.md#deliberate-differences-from-the-original):
 * - spawning is allowed only by the JSON boolean `true` (in `allowed`, or the legacy
 *   `spawn_allowed` when `allowed` is absent); the string "false" no longer allows it, and the
 *   string "true" does not either: a hand-edited registry fails closed, as explore_harness does;
 * - an explicit `mode: multi_subagent` is reported as `default` while spawning is not possible
 *   (not allowed, or no child capacity), so `mode` never contradicts `spawn_allowed`;
 * - `allowed_domains` keeps only strings and finite numbers (null no longer becomes "None").
 */

export type OrchestrationMode = 'default' | 'multi_subagent';

export const EXPLORE_HARNESS_PROFILES = ['generic', 'adaptive-resilient', 'moe-router'] as const;
export type ExploreHarnessProfile = (typeof EXPLORE_HARNESS_PROFILES)[number];

export interface CompactOrchestration {
  mode: OrchestrationMode;
  spawn_allowed: boolean;
  max_children: number;
  allowed_domains?: string[];
  explore_harness?: { enabled: boolean; profile?: string };
}

/**
 * The original's integer coercion: booleans become 0, finite numbers are truncated, strings are
 * parsed as whole integers after trimming ("3.5" gives 0), anything else is 0.
 */
export function coerceInt(value: unknown): number {
  if (typeof value === 'number') return Number.isFinite(value) ? Math.trunc(value) : 0;
  if (typeof value === 'string') {
    const text = value.trim();
    return /^[+-]?\d+$/.test(text) ? Number.parseInt(text, 10) : 0;
  }
  return 0;
}

/** Whether the policy allows spawning: only a real boolean `true` does (see the module comment). */
export function spawnAllowed(policy: unknown): boolean {
  if (!isPlainObject(policy)) return false;
  const value = policy['allowed'] !== undefined ? policy['allowed'] : policy['spawn_allowed'];
  return value === true;
}

export function compactOrchestrationPolicy(policy: unknown): CompactOrchestration {
  const source = isPlainObject(policy) ? policy : {};
  const allowed = spawnAllowed(source);
  const maxChildren = Math.max(0, coerceInt(source['max_children']));
  const compact: CompactOrchestration = {
    mode: orchestrationMode(source, allowed, maxChildren),
    spawn_allowed: allowed,
    max_children: maxChildren,
  };

  const domains = source['allowed_domains'];
  if (Array.isArray(domains)) {
    const kept = domains
      .filter(
        (domain): domain is string | number =>
          typeof domain === 'string' || (typeof domain === 'number' && Number.isFinite(domain)),
      )
      .map((domain) => String(domain).trim())
      .filter((domain) => domain !== '');
    if (kept.length > 0) compact.allowed_domains = kept;
  }

  const harness = source['explore_harness'];
  if (isPlainObject(harness)) {
    compact.explore_harness = { enabled: harness['enabled'] === true };
    const profile = typeof harness['profile'] === 'string' ? harness['profile'].trim() : '';
    if (profile !== '') compact.explore_harness.profile = profile;
  }
  return compact;
}

function orchestrationMode(
  policy: Readonly<Record<string, unknown>>,
  allowed: boolean,
  maxChildren: number,
): OrchestrationMode {
  const canSpawn = allowed && maxChildren > 0;
  for (const key of ['mode', 'orchestration_mode']) {
    const explicit = typeof policy[key] === 'string' ? policy[key].trim() : '';
    if (explicit === 'default') return 'default';
    if (explicit === 'multi_subagent') return canSpawn ? 'multi_subagent' : 'default';
  }
  return canSpawn ? 'multi_subagent' : 'default';
}

/** `mode=M spawn_allowed=B max_children=N[ explore_harness=on(<p>)|on|off]`, booleans spelled as the original (`True`). */
export function orchestrationSummary(policy: unknown): string {
  const compact = compactOrchestrationPolicy(policy);
  let line = `mode=${compact.mode} spawn_allowed=${compact.spawn_allowed ? 'True' : 'False'} max_children=${compact.max_children}`;
  const harness = compact.explore_harness;
  if (harness) {
    line += ` explore_harness=${harness.enabled ? (harness.profile ? `on(${harness.profile})` : 'on') : 'off'}`;
  }
  return line;
}

/** Normalizes a profile name (trim, lowercase, `_` and spaces to `-`); null when it is not a known profile. */
export function normalizeExploreHarnessProfile(value: unknown): ExploreHarnessProfile | null {
  if (typeof value !== 'string') return null;
  const key = value
    .trim()
    .toLowerCase()
    .replace(/[_\s]+/g, '-');
  return (EXPLORE_HARNESS_PROFILES as readonly string[]).includes(key) ? (key as ExploreHarnessProfile) : null;
}

// ---------------------------------------------------------------------------------------------
// Explore-harness gate

/** The planner's own ceilings on parallel width, by what it fans out. */
export const PLANNER_WIDTH_CAPS = { worker_lanes: 16, todo_branches: 8 } as const;
export type PlannerFanout = keyof typeof PLANNER_WIDTH_CAPS;

export type ExploreHarnessGateState = 'disabled' | 'analysis_only' | 'commands_suggested';

export interface ExploreHarnessGate {
  ok: boolean;
  state: ExploreHarnessGateState;
  reason:
    | 'explore_harness_opt_in_required'
    | 'spawn_not_allowed_by_goal_boundary'
    | 'spawn_allowed_without_child_capacity'
    | 'goal_boundary_opt_in';
  profile: ExploreHarnessProfile | null;
  profile_source: 'goal_pinned' | 'requested' | 'default';
  /** Set when the pinned or requested profile is not a known profile. */
  error?: string;
  width: number;
  width_cap_source: 'max_children' | `max_${PlannerFanout}` | 'requested' | null;
  requested_width: number;
  planner_cap: number;
  max_children: number;
}

export interface ExploreHarnessRequest {
  /** Desired number of parallel branches; defaults to the planner cap. */
  requestedWidth?: number;
  fanout?: PlannerFanout;
  requestedProfile?: string;
}

/**
 * Whether the explore harness may suggest spawn commands, and how wide. It opens only when the
 * goal opts in with `explore_harness.enabled === true` and allows spawning with child capacity.
 * The width is the smallest of the request, the planner cap and `max_children`; on a tie the
 * reported source is `max_children`, then the planner cap, then `requested`.
 */
export function exploreHarnessGate(policy: unknown, request: ExploreHarnessRequest = {}): ExploreHarnessGate {
  const compact = compactOrchestrationPolicy(policy);
  const fanout = request.fanout ?? 'worker_lanes';
  const plannerCap = PLANNER_WIDTH_CAPS[fanout];
  const requestedWidth = Math.max(
    1,
    request.requestedWidth === undefined ? plannerCap : coerceInt(request.requestedWidth),
  );

  const pinned = compact.explore_harness?.profile;
  const [profileText, profileSource] =
    pinned !== undefined
      ? [pinned, 'goal_pinned' as const]
      : request.requestedProfile !== undefined && request.requestedProfile.trim() !== ''
        ? [request.requestedProfile, 'requested' as const]
        : ['generic', 'default' as const];
  const profile = normalizeExploreHarnessProfile(profileText);

  const base = {
    profile,
    profile_source: profileSource,
    requested_width: requestedWidth,
    planner_cap: plannerCap,
    max_children: compact.max_children,
  };
  const closed = (state: ExploreHarnessGateState, reason: ExploreHarnessGate['reason']): ExploreHarnessGate =>
    withProfileCheck({ ok: true, state, reason, ...base, width: 0, width_cap_source: null }, profileText);

  if (compact.explore_harness?.enabled !== true) return closed('disabled', 'explore_harness_opt_in_required');
  if (!compact.spawn_allowed) return closed('analysis_only', 'spawn_not_allowed_by_goal_boundary');
  if (compact.max_children <= 0) return closed('analysis_only', 'spawn_allowed_without_child_capacity');

  const caps: [ExploreHarnessGate['width_cap_source'], number][] = [
    ['max_children', compact.max_children],
    [`max_${fanout}`, plannerCap],
    ['requested', requestedWidth],
  ];
  const width = Math.min(...caps.map(([, cap]) => cap));
  const source = caps.find(([, cap]) => cap === width)?.[0] ?? 'requested';
  return withProfileCheck(
    { ok: true, state: 'commands_suggested', reason: 'goal_boundary_opt_in', ...base, width, width_cap_source: source },
    profileText,
  );
}

function withProfileCheck(gate: ExploreHarnessGate, profileText: string): ExploreHarnessGate {
  if (gate.profile !== null) return gate;
  return {
    ...gate,
    ok: false,
    error: `explore harness profile '${profileText}' is not one of ${EXPLORE_HARNESS_PROFILES.join(', ')}`,
  };
}

// ---------------------------------------------------------------------------------------------

/**
 * The peer coordinator of a goal: enabled only when
 * `coordination.peer_task_coordination.coordinator_agent_id` is a valid agent id. Registered
 * peers never coordinate by default. Returns null when there is none.
 */
export function peerCoordinator(goal: GoalRecord): { enabled: true; coordinator_agent_id: string } | null {
  const coordination = goal['coordination'];
  const peer = isPlainObject(coordination) ? coordination['peer_task_coordination'] : undefined;
  const agentId = isPlainObject(peer) ? normalizeAgentId(peer['coordinator_agent_id']) : null;
  return agentId === null ? null : { enabled: true, coordinator_agent_id: agentId };
}

/**
 * How many turns of one goal the turn driver may run at once. Without spawning it is one at a
 * time; with spawning (allowed and `max_children` > 0) up to `max_children`, each on a distinct
 * todo by a distinct registered agent, so it is also bounded by the number of registered agents
 * when that is given (a goal without registered agents runs one turn at a time).
 */
export function maxConcurrentTurns(policy: unknown, registeredAgentCount?: number): number {
  const compact = compactOrchestrationPolicy(policy);
  if (compact.mode !== 'multi_subagent') return 1;
  if (registeredAgentCount === undefined) return compact.max_children;
  return Math.max(1, Math.min(compact.max_children, Math.trunc(registeredAgentCount)));
}
