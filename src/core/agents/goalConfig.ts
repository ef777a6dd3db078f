import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { refuseCredentials } from '../privacy/refuse';
import { isRecord } from '../registry/schema';
import { agentProfilesAsDict } from './agentExecutor';
import type { GoalRef } from '../registry/goalRef';
import { readBackRegistryGoal, updateRegistryGoal } from '../registry/goalWrite';
import { AGENT_ID_RULE, normalizeAgentId, registeredAgentsForGoal } from '../registry/agentIds';
import { ExecutorConfigSchema } from '../executors/config';
import {
  EXPLORE_HARNESS_PROFILES,
  normalizeExploreHarnessProfile,
  orchestrationSummary,
} from '../registry/orchestration';
import { parseDecimal } from '../numbers';
import { MAX_WINDOW_HOURS } from '../quota/goal';

/**
 * `configure-goal`: changes a goal's quota, registered agents, write scope and spawn policy.
 * A preview (before/after and the changed fields) by default; with `execute`, the change is
 * recomputed from the file inside the registry lock, written atomically and read back. A
 * rejected value writes nothing.
 *
 * Semantics (the original's): `--registered-agent` sets the roster to the ids given (an id left
 * out is removed; `register-agent` is the command that only adds), `--clear-registered-agents`
 * removes the roster with the agent model and per-agent settings; `--write-scope` replaces the
 * list; spawn settings are written as `spawn_policy.allowed`/`max_children`, and setting
 * `allowed` removes a legacy `spawn_allowed` beside it so the two can never disagree.
 */

export interface GoalConfigChanges {
  quotaCompute?: number;
  quotaWindowHours?: number;
  registeredAgents?: string[];
  clearRegisteredAgents?: true;
  writeScope?: string[];
  spawnAllowed?: boolean;
  maxChildren?: number;
  exploreHarness?: boolean;
  exploreHarnessProfile?: string;
  /** Whole agent profiles by agent id (the original's `--agent-profile-json`), replacing the stored ones. */
  agentProfiles?: Record<string, Record<string, unknown>>;
  clearAgentProfiles?: string[];
}

/** The options as a caller (CLI flag values, an HTTP body) gives them, before validation. */
export interface GoalConfigInput {
  quotaCompute?: string | number | undefined;
  quotaWindowHours?: string | number | undefined;
  registeredAgents?: readonly string[] | undefined;
  clearRegisteredAgents?: boolean | undefined;
  writeScope?: readonly string[] | undefined;
  spawnAllowed?: boolean | undefined;
  maxChildren?: string | number | undefined;
  exploreHarness?: boolean | undefined;
  exploreHarnessProfile?: string | undefined;
  agentProfileJsons?: readonly string[] | undefined;
  clearAgentProfiles?: readonly string[] | undefined;
}

function invalid(message: string, field: string, value: unknown): LoopxError {
  return new LoopxError('invalid_argument', message, { field, value });
}

/** Text is read strictly (plain decimal); a number is taken as given, with -0 made 0 so it reads back equal. */
function parseNumber(value: string | number, flag: string): number {
  const parsed = typeof value === 'number' ? value : parseDecimal(value, flag, {}, 'invalid_argument');
  if (!Number.isFinite(parsed)) throw invalid(`${flag} must be a number, got '${String(value)}'`, flag, value);
  return parsed === 0 ? 0 : parsed;
}

/**
 * Validates the requested changes; throws LoopxError `invalid_argument` with the original's
 * messages where it had one. Deliberately stricter than the original: `--quota-compute` above 1
 * and a fractional `--quota-window-hours` are rejected instead of silently clamped or truncated.
 */
