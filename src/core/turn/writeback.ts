import type { LaneRunField } from '../lanes/lane';
import { withTurnCompletionFence } from './leases';
import { registeredAgentsForGoal } from '../registry/agentIds';
import type { Clock } from '../clock';
import { isLoopxError } from '../errors';
import { extractMachineObject } from '../executors/extract';
import { runValidation } from '../executors/validation';
import { scrubText } from '../privacy/scrub';
import type { SettlementIdentity } from '../quota/identity';
import { FAILED_TURN_USAGE_FIELD, type TurnUsage } from '../quota/ledger';
import { isRecord } from '../registry/schema';
import {
  commitRefreshState,
  planRefreshState,
  readRefreshBase,
  type RefreshStateRequest,
} from '../refresh/refreshState';
import { GoalLoader } from '../goal/loader';
import type { RunIndexRow } from '../runtime/runIndex';
import { appendRun } from '../runtime/runIndexWrite';
import { formatLocalIsoSeconds } from '../runtime/time';
import { compactText, parseStateDocument, truncate } from '../state/document';
import { applyStateEdit, type StateEditOutcome } from '../state/stateFile';
import { addTodo, completeTodo, findTodo, updateTodo, type OperationContext } from '../state/todos';
import type { HostResult, TodoDisposition } from '../protocol/contract';
import type { RunSnapshot } from '../snapshots/gitSnapshot';
import type { TurnSetup } from './context';
import type { RecoveryKind, ValidationReceipt, WritebackRecord } from './journal';

/**
 * Steps 5 and 6 of a turn (docs/turns.md#one-turn-step-by-step): the independent validator, and the durable writeback
 * through the state functions (todo transition, Next Action, one refresh-state run record). Every
 * write here is safe to repeat after a crash: a done todo is not completed twice, a question
 * already turned into a gate is not asked twice, and a run already recorded for this turn is found
 * in the run index instead of being appended again.
 */

// ---------------------------------------------------------------------------------------------
// Validation

export interface TurnValidationInput {
  argv: readonly string[] | null;
  cwd: string;
  env: NodeJS.ProcessEnv;
  homeDir: string;
  result: HostResult;
  failureKind: RecoveryKind;
  signal?: AbortSignal | undefined;
}

/** The validator's own verdict, when its stdout ends with a JSON object such as `{"status": "progress"}`. */
function reportedStatus(excerpt: string): string | null {
  const stdout = excerpt.split('\n[stderr]\n')[0] ?? '';
  const candidate = extractMachineObject(stdout);
  return isRecord(candidate) && typeof candidate['status'] === 'string' ? candidate['status'] : null;
}

/**
 * Runs the goal's validator with the normalized result on stdin. Exit 0 is `passed`; a non-zero
 * exit is `progress` when the validator says so (`{"status":"progress"}` on stdout), else
 * `failed`; a timeout or runaway output is `inconclusive`; no validator, or one that cannot start,
 * is `unavailable`. Anything but passed/progress carries the recovery kind.
 */
export async function validateTurn(input: TurnValidationInput): Promise<ValidationReceipt> {
  if (input.argv === null) {
    return {
      status: 'unavailable',
      command: null,
      exit_code: null,
      duration_ms: 0,
      output_excerpt: '',
      recovery_kind: input.failureKind,
      reason:
        'the goal has no validation_command, so the turn cannot be validated independently; set validation_command (an argv array) in the registry',
    };
  }
  const run = await runValidation({
    argv: input.argv,
    cwd: input.cwd,
    env: input.env,
    stdin: `${JSON.stringify(input.result)}\n`,
    ...(input.signal ? { signal: input.signal } : {}),
  });
  const base = {
    command: [...input.argv],
    exit_code: run.exit_code,
    duration_ms: run.duration_ms,
    output_excerpt: run.output_excerpt,
  };
  const shown = input.argv.join(' ');
  switch (run.end) {
    case 'spawn_failed':
      return {
        ...base,
        status: 'unavailable',
        recovery_kind: input.failureKind,
        reason: `the validator ${shown} could not start`,
      };
    case 'timeout':
    case 'output_too_large':
    case 'cancelled':
      return {
        ...base,
        status: 'inconclusive',
        recovery_kind: input.failureKind,
        reason: `the validator ${shown} ended without a verdict (${run.end})`,
      };
    case 'exited':
      break;
  }
  if (run.exit_code === 0)
    return { ...base, status: 'passed', recovery_kind: null, reason: `validation passed: ${shown}` };
  if (reportedStatus(run.output_excerpt) === 'progress') {
    return {
      ...base,
      status: 'progress',
      recovery_kind: null,
      reason: `validation reports progress (exit ${run.exit_code ?? '?'}): ${shown}`,
    };
  }
  return {
    ...base,
    status: 'failed',
    recovery_kind: input.failureKind,
    reason: `validation failed (exit ${run.exit_code ?? '?'}): ${shown}`,
  };
}

