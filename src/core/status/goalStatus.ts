import * as fs from 'node:fs';
import { z } from 'zod';
import { isLoopxError, errorMessage } from '../errors';
import type { StatusDiskCache } from './diskCache';
import { projectGoalWarnings } from './projection/goalWarnings';
import { pickLatestRuns, selectLatestRunRecommendedAction } from './projection/latestRunRecommendation';
import {
  latestRunRecommendationSourceSchema,
  nextActionProjectionWarningSchema,
  projectionWarningSchema,
  staleLatestRunWarningSchema,
  stateProjectionGapSchema,
  type ProjectionWarning,
} from './projection/schemas';
import { publicSafeCompact } from './projection/text';
import { scrubText } from '../privacy/scrub';
import {
  attentionRoute,
  AttentionSeveritySchema,
  MONITOR_SIGNAL_WAITING_ON,
  monitorQuietDisplay,
  quietMonitorAction,
  WaitingOnSchema,
  type OpenTodoFacts,
} from './attentionRoute';
import { readRegistry } from '../registry/read';
import { runIndexPath } from '../runtime/layout';
import {
  artifactFlagsHold,
  readRunIndex,
  type ReadRunIndexOptions,
  type RunIndexEntry,
  type RunIndexRead,
} from '../runtime/runIndex';
import { stateDigest16 } from '../state/digest';
import { firstSectionOf, parseStateDocument, type StateDocument } from '../state/document';
import { analyzeGates } from '../state/gates';
import type { TodoRole } from '../state/sections';
import { readStateText } from '../state/stateFile';
import { projectStateDocument, StateDiagnosticsSchema, type StructuredTodoItem } from '../state/structured';
import { ContractDiagnosticSchema, todoContractDiagnostics, type ContractDiagnostic } from './contractCheck';
import { ReplanObligationSchema, replanObligationWithRuns } from '../scheduling/replanObligation';

/**
 * The per-goal status read model: what `loopx status`, the status server and the editor views
 * show for one goal. It is a pure function of the registry entry, the state file and the run
 * index; `GoalStatusCache` re-reads a file only when its (mtime, size, inode) changed and
 * re-projects a goal only when one of its inputs changed, so a refresh after an edit costs the
 * edited goal's files and nothing proportional to the other goals.
 */

// ---------------------------------------------------------------------------------------------
// Output contract

export const StatusTodoItemSchema = z.object({
  index: z.number().int(),
  done: z.boolean(),
  text: z.string(),
  title: z.string(),
  todo_id: z.string(),
  priority: z.string().nullable(),
  status: z.enum(['open', 'done', 'blocked', 'deferred']),
  claimed_by: z.string().nullable(),
  task_class: z.string().nullable(),
});
export type StatusTodoItem = z.infer<typeof StatusTodoItemSchema>;

export const StatusTodoSummarySchema = z.object({
  /** The heading of the section the todos come from, or null when the file has none. */
  source_section: z.string().nullable(),
  total_count: z.number().int().nonnegative(),
  open_count: z.number().int().nonnegative(),
  /** Closed todos, as LoopX counts them: done and deferred (`deferred_count` says how many of them are deferred). */
  done_count: z.number().int().nonnegative(),
  blocked_count: z.number().int().nonnegative(),
  deferred_count: z.number().int().nonnegative(),
  /** The first open todos in document order (for `--agent-id`, agent todos claimed by it or unclaimed). */
  items: z.array(StatusTodoItemSchema),
});
export type StatusTodoSummary = z.infer<typeof StatusTodoSummarySchema>;

export const StatusGateSchema = z.object({
  todo_id: z.string(),
  text: z.string(),
  title: z.string(),
  status: z.string(),
  gate_state: z.enum(['open', 'rejected', 'cancelled']),
  /** 1-based line of the gate in the state file. */
  line: z.number().int().positive(),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
  unblocks_todo_ids: z.array(z.string()),
  decision_scope: z.string().nullable(),
  unscoped: z.boolean(),
  blocked_todo_ids: z.array(z.string()),
  /** When the person should have decided (ISO-8601; metadata `next_due_at`), or null. */
  due_at: z.string().nullable(),
  /** The gate's `updated_at` metadata (when it was last written), or null. */
  updated_at: z.string().nullable(),
});
export type StatusGate = z.infer<typeof StatusGateSchema>;

