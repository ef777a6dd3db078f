import * as path from 'node:path';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { syncGlobalRegistry } from '../globalRegistry/sync';
import type { GoalRef, RegistryPlace } from '../registry/goalRef';
import {
  globalEntrySourcedFrom,
  readBackGoalIn,
  readBackRegistryGoal,
  updateRegistryGoal,
} from '../registry/goalWrite';
import { isRecord } from '../registry/schema';
import { AGENT_ID_RULE, normalizeAgentId, normalizeAgentIdList, registeredAgentsForGoal } from '../registry/agentIds';

/**
 * `register-agent` (docs/agents.md): adds agent ids to a goal's `coordination.registered_agents`.
 * A preview by default; with `execute`, the collision check is repeated inside the registry lock
 * (the race guard), the ids are appended, and the file is read back to verify them.
 *
 * The operation resolves the goal (ops/registerAgent.ts): by the original's route (the CLI's default) in
 * the registry the global registry's `source_registry` names, the goal then synced back into the global
 * registry; or in a registry given directly (the editor's workspace registry, the CLI's
 * `--project-registry`), the global entry synced too when it comes from that registry.
 * Unlike the original an invalid id is an error naming the value and the rule, where the original
 * dropped it and answered ok.
 */

export interface RegisterAgentRequest {
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
  registration_readback: RegistrationReadback | null;
  /** The global registry this registration went through, or synced (null: none involved). */
  global_registry: string | null;
  /** The registry written (the global entry's `source_registry`, or the registry given). */
  source_registry: string;
  /** The sync of this goal back into the global registry after a write. */
  global_sync: { enabled: boolean; wrote: boolean; action: string | null };
  /** Why `ok` is false: always a code and a message together. */
  error_kind?: RegistrationErrorCode;
  error_code?: RegistrationErrorCode;
  error?: string;
}

export type RegistrationErrorCode = 'agent_identity_already_registered' | 'agent_registration_unverified';

export interface RegistrationReadback {
  verified: boolean;
  /** As read back from the registry written. */
  registered_agents: string[];
  /** As read back from the global registry after the sync (null: no global registry involved). */
  global_registered_agents: string[] | null;
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

/** How a registration written directly relates to the global registry (located by the operation). */
export interface GlobalSyncTarget {
  global: RegistryPlace;
  /** Sync even when the global entry does not name this registry (the global route itself). */
  always?: boolean;
}

/**
 * Previews the registration on `goal` as the operation resolved it (the located registry, or the source
 * registry the global one names), or with `execute` writes it (the collision check repeated under the
 * registry lock), syncs the goal into the global registry when it comes from there, and reads both back.
 */
export async function registerAgent(
  goal: GoalRef,
  request: RegisterAgentRequest,
  globalTarget?: GlobalSyncTarget,
): Promise<RegisterAgentResult> {
  const agentIds = normalizeRequestedAgentIds(request.agentIds);
  const preview = planRegistration(goal.rawEntry, agentIds, request.requireNew);
  const base = {
    schema_version: 'loopx_agent_registration_v0' as const,
    goal_id: goal.goalId,
    registry: goal.registryPath,
    agent_ids: agentIds,
    source_registry: goal.registryPath,
    global_registry: globalTarget?.always === true ? globalTarget.global.registryPath : null,
    global_sync: { enabled: request.execute && globalTarget?.always === true, wrote: false, action: null },
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
    goal,
    (lockedGoal) => {
      // Re-checked inside the lock: another process may have registered the same id since the preview.
      const plan = planRegistration(lockedGoal, agentIds, request.requireNew);
      if (plan.collision === null && plan.added.length > 0) appendRegisteredAgents(lockedGoal, plan.added);
      return { write: plan.collision === null && plan.added.length > 0, outcome: plan };
    },
    { clock: request.clock, env: request.env, operation: 'register-agent', agentId: agentIds[0] ?? null },
  );
  if (outcome.collision !== null) return refused(base, outcome, false);

  let globalRegistry = base.global_registry;
  let globalSync: RegisterAgentResult['global_sync'] = base.global_sync;
  const syncBack =
    written &&
    globalTarget !== undefined &&
    (globalTarget.always === true || (await globalEntrySourcedFrom(globalTarget.global, goal)));
  if (syncBack) {
    // The original syncs the one goal back into the global registry that named its source; the sync reads
    // the project goal inside the global lock, so of two racing registrations the later state wins there too.
    const sync = await syncGlobalRegistry({
      projectRegistryPath: goal.registryPath,
      globalRegistryPath: globalTarget.global.registryPath,
      goalIds: [goal.goalId],
      allowRouteReplacement: false,
      dryRun: false,
      clock: request.clock,
      runtimeRoot: path.dirname(path.resolve(globalTarget.global.registryPath)),
      lock: { env: request.env, agentId: agentIds[0] ?? null },
    });
    globalRegistry = globalTarget.global.registryPath;
    globalSync = { enabled: true, wrote: sync.written, action: sync.goals[0]?.action ?? null };
  }

  const readback = registeredAgentsForGoal(await readBackRegistryGoal(goal));
  const globalReadback =
    globalRegistry === null || !written || globalTarget === undefined
      ? null
      : registeredAgentsForGoal(await readBackGoalIn(globalTarget.global, goal.goalId));
  // Our ids must be in both. The two lists may differ by a registration running at the same time
  // (its write is in the project registry, its sync not yet in the global one): that is not ours to verify.
  const missing = agentIds.filter((id) => !readback.includes(id));
  const missingGlobal = globalReadback === null ? [] : agentIds.filter((id) => !globalReadback.includes(id));
  const verified = missing.length === 0 && missingGlobal.length === 0;
  const unverified = verified
    ? {}
    : {
        error_kind: 'agent_registration_unverified' as const,
        error_code: 'agent_registration_unverified' as const,
        error: [
          missing.length > 0 ? `${missing.join(', ')} not found in ${goal.registryPath} after the write` : '',
          missingGlobal.length > 0
            ? `${missingGlobal.join(', ')} not found in the global registry ${globalRegistry ?? ''} after the sync`
            : '',
        ]
          .filter((part) => part !== '')
          .join('; ')
          .concat('; another process may have rewritten it meanwhile: run the same register-agent again'),
      };
  return {
    ...base,
    global_registry: globalRegistry,
    global_sync: globalSync,
    ok: verified,
    dry_run: false,
    changed: written,
    written,
    verified,
    added: written ? outcome.added : [],
    already_registered: outcome.alreadyRegistered,
    registered_agents_before: outcome.before,
    registered_agents: readback,
    registration_readback: { verified, registered_agents: readback, global_registered_agents: globalReadback },
    ...unverified,
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
  base: Pick<
    RegisterAgentResult,
    'schema_version' | 'goal_id' | 'registry' | 'agent_ids' | 'source_registry' | 'global_registry' | 'global_sync'
  >,
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
    error_code: 'agent_identity_already_registered',
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
