import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../clock';
import { LoopxError } from '../errors';
import { EXECUTOR_PRESETS, ExecutorConfigSchema } from '../executors/config';
import { refuseCredentials } from '../privacy/refuse';
import { normalizeAgentId } from '../registry/agentIds';
import { isRecord } from '../registry/schema';
import type { GoalRef } from '../registry/goalRef';
import { readBackRegistryGoal, updateRegistryGoal } from '../registry/goalWrite';

/**
 * "Configure agent": writes one agent's `coordination.agent_profiles.<agent id>.executor` from a few
 * plain choices (preset, command, model, permission mode, timeout, variables to pass, resume), so no
 * one edits JSON to connect Claude Code or Codex. The executor is built here and checked by the
 * executor schema (`src/core/executors/config.ts`) before anything is written; the write re-reads the
 * registry under its lock and is atomic (`updateRegistryGoal`). "Remove agent" takes an agent off a
 * goal: its registered id, its profile and its work mode.
 */

/** Every preset this operation knows; one the executor schema of this build does not accept is refused by it. */
export const AGENT_PRESETS = ['claude-code', 'codex', 'opencode', 'command', 'vscode-lm', 'demo'] as const;
export type AgentPreset = (typeof AGENT_PRESETS)[number];

export const RESUME_POLICIES = ['auto', 'never'] as const;
export type ResumePolicy = (typeof RESUME_POLICIES)[number];

/** The permission modes each preset takes, and the flag that carries one. */
export const PERMISSION_MODES: Readonly<Partial<Record<AgentPreset, { flag: string; modes: readonly string[] }>>> = {
  'claude-code': {
    flag: '--permission-mode',
    modes: ['acceptEdits', 'bypassPermissions', 'default', 'dontAsk', 'plan'],
  },
  codex: { flag: '--sandbox', modes: ['read-only', 'workspace-write', 'danger-full-access'] },
};

/** The presets whose model is chosen with `--model <name>` on their command line. */
const MODEL_FLAG_PRESETS: readonly AgentPreset[] = ['claude-code', 'codex', 'opencode', 'command'];

/** The executor fields this operation decides; the others of an existing executor (cost estimates, output cap) are kept. */
const OWNED_FIELDS = [
  'preset',
  'kind',
  'command',
  'args',
  'timeout_minutes',
  'env_allowlist',
  'resume',
  'vendor',
  'family',
];

export interface AgentExecutorChoices {
  preset: AgentPreset;
  /** The program (a path or a name on PATH), with its own leading arguments. */
  command?: readonly string[] | undefined;
  model?: string | undefined;
  permissionMode?: string | undefined;
  timeoutMinutes?: number | undefined;
  envAllowlist?: readonly string[] | undefined;
  resume?: ResumePolicy | undefined;
  /** Further arguments after the preset's own and the model's. */
  args?: readonly string[] | undefined;
  /**
   * Where the agent's turns run: `worktree`, a git worktree of its own (docs/lanes.md), or `shared`,
   * the main checkout (the default, written by leaving the key out). Kept as it is when not given.
   */
  isolation?: IsolationChoice | undefined;
}

export const ISOLATION_CHOICES = ['shared', 'worktree'] as const;
export type IsolationChoice = (typeof ISOLATION_CHOICES)[number];

function refused(message: string, field: string, value: unknown): LoopxError {
  return new LoopxError('executor_config_invalid', message, { field, value });
}

/**
 * The executor object for these choices, on top of the agent's current one (`existing`, kept fields
 * only). Returns the executor and the fields left out because this build's executor schema does not
 * have them yet (`resume` before the executors' resume support).
 */