export function validationPassed(receipt: ValidationReceipt): boolean {
  return receipt.status === 'passed' || receipt.status === 'progress';
}

// ---------------------------------------------------------------------------------------------
// State edits

export interface WritebackContext {
  turnGoal: TurnSetup;
  clock: Clock;
  identity: SettlementIdentity;
  turnKey: string;
  turnInstanceId: string;
  todoId: string | null;
  /**
   * The turn ran before (a crash, a cancel, a retry), so a record of it may already exist. Only
   * then is the run index searched for one: a first attempt cannot have written any.
   */
  mayHaveRecords: boolean;
  /**
   * The compare-and-swap base of the next state edit: the text this turn's plan was made from, then
   * each text the writeback wrote under the lock; null when unknown (a resumed turn, or after a failed
   * swap or another writer's edit), when the edit starts from the file as it is.
   */
  stateText: string | null;
  /** The turn's working-tree snapshot (base at its start, head now), stored on its run record; absent without git. */
  snapshot?: RunSnapshot | null | undefined;
}

/** How often a compare-and-swap edit is recomputed when someone else changed the file meanwhile. */
const CAS_ATTEMPTS = 8;

async function withCasRetry<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (error) {
      if (!isLoopxError(error, 'state_changed_concurrently') || attempt >= CAS_ATTEMPTS) throw error;
    }
  }
}

function operationContext(ctx: WritebackContext): OperationContext {
  const roster = registeredAgentsForGoal(ctx.turnGoal.goal.rawEntry);
  return {
    now: formatLocalIsoSeconds(ctx.clock.now()),
    goalId: ctx.turnGoal.goal.goalId,
    roster: roster.length > 0 ? roster : null,
  };
}

interface Edit<T> extends StateEditOutcome {
  value: T;
}

async function editState<T>(
  ctx: WritebackContext,
  operation: string,
  edit: (text: string) => Edit<T>,
): Promise<{ value: T; written: boolean }> {
  return withCasRetry(async () => {
    const known = ctx.stateText;
    ctx.stateText = null; // a failed swap means the file changed: the retry reads it
    const outcome = await applyStateEdit(ctx.turnGoal.statePath, edit, {
      operation,
      lock: { agentId: ctx.identity.agent_id, clock: ctx.clock },
      ...(known === null ? {} : { expectedText: known }),
    });
    // What the file holds now: the text just written under the lock, or the unchanged text the edit started from.
    ctx.stateText = outcome.text;
    return { value: outcome.value, written: outcome.written };
  });
}

/** The note that marks a gate as this turn's question, so a resumed turn finds it instead of asking again. */
function gateNote(ctx: WritebackContext): string {
  return `asked by ${ctx.identity.agent_id} in turn ${ctx.turnInstanceId}`;
}

export interface TodoTransition {
  transition: string;
  successor_todo_ids: string[];
  gate_todo_id: string | null;
}

/**
 * Parks the todo (`blocked`, the question as its note) behind a new user gate that blocks this
 * agent and names the todo in `unblocks_todo_id`, so approving the gate reopens it.
 */
function parkBehindGate(
  text: string,
  ctx: WritebackContext,
  todoId: string,
  question: string,
  context: OperationContext,
): Edit<TodoTransition> {
  const doc = parseStateDocument(text);
  const note = gateNote(ctx);
  const existing = doc.todos.find((t) => t.role === 'user' && t.meta['note'] === note);
  if (existing !== undefined)
    return {
      text,
      changed: false,
      value: { transition: 'blocked_with_gate', successor_todo_ids: [], gate_todo_id: existing.todoId },
    };
  const item = findTodo(doc, todoId);
  const gate = addTodo(
    text,
    {
      role: 'user',
      text: `[P1] ${truncate(compactText(question), 400)}`,
      taskClass: 'user_gate',
      note,
      gate: { blocksAgent: ctx.identity.agent_id, unblocksTodoIds: [todoId] },
    },
    context,
  );
  const parked =
    item.status === 'blocked'
      ? gate
      : updateTodo(gate.text, { todoId, status: 'blocked', note: truncate(compactText(question), 500) }, context);
  return {
    text: parked.text,
    changed: true,
    value: { transition: 'blocked_with_gate', successor_todo_ids: [], gate_todo_id: gate.summary.todo_id },
  };
}

