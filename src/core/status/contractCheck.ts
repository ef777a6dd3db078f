import * as fs from 'node:fs';
import { z } from 'zod';
import type { StateDocument, TodoItem } from '../state/document';
import { normalizeHeadingTitle } from '../state/sections';
import { FLAG_TRUE_WORDS, REMOVED_CONTINUATION_POLICIES } from '../state/todoContract';
import { registeredLookup } from '../registry/agentIds';

/**
 * LoopX's contract check as `loopx status` runs it: per-todo metadata rules of each goal's state
 * file (this file's `todoContractDiagnostics`, kept on the goal's status item so it is cached with
 * it), the registry's problem diagnostics, and warnings (a Next Action with no todo behind it, a
 * runtime root that does not exist yet, duplicated run-index rows). Any error makes the status
 * answer `ok: false` and adds the `loopx-contract` attention item. The rules are LoopX's
 * (`loopx/contract.py`), read and rewritten here; see docs/status.md#the-contract-check.
 */

export const ContractDiagnosticSchema = z.object({
  code: z.string(),
  message: z.string(),
});
export type ContractDiagnostic = z.infer<typeof ContractDiagnosticSchema>;

/** The goal id of the attention item a failed contract check adds (the original's). */
export const CONTRACT_ITEM_GOAL_ID = 'loopx-contract';
export const CONTRACT_ITEM_STATUS = 'contract_check_failed';
export const CONTRACT_ITEM_ACTION = 'fix contract errors before advancing goal adapters';

/**
 * The attention item of a failed contract check, as LoopX adds it. It is no goal: it has no todo
 * counts, quota or run fields (readers see them as absent, as in the original), and `errors` lists
 * what failed (the first few), so a reader of the queue alone sees why.
 */
export const ContractAttentionItemSchema = z.object({
  goal_id: z.literal(CONTRACT_ITEM_GOAL_ID),
  display_name: z.string(),
  status: z.literal(CONTRACT_ITEM_STATUS),
  waiting_on: z.literal('codex'),
  severity: z.literal('high'),
  recommended_action: z.string(),
  source: z.literal('contract'),
  activation_state: z.literal('active'),
  registry_member: z.literal(false),
  errors: z.array(z.string()),
});
export type ContractAttentionItem = z.infer<typeof ContractAttentionItemSchema>;

/** How many error texts the item carries (the full list is in `contract.errors`). */
const ITEM_ERRORS_SHOWN = 5;

export function contractAttentionItem(errors: readonly string[]): ContractAttentionItem {
  return {
    goal_id: CONTRACT_ITEM_GOAL_ID,
    display_name: 'LoopX contract check',
    status: CONTRACT_ITEM_STATUS,
    waiting_on: 'codex',
    severity: 'high',
    recommended_action: CONTRACT_ITEM_ACTION,
    source: 'contract',
    activation_state: 'active',
    registry_member: false,
    errors: errors.slice(0, ITEM_ERRORS_SHOWN),
  };
}

/** Whether an attention item is the contract item rather than a goal's (registry goals are never registry_member false here). */
export function isContractAttentionItem(item: { goal_id: string; source?: unknown }): item is ContractAttentionItem {
  return item.goal_id === CONTRACT_ITEM_GOAL_ID && item.source === 'contract';
}

// ---------------------------------------------------------------------------------------------
// Per-todo rules

const USER_GATE = 'user_gate';
const USER_ACTION = 'user_action';
const TASK_CLASSES = new Set(['advancement_task', 'continuous_monitor', USER_GATE, USER_ACTION, 'blocker']);
const STATUSES = new Set(['open', 'done', 'blocked', 'deferred']);
const TERMINAL = new Set(['done', 'deferred', 'completed', 'closed', 'archived']);
const AGENT_TOKEN = /^[a-z][a-z0-9_.:@-]{0,79}$/;
const COMPLETED_WORK_ARCHIVE = 'completed work archive';

/** An agent token as a todo's metadata holds it (lowercase, spaces as `-`), or null when it is not one. */
function agentToken(value: string | undefined): string | null {
  if (value === undefined) return null;
  const candidate = value.trim().replace(/\s+/g, ' ').toLowerCase().replace(/ /g, '-');
  return candidate !== '' && AGENT_TOKEN.test(candidate) ? candidate : null;
}

function flag(value: string | undefined): boolean | null {
  if (value === undefined) return null;
  const candidate = value.trim().replace(/\s+/g, ' ').toLowerCase();
  if (FLAG_TRUE_WORDS.has(candidate)) return true;
  if (['0', 'false', 'no', 'n'].includes(candidate)) return false;
  return null;
}

