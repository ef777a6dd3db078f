import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { refuseCredentials } from '../privacy/refuse';
import { isRecord } from '../registry/schema';
import { readRegistryGoal, updateRegistryGoal } from './goalWrite';
import { AGENT_ID_RULE, normalizeAgentId } from '../registry/agentIds';
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
  if (Object.keys(changes).length === 0) {
    throw invalid(
      'nothing to configure: pass at least one of --quota-compute, --quota-window-hours, --registered-agent, --clear-registered-agents, --write-scope, --spawn-allowed/--no-spawn-allowed, --max-children, --explore-harness/--no-explore-harness, --explore-harness-profile',
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
  registryPath: string;
  goalId: string;
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

export async function configureGoal(request: ConfigureGoalRequest): Promise<ConfigureGoalResult> {
  const stored = await readRegistryGoal(request.registryPath, request.goalId);
  const previewGoal = structuredClone(stored);
  const preview = applyGoalConfig(previewGoal, request.changes);
  const base = {
    schema_version: 'loopx_configure_goal_v0' as const,
    goal_id: request.goalId,
    registry: request.registryPath,
  };
  if (!request.execute) {
    return {
      ...base,
      ok: true,
      dry_run: true,
      ...preview,
      preview_id: previewId(request.goalId, preview),
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
    request.registryPath,
    request.goalId,
    (goal) => {
      orchestrationBefore = orchestrationSummary(goal['spawn_policy']);
      const diff = applyGoalConfig(goal, request.changes);
      return { write: diff.changed, outcome: diff };
    },
    { clock: request.clock, env: request.env, operation: 'configure-goal', agentId: null },
  );

  const readback = await readRegistryGoal(request.registryPath, request.goalId);
  const verified = Object.entries(outcome.after).every(([field, value]) =>
    isDeepStrictEqual(valueAt(readback, field) ?? null, value),
  );
  return {
    ...base,
    ok: verified,
    dry_run: false,
    ...outcome,
    preview_id: previewId(request.goalId, outcome),
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
