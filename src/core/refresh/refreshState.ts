import type { Clock } from '../clock';
import { normalizeAgentId, registeredAgentsForGoal, requireRegisteredAgent, AGENT_ID_RULE } from '../registry/agentIds';
import type { LoopxErrorCode } from '../errorCodes';
import { isLoopxError, LoopxError } from '../errors';
import type { LockOptions } from '../fs/fileLock';
import { stateProjectionGap } from '../status/projection/projectionGap';
import { deriveRecommendedAction } from '../status/projection/recommendedAction';
import { refuseCredentials } from '../privacy/refuse';
import { collapseWhitespace } from '../status/projection/text';
import { processGoalCache } from '../goal/cache';
import type { GoalRef } from '../registry/goalRef';
import { resolveStateFile } from '../registry/locate';
import { isRecord } from '../registry/schema';
import { appendRun, type AppendRunOptions } from '../runtime/runIndexWrite';
import type { RunSnapshot } from '../snapshots/gitSnapshot';
import { formatLocalIsoSeconds } from '../runtime/time';
import {
  compactText,
  firstSectionOf,
  parseStateDocument,
  sectionEntries,
  TERMINAL_STATUSES,
  TODO_ID_PATTERN,
  type StateDocument,
} from '../state/document';
import { readNextAction, setFrontMatterField, writeNextAction } from '../state/nextAction';
import { applyStateEdit } from '../state/stateFile';
import {
  NEXT_ACTION_UPDATE_SCHEMA_VERSION,
  RefreshIndexRowSchema,
  RefreshRecordSchema,
  RefreshStatePayloadSchema,
  type NextActionUpdate,
  type ProgressScope,
  type RefreshRecord,
  type RefreshStatePayload,
  type RegistryGoalSnapshot,
} from './schemas';
import { indexState, snapshotState, type StateSnapshot } from './snapshot';
import {
  ACCOUNTABLE_DELIVERY_OUTCOMES,
  captureDeliveryWorkspace,
  deliveryWorkspaceCausality,
  type DeliveryWorkspace,
} from '../snapshots/deliveryWorkspace';

/**
 * refresh-state: records a snapshot run of a goal's state (its digest, `updated_at` and the
 * derived recommended action) and, with `nextAction`, rewrites the durable route first. It is
 * split in two so a preview can be shown and applied later: `planRefreshState` reads and decides
 * everything and writes nothing; `commitRefreshState` writes the route (a locked compare-and-swap
 * against the text the plan read) and appends the run. A state file edited in between is never
 * overwritten: the commit fails with `state_changed_concurrently` and records nothing.
 */

export interface RefreshStateRequest {
  /** A public-safe token naming what happened, e.g. `state_refreshed`, `validated_progress`. */
  classification: string;
  /** The new durable Next Action (goal scope only). */
  nextAction?: string | null;
  /** Overrides the derived recommended action (`explicit_arg`). */
  recommendedAction?: string | null;
  agentId?: string | null;
  /** Default: `agent_lane` when `agentId` is given, else `goal`. */
  progressScope?: ProgressScope | null;
  todoId?: string | null;
  turnInstanceId?: string | null;
  /** The replan obligation this run discharges (`replan-<16 hex>`); not with `todoId`. */
  replanObligationId?: string | null;
  deliveryBatchScale?: string | null;
  deliveryOutcome?: string | null;
  /**
   * The checkout that produced an accountable delivery (the CLI's working folder, the turn driver's project): its
   * delivery workspace snapshot is recorded on the run, as the original's refresh-state records it, so the
   * original's `quota spend-slot` accepts the turn (snapshots/deliveryWorkspace.ts). Absent: no snapshot.
   */
  deliveryWorkspacePath?: string | null;
}

export interface RefreshStatePlan {
  goalId: string;
  registryPath: string;
  runtimeRoot: string;
  projectRoot: string;
  statePath: string;
  /** The state file's text the plan was computed from. */
  baseText: string;
  /** The text to write, or null when the state file stays as it is. */
  newText: string | null;
  record: RefreshRecord;
}