/** A run as status lists it: no paths, and the action public-safe compacted (null when it named a path or a secret). */
export const StatusRunSchema = z.object({
  generated_at: z.string().nullable(),
  goal_id: z.string(),
  classification: z.string().nullable(),
  agent_id: z.string().nullable(),
  progress_scope: z.string().nullable(),
  recommended_action: z.string().nullable(),
  recommended_action_source: z.string().nullable(),
  health_check: z.string().nullable(),
  json_exists: z.boolean(),
  markdown_exists: z.boolean(),
});
export type StatusRun = z.infer<typeof StatusRunSchema>;

export const ActiveStateStatusSchema = z.object({
  available: z.boolean(),
  /** Front-matter `status` and `updated_at`. */
  status: z.string().nullable(),
  updated_at: z.string().nullable(),
  sha256_16: z.string().nullable(),
  /** Why the file could not be read; paths in the message are replaced by labels such as `<project>/…`. */
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
});
export type ActiveStateStatus = z.infer<typeof ActiveStateStatusSchema>;

/** The quota summary of a goal as the original's attention items carry it. */
export const StatusItemQuotaSchema = z.looseObject({
  compute: z.number().optional(),
  window_hours: z.number().optional(),
  slot_minutes: z.number().optional(),
  allowed_slots: z.number().optional(),
  spent_slots: z.number().optional(),
  state: z.string().optional(),
  reason: z.string().optional(),
});
export type StatusItemQuota = z.infer<typeof StatusItemQuotaSchema>;

export { WaitingOnSchema, AttentionSeveritySchema } from './attentionRoute';
export const RecommendedActionOriginSchema = z.enum(['latest_run', 'active_state_next_action', 'default']);

export const DEFAULT_STATUS_ACTION =
  'add a durable route under "## Next Action" in ACTIVE_GOAL_STATE.md, or record a run with loopx refresh-state';

/**
 * An autonomous replan obligation a lane owes now (scheduling/replanObligation.ts): the obligation
 * `quota should-run` would surface as `autonomous_replan_required`, with the stalled runs that owe it.
 */
export const StatusReplanObligationSchema = z.object({
  /** The agent lane (null: the goal registers no agent and all runs count). */
  agent_id: z.string().nullable(),
  obligation: ReplanObligationSchema,
  /** The stalled runs, newest first (paths and secrets compacted away like `latest_runs`). */
  stalled_runs: z.array(
    z.object({
      generated_at: z.string().nullable(),
      classification: z.string().nullable(),
      recommended_action: z.string().nullable(),
      todo_id: z.string().nullable(),
      turn_instance_id: z.string().nullable(),
    }),
  ),
  /** When the streak began: the oldest stalled run's time. */
  since: z.string().nullable(),
});
export type StatusReplanObligation = z.infer<typeof StatusReplanObligationSchema>;

/** One goal of the status read model (an `attention_queue.items[]` entry of the original). */
export const GoalStatusItemSchema = z.object({
  goal_id: z.string(),
  display_name: z.string(),
  /**
   * LoopX's attention status: `active_state_user_gate`, `active_state_user_todo`, `connected_without_run`,
   * `run_artifact_missing`, the latest status run's classification, … (attentionRoute.ts).
   */
  status: z.string(),
  /** The goal's status in the registry. */
  goal_status: z.string(),
  domain: z.string().nullable(),
  waiting_on: WaitingOnSchema,
  severity: AttentionSeveritySchema,
  /**
   * Set on a quiet-monitor item (`waiting_on: monitor_signal`, attentionRoute.ts `monitorQuietDisplay`): the
   * route it had before, which its quota state follows.
   */
  execution_waiting_on: WaitingOnSchema.optional(),
  execution_severity: AttentionSeveritySchema.optional(),
  recommended_action: z.string().min(1),
  /** Where `recommended_action` came from. */
  source: RecommendedActionOriginSchema,
  registry_member: z.boolean(),
  registered_agents: z.array(z.string()),
  /** Set when the status was asked for one agent (`--agent-id`). */
  agent_id: z.string().optional(),
  active_state_next_action: z.string().optional(),
  active_state_next_action_entries: z.array(z.string()).optional(),
  latest_run_recommended_action: z.string().nullable(),
  latest_run_recommended_action_source: latestRunRecommendationSourceSchema.nullable(),
  next_action_projection_warning: nextActionProjectionWarningSchema.optional(),
  state_projection_gap: stateProjectionGapSchema.optional(),
  stale_latest_run_warning: staleLatestRunWarningSchema.optional(),
  /** Every drift warning, most severe first. */
  projection_warnings: z.array(projectionWarningSchema),
  /** Null when the state file could not be read, as LoopX reports it. */
  user_todos: StatusTodoSummarySchema.nullable(),
  agent_todos: StatusTodoSummarySchema.nullable(),
  open_gates: z.array(StatusGateSchema),
  latest_runs: z.array(StatusRunSchema),
  index_exists: z.boolean(),
  raw_index_records: z.number().int().nonnegative(),
  unique_runs: z.number().int().nonnegative(),
  /** Index lines that could not be read (bad JSON, not an object). */
  skipped_index_lines: z.number().int().nonnegative(),
  /** Set when the run index could not be read at all: why, naming the file and the fix (runs and slot use unknown). */
  run_index_unreadable: z.string().optional(),
  active_state: ActiveStateStatusSchema,
  state_diagnostics: StateDiagnosticsSchema.nullable(),
  /**
   * The goal's errors in LoopX's contract check (contractCheck.ts): todo metadata rules, or a state
   * file that exists but cannot be read. Any error fails the status (`ok: false`).
   */
  contract_diagnostics: z.array(ContractDiagnosticSchema),
  /** Replan obligations the goal's lanes owe now (one per registered agent at most); absent when none. */
  replan_obligations: z.array(StatusReplanObligationSchema).optional(),
  quota: StatusItemQuotaSchema.optional(),
});
export type GoalStatusItem = z.infer<typeof GoalStatusItemSchema>;

