import type { z } from 'zod';
import { projectGoalWarnings } from './projection/goalWarnings';
import { pickLatestRuns, selectLatestRunRecommendedAction } from './projection/latestRunRecommendation';
import type { ProjectionWarning } from './projection/schemas';
import { publicSafeCompact } from './projection/text';
import { lifecycleFields } from './projection/lifecycle';
import { routeOwnAction } from './projection/routeAction';
import { agentLaneRecommendation } from './projection/agentLaneRecommendation';
import { backlogHygieneWarning } from './projection/backlogHygiene';
import { standingDecisionAuthority } from './projection/standingDecisionAuthority';
import { claimedCounts } from './projection/claimedCounts';
import { todoLists } from './projection/todoLists';
import { handoffReadiness, handoffRunState, longTaskCadenceHint } from './projection/handoffReadiness';
import { markCredentialClean, scrubText } from '../privacy/scrub';
import {
  attentionRoute,
  MONITOR_SIGNAL_WAITING_ON,
  monitorQuietDisplay,
  quietMonitorAction,
  type OpenTodoFacts,
} from '../todo/attention';
import { processGoalCache } from '../goal/cache';
import { fileSystemGoalReader, GoalFiles, type FileStamp, type GoalFileReader, type StateRead } from '../goal/files';
import type { PersistentCache } from '../goal/persistentCache';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import { stateDigest16 } from '../state/digest';
import { firstSectionOf, type StateDocument } from '../state/document';
import { analyzeGates } from '../state/gates';
import type { TodoRole } from '../state/sections';
import { projectStateDocument, type StructuredTodoItem } from '../state/structured';
import type { ContractDiagnostic } from './contractCheck';
import { statusTodoContractDiagnostics } from '../todo/contract';
import { openTodoResumeHolds } from '../todo/resume';
import { replanObligationWithRuns } from '../scheduling/replanObligation';
import type { GoalStatusTargetSchema } from './goalStatusSchema';
import {
  DEFAULT_STATUS_ACTION,
  DEFAULT_STATUS_RUN_LIMIT,
  DEFAULT_STATUS_TODO_ITEM_LIMIT,
  GoalStatusItemSchema,
  parseGoalStatusTarget,
  type GoalStatusItem,
  type GoalStatusTarget,
  type StatusGate,
  type StatusReplanObligation,
  type StatusRun,
  type StatusTodoItem,
  type StatusTodoSummary,
} from './goalStatusSchema';

export * from './goalStatusSchema';

/** Runs the item's handoff readiness and agent-lane recommendation look at (the original's control-plane context). */
const CONTROL_PLANE_RUN_LIMIT = 20;

/**
 * The per-goal status read model: what `loopx status`, the status server and the editor views
 * show for one goal. `projectGoalStatus` is a pure function of the registry entry, the state file
 * and the run index (the item's contract is `goalStatusSchema.ts`); `GoalStatusCache` keeps each
 * goal's last item with the stamps of the inputs it was projected from, over `core/goal`'s
 * `GoalFiles` (which re-reads a file only when its (mtime, size, inode) changed) and the persistent
 * cache, so a refresh after an edit costs the edited goal's files and nothing proportional to the
 * other goals.
 */

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
  reader?: GoalFileReader;
}

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

/**
 * One todo of a status summary. Besides our fields, the original's per-todo `schema_version: todo_item_v0`, its
 * `role`, `archive_state` (`active`: a summary lists the User/Agent Todo sections, never the archive) and
 * `source_section`, which the original's parser sets to the **first** heading of the todo's role, as the summary's.
 */