export interface CommitRefreshOptions {
  clock: Clock;
  /** Compute names and payload, write nothing. */
  dryRun?: boolean;
  /** Holder labels of the state-file and run-index locks. */
  lock?: Omit<LockOptions, 'operation'>;
  /** A retry's idempotency, decided under the run index's lock (`appendRun`'s `unlessIndexed`). */
  unlessIndexed?: AppendRunOptions['unlessIndexed'];
  /**
   * The turn's working-tree snapshot (docs/review.md), kept on the record and its index row. Not part
   * of the payload (its schema drops it), so the JSON the CLI prints stays the original's.
   */
  snapshot?: RunSnapshot | null;
}

const CLASSIFICATION_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,119}$/u;
const TURN_INSTANCE_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/u;
const DELIVERY_TOKEN_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/u;

/** Error codes that mean "the request is wrong" (the CLI exits 2 for them). */
export const REFRESH_ARGUMENT_ERROR_CODES: ReadonlySet<LoopxErrorCode> = new Set([
  'invalid_goal_id',
  'refresh_invalid_classification',
  'refresh_invalid_field',
  'refresh_agent_id_required',
  'refresh_multi_agent_requires_agent_id',
  'refresh_agent_id_invalid',
  'refresh_agent_not_registered',
  'refresh_agent_lane_cannot_write_next_action',
  'next_action_empty',
]);

/** An autonomous replan obligation id (quota/identity.ts has the same rule; refresh does not import quota). */
const REPLAN_OBLIGATION_ID_PATTERN = /^replan-[0-9a-f]{16}$/;

function checkedToken(
  value: string | null | undefined,
  pattern: RegExp,
  field: string,
  rule: string,
): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (!pattern.test(value)) {
    throw new LoopxError('refresh_invalid_field', `${field} ${JSON.stringify(value)} is not valid: ${rule}`, {
      field,
      value,
    });
  }
  return value;
}

interface Scope {
  progressScope: ProgressScope;
  agentId: string | undefined;
  agentLane: string | undefined;
}

/**
 * The scope rules (docs/status.md#loopx-refresh-state), all checked before anything is read or written: an agent-lane
 * refresh needs an agent; a goal with several registered agents needs `--agent-id`; a given agent
 * must be registered when the goal has a roster; an agent-lane refresh never writes the route.
 */
function resolveScope(
  goal: Record<string, unknown>,
  goalId: string,
  request: RefreshStateRequest,
  writesNextAction: boolean,
): Scope {
  const roster = registeredAgentsForGoal(goal);
  const rawAgent = request.agentId ?? null;
  let agentId: string | undefined;
  if (rawAgent !== null && rawAgent.trim() !== '') {
    if (roster.length > 0) {
      const candidate = normalizeAgentId(rawAgent);
      if (candidate !== null && !roster.includes(candidate))
        // The original's text first (agents match it), then the roster.
        throw new LoopxError(
          'refresh_agent_not_registered',
          `agent_id '${candidate}' is not registered for goal '${goalId}'; registered_agents=${roster.join(', ')}`,
          { field: 'agent_id', agent_id: candidate, goal_id: goalId, registered_agents: roster },
        );
      agentId = requireRegisteredAgent({ ...goal, id: goalId }, rawAgent, {
        field: 'agent_id',
        codePrefix: 'refresh_',
      });
    } else {
      const normalized = normalizeAgentId(rawAgent);
      if (normalized === null)
        throw new LoopxError(
          'refresh_agent_id_invalid',
          `agent_id ${JSON.stringify(rawAgent)} is not valid: ${AGENT_ID_RULE}`,
          { field: 'agent_id', value: rawAgent },
        );
      agentId = normalized;
    }
  }
  if (request.progressScope === 'agent_lane' && agentId === undefined) {
    throw new LoopxError(
      'refresh_agent_id_required',
      'an agent_lane refresh-state needs --agent-id: the lane is named after the agent',
      { goal_id: goalId },
    );
  }
  if (agentId === undefined && roster.length > 1) {
    throw new LoopxError(
      'refresh_multi_agent_requires_agent_id',
      `multi-agent refresh-state requires --agent-id; text inference is disabled. Goal '${goalId}' registers ${roster.join(', ')}: pass the agent this refresh is for`,
      { goal_id: goalId, registered_agents: roster },
    );
  }
  const progressScope: ProgressScope = request.progressScope ?? (agentId !== undefined ? 'agent_lane' : 'goal');
  if (progressScope === 'agent_lane' && writesNextAction) {
    throw new LoopxError(
      'refresh_agent_lane_cannot_write_next_action',
      `agent-lane refresh-state cannot update the durable active-state Next Action; rerun without --next-action or use --progress-scope goal from a registered peer (only a goal-scope refresh changes the route; use it if agent ${agentId ?? ''} is working the goal's main route)`,
      { goal_id: goalId, agent_id: agentId ?? null },
    );
  }
  return { progressScope, agentId, agentLane: progressScope === 'agent_lane' ? agentId : undefined };
}