/** `excluded_agents` split on commas: the valid tokens (sorted, distinct), and whether any part was not a token. */
function excludedAgents(value: string | undefined): { agents: string[]; malformed: boolean } {
  if (value === undefined) return { agents: [], malformed: false };
  const agents = new Set<string>();
  let malformed = false;
  for (const part of value.split(',')) {
    const token = agentToken(part);
    if (token === null) malformed = true;
    else agents.add(token);
  }
  return { agents: [...agents].sort(), malformed };
}

/**
 * The role the rules apply to a todo. Our sections decide for user and agent todos; a todo of an
 * archive section is judged by its heading as LoopX does (an "Agent Todo Archive" holds agent
 * todos; "Completed Work Archive" unscoped ones).
 */
function ruleRole(todo: TodoItem): 'user' | 'agent' | null {
  if (todo.role !== 'archive') return todo.role;
  const heading = normalizeHeadingTitle(todo.section.title);
  if (heading.includes('user todo') || heading.includes('owner review')) return 'user';
  if (heading.includes('agent todo')) return 'agent';
  return null;
}

export interface TodoContractInput {
  goalId: string;
  /** The goal's registered agents (registeredAgentsForGoal). */
  registeredAgents: readonly string[];
  /** How the state file is named in messages (a path label such as `<project>/…`). */
  stateFileLabel: string;
}

/**
 * The contract errors of one state file's todos, in document order: malformed `status` or
 * `excluded_agents`, agent todos with removed routing (`blocks_agent`, a removed continuation
 * policy), executor exclusions outside agent todos or naming unregistered agents, a claimant that
 * is also excluded, and the scoping of open user todos (task class, blocking and response scope
 * in multi-agent goals). Pure.
 */
