import * as path from 'node:path';
import { z } from 'zod';
import { leaseEpoch, leaseIsActive, type TaskLeaseRecord } from '../leases/rules';
import { cleanCopyOf } from '../privacy/scrub';
import type { RegistryGoal } from '../registry/schema';
import type { GoalStatusItem, StatusRun } from './goalStatusSchema';
import { truncateText } from './projection/text';

/**
 * `goal_channel_projection`: the read-only channel snapshot of one status item, built by the original's rules
 * (`control_plane/goals/goal_channel_projection.py` `build_goal_channel_projection`, fed by `goal_channel.py` with
 * the item, its quota and the goal's latest runs). Each field's rule is in docs/compatibility.md ("Status items field
 * by field", `goal_channel_projection`). The one deliberate deviation: the original passes every compacted value
 * through Python's `str()`, so the projection's quota counts and todo flags reach clients as strings (`"0"`,
 * `"True"`); ours keeps them JSON numbers and booleans.
 */

export const GOAL_CHANNEL_PROJECTION_SCHEMA = 'goal_channel_projection_v0' as const;

/** A value the projection copies: a compact text, or (our deviation) the number or boolean itself. */
const ChannelValueSchema = z.union([z.string(), z.number(), z.boolean()]);
type ChannelValue = z.infer<typeof ChannelValueSchema>;

const GoalChannelTodoSchema = z.object({
  title: z.string(),
  status: z.string(),
  todo_id: z.string().optional(),
  priority: z.string().optional(),
  claimed_by: z.string().optional(),
  bound_agent: z.string().optional(),
  goal_bound: z.boolean().optional(),
  task_class: z.string().optional(),
  action_kind: z.string().optional(),
  task_repository: z.string().optional(),
});
export type GoalChannelTodo = z.infer<typeof GoalChannelTodoSchema>;

export const GoalChannelProjectionSchema = z.object({
  schema_version: z.literal(GOAL_CHANNEL_PROJECTION_SCHEMA),
  goal_id: z.string(),
  mode: z.literal('read_only'),
  display_name: z.string(),
  source_refs: z.object({
    status_generated_at: z.null(),
    active_state_updated_at: z.null(),
    latest_run_generated_at: z.string().nullable(),
    review_packet_generated_at: z.null(),
    event_ledger_source: z.literal('run_history'),
  }),
  waiting_on: z.string(),
  latest_status: z.string(),
  next_action: z.string(),
  decision_frame: z.object({
    user_action_required: z.boolean(),
    agent_action_required: z.boolean(),
    quiet_noop_allowed: z.boolean(),
  }),
  /** `state`, `reason`, `spend_policy`, `spent_slots`, `allowed_slots` of the item's quota, when set. */
  quota: z.record(z.string(), ChannelValueSchema),
  user_todos: z.array(GoalChannelTodoSchema),
  agent_todos: z.array(GoalChannelTodoSchema),
  /** One entry when an open user gate is listed: the original reads gates from its todo list only. */
  open_gates: z.array(
    z.object({
      gate_id: z.literal('project_asset_user_gate_todos'),
      kind: z.literal('user_todo'),
      status: z.literal('action_required'),
      blocks: z.array(z.string()),
    }),
  ),
  /** Always empty: the status path passes the original's builder no artifacts. */
  artifacts: z.array(z.record(z.string(), z.string())),
  /** The soft claims of the listed agent todos, then the goal's active hard task leases (`hardLeaseEntries`). */
  active_leases: z.array(
    z.object({
      todo_id: z.string(),
      owner_agent: z.string().optional(),
      status: z.enum(['soft_claim', 'hard_lease', 'hard_lease_unreadable']),
      lease_version: z.number().optional(),
      lease_epoch: z.number().optional(),
      expires_at: z.string().optional(),
      reason: z.string().optional(),
      claimed_by: z.string().optional(),
    }),
  ),
  recent_events: z.array(
    z.object({
      generated_at: z.string().optional(),
      classification: z.string().optional(),
      summary: z.string().optional(),
    }),
  ),
  source_warnings: z.array(
    z.object({
      kind: z.literal('raw_or_private_material_omitted'),
      key_names: z.array(z.string()),
      message: z.string(),
    }),
  ),
  truth_contract: z.object({
    event_ledger_is_source_of_truth: z.literal(true),
    projection_is_writable: z.literal(false),
    write_authority: z.literal('none'),
    recompute_rule: z.string(),
  }),
});
export type GoalChannelProjection = z.infer<typeof GoalChannelProjectionSchema>;