// ---------------------------------------------------------------------------------------------
// Inputs

/** What status needs to know about a goal; a `GoalSummary` of the workspace read model fits. */
export const GoalStatusTargetSchema = z.object({
  goalId: z.string().min(1),
  displayName: z.string(),
  status: z.string(),
  domain: z.string().nullable(),
  projectRoot: z.string(),
  runtimeRoot: z.string(),
  stateFile: z.string().nullable(),
  agents: z.array(z.string()),
  registryMember: z.boolean().default(true),
  /** The registry entry's `adapter.status`/`adapter.kind`, `waiting_on` and `attention_status` (attention routing). */
  adapterStatus: z.string().nullable().default(null),
  adapterKind: z.string().nullable().default(null),
  registryWaitingOn: z.string().nullable().default(null),
  attentionStatus: z.string().nullable().default(null),
});
export type GoalStatusTarget = z.input<typeof GoalStatusTargetSchema>;

export interface GoalStatusOptions {
  /** For labelling paths in error messages (`<home>/…`). */
  homeDir: string;
  /** Look at the goal as this agent: its lane runs win, its (and unclaimed) agent todos are listed. */
  agentId?: string | null;
  /** Latest runs listed (default 5). */
  limit?: number;
  /** Open todos listed per role (default 5). */
  todoItemLimit?: number;
  /** Reuse reads and projections across calls. */
  cache?: GoalStatusCache;
  /** Where files are read from; default the file system (tests count reads through it). */
  reader?: StatusFileReader;
}

export const DEFAULT_STATUS_RUN_LIMIT = 5;
export const DEFAULT_STATUS_TODO_ITEM_LIMIT = 5;

/** A file's identity for the cache: any rewrite (atomic rename included) changes one of these. */
export interface FileStamp {
  mtimeMs: number;
  size: number;
  ino: number;
}

/** The reads status makes; injectable so tests can count them and the editor can serve unsaved buffers. */
export interface StatusFileReader {
  /** Null when the file does not exist. */
  stat(file: string): Promise<FileStamp | null>;
  readRegistry(file: string): Promise<Record<string, unknown>>;
  readState(file: string): Promise<string>;
  readRunIndex(indexFile: string, options: ReadRunIndexOptions): Promise<RunIndexRead>;
}

export const fileSystemStatusReader: StatusFileReader = {
  stat: async (file) => {
    try {
      // Sync: a stat is cheaper than the promise around it, and status stats two files per goal.
      const stats = fs.statSync(file, { throwIfNoEntry: false });
      return stats === undefined ? null : { mtimeMs: stats.mtimeMs, size: stats.size, ino: stats.ino };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR')
        return null;
      throw error;
    }
  },
  readRegistry,
  readState: readStateText,
  readRunIndex,
};

