import * as fs from 'node:fs';
import * as path from 'node:path';
import { isLoopxError, errorMessage } from '../errors';
import { slugify } from '../registry/goalId';
import { resolveStateFile } from '../registry/locate';
import { findRawRegistryGoal } from '../registry/read';
import { isRecord } from '../registry/schema';
import type { AgentTypeEntry } from './agentTypes';
import {
  evaluateIdentityGate,
  registeredAgentsForGoal,
  shellWord,
  type IdentityGateResult,
  type IdentitySelectionGate,
} from '../registry/agentIds';

/**
 * Read-only onboarding (docs/agents.md): tells an agent of a given type where a project stands, which
 * identity it may use, and the exact commands to run next. It never writes anything, not even a
 * registry for a project that has none. A registry it cannot parse is reported as
 * `registry_invalid` with the file, line and column (the original crashed there; docs/agents.md).
 */

export type ProjectConnectionStatus =
  | 'not_connected'
  | 'registry_invalid'
  | 'registry_without_goal'
  | 'registry_goal_missing_state_file'
  | 'state_file_missing'
  | 'connected';

export interface ProjectConnection {
  status: ProjectConnectionStatus;
  registry: string;
  registry_exists: boolean;
  goal_found: boolean;
  state_file: string | null;
  state_file_exists: boolean;
  /** Goal ids the registry does hold, when the requested one is not among them. */
  available_goal_ids?: string[];
  error?: { code: string; message: string; line?: number; column?: number };
}

export interface OnboardingRequest {
  agentType: AgentTypeEntry;
  /** Absolute project directory. */
  project: string;
  /** The registry to inspect (normally `<project>/.loopx/registry.json`), as the operation read it. */
  registry: ProjectRegistryRead;
  goalId?: string | undefined;
  agentId?: string | undefined;
  homeDir: string;
}

export interface OnboardingCommands {
  connect: string | null;
  register_agent_preview: string | null;
  register_agent_execute: string | null;
  /** Re-run onboarding as one registered agent: an explicit takeover of that identity. */
  takeover_existing_agent: string | null;
  status: string;
  /** The first command of every turn; null until activation is allowed. */
  quota_guard: string | null;
}

export interface OnboardingPacket {
  ok: true;
  schema_version: 'loopx_agent_onboarding_v0';
  agent_type: string;
  project: string;
  goal_id: string;
  goal_id_source: 'argument' | 'project_directory';
  agent_id: string | null;
  requested_agent_id: string | null;
  identity_status: IdentityGateResult['status'];
  identity_selection_gate: IdentitySelectionGate | null;
  project_connection: ProjectConnection;
  host_loop_activation: { allowed: boolean; blocked_by: string[]; host_kind: AgentTypeEntry['host_kind']; how: string };
  recommended_start: { step: string; command: string | null; reason: string };
  commands: OnboardingCommands;
  writes_now: false;
}

/**
 * The goal id onboarding assumes for a project: its directory name slugified (lowercase, runs of
 * other characters become `-`) plus `-goal`; `project-goal` when nothing is left of the name
 * (the original produced `project-goal-goal` there).
 */
export function inferGoalId(projectDir: string): string {
  const slug = slugify(path.basename(path.resolve(projectDir)));
  return slug === '' ? 'project-goal' : `${slug}-goal`;
}

/**
 * A project's registry as the operation read it (once): absent, read, or unreadable with the error its
 * read threw. Onboarding classifies all three; it never fails on a bad registry.
 */
export type ProjectRegistryRead = { path: string } & (
  { exists: false } | { exists: true; document: Record<string, unknown> } | { exists: true; error: unknown }
);

/** Classifies how far a project is connected to LoopX for one goal (of the registry as read); never throws on a bad registry. */
export function inspectProjectConnection(
  read: ProjectRegistryRead,
  goalId: string,
  homeDir: string,
): { connection: ProjectConnection; goal: Record<string, unknown> | null } {
  const registryPath = read.path;
  const connection: ProjectConnection = {
    status: 'not_connected',
    registry: registryPath,
    registry_exists: read.exists,
    goal_found: false,
    state_file: null,
    state_file_exists: false,
  };
  if (!read.exists) return { connection, goal: null };

  if ('error' in read) {
    const error = read.error;
    const details = isLoopxError(error) ? error.details : {};
    connection.status = 'registry_invalid';
    connection.error = {
      code: isLoopxError(error) ? error.code : 'registry_unreadable',
      message: errorMessage(error),
      ...(typeof details['line'] === 'number' ? { line: details['line'] } : {}),
      ...(typeof details['column'] === 'number' ? { column: details['column'] } : {}),
    };
    return { connection, goal: null };
  }
  const registry = read.document;
  const goals = registry['goals'];
  if (
    goals !== undefined &&
    goals !== null &&
    !Array.isArray(goals) &&
    !(isRecord(goals) && Object.keys(goals).length === 0)
  ) {
    connection.status = 'registry_invalid';
    connection.error = { code: 'registry_goals_not_list', message: `${registryPath}: goals must be a list` };
    return { connection, goal: null };
  }

  const goal = findRawRegistryGoal(registry, goalId) ?? null;
  if (goal === null) {
    connection.status = 'registry_without_goal';
    connection.available_goal_ids = (Array.isArray(goals) ? goals : [])
      .map((entry) =>
        isRecord(entry) && (typeof entry['id'] === 'string' || typeof entry['id'] === 'number')
          ? String(entry['id'])
          : '',
      )
      .filter((id) => id !== '');
    return { connection, goal: null };
  }
  connection.goal_found = true;
  connection.state_file = resolveStateFile(goal, homeDir);
  if (connection.state_file === null) {
    connection.status = 'registry_goal_missing_state_file';
    return { connection, goal };
  }
  connection.state_file_exists = fs.existsSync(connection.state_file);
  connection.status = connection.state_file_exists ? 'connected' : 'state_file_missing';
  return { connection, goal };
}

