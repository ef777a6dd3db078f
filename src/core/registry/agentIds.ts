import { LoopxError } from '../errors';

/**
 * Agent identity (docs/agents.md#agent-ids): the public-safe token that names one peer agent lane, the
 * registered roster of a goal, agent profiles, and the identity gate that decides whether an
 * agent may activate its host loop for a goal.
 */

/** A goal entry of the registry, as read: unknown fields are kept and nothing is trusted. */
export type GoalRecord = Readonly<Record<string, unknown>>;

const AGENT_ID_PATTERN = /^[a-z][a-z0-9_.:@-]{0,79}$/;

/** The rule an agent id must follow, worded for error messages. */
export const AGENT_ID_RULE =
  'an agent id starts with a letter a-z and has at most 80 characters from a-z, 0-9, "_", ".", ":", "@" and "-" (it is lowercased and spaces become "-")';

/**
 * Normalizes an agent id: trim, collapse whitespace runs, lowercase, spaces to `-`, then accept
 * only `[a-z][a-z0-9_.:@-]{0,79}`. Anything else, including every non-string, gives null. The
 * original stringified its input, so `true` became the id "true"; booleans and numbers are not
 * ids here.
 */
export function normalizeAgentId(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const candidate = value.trim().replace(/\s+/g, ' ').toLowerCase().replace(/ /g, '-');
  return AGENT_ID_PATTERN.test(candidate) ? candidate : null;
}

/** Why a value is not an agent id, or null when it is one. */
export function agentIdProblem(value: unknown): string | null {
  if (typeof value !== 'string')
    return `expected a string, got ${value === null ? 'null' : typeof value}; ${AGENT_ID_RULE}`;
  if (value.trim() === '') return `the agent id is empty; ${AGENT_ID_RULE}`;
  return normalizeAgentId(value) === null ? AGENT_ID_RULE : null;
}

/**
 * Normalizes a list of agent references: null gives [], a single value is wrapped, an object
 * contributes its `id`, else `agent_id`, else `name`. Invalid entries are dropped and duplicates
 * removed in first-seen order. Commas are not split here.
 */
export function normalizeAgentIdList(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const entries = Array.isArray(value) ? value : [value];
  // A Set keeps the first-seen order and makes the duplicate check constant time (a goal may list 50,000 agents).
  const ids = new Set<string>();
  for (const entry of entries) {
    const id = normalizeAgentId(isPlainObject(entry) ? agentReferenceOf(entry) : entry);
    if (id !== null) ids.add(id);
  }
  return [...ids];
}

function agentReferenceOf(entry: Readonly<Record<string, unknown>>): unknown {
  for (const key of ['id', 'agent_id', 'name']) {
    const value = entry[key];
    if (value !== undefined && value !== null && value !== '') return value;
  }
  return null;
}

/** Membership in a roster: a Set once the roster is long enough for a scan to cost more than building it. */
export function registeredLookup(registered: readonly string[]): (agentId: string) => boolean {
  if (registered.length <= 16) return (agentId) => registered.includes(agentId);
  const set = new Set(registered);
  return (agentId) => set.has(agentId);
}

/**
 * The registered agents of a goal: the ordered union of `coordination.registered_agents`, the
 * legacy top-level `registered_agents` and the legacy `spawn_policy.registered_agents`. The legacy
 * places are read here and never written anywhere.
 */
export function registeredAgentsForGoal(goal: GoalRecord): string[] {
  const coordination = objectField(goal, 'coordination');
  const spawnPolicy = objectField(goal, 'spawn_policy');
  const union = new Set<string>();
  for (const source of [
    coordination['registered_agents'],
    goal['registered_agents'],
    spawnPolicy['registered_agents'],
  ]) {
    for (const id of normalizeAgentIdList(source)) union.add(id);
  }
  return [...union];
}

/**
 * The profile of one agent from `coordination.agent_profiles`. A dict is looked up by the exact
 * normalized key (so keys that are not normalized cannot be reached, as in the original); a list
 * matches its first object whose `agent_id`, `id` or `name` normalizes to the query. The result
 * is a copy with `agent_id` set.
 */
