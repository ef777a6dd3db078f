import { LoopxError } from '../errors';
import { scrubValue, type ScrubContext } from '../privacy/scrub';
import { STATUS_NEUTRAL_CLASSIFICATIONS, type RunIndexEntry } from '../runtime/runIndex';
import type { TodoItem } from '../state/document';
import { analyzeGates, gateRelation, gateState, isUserGate, type GateView } from '../state/gates';
import { deferredTodoDueWithQuota } from '../todo/resume';
import { activationState } from './goalChannel';
import { todosOrEmpty } from './goalStatus';
import type { DeadLockFinding } from './globalLocks';
import type { GlobalGoalView, GlobalSnapshot } from './globalSnapshot';
import {
  DEFAULT_GLOBAL_LIMIT,
  DEFAULT_TIME_RANGE,
  GLOBAL_RESPONSE_SCHEMA,
  GLOBAL_SOURCE_UNAVAILABLE,
  type GateRow,
  type GlobalBoundary,
  type GlobalCommand,
  type GlobalGatesResponse,
  type GlobalRequest,
  type GlobalRisksResponse,
  type GlobalSummaryResponse,
  type GlobalTodosResponse,
  type GlobalUnavailableResponse,
  type GlobalWarning,
  type RiskRow,
  type RiskSeverity,
  type SummaryRow,
  type TodoRow,
} from './globalSchemas';

/**
 * The global read models: pure functions of a GlobalSnapshot (every goal of the registry with
 * its status item, state file, runs and the dead locks around it). Each returns a
 * `global_manager_command_response_v0`, scrubbed of paths and credentials.
 */

export interface GlobalViewOptions {
  /** Look at the goals as this agent: its own and unclaimed todos, goals it is registered on. */
  agentId?: string | null;
  limit?: number;
  /** `<n>h` or `<n>d`; default 24h. */
  timeRange?: string;
}

/** Hours of a time range such as `24h`, `90m`, `7d`. */
export function parseTimeRange(text: string): number {
  const match = /^(\d+(?:\.\d+)?)([mhd])$/.exec(text.trim());
  const amount = match ? Number(match[1]) : NaN;
  if (!match || !(amount > 0)) {
    throw new LoopxError(
      'invalid_time_range',
      `time range ${JSON.stringify(text)} must be a positive number followed by m, h or d (e.g. 24h, 7d)`,
      { time_range: text },
    );
  }
  const unit = match[2];
  return unit === 'm' ? amount / 60 : unit === 'd' ? amount * 24 : amount;
}

function requestOf(snapshot: Pick<GlobalSnapshot, 'now'>, options: GlobalViewOptions): GlobalRequest {
  const timeRange = options.timeRange ?? DEFAULT_TIME_RANGE;
  return {
    agent_id: options.agentId ?? null,
    limit: options.limit ?? DEFAULT_GLOBAL_LIMIT,
    time_range: timeRange,
    time_range_hours: parseTimeRange(timeRange),
    generated_at: snapshot.now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
  };
}

const REGISTRY_LABEL_SOURCE = 'loopx status read model (registry, ACTIVE_GOAL_STATE.md, run index, quota ledger)';

function boundaryOf(registryLabel: string, goalCount: number): GlobalBoundary {
  return {
    mode: 'read_only',
    writes: false,
    spends_quota: false,
    scrubbed: true,
    source: REGISTRY_LABEL_SOURCE,
    registry: registryLabel,
    goal_count: goalCount,
  };
}

function registryLabel(snapshot: GlobalSnapshot): string {
  return scrubValue(snapshot.registryPath, snapshot.scrubContext);
}

/** Rows of one group cut to `limit`; reports whether anything was cut. */
function cut<T>(rows: readonly T[], limit: number, truncated: { value: boolean }): T[] {
  if (rows.length > limit) truncated.value = true;
  return rows.slice(0, limit);
}

function priorityRank(priority: string | null): number {
  const match = priority === null ? null : /^P(\d)/.exec(priority);
  return match ? Number(match[1]) : 9;
}

const SEVERITY_RANK: Record<string, number> = { high: 0, action: 1, info: 2 };

function runTime(run: RunIndexEntry): number {
  const time = run.generated_at === undefined ? NaN : Date.parse(run.generated_at);
  return Number.isNaN(time) ? NaN : time;
}