/** The route as it will be written: whitespace collapsed, non-empty, free of credentials. */
function checkedNextAction(value: string | null | undefined): string | null {
  if (value === undefined || value === null) return null;
  const route = compactText(value);
  if (route === '')
    throw new LoopxError('next_action_empty', 'the next action is empty; give the durable route as one line of text');
  refuseCredentials({ next_action: route }, 'next_action_credential');
  return route;
}

function checkedRecommendedAction(value: string | null | undefined): string | null {
  const text = collapseWhitespace(value);
  if (text === '') return null;
  refuseCredentials({ recommended_action: text }, 'recommended_action_credential');
  return text;
}

function registryGoalSnapshot(goal: Record<string, unknown>): RegistryGoalSnapshot {
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
  const adapter = goal['adapter'];
  const sources = goal['authority_sources'];
  return {
    present: true,
    domain: text(goal['domain']),
    status: text(goal['status']),
    adapter: isRecord(adapter) ? { kind: text(adapter['kind']) } : null,
    authority_source_count: Array.isArray(sources) ? sources.length : 0,
  };
}

function agentTodoCandidates(
  doc: StateDocument,
): { text: string; status: 'open' | 'done' | 'blocked' | 'deferred'; task_class: string | null }[] {
  return doc.todos
    .filter((todo) => todo.role === 'agent')
    .map((todo) => ({ text: todo.text, status: todo.status, task_class: todo.meta['task_class'] ?? null }));
}

function openCount(doc: StateDocument, role: 'agent' | 'user'): number {
  return doc.todos.filter((todo) => todo.role === role && !TERMINAL_STATUSES.has(todo.status)).length;
}

/** The request checked against the goal (each refusal in the order refresh-state has always given them). */
function checkRefresh(
  target: Pick<GoalRef, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'homeDir' | 'rawEntry'>,
  request: RefreshStateRequest,
) {
  const goalId = target.goalId;
  const classification = request.classification.trim();
  if (!CLASSIFICATION_PATTERN.test(classification)) {
    throw new LoopxError(
      'refresh_invalid_classification',
      `classification ${JSON.stringify(request.classification)} must be a public-safe token of letters, digits, "_", ".", ":" and "-" (at most 120), such as state_refreshed`,
      { classification: request.classification },
    );
  }
  const todoId = checkedToken(request.todoId, TODO_ID_PATTERN, 'todo_id', 'a todo id looks like todo_[a-z0-9_-]{3,64}');
  const turnInstanceId = checkedToken(
    request.turnInstanceId,
    TURN_INSTANCE_PATTERN,
    'turn_instance_id',
    'letters, digits, ".", "_", ":" and "-", at most 128',
  );
  // Both are written into the run index and the event log (durable state): never a credential.
  refuseCredentials({ classification, turn_instance_id: turnInstanceId });
  const replanObligationId = checkedToken(
    request.replanObligationId,
    REPLAN_OBLIGATION_ID_PATTERN,
    'replan_obligation_id',
    'replan-<16 hex digits>, as quota should-run names it',
  );
  if (replanObligationId !== undefined && todoId !== undefined) {
    throw new LoopxError(
      'quota_settlement_binding_conflict',
      `a run binds either a todo (${todoId}) or a replan obligation (${replanObligationId}), not both`,
      { todo_id: todoId, replan_obligation_id: replanObligationId },
    );
  }
  const deliveryBatchScale = checkedToken(
    request.deliveryBatchScale,
    DELIVERY_TOKEN_PATTERN,
    'delivery_batch_scale',
    'a lowercase token such as single_surface',
  );
  const deliveryOutcome = checkedToken(
    request.deliveryOutcome,
    DELIVERY_TOKEN_PATTERN,
    'delivery_outcome',
    'a lowercase token such as outcome_progress',
  );
  const nextAction = checkedNextAction(request.nextAction);
  const explicitAction = checkedRecommendedAction(request.recommendedAction);

  const goal = target.rawEntry;
  const scope = resolveScope(goal, goalId, request, nextAction !== null);
  const statePath = resolveStateFile(goal, target.homeDir);
  if (statePath === null) {
    throw new LoopxError(
      'state_file_unresolved',
      `goal '${goalId}' has no state_file (or a relative one without an absolute repo) in ${target.registryPath}; set state_file so refresh-state can find ACTIVE_GOAL_STATE.md`,
      { goal_id: goalId },
    );
  }
  return {
    goalId,
    classification,
    todoId,
    turnInstanceId,
    replanObligationId,
    deliveryBatchScale,
    deliveryOutcome,
    nextAction,
    explicitAction,
    goal,
    scope,
    statePath,
  };
}

