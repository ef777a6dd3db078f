import { projectGoalWarnings } from './projection/goalWarnings';
import { pickLatestRuns, selectLatestRunRecommendedAction } from './projection/latestRunRecommendation';
import type { ProjectionWarning } from './projection/schemas';
import { publicSafeCompact } from './projection/text';
import { lifecycleFields } from './projection/lifecycle';
import { routeOwnAction } from './projection/routeAction';
import { agentLaneRecommendation } from './projection/agentLaneRecommendation';
import { backlogHygieneWarning } from './projection/backlogHygiene';
import { completedTodoArchiveWarning } from './projection/completedTodoArchive';
import { issueMetaSurface } from './projection/issueMetaSurface';
import { standingDecisionAuthority } from './projection/standingDecisionAuthority';
import { claimedCounts } from './projection/claimedCounts';
import { todoLists, type TodoLists } from './projection/todoLists';
import { applyResumeConditions, budgetedItems, structuredTodo, type TodoRecord } from './projection/compactTodoItem';
import { goalTodoIndex, rolloutEventsOfLog } from './reports/todoIndex';
import { materialRoots, reviewMaterials, type ReviewMaterial } from './projection/reviewMaterials';
import { rolloutEventLogPath } from '../evidence/rolloutLog';
import { readFileBytesSafe } from '../fs/safeRead';
import { rawMaterialKeys } from './channelProjection';
import { handoffReadiness, handoffRunState, longTaskCadenceHint } from './projection/handoffReadiness';
import { itemAttentionFields, latestValidation } from './projection/projectAsset';
import { cleanCopyOf, markCredentialClean, redactCredentialsShared, scrubText } from '../privacy/scrub';
import { nextActionTodoIds, todoSuccession } from './projection/todoSuccession';
import { allowsSubAgents, taskOrchestrationAuthority } from './projection/taskOrchestrationAuthority';
import { monitorDueKey, withMonitorDue } from './projection/monitorDue';
import {
  attentionRoute,
  MONITOR_SIGNAL_WAITING_ON,
  monitorQuietDisplay,
  quietMonitorAction,
  type OpenTodoFacts,
} from '../todo/attention';
import { existsSync } from 'node:fs';
import { processGoalCache } from '../goal/cache';
import {
  fileSystemGoalReader,
  GoalFiles,
  sameStamp,
  type FileStamp,
  type GoalFileReader,
  type StateRead,
} from '../goal/files';
import type { PersistentCache } from '../goal/persistentCache';
import { runIndexPath } from '../runtime/layout';
import type { RunIndexEntry, RunIndexRead } from '../runtime/runIndex';
import { stateDigest16 } from '../state/digest';
import { firstSectionOf, type StateDocument } from '../state/document';
import { analyzeGates } from '../state/gates';
import type { TodoRole } from '../state/sections';
import { projectStateDocument, type StructuredProjection, type StructuredTodoItem } from '../state/structured';
import type { ContractDiagnostic } from './contractCheck';
import { statusTodoContractDiagnostics } from '../todo/contract';
import { openTodoResumeHolds } from '../todo/resume';
import { replanObligationWithRuns } from '../scheduling/replanObligation';
import { registeredAgentsForGoal } from '../registry/agentIds';
import type { GoalRef } from '../registry/goalRef';
import { resolveStateFile } from '../registry/locate';
import {
  DEFAULT_STATUS_ACTION,
  DEFAULT_STATUS_RUN_LIMIT,
  GoalStatusItemSchema,
  type GoalStatusItem,
  type StatusRefKeys,
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
  /** Reuse reads and projections across calls. */
  cache?: GoalStatusCache;
  /** Where files are read from; default the file system (tests count reads through it). */
  reader?: GoalFileReader;
  /**
   * The time of the read: the summaries' monitor-due fields (projection/monitorDue.ts) are derived for it when the
   * item is answered, never cached. Default: the system clock.
   */
  now?: Date;
  /** The caller redacts the answer (`redactCredentialsShared`): the kept item is marked as it is looked at. */
  redact?: boolean;
}