export function todoContractDiagnostics(doc: StateDocument, input: TodoContractInput): ContractDiagnostic[] {
  const diagnostics: ContractDiagnostic[] = [];
  const registered = input.registeredAgents;
  // A goal may register 50,000 agents: membership is a Set lookup and the roster text is joined once, only for a message.
  const isRegistered = registeredLookup(registered);
  let rosterText: string | undefined;
  const list = (): string => (rosterText ??= registered.join(', '));
  const goal = input.goalId;
  const add = (code: string, message: string): void => {
    diagnostics.push({ code, message: `${goal}: ${message}` });
  };
  for (const todo of doc.todos) {
    const role = ruleRole(todo);
    const meta = todo.meta;
    const line = todo.line + 1;
    const where = `(state_file=${input.stateFileLabel}, line=${line}, text=${todo.text})`;
    const explicitId = meta['todo_id']?.trim().toLowerCase();
    const todoId = explicitId !== undefined && /^todo_[a-z0-9_-]{3,64}$/.test(explicitId) ? explicitId : `line:${line}`;

    const metaStatus = meta['status'];
    const status =
      metaStatus !== undefined && STATUSES.has(metaStatus.trim().toLowerCase())
        ? metaStatus.trim().toLowerCase()
        : todo.marker === ' '
          ? 'open'
          : todo.marker === '-'
            ? 'deferred'
            : 'done';
    const excluded = excludedAgents(meta['excluded_agents']);
    const singularExcluded = excludedAgents(meta['excluded_agent']);
    if (excluded.malformed || singularExcluded.malformed)
      add(
        'todo_excluded_agents_invalid',
        `todo ${todoId} has malformed excluded_agents metadata; replace it with --excluded-agent <registered-agent> or remove it with --clear-excluded-agents`,
      );
    if (metaStatus !== undefined && !STATUSES.has(metaStatus.trim().toLowerCase()))
      add(
        'todo_status_invalid',
        `todo ${todoId} has malformed status metadata; replace it with status=open, status=done, status=blocked, or status=deferred`,
      );
    const continuation = meta['continuation_policy'] ?? meta['removed_continuation_policy'];
    const removedPolicy = continuation?.trim().toLowerCase();
    if (role === 'agent' && removedPolicy !== undefined && REMOVED_CONTINUATION_POLICIES.has(removedPolicy))
      add(
        'agent_todo_removed_continuation_policy',
        `agent todo ${todoId} uses removed continuation_policy=${removedPolicy}; use continuation_policy=independent_handoff with an explicit review action_kind and excluded_agents=<author> only when executor separation is required`,
      );
    const blocksAgent = agentToken(meta['blocks_agent']);
    if (role === 'agent' && blocksAgent !== null)
      add(
        'agent_todo_blocks_agent_invalid',
        `agent todo ${todoId} uses removed blocks_agent routing; blocks_agent is reserved for user gates, while agent executor constraints use excluded_agents`,
      );
    const claimedBy = agentToken(meta['claimed_by']);
    if (claimedBy !== null && excluded.agents.includes(claimedBy))
      add(
        'todo_claimed_by_excluded_agent',
        `agent todo ${todoId} has claimed_by='${claimedBy}' also listed in excluded_agents`,
      );
    const archivedTerminal =
      normalizeHeadingTitle(todo.section.title) === COMPLETED_WORK_ARCHIVE &&
      todo.marker !== ' ' &&
      TERMINAL.has(status);
    if (role !== 'agent' && excluded.agents.length > 0 && !archivedTerminal)
      add(
        'todo_executor_exclusion_scope_invalid',
        `${role ?? 'unscoped'} todo ${todoId} uses excluded_agents; executor exclusions are only valid for agent todos`,
      );
    const unknownExcluded = excluded.agents.filter((agent) => registered.length > 0 && !isRegistered(agent));
    if (role === 'agent' && unknownExcluded.length > 0)
      add(
        'todo_excludes_unregistered_agent',
        `agent todo ${todoId} excludes unregistered agents: ${unknownExcluded.join(', ')}`,
      );

    if (role !== 'user' || TERMINAL.has(status)) continue;
    const rawClass = meta['task_class']?.trim().toLowerCase() ?? '';
    const taskClass = TASK_CLASSES.has(rawClass) ? rawClass : '';
    const globalGate = flag(meta['global_gate']) === true;
    const boundAgent = agentToken(meta['bound_agent']);
    const goalBound = flag(meta['goal_bound']) === true;
    const isGate = taskClass === USER_GATE;
    const effectiveBoundAgent = boundAgent ?? (isGate ? blocksAgent : null) ?? claimedBy;
    const effectiveGoalBound = goalBound || (globalGate && isGate);
    if (taskClass !== USER_GATE && taskClass !== USER_ACTION)
      add(
        'user_todo_task_class_missing',
        `open user todo ${todoId} requires task_class=user_gate or task_class=user_action ${where}`,
      );
    else if (taskClass === USER_ACTION && (blocksAgent !== null || globalGate))
      add(
        'user_action_blocking_scope_invalid',
        `open user_action todo ${todoId} is non-blocking and cannot set blocks_agent or global_gate=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && globalGate)
      add(
        'user_gate_scope_conflict',
        `open user_gate todo ${todoId} in multi-agent goal cannot set both blocks_agent and global_gate=true ${where}`,
      );
    else if (boundAgent !== null && goalBound)
      add(
        'user_todo_response_scope_conflict',
        `open user todo ${todoId} cannot set both bound_agent and goal_bound=true ${where}`,
      );
    else if (isGate && globalGate && boundAgent !== null)
      add(
        'goal_user_gate_agent_binding_invalid',
        `goal-wide user_gate todo ${todoId} cannot set bound_agent; its response binding is goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && goalBound)
      add(
        'agent_user_gate_goal_binding_invalid',
        `agent-scoped user_gate todo ${todoId} cannot set goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && boundAgent !== null && boundAgent !== blocksAgent)
      add(
        'agent_user_gate_response_binding_mismatch',
        `agent-scoped user_gate todo ${todoId} must bind to blocks_agent='${blocksAgent}', not bound_agent='${boundAgent}' ${where}`,
      );
    else if (boundAgent !== null && registered.length > 0 && !isRegistered(boundAgent))
      add(
        'user_todo_bound_agent_unregistered',
        `open user todo ${todoId} has bound_agent='${boundAgent}', which is not registered for this goal (registered_agents=${list()}, ${where.slice(1)}`,
      );
    else if (registered.length > 1 && effectiveBoundAgent === null && !effectiveGoalBound)
      add(
        'multi_agent_user_todo_missing_response_scope',
        `open user todo ${todoId} in multi-agent goal requires bound_agent=<registered-agent> or goal_bound=true ${where}`,
      );
    else if (isGate && blocksAgent !== null && registered.length > 0 && !isRegistered(blocksAgent))
      add(
        'user_gate_blocks_unregistered_agent',
        `open user_gate todo ${todoId} has blocks_agent='${blocksAgent}', which is not registered for this goal (registered_agents=${list()}, ${where.slice(1)}`,
      );
    else if (isGate && registered.length > 1 && blocksAgent === null && !globalGate)
      add(
        'multi_agent_user_gate_missing_scope',
        `open user_gate todo ${todoId} in multi-agent goal requires blocks_agent=<registered-agent> or global_gate=true ${where}`,
      );
  }
  return diagnostics;
}

// ---------------------------------------------------------------------------------------------
// Run-index duplicates

/** The duplicate rows of a run index by kind, as LoopX classifies them (`run_index_duplicates.py`). */
export interface IndexDuplicateSummary {
  reward_overlay_rows: number;
  unexpected_duplicate_rows: number;
  repairable_duplicate_rows: number;
  artifact_identity_collision_rows: number;
  artifact_identity_collision_groups: number;
}

const OVERLAY_IDENTITY_KEYS = ['generated_at', 'goal_id', 'classification', 'json_path', 'markdown_path'];

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A canonical text of a row without `human_reward`: keys sorted at every depth. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isPlainObject(value))
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`)
      .join(',')}}`;
  return JSON.stringify(value);
}

function withoutReward(row: Record<string, unknown>): Record<string, unknown> {
  const copy = { ...row };
  delete copy['human_reward'];
  return copy;
}

function isRewardOverlayBundle(rows: readonly Record<string, unknown>[]): boolean {
  const base = rows.filter((row) => !isPlainObject(row['human_reward']));
  const overlays = rows.filter((row) => isPlainObject(row['human_reward']));
  if (base.length !== 1 || overlays.length === 0) return false;
  const baseRow = base[0] as Record<string, unknown>;
  return overlays.every((overlay) => {
    const projected = withoutReward(overlay);
    if (!OVERLAY_IDENTITY_KEYS.every((key) => key in projected)) return false;
    return Object.entries(projected).every(
      ([key, value]) => key in baseRow && canonical(baseRow[key]) === canonical(value),
    );
  });
}

/** Classifies the rows of an index text that share an identity (generated_at, json_path, markdown_path). */
export function indexDuplicateSummary(indexText: string): IndexDuplicateSummary {
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const line of indexText.split('\n')) {
    if (line.trim() === '') continue;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      continue;
    }
    if (!isPlainObject(row)) continue;
    const text = (value: unknown): string =>
      value === undefined || value === null || value === '' || value === false || value === 0
        ? ''
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
    const key = JSON.stringify([text(row['generated_at']), text(row['json_path']), text(row['markdown_path'])]);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [row]);
    else group.push(row);
  }
  const summary: IndexDuplicateSummary = {
    reward_overlay_rows: 0,
    unexpected_duplicate_rows: 0,
    repairable_duplicate_rows: 0,
    artifact_identity_collision_rows: 0,
    artifact_identity_collision_groups: 0,
  };
  for (const rows of groups.values()) {
    if (rows.length <= 1) continue;
    const extra = rows.length - 1;
    if (isRewardOverlayBundle(rows)) {
      summary.reward_overlay_rows += extra;
      continue;
    }
    const hasReward = rows.some((row) => isPlainObject(row['human_reward']));
    const distinct = new Set(rows.map((row) => canonical(withoutReward(row))));
    summary.unexpected_duplicate_rows += extra;
    if (!hasReward && distinct.size === 1) summary.repairable_duplicate_rows += extra;
    else {
      summary.artifact_identity_collision_rows += extra;
      summary.artifact_identity_collision_groups += 1;
    }
  }
  return summary;
}

export interface IndexDuplicateFinding {
  /** A contract warning (null when every extra row is a reward overlay: a check then). */
  warning: string | null;
  check: string | null;
}

/**
 * What the contract says about a goal whose index has more rows than runs (`raw > unique`): a
 * warning naming the kinds of duplicates (and lines that could not be read), unless every extra
 * row is a reward overlay of its run, which is by design (a check).
 */
export function indexDuplicateFinding(input: {
  goalId: string;
  raw: number;
  unique: number;
  skipped: number;
  indexFile: string;
}): IndexDuplicateFinding {
  let summary: IndexDuplicateSummary | null = null;
  try {
    summary = indexDuplicateSummary(fs.readFileSync(input.indexFile, 'utf8'));
  } catch {
    summary = null;
  }
  const { goalId, raw, unique } = input;
  if (
    summary !== null &&
    summary.unexpected_duplicate_rows === 0 &&
    summary.reward_overlay_rows > 0 &&
    input.skipped === 0
  )
    return {
      warning: null,
      check: `${goalId}: reward overlay rows raw=${raw} unique=${unique} overlays=${summary.reward_overlay_rows}`,
    };
  const details: string[] = [];
  if (summary !== null) {
    if (summary.unexpected_duplicate_rows) details.push(`unexpected=${summary.unexpected_duplicate_rows}`);
    if (summary.repairable_duplicate_rows) details.push(`auto_repairable=${summary.repairable_duplicate_rows}`);
    if (summary.artifact_identity_collision_groups)
      details.push(`artifact_identity_collisions=${summary.artifact_identity_collision_groups}`);
    if (summary.artifact_identity_collision_rows)
      details.push(`artifact_collision_rows=${summary.artifact_identity_collision_rows}`);
    if (summary.reward_overlay_rows) details.push(`reward_overlays=${summary.reward_overlay_rows}`);
  }
  if (input.skipped > 0) details.push(`unreadable=${input.skipped}`);
  if (details.length === 0) details.push(`duplicates=${raw - unique}`);
  return {
    warning:
      `${goalId}: duplicate index rows raw=${raw} unique=${unique} ${details.join(' ')}; ` +
      'rows with the same generated_at, json_path and markdown_path are merged (later over earlier); ' +
      'lines that are not a JSON object are skipped',
    check: null,
  };
}