/**
 * `target` below is the goal a refresh is for, as its caller resolved it (the operation's goal handle, the
 * turn's goal): its registry entry as read then, where its registry, project and runtime root are.
 *
 * The state file's text a refresh of `target` plans from, as it is now (through the process's state-file
 * cache, which reads a changed file again). The request is checked first, so its refusals come before
 * any state-file error. The commit compares this text under the state file's lock.
 */
export async function readRefreshBase(
  target: Pick<GoalRef, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'homeDir' | 'rawEntry'>,
  request: RefreshStateRequest,
): Promise<string> {
  const { statePath } = checkRefresh(target, request);
  return (await processGoalCache().stateFile(statePath)).text;
}

/**
 * Decides everything a refresh of `target` would do from the state file's text `baseText` (`readRefreshBase`,
 * or the text the caller's own locked write just left there). Writes nothing.
 */
export async function planRefreshState(
  target: Pick<GoalRef, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'homeDir' | 'rawEntry'>,
  request: RefreshStateRequest,
  baseText: string,
  clock: Clock,
): Promise<RefreshStatePlan> {
  const {
    goalId,
    classification,
    todoId,
    turnInstanceId,
    replanObligationId,
    deliveryBatchScale,
    deliveryOutcome,
    nextAction,
    explicitAction,
    goal,
    scope,
    statePath,
  } = checkRefresh(target, request);
  const previous = readNextAction(parseStateDocument(baseText));
  const generatedAt = formatLocalIsoSeconds(clock.now());

  let newText: string | null = null;
  let update: NextActionUpdate | undefined;
  if (nextAction !== null) {
    const routed = writeNextAction(baseText, nextAction);
    // As in the original, a file without front matter gets none added (only an existing one is stamped).
    const stamped =
      routed.changed && parseStateDocument(routed.text).frontMatter !== null
        ? setFrontMatterField(routed.text, 'updated_at', generatedAt).text
        : routed.changed
          ? routed.text
          : baseText;
    newText = routed.changed ? stamped : null;
    update = {
      schema_version: NEXT_ACTION_UPDATE_SCHEMA_VERSION,
      source: 'refresh_state',
      next_action: nextAction,
      updated: false,
      would_update: routed.changed,
      dry_run: false,
      updated_at: routed.changed ? generatedAt : null,
      previous_next_action: previous,
    };
  }

  const doc = parseStateDocument(newText ?? baseText);
  const nextSection = firstSectionOf(doc, 'next_action');
  const derivation = deriveRecommendedAction({
    explicitAction,
    nextActionEntries: nextSection
      ? sectionEntries(doc, nextSection, { limit: 16, maxLength: Number.POSITIVE_INFINITY })
      : [],
    agentTodos: agentTodoCandidates(doc),
  });
  const snapshot: StateSnapshot = snapshotState(statePath, doc);
  const gap = stateProjectionGap({
    goalId,
    nextActionEntries: snapshot.next_action,
    agentTodos: { markdownOpenCount: openCount(doc, 'agent') },
    userTodos: { markdownOpenCount: openCount(doc, 'user') },
  });
  const registryGoal = registryGoalSnapshot(goal);
  const deliveryWorkspace = await deliveryWorkspaceOf(goal, doc, request.deliveryWorkspacePath, {
    todoId,
    deliveryOutcome,
  });

  const record: RefreshRecord = RefreshRecordSchema.parse({
    generated_at: generatedAt,
    goal_id: goalId,
    classification,
    ...derivation,
    health_check: `state_file 1/1; registry_goal 1/1; authority_sources ${registryGoal.authority_source_count}`,
    state: snapshot,
    registry_goal: registryGoal,
    progress_scope: scope.progressScope,
    ...(scope.agentId !== undefined ? { agent_id: scope.agentId } : {}),
    ...(scope.agentLane !== undefined ? { agent_lane: scope.agentLane } : {}),
    ...(todoId !== undefined ? { todo_id: todoId } : {}),
    ...(turnInstanceId !== undefined ? { turn_instance_id: turnInstanceId } : {}),
    ...(replanObligationId !== undefined ? { replan_obligation_id: replanObligationId } : {}),
    ...(deliveryBatchScale !== undefined ? { delivery_batch_scale: deliveryBatchScale } : {}),
    ...(deliveryOutcome !== undefined ? { delivery_outcome: deliveryOutcome } : {}),
    ...(deliveryWorkspace !== null ? { delivery_workspace: deliveryWorkspace } : {}),
    ...(update !== undefined ? { active_state_next_action_update: update } : {}),
    ...(gap !== null ? { state_projection_gap: gap } : {}),
  });
  return {
    goalId,
    registryPath: target.registryPath,
    runtimeRoot: target.runtimeRoot,
    projectRoot: target.projectRoot,
    statePath,
    baseText,
    newText,
    record,
  };
}