export function agentProfileForGoal(goal: GoalRecord, query: unknown): Record<string, unknown> | null {
  const agentId = normalizeAgentId(query);
  if (agentId === null) return null;
  const profiles = objectField(goal, 'coordination')['agent_profiles'];
  if (Array.isArray(profiles)) {
    const match = profiles.find(
      (profile): profile is Record<string, unknown> =>
        isPlainObject(profile) && ['agent_id', 'id', 'name'].some((key) => normalizeAgentId(profile[key]) === agentId),
    );
    return match ? { ...match, agent_id: agentId } : null;
  }
  if (isPlainObject(profiles) && Object.hasOwn(profiles, agentId)) {
    const profile = profiles[agentId];
    return isPlainObject(profile) ? { ...profile, agent_id: agentId } : { agent_id: agentId };
  }
  return null;
}

export interface RequireRegisteredOptions {
  /** The field name used in messages, as in the original: `claimed_by` by default. */
  field?: string;
  /** Prefix of the error codes, so a subsystem can keep its own (`quota_` gives `quota_agent_not_registered`). */
  codePrefix?: 'quota_' | 'refresh_';
}

/**
 * Returns the normalized id when it is registered for the goal, else throws with the original's
 * texts: `agent_id_invalid`, `agent_registry_roster_missing` or `agent_not_registered` (each
 * code prefixed by `codePrefix`).
 */
export function requireRegisteredAgent(
  goal: GoalRecord,
  value: unknown,
  options: RequireRegisteredOptions = {},
): string {
  const field = options.field ?? 'claimed_by';
  const prefix = options.codePrefix ?? '';
  const goalId = goalIdOf(goal);
  const agentId = normalizeAgentId(value);
  if (agentId === null) {
    throw new LoopxError(`${prefix}agent_id_invalid`, `${field} must be a public-safe registered agent id`, {
      field,
      value: typeof value === 'string' ? value : String(value),
      rule: AGENT_ID_RULE,
      goal_id: goalId,
    });
  }
  const registered = registeredAgentsForGoal(goal);
  if (registered.length === 0) {
    throw new LoopxError(
      `${prefix}agent_registry_roster_missing`,
      `${field}='${agentId}' cannot be used because goal '${goalId}' has no coordination.registered_agents list. ` +
        `Register this peer identity first: loopx configure-goal --goal-id ${goalId} --registered-agent ${agentId} --execute`,
      { field, agent_id: agentId, goal_id: goalId },
    );
  }
  if (!registered.includes(agentId)) {
    throw new LoopxError(
      `${prefix}agent_not_registered`,
      `${field}='${agentId}' is not registered for goal '${goalId}'; registered_agents=${registered.join(', ')}`,
      { field, agent_id: agentId, goal_id: goalId, registered_agents: registered },
    );
  }
  return agentId;
}

// ---------------------------------------------------------------------------------------------
// Thread bindings

/** What the host thread says about the agent lane it belongs to. */
export type ThreadBinding =
  | { status: 'bound'; agent_id: string; thread_id: string }
  | { status: 'conflict'; agent_ids: string[]; thread_id: string }
  | { status: 'missing'; thread_id: string };

/**
 * Resolves `coordination.thread_agent_bindings[]{thread_id, host_surface, agent_id}` for one
 * thread: no entry is `missing`, one distinct agent is `bound`, several are a `conflict`. When a
 * host surface is given, bindings for other surfaces are ignored. Returns null without a thread id.
 */
export function resolveThreadBinding(
  goal: GoalRecord,
  threadId: string | null | undefined,
  hostSurface?: string | null,
): ThreadBinding | null {
  const thread = threadId?.trim() ?? '';
  if (thread === '') return null;
  const bindings = objectField(goal, 'coordination')['thread_agent_bindings'];
  const agents: string[] = [];
  for (const binding of Array.isArray(bindings) ? bindings : []) {
    if (!isPlainObject(binding) || String(binding['thread_id'] ?? '').trim() !== thread) continue;
    const surface = typeof binding['host_surface'] === 'string' ? binding['host_surface'].trim() : '';
    if (hostSurface && surface !== '' && surface !== hostSurface) continue;
    // An unusable agent id still counts as a binding, so it surfaces as an invalid binding instead of vanishing.
    const agent = normalizeAgentId(binding['agent_id']) ?? String(binding['agent_id'] ?? '');
    if (!agents.includes(agent)) agents.push(agent);
  }
  const [only] = agents;
  if (only === undefined) return { status: 'missing', thread_id: thread };
  if (agents.length === 1) return { status: 'bound', agent_id: only, thread_id: thread };
  return { status: 'conflict', agent_ids: agents, thread_id: thread };
}