// ---------------------------------------------------------------------------------------------
// Projection (pure)

interface ProjectionInput {
  goal: Pick<GoalRef, StatusRefKeys>;
  state: StateRead;
  runs: RunIndexRead | null;
  agentId: string | null;
  limit: number;
  homeDir: string;
  /**
   * The goal's rollout event log's text (null: none), for its part of the todo index (reports/todoIndex.ts) and its
   * `pr_merged:` resume conditions (projection/compactTodoItem.ts).
   */
  rolloutLog?: string | null;
  /** Whether a file a todo links is there (projection/reviewMaterials.ts); none is without it. */
  materialExists?: (file: string) => boolean;
}

/**
 * One todo of a summary's `items`: the original's structured todo (projection/compactTodoItem.ts), and ours beside it
 * for our readers: `title` (the text when it has no priority), `priority` and `claimed_by` (null when none).
 */
function statusTodoItem(record: TodoRecord, item: StructuredTodoItem): StatusTodoItem {
  return { ...record, title: item.title, priority: item.priority, claimed_by: item.claimed_by } as StatusTodoItem;
}

/**
 * Every todo of the state file as the original structures it, by role, each with its resume condition: the active
 * todos' `source_section` is the first heading of their role; an archive todo with an explicit id is a `todo_done`
 * target only (its own heading, `archive_state: archive`, no role).
 */
export function todoRecords(
  doc: StateDocument,
  projection: StructuredProjection,
  materials: { roots: readonly string[]; homeDir: string; exists: (file: string) => boolean },
  rolloutEvents: readonly Record<string, unknown>[],
): Record<TodoRole, Map<StructuredTodoItem, TodoRecord>> {
  const of = (role: TodoRole): Map<StructuredTodoItem, TodoRecord> => {
    const section = firstSectionOf(doc, role)?.title ?? null;
    const lineTexts = new Map(doc.todos.filter((t) => t.role === role).map((t) => [t.index, t.lineText]));
    return new Map(
      projection.todos[role].items.map((item) => {
        const record = structuredTodo(item, role, section);
        const linked = reviewMaterials(
          (lineTexts.get(item.index) ?? '').trim(),
          materials.roots,
          materials.homeDir,
          materials.exists,
        );
        return [item, linked.length > 0 ? withReviewMaterials(record, linked) : record];
      }),
    );
  };
  const user = of('user');
  const agent = of('agent');
  const archive = doc.todos
    .filter((t) => t.role === 'archive' && t.todoIdSource === 'metadata')
    .map((t) =>
      structuredTodo(
        {
          index: t.index,
          status: t.status,
          text: t.text,
          todo_id: t.todoId,
          priority: t.priority,
          title: t.title,
          metadata: t.meta,
        },
        null,
        t.section.title,
        'archive',
      ),
    );
  const sources = [...user.values(), ...agent.values(), ...archive];
  applyResumeConditions([...user.values()], sources, rolloutEvents);
  applyResumeConditions([...agent.values()], sources, rolloutEvents);
  return { user, agent };
}