const TRUTH_CONTRACT: GoalChannelProjection['truth_contract'] = {
  event_ledger_is_source_of_truth: true,
  projection_is_writable: false,
  write_authority: 'none',
  recompute_rule: 'refresh from LoopX status/quota/run history; do not edit the channel projection as project truth',
};

const RAW_MATERIAL_WARNING =
  'raw/private-looking fields were omitted; inspect the compact source references instead of copying raw material into the frontstage channel projection';

/** Key names the original omits as raw material: a key whose lowercased name contains one of these. */
const RAW_MATERIAL_KEY = /credential|local_path|log|raw|secret|stderr|stdout|token|trace|transcript/iu;

/** Values the original treats as private (lowercased text containing one): dropped, and their keys reported. */
const PRIVATE_VALUE = new RegExp(
  ['/private/', '/users/', 'credential-value', 'secret-value', 'token-value', `byte${'dance'}.lark${'office'}`]
    .map((hint) => hint.replace(/[.]/gu, '\\.'))
    .join('|'),
  'iu',
);

const CLOSED_GATE_STATUSES = new Set(['done', 'closed', 'resolved']);

/** The flags copied onto a projection todo, in the original's order, when set. */
const TODO_FLAGS = [
  'todo_id',
  'priority',
  'claimed_by',
  'bound_agent',
  'goal_bound',
  'task_class',
  'action_kind',
  'task_repository',
] as const;

/** The shortest private hint ("/users/"): a shorter text cannot hold one. */
const PRIVATE_MIN_LENGTH = 7;

function privateText(text: string): boolean {
  return PRIVATE_VALUE.test(text);
}

/**
 * The original's `compact_goal_channel_text`: whitespace collapsed, cut to `limit` characters ending in `...`; none for
 * a missing, empty or private-looking value. Numbers and booleans stay themselves (the original makes them `str()`).
 */
export function compactChannelValue(value: unknown, limit: number): ChannelValue | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (typeof value !== 'string') return null;
  if (privateText(value)) return null;
  const text = collapsed(value);
  if (text === '') return null;
  // A string no longer in UTF-16 units than the limit is no longer in characters either.
  if (text.length <= limit) return text;
  const chars = Array.from(text);
  if (chars.length <= limit) return text;
  return `${chars
    .slice(0, Math.max(0, limit - 1))
    .join('')
    .trimEnd()}...`;
}

/** Runs of whitespace, or whitespace other than one space, or at either end: what collapsing changes. */
const UNCOLLAPSED = /\s{2}|[^\S ]|^\s|\s$/u;

/** Whitespace collapsed (Python's `" ".join(text.split())`); most texts already are, and are returned as they are. */
function collapsed(text: string): string {
  return UNCOLLAPSED.test(text)
    ? text
        .split(/\s+/u)
        .filter((part) => part !== '')
        .join(' ')
    : text;
}

function compactText(value: unknown, limit: number): string | null {
  const compact = compactChannelValue(value, limit);
  return compact === null ? null : String(compact);
}

function firstText(limit: number, ...values: unknown[]): string | null {
  for (const value of values) {
    const text = compactText(value, limit);
    if (text !== null) return text;
  }
  return null;
}

/**
 * The original's `_raw_material_keys`: every key, at any depth, named like raw material or holding a private value
 * (anywhere below it, keys included: what Python's `str(value)` shows). One pass over each object, however often it
 * is reached (the todo summaries are reached twice, as the item's and as its project asset's).
 */