/**
 * The delivery workspace snapshot an accountable run records, as the original's refresh-state takes it: for an
 * accountable delivery outcome, unless the run's todo explicitly needs no workspace (`same_agent_non_delivery` without
 * a repository or write contract); `peer_independent_worktree_required` on a goal with several registered agents
 * unless its `workspace_guard_policy` turns it off. Null outside a git checkout with a credential-free origin.
 */
async function deliveryWorkspaceOf(
  goal: Record<string, unknown>,
  doc: StateDocument,
  where: string | null | undefined,
  run: { todoId: string | undefined; deliveryOutcome: string | undefined },
): Promise<DeliveryWorkspace | null> {
  if (where === undefined || where === null || where === '') return null;
  if (run.deliveryOutcome === undefined || !ACCOUNTABLE_DELIVERY_OUTCOMES.has(run.deliveryOutcome)) return null;
  const todo =
    run.todoId === undefined ? undefined : doc.todos.find((t) => t.role === 'agent' && t.todoId === run.todoId);
  if (todo !== undefined && deliveryWorkspaceCausality(todo).requirement === 'not_required') return null;
  const policy = goal['workspace_guard_policy'];
  const explicit = isRecord(policy) ? policy['peer_independent_worktree_required'] : undefined;
  const peerRequired =
    registeredAgentsForGoal(goal).length > 1 && (explicit === undefined || explicit === null || explicit === true);
  return captureDeliveryWorkspace(where, peerRequired);
}

function conflictError(plan: RefreshStatePlan, during: string): LoopxError {
  return new LoopxError(
    'state_changed_concurrently',
    `${plan.statePath} changed while refresh-state was ${during} (someone edited it after it was read); nothing was written and no run was recorded. Retry from the current state.`,
    { path: plan.statePath, goal_id: plan.goalId, operation: 'refresh-state' },
  );
}

/**
 * Applies a plan: writes the new route under the state file's lock only if the file still holds
 * the text the plan read, then appends the run (record, Markdown, index row). Without a route
 * change the file is only re-read to check the snapshot still describes it. A dry run writes
 * nothing and returns the payload with the names the artifacts would get.
 */