function runsInRange(goal: GlobalGoalView, now: Date, hours: number): RunIndexEntry[] {
  const from = now.getTime() - hours * 3_600_000;
  return goal.runs.filter((run) => {
    const time = runTime(run);
    return !Number.isNaN(time) && time >= from && time <= now.getTime();
  });
}

function isProgressRun(run: RunIndexEntry): boolean {
  return !STATUS_NEUTRAL_CLASSIFICATIONS.has(run.classification ?? '');
}

function agentMayAct(goal: GlobalGoalView, agentId: string | null): boolean {
  return agentId === null || goal.item.registered_agents.includes(agentId);
}

function finish<T extends { groups: object }>(snapshot: GlobalSnapshot, body: T): T {
  return scrubValue(body, snapshot.scrubContext);
}

// ---------------------------------------------------------------------------------------------
// global-summary

export function globalSummary(snapshot: GlobalSnapshot, options: GlobalViewOptions = {}): GlobalSummaryResponse {
  const request = requestOf(snapshot, options);
  const goals = snapshot.goals.filter((goal) => agentMayAct(goal, request.agent_id));
  const rows: SummaryRow[] = goals.map((goal) => {
    const { item } = goal;
    const inRange = runsInRange(goal, snapshot.now, request.time_range_hours);
    const latest = goal.runs[0];
    return {
      goal_id: item.goal_id,
      display_name: item.display_name,
      status: item.status,
      activation_state: item.activation_state,
      waiting_on: item.waiting_on,
      severity: item.severity,
      recommended_action: item.recommended_action,
      open_agent_todos: todosOrEmpty(item.agent_todos).open_count,
      open_user_todos: todosOrEmpty(item.user_todos).open_count,
      open_gates: item.open_gates.length,
      runs_in_range: inRange.length,
      progress_runs_in_range: inRange.filter(isProgressRun).length,
      latest_run_at: latest?.generated_at ?? null,
      latest_run_classification: latest?.classification ?? null,
      quota_state: item.quota?.state ?? null,
      spent_slots: item.quota?.spent_slots ?? null,
      allowed_slots: item.quota?.allowed_slots ?? null,
    };
  });
  rows.sort(
    (a, b) => (SEVERITY_RANK[a.severity] ?? 9) - (SEVERITY_RANK[b.severity] ?? 9) || a.goal_id.localeCompare(b.goal_id),
  );
  const sum = (pick: (row: SummaryRow) => number): number => rows.reduce((total, row) => total + pick(row), 0);
  const truncated = { value: false };
  return finish(snapshot, {
    ok: true,
    schema_version: GLOBAL_RESPONSE_SCHEMA,
    command: 'global-summary',
    request,
    summary: {
      goal_count: rows.length,
      active_goal_count: rows.filter((row) => row.activation_state === 'active').length,
      stopped_goal_count: rows.filter((row) => row.activation_state === 'stopped').length,
      waiting_on_user: rows.filter((row) => row.waiting_on === 'user').length,
      waiting_on_agents: rows.filter((row) => row.waiting_on !== 'user').length,
      open_agent_todos: sum((row) => row.open_agent_todos),
      open_user_todos: sum((row) => row.open_user_todos),
      open_gates: sum((row) => row.open_gates),
      runs_in_range: sum((row) => row.runs_in_range),
      progress_runs_in_range: sum((row) => row.progress_runs_in_range),
      contract_errors: snapshot.payload.contract.summary.errors,
      contract_warnings: snapshot.payload.contract.summary.warnings,
    },
    groups: { goals: cut(rows, request.limit, truncated) },
    truncated: truncated.value,
    warnings: [],
    boundary: boundaryOf(registryLabel(snapshot), goals.length),
  });
}

// ---------------------------------------------------------------------------------------------
// global-gates

function gateRow(goal: GlobalGoalView, gate: GateView, priority: string | null): GateRow {
  return {
    goal_id: goal.item.goal_id,
    display_name: goal.item.display_name,
    todo_id: gate.todo_id,
    title: gate.title,
    priority,
    gate_state: gate.gate_state,
    blocks_agent: gate.blocks_agent,
    global_gate: gate.global_gate,
    decision_scope: gate.decision_scope,
    blocked_todo_ids: gate.blocked_todo_ids,
    unscoped: gate.unscoped,
    line: gate.line,
  };
}