const HOW_BY_HOST_KIND: Readonly<Record<AgentTypeEntry['host_kind'], string>> = {
  vscode:
    'The LoopX extension runs each turn with a VS Code language model; run the quota guard, do one bounded todo, write back, then spend the slot.',
  cli: 'Run each turn as one process: run the quota guard, do one bounded todo, write back, then spend the slot.',
  desktop_app:
    'Schedule a recurring host task that runs the quota guard before each bounded turn and stops when it says to skip.',
  ide_plugin:
    'Schedule a recurring host task that runs the quota guard before each bounded turn and stops when it says to skip.',
  managed_service:
    'Configure the managed agent to run the quota guard before each bounded turn and to stop when it says to skip.',
  manual: 'Before each bounded piece of work, run the quota guard by hand and follow its decision.',
  generic:
    'Before each bounded turn, run the quota guard and follow its decision; write back before spending the slot.',
};

/** Builds the onboarding packet from the registry as read (and checks the state file exists); writes nothing. */
export async function buildOnboardingPacket(request: OnboardingRequest): Promise<OnboardingPacket> {
  const explicitGoalId = request.goalId?.trim() ?? '';
  const goalId = explicitGoalId !== '' ? explicitGoalId : inferGoalId(request.project);
  const { connection, goal } = inspectProjectConnection(request.registry, goalId, request.homeDir);
  const identity = evaluateIdentityGate({
    goalId,
    registeredAgents: goal === null ? [] : registeredAgentsForGoal(goal),
    requestedAgentId: request.agentId,
    freshAgentDefault: true,
  });

  const connected = connection.status === 'connected';
  const activationAllowed = connected && identity.activation_allowed;
  const agentType = request.agentType.agent_type;
  const projectWord = shellWord(request.project);
  const goalWord = shellWord(goalId);
  const agentArg = identity.agent_id === null ? '' : ` --agent-id ${shellWord(identity.agent_id)}`;
  const fresh = identity.identity_selection_gate?.fresh_agent_registration;
  const commands: OnboardingCommands = {
    connect:
      connection.status === 'connected' || connection.status === 'registry_invalid'
        ? null
        : `loopx bootstrap --project ${projectWord} --goal-id ${goalWord} --objective '<goal text>'`,
    register_agent_preview: fresh?.preview_command ?? null,
    register_agent_execute: fresh?.execute_command ?? null,
    takeover_existing_agent:
      identity.identity_selection_gate && identity.identity_selection_gate.choices.length > 0
        ? `loopx agent-onboard --agent-type ${agentType} --project ${projectWord} --goal-id ${goalWord} --agent-id '<registered-agent-id>'`
        : null,
    status: `loopx status --goal-id ${goalWord}${agentArg}`,
    quota_guard: activationAllowed ? `loopx quota should-run --goal-id ${goalWord}${agentArg}` : null,
  };

  const blockedBy: string[] = [];
  if (!connected) blockedBy.push(`project_connection:${connection.status}`);
  if (!identity.activation_allowed) blockedBy.push(`identity:${identity.status}`);

  return {
    ok: true,
    schema_version: 'loopx_agent_onboarding_v0',
    agent_type: agentType,
    project: request.project,
    goal_id: goalId,
    goal_id_source: explicitGoalId !== '' ? 'argument' : 'project_directory',
    agent_id: identity.agent_id,
    requested_agent_id: identity.requested_agent_id,
    identity_status: identity.status,
    identity_selection_gate: identity.identity_selection_gate,
    project_connection: connection,
    host_loop_activation: {
      allowed: activationAllowed,
      blocked_by: blockedBy,
      host_kind: request.agentType.host_kind,
      how: HOW_BY_HOST_KIND[request.agentType.host_kind],
    },
    recommended_start: recommendedStart(goalId, connection, identity, commands),
    commands,
    writes_now: false,
  };
}

function recommendedStart(
  goalId: string,
  connection: ProjectConnection,
  identity: IdentityGateResult,
  commands: OnboardingCommands,
): OnboardingPacket['recommended_start'] {
  switch (connection.status) {
    case 'registry_invalid':
      return {
        step: 'repair_registry',
        command: null,
        reason: `${connection.error?.message ?? 'the registry cannot be read'} Onboarding did not change it.`,
      };
    case 'not_connected':
      return { step: 'connect_project', command: commands.connect, reason: 'the project has no LoopX registry yet' };
    case 'registry_without_goal':
      return { step: 'connect_goal', command: commands.connect, reason: `the registry has no goal '${goalId}'` };
    case 'registry_goal_missing_state_file':
    case 'state_file_missing':
      return {
        step: 'create_state_file',
        command: commands.connect,
        reason:
          connection.status === 'state_file_missing'
            ? 'the goal state file does not exist yet'
            : 'the goal has no state_file',
      };
    case 'connected':
      break;
  }
  if (!identity.activation_allowed) {
    const register = commands.register_agent_preview;
    return register !== null
      ? { step: 'register_fresh_agent', command: register, reason: identity.reason }
      : { step: 'select_agent', command: commands.takeover_existing_agent, reason: identity.reason };
  }
  return { step: 'start_host_loop', command: commands.quota_guard, reason: identity.reason };
}