export function parseGoalConfigChanges(input: GoalConfigInput): GoalConfigChanges {
  const changes: GoalConfigChanges = {};
  if (input.quotaCompute !== undefined) {
    const compute = parseNumber(input.quotaCompute, '--quota-compute');
    if (compute < 0)
      throw invalid(
        `quota_compute must be greater than or equal to 0 (--quota-compute), got ${compute}`,
        '--quota-compute',
        input.quotaCompute,
      );
    if (compute > 1)
      throw invalid(
        `--quota-compute must be less than or equal to 1 (the fraction of each window the goal may use), got ${compute}`,
        '--quota-compute',
        input.quotaCompute,
      );
    changes.quotaCompute = compute;
  }
  if (input.quotaWindowHours !== undefined) {
    const hours = parseNumber(input.quotaWindowHours, '--quota-window-hours');
    if (hours <= 0)
      throw invalid(
        `quota_window_hours must be greater than 0 (--quota-window-hours), got ${hours}`,
        '--quota-window-hours',
        input.quotaWindowHours,
      );
    if (!Number.isInteger(hours))
      throw invalid(
        `--quota-window-hours must be a whole number of hours (quota accounting counts whole hours), got ${hours}`,
        '--quota-window-hours',
        input.quotaWindowHours,
      );
    if (hours > MAX_WINDOW_HOURS)
      throw invalid(
        `--quota-window-hours must be at most ${MAX_WINDOW_HOURS}, got ${hours}`,
        '--quota-window-hours',
        input.quotaWindowHours,
      );
    changes.quotaWindowHours = hours;
  }
  if (input.registeredAgents !== undefined) {
    const ids: string[] = [];
    for (const token of input.registeredAgents
      .flatMap((value) => value.split(','))
      .map((token) => token.trim())
      .filter((token) => token !== '')) {
      const id = normalizeAgentId(token);
      if (id === null)
        throw invalid(
          `registered agents must be public-safe tokens such as codex-main-control (got '${token}': ${AGENT_ID_RULE})`,
          '--registered-agent',
          token,
        );
      if (!ids.includes(id)) ids.push(id);
    }
    if (ids.length === 0)
      throw invalid(
        'registered agents must be public-safe tokens such as codex-main-control (got none)',
        '--registered-agent',
        input.registeredAgents,
      );
    changes.registeredAgents = ids;
  }
  if (input.clearRegisteredAgents === true) {
    if (changes.registeredAgents !== undefined)
      throw invalid(
        '--clear-registered-agents cannot be combined with --registered-agent',
        '--clear-registered-agents',
        true,
      );
    changes.clearRegisteredAgents = true;
  }
  if (input.writeScope !== undefined) {
    const scope: string[] = [];
    for (const raw of input.writeScope) {
      refuseCredentials({ '--write-scope': raw });
      const glob = raw.trim();
      if (glob === '') throw invalid('--write-scope must not be empty', '--write-scope', raw);
      if (/^([/\\]|~|[A-Za-z]:)/.test(glob) || glob.split(/[/\\]/).includes('..')) {
        throw invalid(
          `--write-scope globs are relative to the goal's repo and stay inside it, got '${glob}'`,
          '--write-scope',
          raw,
        );
      }
      if (!scope.includes(glob)) scope.push(glob);
    }
    changes.writeScope = scope;
  }
  if (input.spawnAllowed !== undefined) changes.spawnAllowed = input.spawnAllowed;
  if (input.maxChildren !== undefined) {
    const text = String(input.maxChildren);
    if (!/^(0|[1-9][0-9]*)$/.test(text) || !Number.isSafeInteger(Number(text)))
      throw invalid(
        `--max-children must be a whole number greater than or equal to 0, got '${String(input.maxChildren)}'`,
        '--max-children',
        input.maxChildren,
      );
    changes.maxChildren = Number.parseInt(text, 10);
  }
  if (input.exploreHarness !== undefined) changes.exploreHarness = input.exploreHarness;
  if (input.exploreHarnessProfile !== undefined) {
    const profile = normalizeExploreHarnessProfile(input.exploreHarnessProfile);
    if (profile === null) {
      throw invalid(
        `--explore-harness-profile must be one of ${EXPLORE_HARNESS_PROFILES.join(', ')}, got '${input.exploreHarnessProfile}'`,
        '--explore-harness-profile',
        input.exploreHarnessProfile,
      );
    }
    changes.exploreHarnessProfile = profile;
  }
  if (input.agentProfileJsons !== undefined && input.agentProfileJsons.length > 0)
    changes.agentProfiles = parseAgentProfiles(input.agentProfileJsons);
  if (input.clearAgentProfiles !== undefined && input.clearAgentProfiles.length > 0) {
    const ids: string[] = [];
    for (const token of input.clearAgentProfiles.flatMap((value) => value.split(',')).map((t) => t.trim())) {
      if (token === '') continue;
      const id = normalizeAgentId(token);
      if (id === null)
        throw invalid(
          `--clear-agent-profile: '${token}' is not an agent id (${AGENT_ID_RULE})`,
          '--clear-agent-profile',
          token,
        );
      if (!ids.includes(id)) ids.push(id);
    }
    const conflicts = ids.filter((id) => changes.agentProfiles?.[id] !== undefined).sort();
    if (conflicts.length > 0)
      throw invalid(
        `cannot write and clear the same agent profile: ${conflicts.join(', ')}`,
        '--clear-agent-profile',
        conflicts,
      );
    changes.clearAgentProfiles = ids;
  }
  if (Object.keys(changes).length === 0) {
    throw invalid(
      'nothing to configure: pass at least one of --quota-compute, --quota-window-hours, --registered-agent, --clear-registered-agents, --write-scope, --spawn-allowed/--no-spawn-allowed, --max-children, --explore-harness/--no-explore-harness, --explore-harness-profile, --agent-profile-json, --clear-agent-profile',
      'options',
      null,
    );
  }
  return changes;
}