export function globalGates(snapshot: GlobalSnapshot, options: GlobalViewOptions = {}): GlobalGatesResponse {
  const request = requestOf(snapshot, options);
  const open: GateRow[] = [];
  const holding: GateRow[] = [];
  const goals = snapshot.goals.filter((goal) => agentMayAct(goal, request.agent_id));
  for (const goal of goals) {
    if (goal.state.kind !== 'ok') continue;
    const priorities = new Map(goal.state.doc.todos.map((todo) => [todo.todoId, todo.priority]));
    const concernsAgent = (gate: GateView): boolean =>
      request.agent_id === null || gate.blocks_agent === null || gate.blocks_agent === request.agent_id;
    const analysis = analyzeGates(goal.state.doc);
    for (const gate of analysis.open_gates)
      if (concernsAgent(gate)) open.push(gateRow(goal, gate, priorities.get(gate.todo_id) ?? null));
    for (const gate of analysis.holding_gates)
      if (concernsAgent(gate)) holding.push(gateRow(goal, gate, priorities.get(gate.todo_id) ?? null));
  }
  const order = (a: GateRow, b: GateRow): number =>
    priorityRank(a.priority) - priorityRank(b.priority) || a.goal_id.localeCompare(b.goal_id) || a.line - b.line;
  open.sort(order);
  holding.sort(order);
  const truncated = { value: false };
  return finish(snapshot, {
    ok: true,
    schema_version: GLOBAL_RESPONSE_SCHEMA,
    command: 'global-gates',
    request,
    summary: {
      open_gate_count: open.length,
      holding_gate_count: holding.length,
      goals_with_open_gates: new Set(open.map((row) => row.goal_id)).size,
      blocked_todo_count: new Set(
        [...open, ...holding].flatMap((row) => row.blocked_todo_ids.map((id) => `${row.goal_id}\u0000${id}`)),
      ).size,
      unscoped_gate_count: open.filter((row) => row.unscoped).length,
    },
    groups: { open: cut(open, request.limit, truncated), holding: cut(holding, request.limit, truncated) },
    truncated: truncated.value,
    warnings: [],
    boundary: boundaryOf(registryLabel(snapshot), goals.length),
  });
}

// ---------------------------------------------------------------------------------------------
// global-todos

function todoRow(goal: GlobalGoalView, todo: TodoItem, reasons: string[]): TodoRow {
  return {
    goal_id: goal.item.goal_id,
    display_name: goal.item.display_name,
    todo_id: todo.todoId,
    title: todo.title,
    priority: todo.priority,
    status: todo.status,
    role: todo.role === 'user' ? 'user' : 'agent',
    claimed_by: todo.meta['claimed_by'] ?? null,
    task_class: todo.meta['task_class'] ?? null,
    reasons,
    resume_when: todo.meta['resume_when'] ?? null,
  };
}

/**
 * A goal may have agent work delivered when it is active, has registered agents (the one asking
 * among them) and its quota is not paused. Agent todos of other goals are visible in the state
 * file but not listed: nobody may pick them up.
 */
function hasDeliveryAuthority(goal: GlobalGoalView, agentId: string | null): boolean {
  if (activationState(goal.registryGoal) === 'stopped') return false;
  if (goal.item.registered_agents.length === 0) return false;
  if (agentId !== null && !goal.item.registered_agents.includes(agentId)) return false;
  return goal.item.quota?.state !== 'paused';
}