// ---------------------------------------------------------------------------------------------
// Identity gate

export type IdentityGateStatus =
  | 'thread_binding_conflict'
  | 'thread_binding_invalid'
  | 'explicit_agent_selected'
  | 'thread_binding_selected'
  | 'thread_binding_selection_required'
  | 'fresh_agent_registration_required'
  | 'invalid_selection'
  | 'legacy_unscoped'
  | 'single_registered_agent_selected'
  | 'selected'
  | 'selection_required';

export interface IdentityGateInput {
  goalId: string;
  registeredAgents: readonly string[];
  /** The id the agent asked for, as given (normalized here). */
  requestedAgentId?: unknown;
  /** Onboarding default: an agent without an id registers a fresh identity instead of taking one over. */
  freshAgentDefault?: boolean;
  threadBinding?: ThreadBinding | null;
}

export interface TakeoverChoice {
  action: 'takeover_existing_agent';
  agent_id: string;
  requires_explicit_takeover_intent: true;
}

export interface FreshAgentRegistration {
  agent_id: string | null;
  preview_command: string;
  execute_command: string;
  continuation_contract: { requires_true: string[]; description: string };
}

export interface IdentitySelectionGate {
  status: IdentityGateStatus;
  reason: string;
  default_action: 'register_fresh_agent' | 'select_registered_agent';
  choices: TakeoverChoice[];
  /** The original leaves this null: activation resumes only through an explicit re-run with `--agent-id`. */
  activation_input_command: null;
  fresh_agent_registration?: FreshAgentRegistration;
}

export interface IdentityGateResult {
  status: IdentityGateStatus;
  activation_allowed: boolean;
  /** The agent lane that may act, when activation is allowed (or when a legacy goal accepts any id). */
  agent_id: string | null;
  requested_agent_id: string | null;
  registered_agents: string[];
  reason: string;
  /** Present (non-null) exactly when activation is denied. */
  identity_selection_gate: IdentitySelectionGate | null;
}

const NEW_AGENT_PLACEHOLDER = '<new-public-safe-agent-id>';

/** The fields of a `register-agent --execute` result that must all be true before an agent continues. */
export const REGISTRATION_CONTINUATION_FIELDS = ['ok', 'changed', 'written', 'verified'] as const;

/**
 * The identity gate (docs/agents.md#the-identity-gate). The first matching rule wins; activation is allowed only for
 * `explicit_agent_selected`, `thread_binding_selected`, `legacy_unscoped`,
 * `single_registered_agent_selected` and `selected`. A requested id that is not a valid agent id
 * is an `invalid_selection` (the original treated it as no id at all).
 */