export interface GoalConfigDiff {
  changed: boolean;
  /**
   * The original's setting groups that changed, in its order: `quota`, `orchestration`,
   * `write_scope`, `registered_agents`, `configured_agent_model`.
   */
  changed_fields: string[];
  /** The stored fields that changed (`quota.compute`, `spawn_policy.allowed`, …): the keys of `before`/`after`. */
  changed_paths: string[];
  /** The stored value of every field the command touches, before and after (null when absent). */
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

/** Applies the changes to a raw goal entry in place and reports what they changed. */
export function applyGoalConfig(goal: Record<string, unknown>, changes: GoalConfigChanges): GoalConfigDiff {
  const before: Record<string, unknown> = {};
  const after: Record<string, unknown> = {};
  const set = (fieldPath: string, value: unknown): void => {
    const keys = fieldPath.split('.');
    const last = keys.pop() ?? '';
    let parent = goal;
    for (const key of keys) {
      const child = parent[key];
      parent = isRecord(child) ? child : (parent[key] = {});
    }
    if (!(fieldPath in before)) before[fieldPath] = structuredClone(parent[last] ?? null);
    if (value === undefined) delete parent[last];
    else parent[last] = value;
    after[fieldPath] = structuredClone(value ?? null);
  };
  const get = (fieldPath: string): unknown =>
    fieldPath.split('.').reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), goal);

  if (changes.quotaCompute !== undefined) set('quota.compute', changes.quotaCompute);
  if (changes.quotaWindowHours !== undefined) set('quota.window_hours', changes.quotaWindowHours);
  if (changes.registeredAgents !== undefined) {
    set('coordination.registered_agents', [...changes.registeredAgents]);
    set('coordination.agent_model', 'peer_v1');
  }
  if (changes.clearRegisteredAgents === true) {
    for (const key of CLEARED_WITH_ROSTER) {
      if (get(`coordination.${key}`) !== undefined) set(`coordination.${key}`, undefined);
    }
  }
  if (changes.writeScope !== undefined) set('coordination.write_scope', changes.writeScope);
  if (changes.spawnAllowed !== undefined) {
    set('spawn_policy.allowed', changes.spawnAllowed);
    if (get('spawn_policy.spawn_allowed') !== undefined) set('spawn_policy.spawn_allowed', undefined);
  }
  if (changes.maxChildren !== undefined) set('spawn_policy.max_children', changes.maxChildren);
  if (changes.exploreHarness !== undefined || changes.exploreHarnessProfile !== undefined) {
    if (get('spawn_policy.explore_harness') !== undefined && !isRecord(get('spawn_policy.explore_harness'))) {
      set('spawn_policy.explore_harness', {});
    }
    if (changes.exploreHarness !== undefined) set('spawn_policy.explore_harness.enabled', changes.exploreHarness);
    if (changes.exploreHarnessProfile !== undefined)
      set('spawn_policy.explore_harness.profile', changes.exploreHarnessProfile);
  }

  if (
    changes.clearRegisteredAgents !== true &&
    (changes.agentProfiles !== undefined || changes.clearAgentProfiles !== undefined)
  ) {
    const roster = changes.registeredAgents ?? registeredAgentsForGoal(goal);
    const unknown = Object.keys(changes.agentProfiles ?? {}).filter((id) => !roster.includes(id));
    if (unknown.length > 0)
      throw new LoopxError(
        'invalid_goal_config',
        `agent profile agent_id must name a registered peer (not registered: ${unknown.join(', ')}); register it with --registered-agent or loopx register-agent`,
        { field: '--agent-profile-json', value: unknown },
      );
    const stored = get('coordination.agent_profiles');
    const profiles: Record<string, unknown> = structuredClone(agentProfilesAsDict(stored));
    for (const id of changes.clearAgentProfiles ?? []) delete profiles[id];
    Object.assign(profiles, structuredClone(changes.agentProfiles ?? {}));
    set('coordination.agent_profiles', Object.keys(profiles).length > 0 ? profiles : undefined);
  }

  const changedPaths = Object.keys(after).filter((field) => !isDeepStrictEqual(before[field], after[field]));
  const groups = new Set(changedPaths.map(settingGroup));
  const changedFields = SETTING_GROUPS.filter((group) => groups.has(group));
  return {
    changed: changedPaths.length > 0,
    changed_fields: changedFields,
    changed_paths: changedPaths,
    before,
    after,
  };
}