/** The parser's todo order: `review_materials` right after `role`, before the metadata keys. */
function withReviewMaterials(record: TodoRecord, materials: ReviewMaterial[]): TodoRecord {
  const out: TodoRecord = {};
  for (const [key, value] of Object.entries(record)) {
    out[key] = value;
    if (key === 'role') out['review_materials'] = materials;
  }
  return out;
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

/** The first open todo by priority the item's reader may act on (for `--agent-id`, agent todos claimed by it or none). */
function firstVisibleOpen(
  items: readonly StructuredTodoItem[],
  agentId: string | null,
): StructuredTodoItem | undefined {
  return byPriority(
    items.filter(
      (item) => isOpen(item) && (agentId === null || item.claimed_by === null || item.claimed_by === agentId),
    ),
  )[0];
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
  records: Map<StructuredTodoItem, TodoRecord>,
  role: TodoRole,
  agentId: string | null,
  nextActionIds: ReadonlySet<string>,
  subAgents: boolean,
): StatusTodoSummary {
  const sourceSection = firstSectionOf(doc, role)?.title ?? null;
  const listed = summary.items.map((item) => {
    const structured = records.get(item) ?? {};
    const hasResumeWhen = typeof structured['resume_when'] === 'string';
    return {
      ...item,
      action_kind: item.metadata['action_kind'],
      structured,
      hasResumeWhen,
      resumeHolds: !hasResumeWhen || structured['resume_ready'] === true,
    };
  });
  const byRecord = new Map(listed.map((item) => [item.structured, item]));
  return {
    schema_version: 'todo_summary_v0',
    source_section: sourceSection,
    total_count: summary.total_count,
    open_count: summary.open_count,
    done_count: summary.done_count + summary.deferred_count,
    blocked_count: summary.blocked_count,
    deferred_count: summary.deferred_count,
    // Seen as one agent (`--agent-id`, ours), its own and unclaimed agent todos only; the lists stay the goal's.
    items: budgetedItems(
      listed
        .filter(
          (item) => role === 'user' || agentId === null || item.claimed_by === null || item.claimed_by === agentId,
        )
        .map((item) => item.structured),
    ).map((record) => statusTodoItem(record, byRecord.get(record) as StructuredTodoItem)),
    ...claimedCounts(listed.map((item) => ({ ...item, actionable: item.status === 'open' && item.resumeHolds }))),
    // The lists' todos are the original's compact todos, checked against CompactTodoSchema when the item is parsed.
    ...(todoLists(listed, (compact) => ({
      ...todoSuccession(listed, { role, sourceSection, nextActionIds, compact }),
      ...(subAgents ? { task_orchestration_authority: taskOrchestrationAuthority(listed, role, compact) } : {}),
    })) as unknown as Pick<StatusTodoSummary, keyof TodoLists>),
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
      : statusFieldsOf(input.goal).agents.length > 0
        ? [...new Set(statusFieldsOf(input.goal).agents)]
        : [null];
  const owed: StatusReplanObligation[] = [];
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  for (const agentId of lanes) {
    const found = replanObligationWithRuns({ goalId: input.goal.goalId, agentId, rowsNewestFirst: rows });
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
    projectRoots: [input.goal.projectRoot],
    homeDir: input.homeDir,
    runtimeRoot: input.goal.runtimeRoot,
  });
}

/** Builds the status item of one goal from what was read. Pure: same inputs, same item. */
export function projectGoalStatus(input: ProjectionInput): GoalStatusItem {
  const { state, runs } = input;
  const target = statusFieldsOf(input.goal);
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
  const nextActionIds = nextActionTodoIds(entries);
  const rolloutEvents = input.rolloutLog ? rolloutEventsOfLog(input.rolloutLog) : [];
  const records =
    doc && structured
      ? todoRecords(
          doc,
          structured,
          {
            roots: materialRoots(input.goal.entry.repo, target.stateFile, input.homeDir),
            homeDir: input.homeDir,
            exists: input.materialExists ?? (() => false),
          },
          rolloutEvents as unknown as readonly Record<string, unknown>[],
        )
      : null;
  const userTodos =
    doc && structured && records
      ? todoSummary(doc, structured.todos.user, records.user, 'user', input.agentId, nextActionIds, target.subAgents)
      : null;
  const agentTodos =
    doc && structured && records
      ? todoSummary(doc, structured.todos.agent, records.agent, 'agent', input.agentId, nextActionIds, target.subAgents)
      : null;
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
    firstOpenAgentTodoText: firstVisibleOpen(structured?.todos.agent.items ?? [], input.agentId)?.text ?? null,
  });
  const [routedAction, source] =
    fromActiveState !== null
      ? [fromActiveState, 'active_state' as const]
      : ownAction !== null
        ? [ownAction, route.attention_source as 'run_history' | 'registry']
        : latest.latest_run_recommended_action !== null
          ? // A registry wait over a run keeps the registry as its source (the original's `goal_attention` override).
            [
              latest.latest_run_recommended_action,
              route.attention_source === 'registry' ? ('registry' as const) : ('latest_run' as const),
            ]
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
  const archiveWarning = completedTodoArchiveWarning(agentTodos);
  const issueMeta = state.kind === 'ok' ? issueMetaSurface(state.text) : null;
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
    ...(archiveWarning !== null ? { completed_todo_archive_warning: archiveWarning } : {}),
    ...(issueMeta !== null ? { issue_meta_surface: issueMeta } : {}),
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
    ...rawRunKeys(listedRuns),
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
    // The project asset's inputs from the raw latest status run (projection/projectAsset.ts).
    ...projectAssetRunFields(route, latestStatusRun as Record<string, unknown> | null, target),
    // The index lists the same structured todos as the summaries' `items` (every one, not the agent's view).
    todo_index: goalTodoIndex(
      target.goalId,
      { user: records ? [...records.user.values()] : [], agent: records ? [...records.agent.values()] : [] },
      input.rolloutLog ?? null,
    ),
  };
  return GoalStatusItemSchema.parse(item);
}