export function globalTodos(snapshot: GlobalSnapshot, options: GlobalViewOptions = {}): GlobalTodosResponse {
  const request = requestOf(snapshot, options);
  const agentId = request.agent_id;
  const groups: { runnable: TodoRow[]; deferred_ready: TodoRow[]; blocked: TodoRow[]; review: TodoRow[] } = {
    runnable: [],
    deferred_ready: [],
    blocked: [],
    review: [],
  };
  const warnings: GlobalWarning[] = [];
  let notListed = 0;
  let deferredWaiting = 0;
  let considered = 0;
  for (const goal of snapshot.goals) {
    if (goal.state.kind !== 'ok') continue;
    considered += 1;
    const doc = goal.state.doc;
    const analysis = analyzeGates(doc);
    const gateHolds = new Map(
      analysis.agent_todos.map((status) => [status.todo_id, status.blocked_by.map((block) => block.gate_todo_id)]),
    );
    // Gate analysis skips deferred todos (they are not work now); whether a gate would hold one back on resuming is asked here.
    const gates = doc.todos.filter((item) => gateState(item) !== null);
    const heldBy = (todo: TodoItem): string[] =>
      gateHolds.get(todo.todoId) ??
      gates.filter((gate) => gateRelation(gate, todo) !== null).map((gate) => gate.todoId);
    const gatedLanes = new Set(Object.keys(analysis.lane_gates_by_agent));
    const authority = hasDeliveryAuthority(goal, agentId);
    for (const todo of doc.todos) {
      if (todo.role === 'user') {
        if (!isUserGate(todo) && (todo.status === 'open' || todo.status === 'blocked'))
          groups.review.push(todoRow(goal, todo, []));
        continue;
      }
      if (todo.role !== 'agent' || todo.status === 'done') continue;
      const claimedBy = todo.meta['claimed_by'] ?? null;
      if (agentId !== null && claimedBy !== null && claimedBy !== agentId) continue;
      if (!authority) {
        if (todo.status !== 'deferred') notListed += 1;
        continue;
      }
      const held: string[] = [
        ...heldBy(todo).map((gateId) => `gate:${gateId}`),
        ...(todo.status === 'blocked' ? ['status_blocked'] : []),
        ...(claimedBy !== null && gatedLanes.has(claimedBy) ? [`lane_gate:${claimedBy}`] : []),
      ];
      const resumeWhen = todo.meta['resume_when'];
      const resumeReady =
        todo.status === 'deferred' && deferredTodoDueWithQuota(resumeWhen, doc.todos, goal.item.quota?.state);
      if (todo.status === 'deferred' && !resumeReady) {
        deferredWaiting += 1;
        continue;
      }
      if (held.length > 0) {
        // A deferred todo whose resume condition holds says "ready" while something still holds it back: list it once, as blocked.
        if (resumeReady) {
          warnings.push({
            kind: 'conflicting_readiness_projection',
            goal_id: goal.item.goal_id,
            todo_id: todo.todoId,
            message: `${todo.todoId} may resume (${resumeWhen ?? ''}) but is held by ${held.join(', ')}; listed as blocked`,
          });
        }
        groups.blocked.push(todoRow(goal, todo, held));
      } else if (resumeReady) {
        groups.deferred_ready.push(todoRow(goal, todo, [`resume_when:${resumeWhen ?? ''}`]));
      } else {
        groups.runnable.push(todoRow(goal, todo, []));
      }
    }
  }
  const order = (a: TodoRow, b: TodoRow): number =>
    priorityRank(a.priority) - priorityRank(b.priority) || a.goal_id.localeCompare(b.goal_id);
  for (const rows of Object.values(groups)) rows.sort(order);
  const truncated = { value: false };
  return finish(snapshot, {
    ok: true,
    schema_version: GLOBAL_RESPONSE_SCHEMA,
    command: 'global-todos',
    request,
    summary: {
      runnable_count: groups.runnable.length,
      deferred_ready_count: groups.deferred_ready.length,
      blocked_count: groups.blocked.length,
      review_count: groups.review.length,
      deferred_waiting_count: deferredWaiting,
      not_listed_without_delivery_authority: notListed,
      goals_considered: considered,
    },
    groups: {
      runnable: cut(groups.runnable, request.limit, truncated),
      deferred_ready: cut(groups.deferred_ready, request.limit, truncated),
      blocked: cut(groups.blocked, request.limit, truncated),
      review: cut(groups.review, request.limit, truncated),
    },
    truncated: truncated.value,
    warnings,
    boundary: boundaryOf(registryLabel(snapshot), snapshot.goals.length),
  });
}

// ---------------------------------------------------------------------------------------------
// global-risks

const FAILURE = /(?:^|[^a-z])(?:fail(?:ed|ure|ing)?|error)(?:[^a-z]|$)/i;

