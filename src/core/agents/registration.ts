import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { isRecord } from '../registry/schema';
import { readRegistryGoal, updateRegistryGoal } from './goalWrite';
import { AGENT_ID_RULE, normalizeAgentId, normalizeAgentIdList, registeredAgentsForGoal } from '../registry/agentIds';

/**
 * `register-agent` (docs/agents.md): adds agent ids to a goal's `coordination.registered_agents`.
 * A preview by default; with `execute`, the collision check is repeated inside the registry lock
 * (the race guard), the ids are appended, and the file is read back to verify them.
 *
 * Unlike the original this writes the located registry itself (normally the project registry)
 * and does not mirror the goal into the global registry; and an invalid id is an error naming
 * the value and the rule, where the original dropped it and answered ok with nothing changed.
 */

export interface RegisterAgentRequest {
  registryPath: string;
  goalId: string;
  /** As given; each must be a valid agent id. */
  agentIds: readonly string[];
  /** Refuse when any id is already registered (how a fresh agent claims a new identity). */
  requireNew: boolean;
  execute: boolean;
  clock: Clock;
  env: NodeJS.ProcessEnv;
}

export interface RegisterAgentResult {
  ok: boolean;
  schema_version: 'loopx_agent_registration_v0';
  goal_id: string;
  registry: string;
  agent_ids: string[];
  dry_run: boolean;
  /** Preview: whether executing would add ids. Execute: whether ids were added. */
  changed: boolean;
  written: boolean;
  verified: boolean;
  added: string[];
  already_registered: string[];
  registered_agents_before: string[];
  /** The goal's registered agents after the command (as previewed, or as read back). */
  registered_agents: string[];
  registration_readback: { verified: boolean; registered_agents: string[] } | null;
  error_kind?: 'agent_identity_already_registered';
  error?: string;
}

/**
 * Normalizes the requested ids, rejecting (never dropping) one that is not an agent id. Comma lists
 * are split, as the original's help promises (its normalizer dropped such a value whole).
 */
export function normalizeRequestedAgentIds(values: readonly string[]): string[] {
  const tokens = values.flatMap((value) => value.split(',')).map((token) => token.trim());
  if (tokens.every((token) => token === ''))
    throw new LoopxError('agent_id_invalid', 'at least one --agent-id is required', { field: 'agent_id' });
  const ids: string[] = [];
  for (const value of tokens.filter((token) => token !== '')) {
    const id = normalizeAgentId(value);
    if (id === null) {
      throw new LoopxError('agent_id_invalid', `--agent-id '${value}' is not a valid agent id: ${AGENT_ID_RULE}`, {
        field: 'agent_id',
        value,
        rule: AGENT_ID_RULE,
      });
    }
    if (!ids.includes(id)) ids.push(id);
  }
  return ids;
}

export async function registerAgent(request: RegisterAgentRequest): Promise<RegisterAgentResult> {
  const agentIds = normalizeRequestedAgentIds(request.agentIds);
  const goal = await readRegistryGoal(request.registryPath, request.goalId);
  const preview = planRegistration(goal, agentIds, request.requireNew);
  const base = {
    schema_version: 'loopx_agent_registration_v0' as const,
    goal_id: request.goalId,
    registry: request.registryPath,
    agent_ids: agentIds,
  };

  if (preview.collision !== null) return refused(base, preview, !request.execute);
  if (!request.execute) {
    return {
      ...base,
      ok: true,
      dry_run: true,
      changed: preview.added.length > 0,
      written: false,
      verified: false,
      added: preview.added,
      already_registered: preview.alreadyRegistered,
      registered_agents_before: preview.before,
      registered_agents: preview.after,
      registration_readback: null,
    };
  }

  const { written, outcome } = await updateRegistryGoal(
    request.registryPath,
    request.goalId,
    (lockedGoal) => {
      // Re-checked inside the lock: another process may have registered the same id since the preview.
      const plan = planRegistration(lockedGoal, agentIds, request.requireNew);
      if (plan.collision === null && plan.added.length > 0) appendRegisteredAgents(lockedGoal, plan.added);
      return { write: plan.collision === null && plan.added.length > 0, outcome: plan };
    },
    { clock: request.clock, env: request.env, operation: 'register-agent', agentId: agentIds[0] ?? null },
  );
  if (outcome.collision !== null) return refused(base, outcome, false);

  const readback = registeredAgentsForGoal(await readRegistryGoal(request.registryPath, request.goalId));
  const verified = agentIds.every((id) => readback.includes(id));
  return {
    ...base,
    ok: verified,
    dry_run: false,
    changed: written,
    written,
    verified,
    added: written ? outcome.added : [],
    already_registered: outcome.alreadyRegistered,
    registered_agents_before: outcome.before,
    registered_agents: readback,
    registration_readback: { verified, registered_agents: readback },
  };
}

interface RegistrationPlan {
  before: string[];
  after: string[];
  added: string[];
  alreadyRegistered: string[];
  collision: string[] | null;
}

function planRegistration(
  goal: Record<string, unknown>,
  agentIds: readonly string[],
  requireNew: boolean,
): RegistrationPlan {
  const before = registeredAgentsForGoal(goal);
  const alreadyRegistered = agentIds.filter((id) => before.includes(id));
  const added = agentIds.filter((id) => !before.includes(id));
  return {
    before,
    after: [...before, ...added],
    added,
    alreadyRegistered,
    collision: requireNew && alreadyRegistered.length > 0 ? alreadyRegistered : null,
  };
}

function refused(
  base: Pick<RegisterAgentResult, 'schema_version' | 'goal_id' | 'registry' | 'agent_ids'>,
  plan: RegistrationPlan,
  dryRun: boolean,
): RegisterAgentResult {
  const ids = plan.collision ?? [];
  return {
    ...base,
    ok: false,
    dry_run: dryRun,
    changed: false,
    written: false,
    verified: false,
    added: [],
    already_registered: plan.alreadyRegistered,
    registered_agents_before: plan.before,
    registered_agents: plan.before,
    registration_readback: null,
    error_kind: 'agent_identity_already_registered',
    // The original's words first (scripts match on them), then what to do.
    error:
      `fresh agent registration requires an unused agent id; already registered: ${ids.join(', ')} ` +
      `(goal '${base.goal_id}'); choose a new id, or take the existing identity over explicitly with loopx agent-onboard --agent-id`,
  };
}

/**
 * Appends ids to `coordination.registered_agents` (the only place written; the legacy lists stay
 * as they are) and marks the goal `agent_model: peer_v1`, as the original does.
 */
export function appendRegisteredAgents(goal: Record<string, unknown>, agentIds: readonly string[]): void {
  const coordination = isRecord(goal['coordination']) ? goal['coordination'] : (goal['coordination'] = {});
  const current = coordination['registered_agents'];
  const list = Array.isArray(current) ? current : current === undefined || current === null ? [] : [current];
  const present = normalizeAgentIdList(list);
  for (const id of agentIds) if (!present.includes(id)) list.push(id);
  coordination['registered_agents'] = list;
  coordination['agent_model'] = 'peer_v1';
}