/** The original's agent_profile_v1 fields, plus `executor` (how LoopX runs the agent, docs/executors.md). */
const AGENT_PROFILE_FIELDS = [
  'schema_version',
  'agent_id',
  'profile_role',
  'scope_summary',
  'default_task_classes',
  'vision_requirement',
  'preferred_action_kinds',
  'avoid_action_kinds',
  'executor',
];
export const AGENT_PROFILE_SCHEMA_VERSION = 'agent_profile_v1';

/**
 * `--agent-profile-json` (repeatable), as in the original: each a JSON object naming a registered
 * agent (`agent_id`), unknown fields refused, written whole in place of that agent's stored profile.
 * Its `executor` is checked by the executor schema, so a profile LoopX could not run is never written.
 */
export function parseAgentProfiles(texts: readonly string[]): Record<string, Record<string, unknown>> {
  const profiles: Record<string, Record<string, unknown>> = {};
  for (const text of texts) {
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (error) {
      throw invalid(
        `--agent-profile-json is not JSON: ${error instanceof Error ? error.message : String(error)}`,
        '--agent-profile-json',
        text,
      );
    }
    if (!isRecord(raw)) throw invalid('--agent-profile-json must contain a JSON object', '--agent-profile-json', text);
    const unknown = Object.keys(raw)
      .filter((key) => !AGENT_PROFILE_FIELDS.includes(key))
      .sort();
    if (unknown.length > 0)
      throw invalid(`unknown agent profile field(s): ${unknown.join(', ')}`, '--agent-profile-json', unknown);
    const version = raw['schema_version'] ?? AGENT_PROFILE_SCHEMA_VERSION;
    if (version !== AGENT_PROFILE_SCHEMA_VERSION)
      throw invalid(
        `agent profile schema_version must be ${AGENT_PROFILE_SCHEMA_VERSION}`,
        '--agent-profile-json',
        version,
      );
    const agentId = typeof raw['agent_id'] === 'string' ? normalizeAgentId(raw['agent_id']) : null;
    if (agentId === null)
      throw invalid('agent profile agent_id must name a registered peer', '--agent-profile-json', raw['agent_id']);
    if (profiles[agentId] !== undefined)
      throw invalid(`duplicate agent profile for ${agentId}`, '--agent-profile-json', agentId);
    if (raw['executor'] !== undefined) {
      const parsed = ExecutorConfigSchema.safeParse(raw['executor']);
      if (!parsed.success)
        throw invalid(
          `agent profile ${agentId}: ${parsed.error.issues.map((i) => `${['executor', ...i.path.map(String)].join('.')}: ${i.message}`).join('; ')} (see docs/executors.md)`,
          '--agent-profile-json',
          agentId,
        );
    }
    refuseCredentials({ '--agent-profile-json': JSON.stringify(raw) });
    profiles[agentId] = { ...raw, schema_version: AGENT_PROFILE_SCHEMA_VERSION, agent_id: agentId };
  }
  return profiles;
}

/** What `--clear-registered-agents` removes with the roster: the per-agent settings would name agents no longer there. */
const CLEARED_WITH_ROSTER = [
  'registered_agents',
  'agent_model',
  'agent_profiles',
  'agent_work_modes',
  'supervisor',
  'todo_lifecycle_authority',
  'peer_task_coordination',
] as const;