function risk(
  kind: string,
  severity: RiskSeverity,
  goalId: string | null,
  message: string,
  recommendedAction: string,
  details: Record<string, unknown> = {},
): RiskRow {
  return { kind, severity, goal_id: goalId, message, recommended_action: recommendedAction, details };
}

function goalRisks(
  goal: GlobalGoalView,
  snapshot: GlobalSnapshot,
  hours: number,
): Record<'state_errors' | 'failing_validations' | 'stale_runs' | 'projection_warnings' | 'quota', RiskRow[]> {
  const { item } = goal;
  const id = item.goal_id;
  const out = {
    state_errors: [] as RiskRow[],
    failing_validations: [] as RiskRow[],
    stale_runs: [] as RiskRow[],
    projection_warnings: [] as RiskRow[],
    quota: [] as RiskRow[],
  };

  if (item.active_state.error !== null) {
    out.state_errors.push(
      risk(
        'state_file_unreadable',
        'high',
        id,
        item.active_state.error.message,
        "fix the state file (or the goal's state_file in the registry), then run loopx status",
        { code: item.active_state.error.code },
      ),
    );
  }
  for (const error of item.state_diagnostics?.errors ?? []) {
    out.state_errors.push(
      risk(error.kind, 'high', id, error.message, 'edit ACTIVE_GOAL_STATE.md so every todo_id is unique', {
        line: error.line,
      }),
    );
  }

  const inRange = runsInRange(goal, snapshot.now, hours);
  const outcomes = inRange.filter(isProgressRun);
  const newest = outcomes[0];
  if (newest !== undefined && (FAILURE.test(newest.classification ?? '') || FAILURE.test(newest.health_check ?? ''))) {
    const failing = outcomes.filter(
      (run) => FAILURE.test(run.classification ?? '') || FAILURE.test(run.health_check ?? ''),
    ).length;
    out.failing_validations.push(
      risk(
        'failing_validation',
        'high',
        id,
        `the latest run (${newest.generated_at ?? 'no time'}, ${newest.classification ?? 'unclassified'}) failed: ${newest.health_check ?? 'no health check recorded'}`,
        `inspect the run, fix the cause and run the goal's validation again; ${failing} failing run(s) in the last ${hours}h`,
        {
          generated_at: newest.generated_at ?? null,
          classification: newest.classification ?? null,
          failing_runs_in_range: failing,
        },
      ),
    );
  }

  if (item.stale_latest_run_warning !== undefined) {
    out.stale_runs.push(
      risk(
        item.stale_latest_run_warning.kind,
        'action',
        id,
        item.stale_latest_run_warning.message,
        `loopx refresh-state --goal-id ${id}`,
        { reasons: item.stale_latest_run_warning.reason_codes },
      ),
    );
  }
  if (item.activation_state === 'active' && todosOrEmpty(item.agent_todos).open_count > 0 && inRange.length === 0) {
    const latest = goal.runs[0]?.generated_at ?? null;
    out.stale_runs.push(
      risk(
        'no_recent_run',
        'info',
        id,
        `no run in the last ${hours}h while ${todosOrEmpty(item.agent_todos).open_count} agent todo(s) are open (latest run: ${latest ?? 'none'})`,
        `check that an agent loop runs for ${id}, or defer the open todos`,
        { latest_run_at: latest },
      ),
    );
  }

  for (const warning of item.projection_warnings) {
    if (warning.kind === 'stale_latest_run_projection') continue;
    out.projection_warnings.push(
      risk(
        warning.kind,
        warning.severity === 'warning' ? 'action' : 'info',
        id,
        warning.message,
        warning.recommended_action,
        { id: warning.id },
      ),
    );
  }

  const quota = item.quota;
  if (quota !== undefined) {
    const numbers = {
      state: quota.state ?? null,
      spent_slots: quota.spent_slots ?? null,
      allowed_slots: quota.allowed_slots ?? null,
    };
    if (quota['exceeded'] === true) {
      out.quota.push(
        risk(
          'quota_over_limit',
          'high',
          id,
          `quota over its limit: ${quota.spent_slots ?? '?'} of ${quota.allowed_slots ?? '?'} slots spent`,
          `raise the quota (loopx configure-goal --goal-id ${id} --quota-compute …) or wait for the window to free slots`,
          numbers,
        ),
      );
    } else if (quota['warn'] === true || quota.state === 'throttled') {
      out.quota.push(
        risk(
          'quota_near_limit',
          'action',
          id,
          `quota near its limit (${quota.state ?? 'unknown'}): ${quota.spent_slots ?? '?'} of ${quota.allowed_slots ?? '?'} slots spent`,
          `loopx quota status --goal-id ${id}`,
          numbers,
        ),
      );
    }
  }
  return out;
}