export function evaluateIdentityGate(input: IdentityGateInput): IdentityGateResult {
  const registered = [...input.registeredAgents];
  const fresh = input.freshAgentDefault === true;
  const rawRequested = typeof input.requestedAgentId === 'string' ? input.requestedAgentId.trim() : '';
  const requested = normalizeAgentId(input.requestedAgentId);
  const requestedInvalid = rawRequested !== '' && requested === null;
  const binding = input.threadBinding ?? null;
  const isRegistered = (id: string | null): id is string => id !== null && registered.includes(id);

  const allow = (status: IdentityGateStatus, agentId: string | null, reason: string): IdentityGateResult => ({
    status,
    activation_allowed: true,
    agent_id: agentId,
    requested_agent_id: requested ?? (rawRequested || null),
    registered_agents: registered,
    reason,
    identity_selection_gate: null,
  });
  const deny = (status: IdentityGateStatus, reason: string): IdentityGateResult => {
    const gate: IdentitySelectionGate = {
      status,
      reason,
      default_action: fresh ? 'register_fresh_agent' : 'select_registered_agent',
      choices: registered.map((agentId) => ({
        action: 'takeover_existing_agent',
        agent_id: agentId,
        requires_explicit_takeover_intent: true,
      })),
      activation_input_command: null,
    };
    if (fresh) gate.fresh_agent_registration = freshRegistration(input.goalId, requestedInvalid ? null : requested);
    return {
      status,
      activation_allowed: false,
      agent_id: null,
      requested_agent_id: requested ?? (rawRequested || null),
      registered_agents: registered,
      reason,
      identity_selection_gate: gate,
    };
  };

  if (requestedInvalid)
    return deny(
      'invalid_selection',
      `requested agent id '${rawRequested}' is not a public-safe agent id: ${AGENT_ID_RULE}`,
    );
  if (binding?.status === 'conflict') {
    return deny(
      'thread_binding_conflict',
      `thread '${binding.thread_id}' is bound to several agents (${binding.agent_ids.join(', ')}); pass --agent-id to choose one`,
    );
  }
  if (binding?.status === 'bound') {
    if (!isRegistered(binding.agent_id)) {
      return deny(
        'thread_binding_invalid',
        `thread '${binding.thread_id}' is bound to '${binding.agent_id}', which is not registered for goal '${input.goalId}'`,
      );
    }
    if (requested !== null && requested !== binding.agent_id) {
      return isRegistered(requested)
        ? allow(
            'explicit_agent_selected',
            requested,
            `explicit --agent-id '${requested}' overrides the thread binding to '${binding.agent_id}'`,
          )
        : deny('invalid_selection', `'${requested}' is not registered for goal '${input.goalId}'`);
    }
    return allow(
      'thread_binding_selected',
      binding.agent_id,
      `thread '${binding.thread_id}' is bound to '${binding.agent_id}'`,
    );
  }
  if (binding?.status === 'missing' && requested === null && !fresh) {
    return deny(
      'thread_binding_selection_required',
      `thread '${binding.thread_id}' has no agent binding; pass --agent-id with a registered agent`,
    );
  }
  if (fresh && requested === null) {
    return deny(
      'fresh_agent_registration_required',
      'a new agent registers its own fresh identity; taking over a registered agent needs an explicit --agent-id',
    );
  }
  if (fresh && !isRegistered(requested)) {
    return deny('invalid_selection', `'${requested}' is not registered for goal '${input.goalId}'; register it first`);
  }
  if (registered.length === 0)
    return allow(
      'legacy_unscoped',
      requested,
      `goal '${input.goalId}' has no registered agents; any agent id is accepted`,
    );
  const [single] = registered;
  if (requested === null && registered.length === 1 && single !== undefined) {
    return allow('single_registered_agent_selected', single, `'${single}' is the only registered agent`);
  }
  if (isRegistered(requested))
    return allow('selected', requested, `'${requested}' is registered for goal '${input.goalId}'`);
  return requested !== null
    ? deny(
        'invalid_selection',
        `'${requested}' is not registered for goal '${input.goalId}'; registered_agents=${registered.join(', ')}`,
      )
    : deny(
        'selection_required',
        `goal '${input.goalId}' has ${registered.length} registered agents; pass --agent-id to choose one`,
      );
}

function freshRegistration(goalId: string, agentId: string | null): FreshAgentRegistration {
  const preview = `loopx register-agent --goal-id ${shellWord(goalId)} --agent-id ${shellWord(agentId ?? NEW_AGENT_PLACEHOLDER)} --require-new`;
  return {
    agent_id: agentId,
    preview_command: preview,
    execute_command: `${preview} --execute`,
    continuation_contract: {
      requires_true: [...REGISTRATION_CONTINUATION_FIELDS],
      description:
        'continue only when the register-agent --execute result has ok, changed, written and verified all true',
    },
  };
}

/** Quotes a word for a POSIX shell only when it needs quoting. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:@=+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

// ---------------------------------------------------------------------------------------------

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectField(record: Readonly<Record<string, unknown>>, key: string): Readonly<Record<string, unknown>> {
  const value = record[key];
  return isPlainObject(value) ? value : {};
}

function goalIdOf(goal: GoalRecord): string {
  const id = goal['id'];
  return typeof id === 'string' || typeof id === 'number' ? String(id) : '';
}

/** The goal's `coordination.write_scope` globs (relative to its repo); non-strings are skipped, [] when unset. */
export function writeScopeForGoal(goal: GoalRecord): string[] {
  const scope = objectField(goal, 'coordination')['write_scope'];
  return Array.isArray(scope) ? scope.filter((s): s is string => typeof s === 'string' && s.trim() !== '') : [];
}