function transitionEdit(
  ctx: WritebackContext,
  result: HostResult,
  disposition: TodoDisposition,
): (text: string) => Edit<TodoTransition> {
  return (text) => {
    const context = operationContext(ctx);
    const doc = parseStateDocument(text);
    const item = findTodo(doc, disposition.todo_id);
    switch (disposition.disposition) {
      case 'done': {
        if (item.status === 'done') {
          const successors = (item.meta['successor_todo_ids'] ?? '').split(',').filter((id) => id !== '');
          return {
            text,
            changed: false,
            value: { transition: 'already_done', successor_todo_ids: successors, gate_todo_id: null },
          };
        }
        const done = completeTodo(
          text,
          {
            todoId: disposition.todo_id,
            evidence: disposition.evidence,
            // A host result's completion carries evidence and exactly one continuation.
            strict: true,
            ...(disposition.successor !== undefined
              ? {
                  successor: {
                    text: disposition.successor.text,
                    ...(disposition.successor.priority !== undefined
                      ? { priority: disposition.successor.priority }
                      : {}),
                  },
                }
              : { noFollowUp: true }),
          },
          context,
        );
        return {
          text: done.text,
          changed: done.changed,
          value: {
            transition: disposition.successor !== undefined ? 'done_with_successor' : 'done_no_follow_up',
            successor_todo_ids: done.summary.added_todos.map((t) => t.todo_id),
            gate_todo_id: null,
          },
        };
      }
      case 'in_progress': {
        const annotation =
          result.result_kind === 'repair_required' || result.result_kind === 'replan_required'
            ? `${result.result_kind}: ${result.summary}`
            : disposition.note;
        const claim =
          item.meta['claimed_by'] === undefined || item.meta['claimed_by'] === '' ? ctx.identity.agent_id : undefined;
        if (annotation === undefined && claim === undefined)
          return {
            text,
            changed: false,
            value: { transition: 'in_progress', successor_todo_ids: [], gate_todo_id: null },
          };
        const updated = updateTodo(
          text,
          {
            todoId: disposition.todo_id,
            ...(annotation !== undefined ? { note: truncate(compactText(annotation), 500) } : {}),
            ...(claim !== undefined ? { claimedBy: claim } : {}),
          },
          context,
        );
        return {
          text: updated.text,
          changed: updated.changed,
          value: { transition: 'in_progress', successor_todo_ids: [], gate_todo_id: null },
        };
      }
      case 'blocked':
      case 'needs_user':
        return parkBehindGate(text, ctx, disposition.todo_id, disposition.question, context);
    }
  };
}

/** The todo edit of a material result (complete, annotate, or park behind a gate). */
export async function applyTodoTransition(
  ctx: WritebackContext,
  result: HostResult,
): Promise<{ value: TodoTransition; written: boolean }> {
  const disposition = result.todo;
  if (disposition === undefined)
    return { value: { transition: 'none', successor_todo_ids: [], gate_todo_id: null }, written: false };
  const apply = () =>
    editState(ctx, `turn writeback (${disposition.disposition})`, transitionEdit(ctx, result, disposition));
  if (disposition.disposition !== 'done') return apply();
  return withTurnCompletionFence(
    ctx.turnGoal,
    { todoId: disposition.todo_id, stateText: ctx.stateText },
    ctx.clock,
    apply,
  );
}

/** The stop-result edit: a question becomes a user gate in front of the todo. */
export async function applyStopWriteback(
  ctx: WritebackContext,
  result: HostResult,
): Promise<{ value: TodoTransition; written: boolean }> {
  const disposition = result.todo;
  if (
    disposition === undefined ||
    (disposition.disposition !== 'blocked' && disposition.disposition !== 'needs_user')
  ) {
    return { value: { transition: 'none', successor_todo_ids: [], gate_todo_id: null }, written: false };
  }
  const { todo_id: todoId, question } = disposition;
  return editState(ctx, 'turn stop (question for the user)', (text) =>
    parkBehindGate(text, ctx, todoId, question, operationContext(ctx)),
  );
}