export function rawMaterialKeys(...sources: unknown[]): string[] {
  const keys = new Set<string>();
  const seen = new Map<object, boolean>();
  /** Whether the value holds a private text; adds the keys below it. */
  const visit = (value: unknown): boolean => {
    if (typeof value === 'string') return value.length >= PRIVATE_MIN_LENGTH && privateText(value);
    if (typeof value !== 'object' || value === null) return false;
    const known = seen.get(value);
    if (known !== undefined) return known;
    seen.set(value, false);
    let holds = false;
    if (Array.isArray(value)) {
      for (const child of value) if (visit(child)) holds = true;
    } else {
      const record = value as Record<string, unknown>;
      for (const key in record) {
        if (!Object.hasOwn(record, key)) continue;
        const childHolds = visit(record[key]);
        if (childHolds || rawMaterialKeyName(key)) keys.add(key);
        if (childHolds || privateText(key)) holds = true;
      }
    }
    seen.set(value, holds);
    return holds;
  };
  for (const source of sources) visit(source);
  // Python's sorted(): by code point.
  return [...keys].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Key names repeat across items and todos: each is tested once per process. */
const keyNameVerdicts = new Map<string, boolean>();

function rawMaterialKeyName(key: string): boolean {
  let verdict = keyNameVerdicts.get(key);
  if (verdict === undefined) {
    verdict = RAW_MATERIAL_KEY.test(key);
    if (keyNameVerdicts.size < 10_000) keyNameVerdicts.set(key, verdict);
  }
  return verdict;
}

function overviewText(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const text = collapsed(value);
  return text.length <= 220 ? text : truncateText(text, 220);
}

function channelTodo(todo: Record<string, unknown>): GoalChannelTodo | null {
  // The original's todo overview has already cut each text to 220 characters, ending in `…`.
  const title = firstText(220, overviewText(todo['title']), overviewText(todo['text']));
  if (title === null) return null;
  const compact: Record<string, ChannelValue> = { title, status: firstText(40, todo['status']) ?? 'open' };
  for (const key of TODO_FLAGS) {
    const value = compactChannelValue(todo[key], 120);
    // The original keeps a truthy text: `str(False)` is "False", so a false flag stays (ours as `false`).
    if (value !== null && value !== '') compact[key] = value;
  }
  // Made of the todo's texts only: clean when the todo is (the status redaction need not walk it).
  return cleanCopyOf(compact as GoalChannelTodo, todo);
}

/**
 * A role's projection todos: the original reads them from its `project_asset` todo overview, whose first lane is the
 * first three executable todos (`first_executable_items`) and, when there is none, the first three open ones
 * (`items`, from `first_open_items`: a deferred todo counts as done there). Both are lists of our summary already.
 */
function channelTodos(summary: GoalStatusItem['user_todos']): GoalChannelTodo[] {
  if (summary === null || summary === undefined) return [];
  const lane = summary.first_executable_items.length > 0 ? summary.first_executable_items : summary.first_open_items;
  return lane
    .map((todo) => channelTodo(todo as unknown as Record<string, unknown>))
    .filter((todo): todo is GoalChannelTodo => todo !== null);
}

function recentEvent(run: StatusRun): GoalChannelProjection['recent_events'][number] | null {
  const event: GoalChannelProjection['recent_events'][number] = {};
  const generatedAt = compactText(run.generated_at, 160);
  if (generatedAt !== null) event.generated_at = generatedAt;
  const classification = compactText(run.classification, 160);
  if (classification !== null) event.classification = classification;
  const summary = firstText(260, run.health_check, run.recommended_action);
  if (summary !== null) event.summary = summary;
  return Object.keys(event).length > 0 ? cleanCopyOf(event, run) : null;
}

/** The projection's quota: these keys of the item's quota, compacted, when set. */
const QUOTA_KEYS = ['state', 'reason', 'spend_policy', 'spent_slots', 'allowed_slots'] as const;

function channelQuota(quota: GoalStatusItem['quota']): Record<string, ChannelValue> {
  const compact: Record<string, ChannelValue> = {};
  const source = (quota ?? {}) as Record<string, unknown>;
  for (const key of QUOTA_KEYS) {
    const value = compactChannelValue(source[key], 220);
    if (value !== null) compact[key] = value;
  }
  return compact;
}

/**
 * What the original scans for raw material besides the item: its run-history entry of the goal (the registry's
 * coordination, spawn policy, guards and next probe, and always `raw_index_records`) and the goal's latest runs.
 */
function runHistorySources(item: GoalStatusItem, goal: RegistryGoal | undefined): unknown {
  const entry = (goal ?? {}) as Record<string, unknown>;
  return {
    raw_index_records: item.raw_index_records,
    coordination: entry['coordination'],
    spawn_policy: entry['spawn_policy'],
    guards: entry['guards'],
    next_probe: entry['next_probe'],
  };
}

/**
 * The item as the original's scan sees it: with its `project_asset` (which holds the todo summaries and the next action
 * again), and without the blocks only ours carries whose key names would read as raw material (the quota's
 * `budgets`, whose `max_tokens` the original's item has no counterpart for). Without the members its quota decides
 * (`quotaScanned`): those are scanned when answering.
 */
function scannedItem(item: GoalStatusItem): unknown {
  // Ours only, not the original's item: the todo index part and the runs' raw keys (scanned as their keys).
  const {
    todo_index: _index,
    latest_run_raw_keys: _rawKeys,
    quota: _quota,
    handoff_readiness: _readiness,
    long_task_cadence_hint: _hint,
    ...original
  } = item;
  return {
    ...original,
    project_asset: {
      next_action: item.active_state_next_action ?? item.recommended_action,
      user_todos: item.user_todos,
      agent_todos: item.agent_todos,
    },
  };
}

/**
 * The item's members its quota decides (the quota itself, and the handoff readiness and cadence hint its state sets:
 * projection/quotaSignals.ts), as the original's scan sees them among the item's. A key's verdict depends only on what
 * is below it, so the scan of the whole item is the union of this one's keys and the rest's (`scannedItem`).
 */
function quotaScanned(item: Pick<GoalStatusItem, 'quota' | 'handoff_readiness' | 'long_task_cadence_hint'>): unknown {
  let quota = item.quota;
  if (quota !== undefined && 'budgets' in quota) {
    const { budgets: _budgets, ...rest } = quota;
    quota = rest;
  }
  return { quota, handoff_readiness: item.handoff_readiness, long_task_cadence_hint: item.long_task_cadence_hint };
}

type ActiveLease = GoalChannelProjection['active_leases'][number];

/** One hard task lease file as read when answering: its record, or unreadable. */
export type HardLeaseRead = { file: string; record: TaskLeaseRecord | null } | { file: string; unreadable: true };

/**
 * The original's hard-lease entries: each active lease (`task_lease_v0`, status `active`, not expired at `now`) of the
 * goal's `task-leases/` folder, by file name; an unreadable file as `hard_lease_unreadable`; a lease whose owner is not
 * the agent that claims its todo (among the projection's agent todos) says so.
 */
export function hardLeaseEntries(
  reads: readonly HardLeaseRead[],
  agentTodos: readonly GoalChannelTodo[],
  now: Date,
): ActiveLease[] {
  const claims = new Map<string, string>();
  for (const todo of agentTodos)
    if (todo.todo_id !== undefined && todo.claimed_by !== undefined) claims.set(todo.todo_id, todo.claimed_by);
  const entries: ActiveLease[] = [];
  for (const read of reads) {
    const stem = path.basename(read.file, '.json');
    if ('unreadable' in read) {
      entries.push({ todo_id: stem, status: 'hard_lease_unreadable', reason: 'corrupt_lease' });
      continue;
    }
    const lease = read.record;
    if (lease === null || !leaseIsActive(lease, now)) continue;
    const todoId = compactText(lease.todo_id, 120) ?? stem;
    const entry: ActiveLease = { todo_id: todoId, status: 'hard_lease' };
    const owner = compactText(lease.owner, 120);
    if (owner !== null) entry.owner_agent = owner;
    if (lease.version !== undefined) entry.lease_version = lease.version;
    entry.lease_epoch = leaseEpoch(lease);
    const expiresAt = compactText(lease.expires_at, 80);
    if (expiresAt !== null) entry.expires_at = expiresAt;
    const claimedBy = claims.get(todoId);
    if (owner !== null && claimedBy !== undefined && claimedBy !== owner) {
      entry.reason = 'owner_conflicts_with_claim';
      entry.claimed_by = claimedBy;
    }
    entries.push(entry);
  }
  return entries;
}

/** The read-only goal channel projection of one status item (`hardLeases`: its goal's lease files, read now). */
export function goalChannelProjection(
  item: GoalStatusItem,
  goal: RegistryGoal | undefined,
  hardLeases: { reads: readonly HardLeaseRead[]; now: Date } = { reads: [], now: new Date(0) },
): GoalChannelProjection {
  return withChannelTime(goalChannelBase(item, goal), item, hardLeases);
}

/**
 * The projection without what changes with the time, kept with the item between calls: its `quota`, `source_warnings`
 * (the raw-material keys of the quota's members join `raw_keys`, those of the rest of the item) and the hard leases of
 * `active_leases` are put in when answering ({@link withChannelTime}).
 */
export interface GoalChannelBase {
  /** `quota` and `source_warnings` empty, `active_leases` the soft claims only. */
  projection: GoalChannelProjection;
  /** The raw-material keys of the item without the members its quota decides, sorted. */
  raw_keys: string[];
}

/** The projection's base (see {@link GoalChannelBase}) of an item, with or without its quota. */
export function goalChannelBase(item: GoalStatusItem, goal: RegistryGoal | undefined): GoalChannelBase {
  const userTodos = channelTodos(item.user_todos);
  const agentTodos = channelTodos(item.agent_todos);
  const userGateTodos = userTodos.filter(
    (todo) => todo.task_class === 'user_gate' && !CLOSED_GATE_STATUSES.has(todo.status),
  );
  const latestRun = item.latest_runs[0];
  // The original scans its raw run rows too: their key names were taken when the item was projected.
  const rawKeys = rawMaterialKeys(
    scannedItem(item),
    runHistorySources(item, goal),
    item.latest_runs,
    Object.fromEntries((item.latest_run_raw_keys ?? []).map((key) => [key, null])),
  );
  const projection: GoalChannelProjection = {
    schema_version: GOAL_CHANNEL_PROJECTION_SCHEMA,
    goal_id: item.goal_id,
    mode: 'read_only',
    // The original's item carries no display name or domain: its goal id stands in.
    display_name: compactText(item.goal_id, 120) ?? item.goal_id,
    source_refs: {
      status_generated_at: null,
      active_state_updated_at: null,
      latest_run_generated_at: compactText(latestRun?.generated_at, 80),
      review_packet_generated_at: null,
      event_ledger_source: 'run_history',
    },
    waiting_on: compactText(item.waiting_on, 80) ?? item.waiting_on,
    latest_status: compactText(item.status, 160) ?? item.status,
    next_action: firstText(260, item.recommended_action, item.active_state_next_action) ?? item.recommended_action,
    decision_frame: {
      user_action_required: userGateTodos.length > 0,
      agent_action_required: false,
      quiet_noop_allowed: false,
    },
    quota: {},
    user_todos: userTodos,
    agent_todos: agentTodos,
    open_gates:
      userGateTodos.length > 0
        ? [
            {
              gate_id: 'project_asset_user_gate_todos',
              kind: 'user_todo',
              status: 'action_required',
              blocks: userGateTodos.map((todo) => todo.todo_id ?? todo.title),
            },
          ]
        : [],
    artifacts: [],
    active_leases: agentTodos
      .filter((todo) => todo.claimed_by !== undefined)
      .map((todo): ActiveLease => ({
        todo_id: todo.todo_id ?? '',
        owner_agent: todo.claimed_by ?? '',
        status: 'soft_claim',
      })),
    recent_events: item.latest_runs
      .slice(0, 5)
      .map(recentEvent)
      .filter((event): event is GoalChannelProjection['recent_events'][number] => event !== null),
    source_warnings: [],
    truth_contract: TRUTH_CONTRACT,
  };
  return { projection, raw_keys: rawKeys };
}

/**
 * The projection of an item from its base (`goalChannelBase` of the same item): the item's quota, the raw-material
 * warning over the whole item, and the goal's hard leases active at `hardLeases.now`. A new object.
 */
export function withChannelTime(
  base: GoalChannelBase,
  item: Pick<GoalStatusItem, 'quota' | 'handoff_readiness' | 'long_task_cadence_hint'>,
  hardLeases: { reads: readonly HardLeaseRead[]; now: Date } = { reads: [], now: new Date(0) },
): GoalChannelProjection {
  const { projection } = base;
  const timed = rawMaterialKeys(quotaScanned(item));
  const rawKeys =
    timed.length === 0
      ? base.raw_keys
      : [...new Set([...base.raw_keys, ...timed])].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    ...projection,
    quota: channelQuota(item.quota),
    active_leases:
      hardLeases.reads.length === 0
        ? projection.active_leases
        : projection.active_leases.concat(hardLeaseEntries(hardLeases.reads, projection.agent_todos, hardLeases.now)),
    source_warnings:
      rawKeys.length > 0
        ? [{ kind: 'raw_or_private_material_omitted', key_names: rawKeys, message: RAW_MATERIAL_WARNING }]
        : [],
  };
}