export async function commitRefreshState(
  plan: RefreshStatePlan,
  options: CommitRefreshOptions,
): Promise<RefreshStatePayload> {
  const dryRun = options.dryRun === true;
  const record: RefreshRecord = structuredClone(plan.record);
  if (options.snapshot) Object.assign(record, { snapshot: options.snapshot });
  const snapshot = (record as { snapshot?: unknown }).snapshot;
  if (record.active_state_next_action_update) {
    record.active_state_next_action_update.dry_run = dryRun;
    record.active_state_next_action_update.updated = !dryRun && plan.newText !== null;
  }

  if (!dryRun) {
    if (plan.newText !== null) {
      const newText = plan.newText;
      try {
        await applyStateEdit(plan.statePath, () => ({ text: newText, changed: true }), {
          operation: 'refresh-state',
          expectedText: plan.baseText,
          lock: { ...options.lock, clock: options.lock?.clock ?? options.clock },
        });
      } catch (error) {
        if (isLoopxError(error, 'state_changed_concurrently')) throw conflictError(plan, 'writing the Next Action');
        throw error;
      }
    } else if ((await processGoalCache().stateFile(plan.statePath)).text !== plan.baseText) {
      // Read again unless the file's stamp proves it unchanged since the plan read it (goal/cache.ts).
      throw conflictError(plan, 'recording its snapshot');
    }
  }

  const appended = await appendRun({
    runtimeRoot: plan.runtimeRoot,
    goalId: plan.goalId,
    record,
    markdown: renderRefreshMarkdown(record),
    indexFields: {
      recommended_action_source: record.recommended_action_source,
      state: indexState(record.state),
      ...(record.agent_lane !== undefined ? { agent_lane: record.agent_lane } : {}),
      ...(record.turn_instance_id !== undefined ? { turn_instance_id: record.turn_instance_id } : {}),
      ...(record.replan_obligation_id !== undefined ? { replan_obligation_id: record.replan_obligation_id } : {}),
      ...(record.delivery_batch_scale !== undefined ? { delivery_batch_scale: record.delivery_batch_scale } : {}),
      ...(record.delivery_outcome !== undefined ? { delivery_outcome: record.delivery_outcome } : {}),
      ...(record.delivery_workspace !== undefined ? { delivery_workspace: record.delivery_workspace } : {}),
      ...(snapshot !== undefined && snapshot !== null ? { snapshot } : {}),
    },
    projectRoot: plan.projectRoot,
    clock: options.clock,
    lock: { ...options.lock, operation: 'refresh-state' },
    dryRun,
    ...(options.unlessIndexed === undefined ? {} : { unlessIndexed: options.unlessIndexed }),
  });
  return RefreshStatePayloadSchema.parse({
    ok: true,
    dry_run: dryRun,
    appended: appended.appended,
    registry: plan.registryPath,
    runtime_root: plan.runtimeRoot,
    project: plan.projectRoot,
    json_path: appended.json_file,
    markdown_path: appended.markdown_file,
    index_path: appended.index_file,
    ...record,
    index_row: RefreshIndexRowSchema.parse(appended.row),
  });
}

/** Plans and commits in one go: the `loopx refresh-state` command. */
export async function refreshState(
  target: Pick<GoalRef, 'goalId' | 'registryPath' | 'projectRoot' | 'runtimeRoot' | 'homeDir' | 'rawEntry'>,
  request: RefreshStateRequest,
  options: CommitRefreshOptions,
): Promise<RefreshStatePayload> {
  return commitRefreshState(
    await planRefreshState(target, request, await readRefreshBase(target, request), options.clock),
    options,
  );
}

/** The `.md` artifact: a `# LoopX State Refresh` bullet list, then the route, feedback and progress. */
export function renderRefreshMarkdown(record: RefreshRecord): string {
  const update = record.active_state_next_action_update;
  const bullets = [
    `- goal: ${record.goal_id}`,
    `- generated_at: ${record.generated_at}`,
    `- classification: ${record.classification}`,
    `- progress_scope: ${record.progress_scope}`,
    ...(record.agent_id !== undefined ? [`- agent: ${record.agent_id}`] : []),
    ...(record.todo_id !== undefined ? [`- todo: ${record.todo_id}`] : []),
    ...(record.delivery_outcome !== undefined ? [`- delivery_outcome: ${record.delivery_outcome}`] : []),
    `- recommended_action_source: ${record.recommended_action_source}`,
    `- health_check: ${record.health_check}`,
    `- state sha256_16: ${record.state.sha256_16}`,
    `- state updated_at: ${record.state.frontmatter['updated_at'] ?? '(none)'}`,
    ...(update !== undefined
      ? [
          `- next action updated: ${update.updated ? 'yes' : update.would_update ? 'would update (dry run)' : 'no (unchanged)'}`,
        ]
      : []),
  ];
  const list = (items: readonly string[], bullet: boolean): string[] =>
    items.length === 0 ? ['(none)'] : items.map((item) => (bullet ? `- ${item}` : item));
  return [
    '# LoopX State Refresh',
    '',
    ...bullets,
    '',
    '## Recommended Action',
    '',
    record.recommended_action,
    '',
    '## Next Action',
    '',
    ...list(record.state.next_action, true),
    '',
    '## Recent Feedback',
    '',
    ...list(record.state.recent_feedback, false),
    '',
    '## Progress',
    '',
    ...list(record.state.progress, false),
    '',
  ].join('\n');
}