// ---------------------------------------------------------------------------------------------
// Run records

function rowField(row: RunIndexRow, key: string): unknown {
  return (row as Record<string, unknown>)[key];
}

async function findTurnRow(
  ctx: WritebackContext,
  classification: string,
  attempt: number | null,
): Promise<RunIndexRow | null> {
  if (!ctx.mayHaveRecords) return null;
  const { goal } = ctx.turnGoal;
  const rows = await new GoalLoader().runRows(goal);
  return (
    rows.find(
      (row) =>
        rowField(row, 'turn_instance_id') === ctx.turnInstanceId &&
        row.agent_id === ctx.identity.agent_id &&
        row.classification === classification &&
        (attempt === null || rowField(row, 'turn_attempt') === attempt),
    ) ?? null
  );
}

/**
 * The replan obligation a replan turn's record discharges: only when the agent reports the replan
 * done (`validated_progress`); a replan turn that asks for repair or a person leaves it owed.
 */
function dischargedReplan(ctx: WritebackContext, result: HostResult): string | null {
  const id = ctx.identity.replan_obligation_id;
  return id !== undefined && ctx.todoId === null && result.result_kind === 'validated_progress' ? id : null;
}

export interface MaterialWritebackInput {
  result: HostResult;
  validation: ValidationReceipt;
  usage: TurnUsage | null;
  executor: string;
  transition: TodoTransition;
  /** The agent's lane and the turn's commit on it (docs/lanes.md), recorded as the run's `lane`. */
  lane?: LaneRunField | null;
}

/**
 * The accountable run record (refresh-state, goal scope): classification = the result kind,
 * the agent's own classification, evidence, changed files, validation and usage, bound to the
 * turn and its settlement identity; it also rewrites the Next Action. Found, not re-appended,
 * when a resumed turn already wrote it.
 */
export async function recordMaterialRun(
  ctx: WritebackContext,
  input: MaterialWritebackInput,
): Promise<{ record: Omit<WritebackRecord, 'completed_at'>; written: boolean }> {
  const { result } = input;
  const transition = input.transition;
  const existing = await findTurnRow(ctx, result.result_kind, null);
  const base = {
    todo_transition: transition.transition,
    successor_todo_ids: transition.successor_todo_ids,
    gate_todo_id: transition.gate_todo_id,
    next_action: result.next_action,
  };
  if (existing !== null) {
    return {
      record: {
        ...base,
        run_generated_at: existing.generated_at ?? '',
        run_classification: result.result_kind,
        run_json_path: existing.json_path ?? null,
      },
      written: false,
    };
  }
  const { turnGoal } = ctx;
  return withCasRetry(async () => {
    const stateText = ctx.stateText ?? undefined;
    ctx.stateText = null;
    const target = { ...turnGoal.goal, homeDir: turnGoal.homeDir };
    const request: RefreshStateRequest = {
      classification: result.result_kind,
      nextAction: result.next_action,
      recommendedAction: result.recommended_action ?? result.next_action,
      agentId: ctx.identity.agent_id,
      progressScope: 'goal',
      todoId: ctx.todoId,
      replanObligationId: dischargedReplan(ctx, result),
      turnInstanceId: ctx.turnInstanceId,
      deliveryBatchScale: result.delivery_batch_scale ?? null,
      deliveryOutcome: result.delivery_outcome ?? null,
      // The turn's agent worked in the goal's project: the original's spend-slot asks for its snapshot.
      deliveryWorkspacePath: turnGoal.projectRoot,
    };
    // The text this turn's own locked write left in the state file, else the file as it is now (a retry).
    const baseText = stateText ?? (await readRefreshBase(target, request));
    const plan = await planRefreshState(target, request, baseText, ctx.clock);
    const record = Object.assign(structuredClone(plan.record), {
      turn_key: ctx.turnKey,
      settlement_identity: ctx.identity,
      host_classification: result.classification ?? null,
      summary: result.summary,
      evidence: result.evidence,
      changed_files: result.changed_files,
      todo_transition: transition.transition,
      successor_todo_ids: transition.successor_todo_ids,
      validation: {
        status: input.validation.status,
        command: input.validation.command,
        exit_code: input.validation.exit_code,
      },
      executor: input.executor,
      usage: input.usage,
      ...(ctx.snapshot ? { snapshot: ctx.snapshot } : {}),
      ...(input.lane != null ? { lane: input.lane } : {}),
    });
    const payload = await commitRefreshState(
      { ...plan, record },
      { clock: ctx.clock, lock: { agentId: ctx.identity.agent_id } },
    );
    return {
      record: {
        ...base,
        run_generated_at: payload.generated_at,
        run_classification: result.result_kind,
        run_json_path: payload.index_row.json_path,
      },
      written: true,
    };
  });
}