function statusTodoItem(item: StructuredTodoItem, role: TodoRole, sourceSection: string | null): StatusTodoItem {
  return {
    schema_version: 'todo_item_v0',
    role,
    archive_state: 'active',
    source_section: sourceSection,
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
  schema_version: 'todo_summary_v0',
  source_section: null,
  total_count: 0,
  open_count: 0,
  done_count: 0,
  blocked_count: 0,
  deferred_count: 0,
  items: [],
  first_open_items: [],
  first_executable_items: [],
  monitor_open_items: [],
  unclaimed_priority_open_items: [],
  claimed_open_items: [],
  claimed_advancement_open_items: [],
  claimed_monitor_open_items: [],
  backlog_items: [],
  executable_backlog_items: [],
  deferred_items: [],
  deferred_resume_candidates: [],
};

export function todosOrEmpty(summary: StatusTodoSummary | null | undefined): StatusTodoSummary {
  return summary ?? NO_TODOS;
}

/**
 * The original's active-state attention item (`active_state_attention_item`): when the goal's attention comes from
 * its state file, the recommended action is the first open gate's text (a user gate), the first open user todo's, the
 * first open agent todo's or the projection gap's repair, else the Next Action, else the original's default words;
 * `source` is then `active_state`. Null when the attention comes from elsewhere (the latest run, the registry).
 */
export function activeStateAction(
  status: string,
  attentionSource: string,
  open: {
    user: readonly Pick<StructuredTodoItem, 'text' | 'task_class'>[];
    agent: readonly Pick<StructuredTodoItem, 'text'>[];
    nextAction: string | null;
    gapAction: string | null;
  },
): string | null {
  if (attentionSource !== 'active_state') return null;
  const first = (items: readonly { text: string }[]): string | null =>
    items[0] === undefined ? null : publicSafeCompact(items[0].text);
  switch (status) {
    case 'active_state_user_gate':
      return (
        first(open.user.filter((todo) => todo.task_class === 'user_gate')) ??
        open.nextAction ??
        'resolve the open user_gate todo from the active goal state'
      );
    case 'active_state_user_todo':
      return first(open.user) ?? open.nextAction ?? 'resolve the open user todo from the active goal state';
    case 'active_state_agent_todo':
      return first(open.agent) ?? open.nextAction ?? 'run the open agent todo from the active goal state';
    case 'state_projection_gap':
      return open.gapAction ?? 'expand the active-state Next Action into parseable todos';
    default:
      return null;
  }
}

/**
 * The original's projection order of open todos (`todo_projection_sort_key`): by priority (P0 first, none last), then
 * by position. Summaries list them so, and the first gate or todo an item recommends is the first in this order.
 */
function byPriority<T extends Pick<StructuredTodoItem, 'priority' | 'index'>>(items: readonly T[]): T[] {
  const rank = (item: T): number => {
    const match = /^P([0-4])/.exec((item.priority ?? '').trim().toUpperCase());
    return match === null ? 50 : Number(match[1]);
  };
  return [...items].sort((a, b) => rank(a) - rank(b) || a.index - b.index);
}

function isOpen(item: Pick<StructuredTodoItem, 'status'>): boolean {
  return item.status !== 'done' && item.status !== 'deferred';
}

/** LoopX's `todo_item_is_actionable_open`: open, and a `resume_when` (on an open todo) only when it holds. */
function actionableOpen(item: StructuredTodoItem, doc: StateDocument): boolean {
  return item.status === 'open' && openTodoResumeHolds(item.metadata['resume_when'], doc.todos);
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
  const sourceSection = firstSectionOf(doc, role)?.title ?? null;
  return {
    schema_version: 'todo_summary_v0',
    source_section: sourceSection,
    total_count: summary.total_count,
    open_count: summary.open_count,
    done_count: summary.done_count + summary.deferred_count,
    blocked_count: summary.blocked_count,
    deferred_count: summary.deferred_count,
    items: byPriority(visible)
      .slice(0, input.todoItemLimit)
      .map((item) => statusTodoItem(item, role, sourceSection)),
    ...claimedCounts(
      summary.items.map((item) => ({
        ...item,
        action_kind: item.metadata['action_kind'],
        actionable: actionableOpen(item, doc),
      })),
    ),
    ...todoLists(
      summary.items.map((item) => {
        const resumeWhen = (item.metadata['resume_when'] ?? '').trim();
        return {
          ...item,
          action_kind: item.metadata['action_kind'],
          hasResumeWhen: resumeWhen !== '',
          resumeHolds: openTodoResumeHolds(resumeWhen, doc.todos),
        };
      }),
      role,
      sourceSection,
    ),
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

  const byKind = <K extends ProjectionWarning['kind']>(kind: K): Extract<ProjectionWarning, { kind: K }> | undefined =>
    warnings.find((warning): warning is Extract<ProjectionWarning, { kind: K }> => warning.kind === kind);
  const nextActionWarning = byKind('next_action_projection_mismatch');
  const gap = byKind('state_projection_gap');
  const stale = byKind('stale_latest_run_projection');

  const fromActiveState = activeStateAction(route.status, route.attention_source, {
    user: byPriority((structured?.todos.user.items ?? []).filter(isOpen)),
    agent: byPriority((structured?.todos.agent.items ?? []).filter(isOpen)),
    nextAction: activeNextAction,
    gapAction: gap?.recommended_action ?? null,
  });
  const ownAction = routeOwnAction(route, {
    hasStatusRun: latestStatusRun !== null,
    firstOpenAgentTodoText: agentTodos?.items[0]?.text ?? null,
  });
  const [routedAction, source] =
    fromActiveState !== null
      ? [fromActiveState, 'active_state' as const]
      : ownAction !== null
        ? [ownAction, route.attention_source as 'run_history' | 'registry']
        : latest.latest_run_recommended_action !== null
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

  const owed = replanObligations(rows, input);
  // The original reads its queue's run signals from the newest max(limit, 20) runs (STATUS_CONTROL_PLANE_CONTEXT_LIMIT).
  const listedRuns = rows.slice(0, Math.max(input.limit, CONTROL_PLANE_RUN_LIMIT)) as unknown as Record<
    string,
    unknown
  >[];
  const handoffState = handoffRunState({
    goalId: target.goalId,
    recommendedAction,
    latestRuns: listedRuns,
    latestValidation:
      latestStatusRun === null
        ? null
        : {
            ...(latestStatusRun.generated_at ? { generated_at: latestStatusRun.generated_at } : {}),
            ...(latestStatusRun.classification ? { classification: latestStatusRun.classification } : {}),
          },
  });
  // Without the quota: `withQuotaSignals` (statusPayload.ts) sets what the quota's state decides.
  const handoff = handoffReadiness(handoffState, undefined, route.waiting_on);
  const laneRecommendation = agentLaneRecommendation(listedRuns);
  const backlogWarning = state.kind === 'ok' ? backlogHygieneWarning(state.text, agentTodos?.open_count ?? 0) : null;
  const standingAuthority = doc !== null ? standingDecisionAuthority(doc.todos) : null;
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
    ...lifecycleFields({
      latestStatusRun: latestStatusRun as Record<string, unknown> | null,
      adapterStatus: target.adapterStatus,
      goalStatus: target.status,
    }),
    handoff_readiness: handoff,
    long_task_cadence_hint: longTaskCadenceHint({
      quotaState: null,
      userOpenCount: userTodos?.open_count ?? null,
      handoff,
      latestRuns: listedRuns,
    }),
    ...(backlogWarning !== null ? { backlog_hygiene_warning: backlogWarning } : {}),
    ...(standingAuthority !== null ? { standing_decision_authority: standingAuthority } : {}),
    registry_member: target.registryMember,
    registered_agents: target.agents,
    ...(input.agentId !== null ? { agent_id: input.agentId } : {}),
    ...(activeNextAction !== null
      ? { active_state_next_action: activeNextAction, active_state_next_action_entries: entries }
      : {}),
    latest_run_recommended_action: latest.latest_run_recommended_action,
    latest_run_recommended_action_source: latest.latest_run_recommended_action_source,
    ...(laneRecommendation !== null ? { agent_lane_recommendation: laneRecommendation } : {}),
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
  return statusTodoContractDiagnostics(doc, {
    goalId: target.goalId,
    registeredAgents: target.agents,
    stateFileLabel: labelPaths(target.stateFile ?? '', input),
  });
}

// ---------------------------------------------------------------------------------------------
// The item cache

/**
 * Marks an item the persistent cache recorded clean (nothing for `redactCredentials` to change) where the
 * status answer meets its parts: the item, its members and theirs (the answer's item is a spread of it, the
 * run history and the dashboards' blocks copy its runs and warnings), and the todos of its summaries' `items`
 * (the goal channel's todos are copies of them). Its texts down to its members' are remembered clean. The
 * deeper objects (the summaries' lists, most of the item) are not marked: the answer reaches them only
 * through marked parents, and a redaction stops at a marked object.
 */
function markCleanItem(item: GoalStatusItem): void {
  markCredentialClean(item, 1, 2);
  for (const summary of [item.user_todos, item.agent_todos])
    if (summary !== null && summary !== undefined) for (const todo of summary.items) markCredentialClean(todo, -1, 0);
}

/** Targets as parsed, per target object: status asks the cache about the same targets on every call. */
const parsedTargets = new WeakMap<GoalStatusTarget, z.output<typeof GoalStatusTargetSchema>>();
function parsedTarget(goal: GoalStatusTarget): z.output<typeof GoalStatusTargetSchema> {
  let target = parsedTargets.get(goal);
  if (target === undefined) {
    target = parseGoalStatusTarget(goal);
    parsedTargets.set(goal, target);
  }
  return target;
}

type GoalPaths = { stateFile: string | null; indexFile: string; projectRoot: string };
/** Per parsed target (each goal is looked at several times a call). */
const targetPaths = new WeakMap<z.output<typeof GoalStatusTargetSchema>, GoalPaths>();
function pathsOf(target: z.output<typeof GoalStatusTargetSchema>): GoalPaths {
  let paths = targetPaths.get(target);
  if (paths === undefined) {
    paths = {
      stateFile: target.stateFile,
      indexFile: runIndexPath(target.runtimeRoot, target.goalId),
      projectRoot: target.projectRoot,
    };
    targetPaths.set(target, paths);
  }
  return paths;
}

/**
 * Keeps the last status item of every goal with the inputs it was projected from, over the goal
 * files (`GoalFiles`: a call stats the goal's two files, only a changed stamp causes a read) and the
 * persistent cache: only changed inputs cause a re-projection.
 */
export class GoalStatusCache {
  /** The registry, state files and run indexes as last read, by stamp. */
  readonly files: GoalFiles;
  private readonly items = new Map<string, { key: string; item: GoalStatusItem }>();
  /** The persistent cache behind this one (`goal/persistentCache.ts`), when the caller opened one. */
  disk: PersistentCache | undefined;

  constructor(reader: GoalFileReader = fileSystemGoalReader) {
    this.files = new GoalFiles(reader, processGoalCache());
  }

  /** The registry document, read again only when the file changed. Errors (bad JSON) propagate. */
  registry(registryPath: string): Promise<{ exists: boolean; registry: Record<string, unknown> }> {
    return this.files.registry(registryPath);
  }

  /**
   * The goal's state file and run index as held (read again only when changed), for read models
   * that need every todo and run rather than the item's first few.
   */
  goalSources(goal: GoalStatusTarget): Promise<{ state: StateRead; runs: RunIndexRead | null }> {
    return this.files.sources(pathsOf(parsedTarget(goal)));
  }

  /**
   * The goal's run index as held from its last read, with the stamp it had then, without a stat
   * (`GoalFiles.held`): for the quota summary status attaches right after projecting the goal, so
   * the index is not read twice.
   */
  heldRunIndex(goal: GoalStatusTarget): { stamp: FileStamp | null; read: RunIndexRead | null } | undefined {
    return this.files.held(pathsOf(parsedTarget(goal)).indexFile);
  }

  /** Drops the goal's file reads (its status item stays): see `GoalFiles.release`. */
  release(goal: GoalStatusTarget, options: { keepIndexRead?: boolean } = {}): void {
    this.files.release(pathsOf(parsedTarget(goal)), options);
  }

  async goalStatus(
    goal: GoalStatusTarget,
    options: Omit<GoalStatusOptions, 'cache' | 'reader'>,
  ): Promise<GoalStatusItem> {
    const target = parsedTarget(goal);
    const paths = pathsOf(target);
    const stamps = await this.files.stamps(paths);
    const [stateStamp, indexStamp] = stamps;
    const agentId = options.agentId ?? null;
    const limit = options.limit ?? DEFAULT_STATUS_RUN_LIMIT;
    const todoItemLimit = options.todoItemLimit ?? DEFAULT_STATUS_TODO_ITEM_LIMIT;
    const key = JSON.stringify([target, agentId, limit, todoItemLimit, options.homeDir, stateStamp, indexStamp]);
    const cachedItem = this.items.get(target.goalId);
    if (cachedItem && cachedItem.key === key) return cachedItem.item;
    const files: [string, FileStamp | null][] = [
      [target.stateFile ?? '', stateStamp],
      [paths.indexFile, indexStamp],
    ];
    const kept = this.disk?.item<GoalStatusItem>(target.goalId, key, files, markCleanItem);
    if (kept !== undefined) {
      this.items.set(target.goalId, { key, item: kept });
      return kept;
    }

    const { state, runs } = await this.files.sources(paths, stamps, limit);
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
}

/** The status item of one goal; pass `cache` to reuse reads across calls. */
export async function loadGoalStatus(goal: GoalStatusTarget, options: GoalStatusOptions): Promise<GoalStatusItem> {
  const cache = options.cache ?? new GoalStatusCache(options.reader);
  return cache.goalStatus(goal, options);
}