export function buildAgentExecutor(
  choices: AgentExecutorChoices,
  existing: unknown,
): { executor: Record<string, unknown>; notWritten: string[] } {
  const { preset } = choices;
  if (!(EXECUTOR_PRESETS as readonly string[]).includes(preset))
    throw refused(
      `preset '${preset}' is not available in this build of LoopX (presets: ${EXECUTOR_PRESETS.join(', ')})`,
      'preset',
      preset,
    );
  const executor: Record<string, unknown> = {};
  if (isRecord(existing)) {
    for (const [key, value] of Object.entries(existing)) if (!OWNED_FIELDS.includes(key)) executor[key] = value;
    if (preset !== 'vscode-lm') delete executor['max_tokens_per_turn'];
  }
  executor['preset'] = preset;
  const args: string[] = [];
  if (choices.command !== undefined && choices.command.length > 0) {
    if (preset === 'demo' || preset === 'vscode-lm')
      throw refused(`the ${preset} preset takes no command`, 'command', choices.command);
    refuseCredentials({ command: choices.command.join(' ') });
    executor['command'] = [...choices.command];
  }
  if (choices.model !== undefined && choices.model.trim() !== '') {
    const model = choices.model.trim();
    if (preset === 'vscode-lm') {
      // A vscode-lm model is "vendor/family" (copilot/gpt-4o) or a family alone.
      const [vendor, family] = model.includes('/') ? model.split('/', 2) : [undefined, model];
      if (vendor) executor['vendor'] = vendor;
      if (family) executor['family'] = family;
    } else if (MODEL_FLAG_PRESETS.includes(preset)) args.push('--model', model);
    else throw refused(`the ${preset} preset takes no model`, 'model', model);
  }
  if (choices.permissionMode !== undefined && choices.permissionMode !== '') {
    const permission = PERMISSION_MODES[preset];
    if (permission === undefined)
      throw refused(
        `the ${preset} preset takes no permission mode (only ${Object.keys(PERMISSION_MODES).join(' and ')} do)`,
        'permissionMode',
        choices.permissionMode,
      );
    if (!permission.modes.includes(choices.permissionMode))
      throw refused(
        `permission mode '${choices.permissionMode}' is not one of ${preset}'s: ${permission.modes.join(', ')}`,
        'permissionMode',
        choices.permissionMode,
      );
    args.push(permission.flag, choices.permissionMode);
  }
  if (choices.args !== undefined) {
    refuseCredentials({ args: choices.args.join(' ') });
    args.push(...choices.args);
  }
  if (args.length > 0) {
    if (preset === 'demo' || preset === 'vscode-lm')
      throw refused(`the ${preset} preset takes no arguments`, 'args', args);
    executor['args'] = args;
  }
  if (choices.timeoutMinutes !== undefined) executor['timeout_minutes'] = choices.timeoutMinutes;
  if (choices.envAllowlist !== undefined && choices.envAllowlist.length > 0)
    executor['env_allowlist'] = [...new Set(choices.envAllowlist)];

  const notWritten: string[] = [];
  if (choices.resume !== undefined) {
    // Written only when this build's executor schema has the field: an unknown key would make every turn refuse the agent.
    const withResume = ExecutorConfigSchema.safeParse({ ...executor, resume: choices.resume });
    const unknownField = withResume.error?.issues.some(
      (issue) => issue.code === 'unrecognized_keys' && issue.keys.includes('resume'),
    );
    if (unknownField === true) notWritten.push('resume');
    else executor['resume'] = choices.resume;
  }
  const parsed = ExecutorConfigSchema.safeParse(executor);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${['executor', ...i.path.map(String)].join('.')}: ${i.message}`);
    throw new LoopxError('executor_config_invalid', `the executor would be invalid: ${problems.join('; ')}`, {
      problems,
    });
  }
  return { executor, notWritten };
}

export interface ConfigureAgentRequest {
  agentId: string;
  choices: AgentExecutorChoices;
  execute: boolean;
  clock: Clock;
  env: NodeJS.ProcessEnv;
}

export interface ConfigureAgentResult {
  ok: boolean;
  schema_version: 'loopx_configure_agent_v0';
  goal_id: string;
  agent_id: string;
  registry: string;
  dry_run: boolean;
  changed: boolean;
  /** Whether the agent id was added to the goal's registered agents with it. */
  registers_agent: boolean;
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
  /** Fields asked for but left out because this build's executor does not take them yet. */
  not_written: string[];
  /** The profile's `isolation` before and after (docs/lanes.md): `shared` (the main checkout) or `worktree`. */
  isolation_before: IsolationChoice;
  isolation_after: IsolationChoice;
  /** Identifies this exact change (first 24 hex of sha256 over goal, agent, before and after). */
  preview_id: string;
  written: boolean;
  verified: boolean;
}

function coordinationOf(goal: Record<string, unknown>): Record<string, unknown> {
  const current = goal['coordination'];
  if (isRecord(current)) return current;
  const created: Record<string, unknown> = {};
  goal['coordination'] = created;
  return created;
}

function registeredAgentsOf(goal: Record<string, unknown>): string[] {
  const coordination = goal['coordination'];
  const list = isRecord(coordination) ? coordination['registered_agents'] : undefined;
  return Array.isArray(list) ? list.filter((id): id is string => typeof id === 'string') : [];
}

function executorOf(goal: Record<string, unknown>, agentId: string): Record<string, unknown> | null {
  const coordination = goal['coordination'];
  const profiles = isRecord(coordination) ? agentProfilesAsDict(coordination['agent_profiles']) : {};
  const profile = profiles[agentId];
  const executor = isRecord(profile) ? profile['executor'] : undefined;
  return isRecord(executor) ? executor : null;
}

/**
 * `coordination.agent_profiles` as the dict LoopX writes: a dict as it is; the list form readers also
 * accept (objects matched on `agent_id`, `id` or `name`) keyed by normalized id, the first of equal ids
 * winning as when read. A list entry without an id could not be written back, so it is refused rather
 * than dropped.
 */
export function agentProfilesAsDict(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (isRecord(value)) return value;
  if (!Array.isArray(value))
    throw new LoopxError(
      'executor_config_invalid',
      'coordination.agent_profiles is neither an object keyed by agent id nor a list of profiles; fix it in the registry',
      { field: 'coordination.agent_profiles' },
    );
  const profiles: Record<string, unknown> = {};
  for (const entry of value) {
    const id = isRecord(entry)
      ? (['agent_id', 'id', 'name'].map((key) => normalizeAgentId(entry[key])).find((found) => found !== null) ?? null)
      : null;
    if (id === null)
      throw new LoopxError(
        'executor_config_invalid',
        'coordination.agent_profiles is a list with an entry that names no agent (agent_id, id or name); give it one, or write the profiles as an object keyed by agent id',
        { field: 'coordination.agent_profiles' },
      );
    if (!(id in profiles)) profiles[id] = entry;
  }
  return profiles;
}

/** Sets the agent's executor on a raw goal in place (registering the agent when it is not yet). */
function applyExecutor(
  goal: Record<string, unknown>,
  agentId: string,
  choices: AgentExecutorChoices,
): {
  before: Record<string, unknown> | null;
  after: Record<string, unknown>;
  registers: boolean;
  notWritten: string[];
  isolationBefore: IsolationChoice;
  isolationAfter: IsolationChoice;
} {
  const before = executorOf(goal, agentId);
  const isolationBefore = isolationOf(goal, agentId);
  const { executor, notWritten } = buildAgentExecutor(choices, before);
  const coordination = coordinationOf(goal);
  const registered = registeredAgentsOf(goal);
  const registers = !registered.includes(agentId);
  if (registers) {
    coordination['registered_agents'] = [...registered, agentId];
    if (coordination['agent_model'] === undefined) coordination['agent_model'] = 'peer_v1';
  }
  const profiles = { ...agentProfilesAsDict(coordination['agent_profiles']) };
  coordination['agent_profiles'] = profiles;
  const profile = isRecord(profiles[agentId]) ? profiles[agentId] : {};
  const updated: Record<string, unknown> = { ...profile, executor };
  if (choices.isolation === 'worktree') updated['isolation'] = 'worktree';
  else if (choices.isolation === 'shared') delete updated['isolation'];
  profiles[agentId] = updated;
  return {
    before: before === null ? null : structuredClone(before),
    after: executor,
    registers,
    notWritten,
    isolationBefore,
    isolationAfter: choices.isolation ?? isolationBefore,
  };
}

function isolationOf(goal: Record<string, unknown>, agentId: string): IsolationChoice {
  const coordination = goal['coordination'];
  const profiles = isRecord(coordination) ? agentProfilesAsDict(coordination['agent_profiles']) : {};
  const profile = profiles[agentId];
  return isRecord(profile) && profile['isolation'] === 'worktree' ? 'worktree' : 'shared';
}

function previewId(parts: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex').slice(0, 24);
}

/** Previews the executor on `goal` as the operation resolved it, or with `execute` writes it (the registry re-read under its lock) and reads it back. */
export async function configureAgentExecutor(
  goal: GoalRef,
  request: ConfigureAgentRequest,
): Promise<ConfigureAgentResult> {
  const stored = goal.rawEntry;
  const base = {
    schema_version: 'loopx_configure_agent_v0' as const,
    goal_id: goal.goalId,
    agent_id: request.agentId,
    registry: goal.registryPath,
  };
  const summary = (step: ReturnType<typeof applyExecutor>) => {
    const changed =
      step.registers || !isDeepStrictEqual(step.before, step.after) || step.isolationBefore !== step.isolationAfter;
    const isolation =
      step.isolationBefore === step.isolationAfter ? {} : { isolation: [step.isolationBefore, step.isolationAfter] };
    return {
      changed,
      registers_agent: step.registers,
      before: step.before,
      after: step.after,
      not_written: step.notWritten,
      isolation_before: step.isolationBefore,
      isolation_after: step.isolationAfter,
      preview_id: previewId({
        goal: goal.goalId,
        agent: request.agentId,
        before: step.before,
        after: step.after,
        ...isolation,
      }),
    };
  };
  if (!request.execute) {
    const preview = summary(applyExecutor(structuredClone(stored), request.agentId, request.choices));
    return { ...base, ok: true, dry_run: true, ...preview, written: false, verified: false };
  }
  const { written, outcome } = await updateRegistryGoal(
    goal,
    (entry) => {
      const step = summary(applyExecutor(entry, request.agentId, request.choices));
      return { write: step.changed, outcome: step };
    },
    { clock: request.clock, env: request.env, operation: 'configure-agent', agentId: null },
  );
  const readback = await readBackRegistryGoal(goal);
  const verified =
    isDeepStrictEqual(executorOf(readback, request.agentId), outcome.after) &&
    isolationOf(readback, request.agentId) === outcome.isolation_after &&
    registeredAgentsOf(readback).includes(request.agentId);
  return { ...base, ok: verified, dry_run: false, ...outcome, written, verified };
}

export interface RemoveAgentResult {
  ok: boolean;
  schema_version: 'loopx_remove_agent_v0';
  goal_id: string;
  agent_id: string;
  registry: string;
  dry_run: boolean;
  changed: boolean;
  /** What goes with the agent: `registered_agents`, `agent_profiles`, `agent_work_modes`. */
  removed: string[];
  registered_agents: string[];
  written: boolean;
  verified: boolean;
}

/** Takes the agent off a raw goal in place: its registered id, its profile and its work mode. */
function applyRemoval(goal: Record<string, unknown>, agentId: string): { removed: string[]; registered: string[] } {
  const removed: string[] = [];
  const coordination = goal['coordination'];
  if (!isRecord(coordination)) return { removed, registered: [] };
  const registered = registeredAgentsOf(goal);
  if (registered.includes(agentId)) {
    coordination['registered_agents'] = registered.filter((id) => id !== agentId);
    removed.push('registered_agents');
  }
  if (Array.isArray(coordination['agent_profiles']))
    coordination['agent_profiles'] = { ...agentProfilesAsDict(coordination['agent_profiles']) };
  for (const key of ['agent_profiles', 'agent_work_modes'] as const) {
    const map = coordination[key];
    if (isRecord(map) && agentId in map) {
      delete map[agentId];
      removed.push(key);
    }
  }
  return { removed, registered: registeredAgentsOf(goal) };
}

/** Previews taking the agent off `goal` as the operation resolved it, or with `execute` does it (the registry re-read under its lock) and reads it back. */
export async function removeAgentFromGoal(
  goal: GoalRef,
  request: Omit<ConfigureAgentRequest, 'choices'>,
): Promise<RemoveAgentResult> {
  const stored = goal.rawEntry;
  const base = {
    schema_version: 'loopx_remove_agent_v0' as const,
    goal_id: goal.goalId,
    agent_id: request.agentId,
    registry: goal.registryPath,
  };
  if (!request.execute) {
    const preview = applyRemoval(structuredClone(stored), request.agentId);
    return {
      ...base,
      ok: true,
      dry_run: true,
      changed: preview.removed.length > 0,
      removed: preview.removed,
      registered_agents: preview.registered,
      written: false,
      verified: false,
    };
  }
  const { written, outcome } = await updateRegistryGoal(
    goal,
    (entry) => {
      const step = applyRemoval(entry, request.agentId);
      return { write: step.removed.length > 0, outcome: step };
    },
    { clock: request.clock, env: request.env, operation: 'remove-agent', agentId: null },
  );
  const readback = await readBackRegistryGoal(goal);
  const verified =
    !registeredAgentsOf(readback).includes(request.agentId) && executorOf(readback, request.agentId) === null;
  return {
    ...base,
    ok: verified,
    dry_run: false,
    changed: outcome.removed.length > 0,
    removed: outcome.removed,
    registered_agents: registeredAgentsOf(readback),
    written,
    verified,
  };
}