/** The original's settings groups this command can change, in the order of its settings summary. */
const SETTING_GROUPS = [
  'quota',
  'orchestration',
  'write_scope',
  'registered_agents',
  'peer_task_coordination',
  'todo_lifecycle_authority',
  'agent_profiles',
  'agent_work_modes',
  'configured_agent_model',
  'supervisor',
] as const;

function settingGroup(fieldPath: string): (typeof SETTING_GROUPS)[number] {
  if (fieldPath.startsWith('quota.')) return 'quota';
  if (fieldPath.startsWith('spawn_policy.')) return 'orchestration';
  if (fieldPath === 'coordination.write_scope') return 'write_scope';
  if (fieldPath === 'coordination.registered_agents') return 'registered_agents';
  if (fieldPath === 'coordination.agent_model') return 'configured_agent_model';
  const key = fieldPath.slice('coordination.'.length) as (typeof SETTING_GROUPS)[number];
  if (fieldPath.startsWith('coordination.') && SETTING_GROUPS.includes(key)) return key;
  throw new Error(`configure-goal changed a field without a settings group: ${fieldPath}`);
}

export interface ConfigureGoalRequest {
  changes: GoalConfigChanges;
  execute: boolean;
  clock: Clock;
  env: NodeJS.ProcessEnv;
}

export interface ConfigureGoalResult extends GoalConfigDiff {
  ok: boolean;
  schema_version: 'loopx_configure_goal_v0';
  goal_id: string;
  registry: string;
  dry_run: boolean;
  /** Identifies this exact change (first 24 hex of sha256 over {goal_id, changed, changed_fields, before, after}). */
  preview_id: string;
  orchestration: { before: string; after: string };
  written: boolean;
  verified: boolean;
}

/** Previews the changes on `goal` as the operation resolved it, or with `execute` writes them (the registry re-read under its lock) and reads them back. */
export async function configureGoal(goal: GoalRef, request: ConfigureGoalRequest): Promise<ConfigureGoalResult> {
  const stored = goal.rawEntry;
  const previewGoal = structuredClone(stored);
  const preview = applyGoalConfig(previewGoal, request.changes);
  const base = {
    schema_version: 'loopx_configure_goal_v0' as const,
    goal_id: goal.goalId,
    registry: goal.registryPath,
  };
  if (!request.execute) {
    return {
      ...base,
      ok: true,
      dry_run: true,
      ...preview,
      preview_id: previewId(goal.goalId, preview),
      orchestration: {
        before: orchestrationSummary(stored['spawn_policy']),
        after: orchestrationSummary(previewGoal['spawn_policy']),
      },
      written: false,
      verified: false,
    };
  }

  let orchestrationBefore = '';
  const { written, outcome } = await updateRegistryGoal(
    goal,
    (entry) => {
      orchestrationBefore = orchestrationSummary(entry['spawn_policy']);
      const diff = applyGoalConfig(entry, request.changes);
      return { write: diff.changed, outcome: diff };
    },
    { clock: request.clock, env: request.env, operation: 'configure-goal', agentId: null },
  );

  const readback = await readBackRegistryGoal(goal);
  const verified = Object.entries(outcome.after).every(([field, value]) =>
    isDeepStrictEqual(valueAt(readback, field) ?? null, value),
  );
  return {
    ...base,
    ok: verified,
    dry_run: false,
    ...outcome,
    preview_id: previewId(goal.goalId, outcome),
    orchestration: { before: orchestrationBefore, after: orchestrationSummary(readback['spawn_policy']) },
    written,
    verified,
  };
}

function valueAt(goal: Record<string, unknown>, fieldPath: string): unknown {
  return fieldPath.split('.').reduce<unknown>((node, key) => (isRecord(node) ? node[key] : undefined), goal);
}

function previewId(goalId: string, diff: GoalConfigDiff): string {
  const payload = {
    goal_id: goalId,
    changed: diff.changed,
    changed_fields: diff.changed_fields,
    before: diff.before,
    after: diff.after,
  };
  return createHash('sha256').update(sortedCompactJson(payload)).digest('hex').slice(0, 24);
}

/** Compact JSON with object keys sorted at every level, so equal values hash equally. */
function sortedCompactJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(sortedCompactJson).join(',')}]`;
  if (isRecord(value)) {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${sortedCompactJson(value[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}