function deadLockRisk(lock: DeadLockFinding): RiskRow {
  const holder =
    lock.pid === null
      ? 'an unreadable holder record'
      : `pid ${lock.pid} (${lock.operation ?? 'unknown operation'}, agent ${lock.agent_id ?? 'unknown'}), which no longer runs`;
  return risk(
    'lock_held_by_dead_process',
    'action',
    null,
    `${lock.lock_file} is held by ${holder}`,
    'the next write of the locked file reclaims it automatically; delete the lock file only if no loopx process is writing',
    {
      lock_file: lock.lock_file,
      reason: lock.reason,
      pid: lock.pid,
      acquired_at: lock.acquired_at,
    },
  );
}

export function globalRisks(snapshot: GlobalSnapshot, options: GlobalViewOptions = {}): GlobalRisksResponse {
  const request = requestOf(snapshot, options);
  const groups: GlobalRisksResponse['groups'] = {
    state_errors: [],
    failing_validations: [],
    stale_runs: [],
    projection_warnings: [],
    quota: [],
    dead_locks: [],
  };
  const goals = snapshot.goals.filter((goal) => agentMayAct(goal, request.agent_id));
  for (const goal of goals) {
    const found = goalRisks(goal, snapshot, request.time_range_hours);
    for (const key of Object.keys(found) as (keyof typeof found)[]) groups[key].push(...found[key]);
  }
  groups.dead_locks.push(...snapshot.deadLocks.map(deadLockRisk));
  const all = Object.values(groups).flat();
  const bySeverity = (severity: RiskSeverity): number => all.filter((row) => row.severity === severity).length;
  const truncated = { value: false };
  const limited = Object.fromEntries(
    Object.entries(groups).map(([key, rows]) => [key, cut(rows, request.limit, truncated)]),
  ) as GlobalRisksResponse['groups'];
  return finish(snapshot, {
    ok: true,
    schema_version: GLOBAL_RESPONSE_SCHEMA,
    command: 'global-risks',
    request,
    summary: {
      risk_count: all.length,
      high: bySeverity('high'),
      action: bySeverity('action'),
      info: bySeverity('info'),
      state_errors: groups.state_errors.length,
      failing_validations: groups.failing_validations.length,
      stale_runs: groups.stale_runs.length,
      projection_warnings: groups.projection_warnings.length,
      quota: groups.quota.length,
      dead_locks: groups.dead_locks.length,
    },
    groups: limited,
    truncated: truncated.value,
    warnings: [],
    boundary: boundaryOf(registryLabel(snapshot), goals.length),
  });
}

// ---------------------------------------------------------------------------------------------

export function globalView(
  command: GlobalCommand,
  snapshot: GlobalSnapshot,
  options: GlobalViewOptions = {},
): GlobalSummaryResponse | GlobalGatesResponse | GlobalTodosResponse | GlobalRisksResponse {
  switch (command) {
    case 'global-summary':
      return globalSummary(snapshot, options);
    case 'global-gates':
      return globalGates(snapshot, options);
    case 'global-todos':
      return globalTodos(snapshot, options);
    case 'global-risks':
      return globalRisks(snapshot, options);
  }
}

/** The answer when the snapshot could not be read: `ok:false` with the fixed error and the reason, paths labelled. */
export function globalUnavailable(
  command: GlobalCommand,
  reason: string,
  context: ScrubContext & { now: Date; registryPath: string },
  options: GlobalViewOptions = {},
): GlobalUnavailableResponse {
  return scrubValue(
    {
      ok: false,
      schema_version: GLOBAL_RESPONSE_SCHEMA,
      command,
      request: requestOf({ now: context.now }, options),
      error: GLOBAL_SOURCE_UNAVAILABLE,
      reason,
      boundary: boundaryOf(context.registryPath, 0),
    },
    context,
  );
}