export interface TurnNoteInput {
  classification: string;
  /** Counts the attempts of one turn, so a failure record is written once per attempt. */
  attempt: number;
  recommendedAction: string;
  healthCheck: string;
  details: Record<string, unknown>;
  /**
   * What a failed attempt of the agent spent (its CLI's usage and cost, the minutes it ran): kept on
   * the record and its index row as `failed_turn_usage`, which the quota ledger counts against the
   * budgets (no slot), so failing turns cannot spend past a budget unseen.
   */
  usage?: TurnUsage | undefined;
}

/**
 * A non-accountable run record of the agent's lane (a host failure, a failed validation, a
 * question for the user): evidence of what happened, never a delivery, never spent.
 */
export async function recordTurnNote(ctx: WritebackContext, input: TurnNoteInput): Promise<string> {
  const existing = await findTurnRow(ctx, input.classification, input.attempt);
  if (existing !== null) return existing.generated_at ?? '';
  const { goal } = ctx.turnGoal;
  const scrub = {
    projectRoots: [ctx.turnGoal.projectRoot, goal.projectRoot],
    homeDir: ctx.turnGoal.homeDir,
    runtimeRoot: goal.runtimeRoot,
  };
  const details = JSON.parse(scrubText(JSON.stringify(input.details), scrub)) as Record<string, unknown>;
  const record: Record<string, unknown> = {
    classification: input.classification,
    recommended_action: scrubText(input.recommendedAction, scrub),
    health_check: scrubText(input.healthCheck, scrub),
    agent_id: ctx.identity.agent_id,
    progress_scope: 'agent_lane',
    agent_lane: ctx.identity.agent_id,
    ...(ctx.todoId !== null ? { todo_id: ctx.todoId } : {}),
    turn_instance_id: ctx.turnInstanceId,
    turn_attempt: input.attempt,
    turn_key: ctx.turnKey,
    settlement_identity: ctx.identity,
    ...details,
    ...(input.usage !== undefined ? { [FAILED_TURN_USAGE_FIELD]: input.usage } : {}),
    ...(ctx.snapshot ? { snapshot: ctx.snapshot } : {}),
  };
  const lines = [
    `# ${goal.goalId} — ${input.classification}`,
    '',
    `- agent: ${ctx.identity.agent_id}, todo: ${ctx.todoId ?? '(none)'}, turn: ${ctx.turnInstanceId} (attempt ${input.attempt})`,
    `- ${record['health_check'] as string}`,
    `- next: ${record['recommended_action'] as string}`,
  ];
  const excerpt = details['output_excerpt'];
  if (typeof excerpt === 'string' && excerpt !== '') lines.push('', '```text', excerpt.replace(/```/g, "'''"), '```');
  const appended = await appendRun({
    runtimeRoot: goal.runtimeRoot,
    goalId: goal.goalId,
    record,
    markdown: `${lines.join('\n')}\n`,
    suffix: input.classification.replace(/_/g, '-'),
    indexFields: {
      turn_instance_id: ctx.turnInstanceId,
      turn_attempt: input.attempt,
      settlement_identity: ctx.identity,
      agent_lane: ctx.identity.agent_id,
      ...(input.usage !== undefined ? { [FAILED_TURN_USAGE_FIELD]: input.usage } : {}),
      ...(ctx.snapshot ? { snapshot: ctx.snapshot } : {}),
    },
    projectRoot: goal.projectRoot,
    clock: ctx.clock,
    lock: { agentId: ctx.identity.agent_id, operation: 'turn_note' },
  });
  return appended.row.generated_at ?? '';
}