function projectAssetRunFields(
  route: { attention_source: string; status: string },
  run: Record<string, unknown> | null,
  target: ReturnType<typeof statusFieldsOf>,
): Pick<
  GoalStatusItem,
  | 'latest_validation'
  | 'operator_question'
  | 'agent_command'
  | 'controller_stage'
  | 'missing_gates'
  | 'next_handoff_condition'
> {
  const validation = latestValidation(run);
  return {
    ...(validation !== null ? { latest_validation: validation } : {}),
    ...itemAttentionFields({
      goalId: target.goalId,
      attentionSource: route.attention_source,
      status: route.status,
      latestStatusRun: run,
      adapterStatus: target.adapterStatus,
      adapterKind: target.adapterKind,
      registryOperatorQuestion: target.registryOperatorQuestion,
      registryNextHandoffCondition: target.registryNextHandoffCondition,
    }),
  };
}

/** The goal's contract errors: a state file that exists but cannot be read, or its todos' metadata rules. */
function contractDiagnostics(input: ProjectionInput, doc: StateDocument | null): ContractDiagnostic[] {
  const { state } = input;
  const target = statusFieldsOf(input.goal);
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
 * What status shows of a goal's entry, with where its files are: the item cache's key holds it (its fields in
 * this order, so the persistent cache's keys are those of `STATUS_CACHE_SCHEMA`), and the projection reads it.
 * Status projects registry members only (`registryMember`).
 */
interface StatusFields {
  goalId: string;
  displayName: string;
  status: string;
  domain: string | null;
  projectRoot: string;
  runtimeRoot: string;
  /** The entry's `state_file` resolved (without bootstrap's default place: a goal without one has none here). */
  stateFile: string | null;
  agents: string[];
  registryMember: true;
  /** The registry entry's `adapter.status`/`adapter.kind`, `waiting_on` and `attention_status` (attention routing). */
  adapterStatus: string | null;
  adapterKind: string | null;
  registryWaitingOn: string | null;
  attentionStatus: string | null;
  /** The entry's `spawn_policy` allows sub-agents: the todo summaries' task orchestration authority. */
  subAgents: boolean;
  /** The registry entry's own `operator_question` and `next_handoff_condition` (a registry wait over a run). */
  registryOperatorQuestion: string | null;
  registryNextHandoffCondition: string | null;
}

/** Per goal ref: status asks about the same refs on every call (`statusTargets` keeps them per registry document). */
const fieldsOfRef = new WeakMap<Pick<GoalRef, StatusRefKeys>, StatusFields>();
function statusFieldsOf(goal: Pick<GoalRef, StatusRefKeys>): StatusFields {
  let fields = fieldsOfRef.get(goal);
  if (fields === undefined) {
    const entry = goal.entry;
    fields = {
      goalId: goal.goalId,
      displayName: entry.display_name || goal.goalId,
      status: entry.status || 'unknown',
      domain: entry.domain || null,
      projectRoot: goal.projectRoot,
      runtimeRoot: goal.runtimeRoot,
      stateFile: resolveStateFile(entry, goal.homeDir),
      agents: registeredAgentsForGoal(entry),
      registryMember: true,
      adapterStatus: entry.adapter?.status || null,
      adapterKind: entry.adapter?.kind || null,
      registryWaitingOn: entry.waiting_on || null,
      attentionStatus: entry.attention_status || null,
      subAgents: allowsSubAgents(entry),
      registryOperatorQuestion: entry.operator_question || null,
      registryNextHandoffCondition: entry.next_handoff_condition || null,
    };
    fieldsOfRef.set(goal, fields);
  }
  return fields;
}

/** The goal's state file as status reads it (`state_file` resolved; null without one). */
export function statusStateFile(goal: Pick<GoalRef, StatusRefKeys>): string | null {
  return statusFieldsOf(goal).stateFile;
}

/** The item cache's key of a goal's entry (exported for the test that pins it: a change bumps `STATUS_CACHE_SCHEMA`). */
export function statusEntryKey(goal: Pick<GoalRef, StatusRefKeys>): string {
  return JSON.stringify(statusFieldsOf(goal));
}

type GoalPaths = { stateFile: string | null; indexFile: string; projectRoot: string };
/** Per goal ref (each goal is looked at several times a call). */
const refPaths = new WeakMap<Pick<GoalRef, StatusRefKeys>, GoalPaths>();
function pathsOf(goal: Pick<GoalRef, StatusRefKeys>): GoalPaths {
  let paths = refPaths.get(goal);
  if (paths === undefined) {
    paths = {
      stateFile: statusFieldsOf(goal).stateFile,
      indexFile: runIndexPath(goal.runtimeRoot, goal.goalId),
      projectRoot: goal.projectRoot,
    };
    refPaths.set(goal, paths);
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
  /** Each goal's projected item (no time-dependent field), and its last answer with the `monitorDueKey` it was for. */
  private readonly items = new Map<
    string,
    {
      key: string;
      item: GoalStatusItem;
      /** The files its todos link (`review_materials`) with their stamps when projected: a change re-projects it. */
      materials: readonly [string, FileStamp | null][];
      answered?: { dueKey: string; item: GoalStatusItem };
      /** What the reader derived from the answer when answering (`itemParts`), for the key it was derived for. */
      parts?: { key: string; value: object };
    }
  >();
  /** Each answer with the entry it came from: the parts kept with it (`itemParts`). */
  private readonly answers = new WeakMap<
    GoalStatusItem,
    { goalId: string; dueKey: string; entry: { item: GoalStatusItem; parts?: { key: string; value: object } } }
  >();
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
  goalSources(goal: Pick<GoalRef, StatusRefKeys>): Promise<{ state: StateRead; runs: RunIndexRead | null }> {
    return this.files.sources(pathsOf(goal));
  }

  /**
   * The goal's run index as held from its last read, with the stamp it had then, without a stat
   * (`GoalFiles.held`): for the quota summary status attaches right after projecting the goal, so
   * the index is not read twice.
   */
  heldRunIndex(goal: Pick<GoalRef, StatusRefKeys>): { stamp: FileStamp | null; read: RunIndexRead | null } | undefined {
    return this.files.held(pathsOf(goal).indexFile);
  }

  /**
   * The files besides its state file and run index the goal's kept item came from: its rollout event log, then the
   * files its todos link (`review_materials`), for a watcher's fingerprint (liveStatus.ts).
   */
  itemInputFiles(goal: Pick<GoalRef, StatusRefKeys>): string[] {
    const target = statusFieldsOf(goal);
    const materials = this.items.get(target.goalId)?.materials ?? [];
    return [rolloutEventLogPath(target.runtimeRoot, target.goalId), ...materials.map(([file]) => file)];
  }

  /**
   * What the caller derives from an answer of `goalStatus` that depends on nothing else than the answer and `key`
   * (statusPayload.ts: the dashboards' blocks without their time-dependent parts, the agent-management rows): built
   * once per kept item, monitor-due state and key, and kept with the item, in memory and in the persistent cache, so
   * a warm call does not build it again. Built and not kept for an answer this cache did not give.
   *
   * `redact`: the caller redacts what it shows of it (`redactCredentialsShared`): it is looked at once when built, and
   * recorded clean when it holds nothing to redact; then, read back, it is marked with `markClean` (where the
   * redaction meets it) instead of being looked at again. The value is shared: never mutate it.
   */
  itemParts<T extends object>(
    answered: GoalStatusItem,
    key: string,
    build: () => T,
    options: { redact?: boolean; markClean?: (value: T) => void } = {},
  ): T {
    const at = this.answers.get(answered);
    if (at === undefined) return build();
    const { entry } = at;
    // The monitor-due state is the answer's: a part built for another one is another part.
    const fullKey = `${at.dueKey}\u0000${key}`;
    if (entry.parts?.key === fullKey) return entry.parts.value as T;
    const redact = options.redact === true;
    const kept = this.disk?.itemParts<T>(at.goalId, entry.item, fullKey, options.markClean);
    if (kept !== undefined) {
      if (redact && !kept.clean && redactCredentialsShared(kept.value) === kept.value)
        this.disk?.setItemPartsClean(at.goalId, entry.item);
      entry.parts = { key: fullKey, value: kept.value };
      return kept.value;
    }
    const value = build();
    const clean = redact && redactCredentialsShared(value) === value;
    entry.parts = { key: fullKey, value };
    this.disk?.setItemParts(at.goalId, entry.item, fullKey, value, clean);
    return value;
  }

  /** Drops the goal's file reads (its status item stays): see `GoalFiles.release`. */
  release(goal: Pick<GoalRef, StatusRefKeys>, options: { keepIndexRead?: boolean } = {}): void {
    this.files.release(pathsOf(goal), options);
  }

  async goalStatus(
    goal: Pick<GoalRef, StatusRefKeys>,
    options: Omit<GoalStatusOptions, 'cache' | 'reader'>,
  ): Promise<GoalStatusItem> {
    const target = statusFieldsOf(goal);
    const paths = pathsOf(goal);
    const stamps = await this.files.stamps(paths);
    const [stateStamp, indexStamp] = stamps;
    // The rollout event log: its todo events are the item's part of the todo index (reports/todoIndex.ts).
    const logFile = rolloutEventLogPath(target.runtimeRoot, target.goalId);
    const logStamp = await this.files.reader.stat(logFile);
    const agentId = options.agentId ?? null;
    const limit = options.limit ?? DEFAULT_STATUS_RUN_LIMIT;
    const key = JSON.stringify([target, agentId, limit, options.homeDir, stateStamp, indexStamp, logStamp]);
    const nowMs = (options.now ?? new Date()).getTime();
    // The monitor-due fields for the time of this read (projection/monitorDue.ts); the same answer object while they
    // are unchanged, so an unchanged goal is the same item call after call.
    const answer = (entry: {
      item: GoalStatusItem;
      answered?: { dueKey: string; item: GoalStatusItem };
      parts?: { key: string; value: object };
    }) => {
      const dueKey = monitorDueKey(entry.item, nowMs);
      if (entry.answered?.dueKey !== dueKey) {
        // The kept item is looked at for credentials first (marked clean when clean, which the persistent cache
        // records), so its answer, a copy of it, is known clean as well.
        if (options.redact === true) redactCredentialsShared(entry.item);
        entry.answered = { dueKey, item: withMonitorDue(entry.item, nowMs, cleanCopyOf) };
        this.answers.set(entry.answered.item, { goalId: target.goalId, dueKey, entry });
      }
      return entry.answered.item;
    };
    // The files the todos link (`review_materials`) were looked up when projecting: the item holds while each is as
    // it was then (one stat a link).
    const restat = (kept: readonly string[]): Promise<[string, FileStamp | null][]> =>
      Promise.all(kept.map(async (file) => [file, await this.files.reader.stat(file)] as [string, FileStamp | null]));
    const cachedItem = this.items.get(target.goalId);
    if (cachedItem && cachedItem.key === key) {
      const now = await restat(cachedItem.materials.map(([file]) => file));
      if (now.every(([, stamp], i) => sameStamp(stamp, cachedItem.materials[i]?.[1] ?? null)))
        return answer(cachedItem);
    }
    const files: [string, FileStamp | null][] = [
      [target.stateFile ?? '', stateStamp],
      [paths.indexFile, indexStamp],
      [logFile, logStamp],
    ];
    const keptMaterials = await restat(this.disk?.itemFiles(target.goalId, files.length) ?? []);
    const kept = this.disk?.item<GoalStatusItem>(target.goalId, key, [...files, ...keptMaterials], markCleanItem);
    if (kept !== undefined) {
      const entry = { key, item: kept, materials: keptMaterials };
      this.items.set(target.goalId, entry);
      return answer(entry);
    }

    const { state, runs } = await this.files.sources(paths, stamps, limit);
    const rolloutLog = logStamp === null ? null : await readRolloutLogText(logFile);
    const looked = new Map<string, boolean>();
    const projected = projectGoalStatus({
      goal,
      rolloutLog,
      state,
      runs,
      agentId,
      limit,
      homeDir: options.homeDir,
      materialExists: (file) => {
        const found = existsSync(file);
        looked.set(file, found);
        return found;
      },
    });
    const materials = await restat([...looked.keys()]);
    // A linked file created or removed while projecting: the item is answered but not kept.
    const settled = materials.every(([file, stamp]) => (stamp !== null) === looked.get(file));
    // The item outlives the texts it was projected from: V8 keeps a whole string alive for any slice
    // of it, so an item holding a todo's title would hold its state file's text (20 KB a goal on L).
    // A copy through JSON (the form the persistent cache keeps it in anyway) holds none of them.
    const json = JSON.stringify(projected);
    const item = JSON.parse(json) as GoalStatusItem;
    const entry = { key, item, materials };
    if (!settled) return answer(entry);
    this.items.set(target.goalId, entry);
    this.disk?.setItem(target.goalId, key, [...files, ...materials], item, json);
    return answer(entry);
  }
}

/** A rollout event log's text, or null when it is gone or unreadable (its todo events are then not indexed). */
async function readRolloutLogText(file: string): Promise<string | null> {
  try {
    return (await readFileBytesSafe(file)).toString('utf8');
  } catch {
    return null;
  }
}

/** The status item of one goal; pass `cache` to reuse reads across calls. */
export async function loadGoalStatus(
  goal: Pick<GoalRef, StatusRefKeys>,
  options: GoalStatusOptions,
): Promise<GoalStatusItem> {
  const cache = options.cache ?? new GoalStatusCache(options.reader);
  return cache.goalStatus(goal, options);
}

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

/** The raw-material keys of the listed runs as written, only when there are some (channelProjection.ts reads them). */
function rawRunKeys(runs: readonly unknown[]): { latest_run_raw_keys?: string[] } {
  const keys = rawMaterialKeys(runs);
  return keys.length > 0 ? { latest_run_raw_keys: keys } : {};
}