function sameStamp(a: FileStamp | null, b: FileStamp | null): boolean {
  if (a === null || b === null) return a === b;
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** A state file as read for status: its text and parsed document, or why it could not be read. */
export type StateRead =
  { kind: 'ok'; text: string; doc: StateDocument } | { kind: 'error'; code: string; message: string };

// ---------------------------------------------------------------------------------------------
// Projection (pure)

interface ProjectionInput {
  target: z.output<typeof GoalStatusTargetSchema>;
  state: StateRead;
  runs: RunIndexRead | null;
  agentId: string | null;
  limit: number;
  todoItemLimit: number;
  homeDir: string;
}

function statusTodoItem(item: StructuredTodoItem): StatusTodoItem {
  return {
    index: item.index,
    done: item.done,
    text: item.text,
    title: item.title,
    todo_id: item.todo_id,
    priority: item.priority,
    status: item.status,
    claimed_by: item.claimed_by,
    task_class: item.task_class,
  };
}

/** A goal's todo summary for readers that show counts either way: an empty one when the state file could not be read. */
export const NO_TODOS: StatusTodoSummary = {
  source_section: null,
  total_count: 0,
  open_count: 0,
  done_count: 0,
  blocked_count: 0,
  deferred_count: 0,
  items: [],
};

export function todosOrEmpty(summary: StatusTodoSummary | null | undefined): StatusTodoSummary {
  return summary ?? NO_TODOS;
}

function isOpen(item: Pick<StructuredTodoItem, 'status'>): boolean {
  return item.status !== 'done' && item.status !== 'deferred';
}

/**
 * LoopX's `todo_item_is_actionable_open`: open, and a `resume_when` (on an open todo) only when it holds; of the
 * conditions only `todo_done:<id>` can be checked here.
 */
function actionableOpen(item: StructuredTodoItem, doc: StateDocument): boolean {
  if (item.status !== 'open') return false;
  const resumeWhen = (item.metadata['resume_when'] ?? '').trim();
  if (resumeWhen === '') return true;
  const match = /^todo_done:(.+)$/.exec(resumeWhen);
  return match !== null && doc.todos.some((todo) => todo.todoId === match[1] && todo.status === 'done');
}

function todoSummary(
  doc: StateDocument,
  summary: {
    total_count: number;
    open_count: number;
    done_count: number;
    blocked_count: number;
    deferred_count: number;
    items: StructuredTodoItem[];
  },
  role: TodoRole,
  input: ProjectionInput,
): StatusTodoSummary {
  const visible = summary.items.filter(
    (item) =>
      isOpen(item) &&
      (role === 'user' || input.agentId === null || item.claimed_by === null || item.claimed_by === input.agentId),
  );
  return {
    source_section: firstSectionOf(doc, role)?.title ?? null,
    total_count: summary.total_count,
    open_count: summary.open_count,
    done_count: summary.done_count + summary.deferred_count,
    blocked_count: summary.blocked_count,
    deferred_count: summary.deferred_count,
    items: visible.slice(0, input.todoItemLimit).map(statusTodoItem),
  };
}

function statusRun(row: RunIndexEntry, goalId: string): StatusRun {
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  return {
    generated_at: row.generated_at ?? null,
    goal_id: row.goal_id ?? goalId,
    classification: row.classification ?? null,
    agent_id: row.agent_id ?? null,
    progress_scope: row.progress_scope ?? null,
    recommended_action: publicSafeCompact(row.recommended_action),
    recommended_action_source: text(row['recommended_action_source']),
    health_check: row.health_check ?? null,
    json_exists: row.json_exists,
    markdown_exists: row.markdown_exists,
  };
}

/** The obligations each lane owes: every registered agent's lane, or all runs when none is registered. */
function replanObligations(rows: readonly RunIndexEntry[], input: ProjectionInput): StatusReplanObligation[] {
  const lanes: (string | null)[] =
    input.agentId !== null
      ? [input.agentId]
      : input.target.agents.length > 0
        ? [...new Set(input.target.agents)]
        : [null];
  const owed: StatusReplanObligation[] = [];
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  for (const agentId of lanes) {
    const found = replanObligationWithRuns({ goalId: input.target.goalId, agentId, rowsNewestFirst: rows });
    if (found === null) continue;
    const { obligation, stalledRuns } = found;
    owed.push({
      agent_id: agentId,
      obligation: {
        ...obligation,
        triggers: obligation.triggers.map((t) => ({ ...t, text: labelPaths(t.text, input) })),
      },
      stalled_runs: stalledRuns.map((row) => ({
        generated_at: text(row.generated_at),
        classification: text(row.classification),
        recommended_action: publicSafeCompact(row.recommended_action),
        todo_id: text(row.todo_id),
        turn_instance_id: text(row['turn_instance_id']),
      })),
      since: text(stalledRuns[stalledRuns.length - 1]?.generated_at),
    });
  }
  return owed;
}

function labelPaths(message: string, input: ProjectionInput): string {
  return scrubText(message, {
    projectRoots: [input.target.projectRoot],
    homeDir: input.homeDir,
    runtimeRoot: input.target.runtimeRoot,
  });
}

/** Builds the status item of one goal from what was read. Pure: same inputs, same item. */
export function projectGoalStatus(input: ProjectionInput): GoalStatusItem {
  const { target, state, runs } = input;
  const rows = runs?.rows ?? [];
  const { latestStatusRun, agentLaneRuns } = pickLatestRuns(rows);
  const doc = state.kind === 'ok' ? state.doc : null;
  const structured = doc ? projectStateDocument(doc, { goalId: target.goalId, nextActionLimit: 3 }) : null;
  const entries = structured?.next_action.entries ?? [];
  const activeNextAction = entries[0] ?? null;
  const updatedAt = structured?.frontmatter['updated_at'] ?? null;
  const digest = state.kind === 'ok' ? stateDigest16(state.text) : null;

  const latest = selectLatestRunRecommendedAction({
    activeStateNextAction: activeNextAction,
    latestStatusRun,
    latestAgentLaneRun: agentLaneRuns[0] ?? null,
    preferredAgentId: input.agentId,
  });
  const userTodos = doc && structured ? todoSummary(doc, structured.todos.user, 'user', input) : null;
  const agentTodos = doc && structured ? todoSummary(doc, structured.todos.agent, 'agent', input) : null;
  const warnings: ProjectionWarning[] = projectGoalWarnings({
    goalId: target.goalId,
    registryMember: target.registryMember,
    activeState: doc
      ? { next_action: activeNextAction, next_action_entries: entries, updated_at: updatedAt, sha256_16: digest }
      : null,
    latestStatusRun,
    agentLaneRuns,
    preferredAgentId: input.agentId,
    todoCounts: doc
      ? {
          agent: { markdownOpenCount: agentTodos?.open_count ?? 0 },
          user: { markdownOpenCount: userTodos?.open_count ?? 0 },
        }
      : null,
  });

  const gates = doc ? analyzeGates(doc) : null;
  const openGates: StatusGate[] = (gates?.open_gates ?? []).map((gate) => ({
    todo_id: gate.todo_id,
    text: gate.text,
    title: gate.title,
    status: gate.status,
    gate_state: gate.gate_state,
    line: gate.line,
    blocks_agent: gate.blocks_agent,
    global_gate: gate.global_gate,
    unblocks_todo_ids: gate.unblocks_todo_ids,
    decision_scope: gate.decision_scope,
    unscoped: gate.unscoped,
    blocked_todo_ids: gate.blocked_todo_ids,
    due_at: gate.due_at,
    updated_at: gate.updated_at,
  }));
  const openFacts = (summary: { open_count: number; items: StructuredTodoItem[] } | undefined): OpenTodoFacts | null =>
    summary === undefined
      ? null
      : {
          open_count: summary.open_count,
          open: summary.items.filter(isOpen).map((item) => ({ task_class: item.task_class })),
        };
  const route = attentionRoute({
    registryStatus: target.status,
    adapterStatus: target.adapterStatus,
    adapterKind: target.adapterKind,
    registryWaitingOn: target.registryWaitingOn,
    attentionStatus: target.attentionStatus,
    latestStatusRun:
      latestStatusRun === null
        ? null
        : {
            ...latestStatusRun,
            json_exists: latestStatusRun['json_exists'] === true,
            markdown_exists: latestStatusRun['markdown_exists'] === true,
          },
    userTodos: openFacts(structured?.todos.user),
    agentTodos: openFacts(structured?.todos.agent),
    hasProjectionGap: warnings.some((warning) => warning.kind === 'state_projection_gap'),
  });

  const [routedAction, source] =
    latest.latest_run_recommended_action !== null
      ? [latest.latest_run_recommended_action, 'latest_run' as const]
      : activeNextAction !== null
        ? [activeNextAction, 'active_state_next_action' as const]
        : [DEFAULT_STATUS_ACTION, 'default' as const];
  const quietMonitor =
    doc !== null &&
    structured !== null &&
    monitorQuietDisplay(route, {
      userOpenCount: structured.todos.user.open_count,
      agentOpen: structured.todos.agent.items
        .filter(isOpen)
        .map((item) => ({ task_class: item.task_class, actionable: actionableOpen(item, doc) })),
    });
  const recommendedAction = quietMonitor ? quietMonitorAction(routedAction) : routedAction;

  const byKind = <K extends ProjectionWarning['kind']>(kind: K): Extract<ProjectionWarning, { kind: K }> | undefined =>
    warnings.find((warning): warning is Extract<ProjectionWarning, { kind: K }> => warning.kind === kind);
  const nextActionWarning = byKind('next_action_projection_mismatch');
  const gap = byKind('state_projection_gap');
  const stale = byKind('stale_latest_run_projection');

  const owed = replanObligations(rows, input);
  const item: GoalStatusItem = {
    goal_id: target.goalId,
    display_name: target.displayName,
    status: route.status,
    goal_status: target.status,
    domain: target.domain,
    ...(quietMonitor
      ? {
          waiting_on: MONITOR_SIGNAL_WAITING_ON,
          severity: 'watch' as const,
          execution_waiting_on: route.waiting_on,
          execution_severity: route.severity,
        }
      : { waiting_on: route.waiting_on, severity: route.severity }),
    recommended_action: recommendedAction,
    source,
    registry_member: target.registryMember,
    registered_agents: target.agents,
    ...(input.agentId !== null ? { agent_id: input.agentId } : {}),
    ...(activeNextAction !== null
      ? { active_state_next_action: activeNextAction, active_state_next_action_entries: entries }
      : {}),
    latest_run_recommended_action: latest.latest_run_recommended_action,
    latest_run_recommended_action_source: latest.latest_run_recommended_action_source,
    ...(nextActionWarning ? { next_action_projection_warning: nextActionWarning } : {}),
    ...(gap ? { state_projection_gap: gap } : {}),
    ...(stale ? { stale_latest_run_warning: stale } : {}),
    projection_warnings: warnings,
    user_todos: userTodos,
    agent_todos: agentTodos,
    open_gates: openGates,
    latest_runs: rows.slice(0, input.limit).map((row) => statusRun(row, target.goalId)),
    index_exists: runs?.exists ?? false,
    raw_index_records: runs?.raw_count ?? 0,
    unique_runs: rows.length,
    skipped_index_lines: runs?.skipped.length ?? 0,
    ...(runs?.unreadable !== undefined ? { run_index_unreadable: runs.unreadable } : {}),
    active_state:
      state.kind === 'ok'
        ? {
            available: true,
            status: structured?.frontmatter['status'] ?? null,
            updated_at: updatedAt,
            sha256_16: digest,
            error: null,
          }
        : {
            available: false,
            status: null,
            updated_at: null,
            sha256_16: null,
            error: { code: state.code, message: labelPaths(state.message, input) },
          },
    state_diagnostics: structured?.diagnostics ?? null,
    contract_diagnostics: contractDiagnostics(input, doc),
    ...(owed.length > 0 ? { replan_obligations: owed } : {}),
  };
  return GoalStatusItemSchema.parse(item);
}

/** The goal's contract errors: a state file that exists but cannot be read, or its todos' metadata rules. */
function contractDiagnostics(input: ProjectionInput, doc: StateDocument | null): ContractDiagnostic[] {
  const { target, state } = input;
  if (state.kind === 'error') {
    // A missing or unresolvable state file is no contract error (LoopX skips the goal); the item says why.
    if (state.code === 'state_file_missing' || state.code === 'state_file_unresolved') return [];
    return [
      {
        code: 'active_state_read_failed',
        message: `${target.goalId}: cannot read active state for todo contract check: ${labelPaths(state.message, input)}`,
      },
    ];
  }
  if (doc === null) return [];
  return todoContractDiagnostics(doc, {
    goalId: target.goalId,
    registeredAgents: target.agents,
    stateFileLabel: labelPaths(target.stateFile ?? '', input),
  });
}

// ---------------------------------------------------------------------------------------------
// Cache and loading

interface Stamped<T> {
  stamp: FileStamp | null;
  value: T;
}

/**
 * How many released goals' run-index reads a cache keeps when asked to (see `releasedIndexes`): a
 * parsed index of real shape (500 rows of 1 KB) takes ~10 MB, so only a couple of goals being worked on.
 */
const RELEASED_INDEXES_KEPT = 2;

/** Targets as parsed, per target object: status asks the cache about the same targets on every call. */
const parsedTargets = new WeakMap<GoalStatusTarget, z.output<typeof GoalStatusTargetSchema>>();
function parsedTarget(goal: GoalStatusTarget): z.output<typeof GoalStatusTargetSchema> {
  let target = parsedTargets.get(goal);
  if (target === undefined) {
    target = GoalStatusTargetSchema.parse(goal);
    parsedTargets.set(goal, target);
  }
  return target;
}

/**
 * Keeps the last read of every registry, state file and run index with its file stamp, and the
 * last status item of every goal with the inputs it was projected from. A call stats the goal's
 * two files; only a changed stamp causes a read, and only changed inputs a re-projection.
 */
export class GoalStatusCache {
  private readonly registries = new Map<string, Stamped<Record<string, unknown>>>();
  private readonly states = new Map<string, Stamped<StateRead>>();
  private readonly indexes = new Map<string, Stamped<RunIndexRead | null>>();
  /** Index files found missing by the last look. */
  private readonly missingIndexes = new Set<string>();
  /**
   * The run-index reads of the goals released last with `keepIndexRead`, with their stamps. A goal
   * being worked on has its state file edited between appends: its item is then rebuilt without
   * parsing its index again, when the index's stamp and the read's artifact flags still hold.
   */
  private readonly releasedIndexes = new Map<string, Stamped<RunIndexRead | null>>();
  private readonly items = new Map<string, { key: string; item: GoalStatusItem }>();
  /** The persistent cache behind this one (see diskCache.ts), when the caller opened one. */
  disk: StatusDiskCache | undefined;

  constructor(readonly reader: StatusFileReader = fileSystemStatusReader) {}

  /** The registry document, read again only when the file changed. Errors (bad JSON) propagate. */
  async registry(registryPath: string): Promise<{ exists: boolean; registry: Record<string, unknown> }> {
    const stamp = await this.reader.stat(registryPath);
    if (stamp === null) {
      this.registries.delete(registryPath);
      return { exists: false, registry: {} };
    }
    const cached = this.registries.get(registryPath);
    if (cached && sameStamp(cached.stamp, stamp)) return { exists: true, registry: cached.value };
    const registry = await this.reader.readRegistry(registryPath);
    this.registries.set(registryPath, { stamp, value: registry });
    return { exists: true, registry };
  }

  /**
   * The goal's state file and run index as this cache holds them (read again only when changed),
   * for read models that need every todo and run rather than the item's first few.
   */
  async goalSources(goal: GoalStatusTarget): Promise<{ state: StateRead; runs: RunIndexRead | null }> {
    const target = parsedTarget(goal);
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    const [stateStamp, indexStamp] = await Promise.all([
      target.stateFile === null ? Promise.resolve(null) : this.reader.stat(target.stateFile),
      this.reader.stat(indexFile),
    ]);
    const [state, runs] = await Promise.all([
      this.readState(target.stateFile, stateStamp),
      this.readIndex(indexFile, indexStamp, target.projectRoot, 0),
    ]);
    return { state, runs };
  }

  /**
   * The goal's run index as this cache holds it from its last read (`read` null: the file did not
   * exist), with the stamp the file had when it was read, without a stat; undefined when it holds
   * none. For the quota summary status attaches right after projecting the goal, so the index is not
   * read twice, and whatever is derived from the read is keyed by the stamp of that read (a stat
   * taken now may already be of rows appended since).
   */
  heldRunIndex(goal: GoalStatusTarget): { stamp: FileStamp | null; read: RunIndexRead | null } | undefined {
    const target = parsedTarget(goal);
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    const held = this.indexes.get(indexFile);
    if (held !== undefined) return { stamp: held.stamp, read: held.value };
    return this.missingIndexes.has(indexFile) ? { stamp: null, read: null } : undefined;
  }

  /**
   * Drops the goal's file reads (its status item stays): for callers that must not hold every goal's
   * history at once. `keepIndexRead`: keep its run-index read aside for its next rebuild (the live
   * model's one-goal refresh; a full build or a one-shot call keeps none).
   */
  release(goal: GoalStatusTarget, options: { keepIndexRead?: boolean } = {}): void {
    const target = parsedTarget(goal);
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    const held = this.indexes.get(indexFile);
    if (held !== undefined && options.keepIndexRead === true) {
      this.releasedIndexes.delete(indexFile);
      this.releasedIndexes.set(indexFile, held);
      if (this.releasedIndexes.size > RELEASED_INDEXES_KEPT)
        this.releasedIndexes.delete(this.releasedIndexes.keys().next().value as string);
    }
    this.indexes.delete(indexFile);
    this.missingIndexes.delete(indexFile);
    if (target.stateFile !== null) this.states.delete(target.stateFile);
  }

  async goalStatus(
    goal: GoalStatusTarget,
    options: Omit<GoalStatusOptions, 'cache' | 'reader'>,
  ): Promise<GoalStatusItem> {
    const target = parsedTarget(goal);
    const indexFile = runIndexPath(target.runtimeRoot, target.goalId);
    const [stateStamp, indexStamp] = await Promise.all([
      target.stateFile === null ? Promise.resolve(null) : this.reader.stat(target.stateFile),
      this.reader.stat(indexFile),
    ]);
    const agentId = options.agentId ?? null;
    const limit = options.limit ?? DEFAULT_STATUS_RUN_LIMIT;
    const todoItemLimit = options.todoItemLimit ?? DEFAULT_STATUS_TODO_ITEM_LIMIT;
    const key = JSON.stringify([target, agentId, limit, todoItemLimit, options.homeDir, stateStamp, indexStamp]);
    const cachedItem = this.items.get(target.goalId);
    if (cachedItem && cachedItem.key === key) return cachedItem.item;
    const files: [string, FileStamp | null][] = [
      [target.stateFile ?? '', stateStamp],
      [indexFile, indexStamp],
    ];
    const kept = this.disk?.item(target.goalId, key, files);
    if (kept !== undefined) {
      this.items.set(target.goalId, { key, item: kept });
      return kept;
    }

    const [state, runs] = await Promise.all([
      this.readState(target.stateFile, stateStamp),
      this.readIndex(indexFile, indexStamp, target.projectRoot, limit),
    ]);
    const projected = projectGoalStatus({
      target,
      state,
      runs,
      agentId,
      limit,
      todoItemLimit,
      homeDir: options.homeDir,
    });
    // The item outlives the texts it was projected from: V8 keeps a whole string alive for any slice
    // of it, so an item holding a todo's title would hold its state file's text (20 KB a goal on L).
    // A copy through JSON (the form the persistent cache keeps it in anyway) holds none of them.
    const json = JSON.stringify(projected);
    const item = JSON.parse(json) as GoalStatusItem;
    this.items.set(target.goalId, { key, item });
    this.disk?.setItem(target.goalId, key, files, item, json);
    return item;
  }

  private async readState(stateFile: string | null, stamp: FileStamp | null): Promise<StateRead> {
    if (stateFile === null) {
      return {
        kind: 'error',
        code: 'state_file_unresolved',
        message:
          'the goal has no state_file (or a relative one without an absolute repo) in the registry; set state_file',
      };
    }
    if (stamp === null) {
      this.states.delete(stateFile);
      return {
        kind: 'error',
        code: 'state_file_missing',
        message: `state file does not exist: ${stateFile}; create it (loopx bootstrap) or fix the goal's state_file in the registry`,
      };
    }
    const cached = this.states.get(stateFile);
    if (cached && sameStamp(cached.stamp, stamp)) return cached.value;
    let value: StateRead;
    try {
      const text = await this.reader.readState(stateFile);
      value = { kind: 'ok', text, doc: parseStateDocument(text) };
    } catch (error) {
      value = {
        kind: 'error',
        code: isLoopxError(error) ? error.code : 'state_file_unreadable',
        message: errorMessage(error),
      };
    }
    this.states.set(stateFile, { stamp, value });
    return value;
  }

  /** `artifactChecks`: how many newest rows get their artifacts stat'ed now (the rest on first access). */
  private async readIndex(
    indexFile: string,
    stamp: FileStamp | null,
    projectRoot: string,
    artifactChecks: number,
  ): Promise<RunIndexRead | null> {
    if (stamp === null) {
      this.indexes.delete(indexFile);
      this.releasedIndexes.delete(indexFile);
      this.missingIndexes.add(indexFile);
      return null;
    }
    this.missingIndexes.delete(indexFile);
    const cached = this.indexes.get(indexFile);
    if (cached && sameStamp(cached.stamp, stamp)) return cached.value;
    const released = this.releasedIndexes.get(indexFile);
    this.releasedIndexes.delete(indexFile);
    // A run's records can appear or go while its index stays as it was: the read's flags are checked.
    if (
      released !== undefined &&
      sameStamp(released.stamp, stamp) &&
      (released.value === null || artifactFlagsHold(released.value, projectRoot))
    ) {
      this.indexes.set(indexFile, released);
      return released.value;
    }
    let value: RunIndexRead;
    try {
      value = await this.reader.readRunIndex(indexFile, { projectRoot, artifactChecks });
    } catch (error) {
      // One goal's unreadable index (a FIFO, a device, an oversized file) must not fail the whole
      // status: the goal shows its runs as unknown with the reason (a warning, never "0 runs"), and
      // every other goal reads on. Admission refuses the same index with the same message.
      if (!isLoopxError(error)) throw error;
      value = {
        index_file: indexFile,
        exists: true,
        raw_count: 0,
        skipped: [{ line: 0, reason: error.message }],
        rows: [],
        unreadable: error.message,
      };
    }
    this.indexes.set(indexFile, { stamp, value });
    return value;
  }
}

/** The status item of one goal; pass `cache` to reuse reads across calls. */
export async function loadGoalStatus(goal: GoalStatusTarget, options: GoalStatusOptions): Promise<GoalStatusItem> {
  const cache = options.cache ?? new GoalStatusCache(options.reader);
  return cache.goalStatus(goal, options);
}
