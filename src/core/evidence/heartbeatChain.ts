import type { Clock } from '../clock';
import { isoSeconds } from '../clock';
import type { LockOptions } from '../fs/fileLock';
import { settlementIdentity } from '../quota/identity';
import {
  checkReceiptBinding,
  findHeartbeatReceipt,
  findStepEvent,
  type HeartbeatReceipt,
  type RequestedBinding,
} from './receipts';
import {
  appendRolloutEventsChecked,
  ofTurn,
  buildRolloutEvent,
  readRolloutEvents,
  rolloutEventLogOf,
  type RolloutEvent,
  type RolloutEventKind,
} from './rolloutLog';

/**
 * The later steps of one heartbeat (docs/quota.md#heartbeat-receipts): `refresh-state`, `todo
 * complete` and `quota spend-slot` with `--turn-instance-id T --agent-id A`. Before writing, a step
 * reads the receipt of T: when there is one, an explicit binding must match it and a missing one is
 * taken from it. After writing (or finding its write already done), it appends its own step event
 * (`refresh_state`, `todo_complete`, `quota_spend`) carrying the settlement effect id, once.
 */

export interface TurnStep {
  goalId: string;
  goalDir: string;
  agentId: string;
  turnInstanceId: string;
}

export interface ChainBinding extends RequestedBinding {
  receipt: HeartbeatReceipt | null;
  effectId: string;
}

function effectOf(step: TurnStep, binding: RequestedBinding): string {
  return settlementIdentity({
    goalId: step.goalId,
    agentId: step.agentId,
    turnInstanceId: step.turnInstanceId,
    todoId: binding.todoId,
    replanObligationId: binding.replanObligationId,
  }).effect_id;
}

/** Reads the receipt of the turn and resolves the binding the step must use. */
export async function resolveChainBinding(
  step: TurnStep,
  requested: RequestedBinding,
  stepName: string,
): Promise<ChainBinding> {
  const read = await readRolloutEvents(rolloutEventLogOf(step.goalDir), ofTurn(step.turnInstanceId));
  const receipt = findHeartbeatReceipt(read.events, step.goalId, step.agentId, step.turnInstanceId);
  const binding =
    receipt === null ? requested : checkReceiptBinding(receipt, requested, (b) => effectOf(step, b), stepName);
  return { ...binding, receipt, effectId: effectOf(step, binding) };
}

export interface StepEventInput {
  /** `quota_should_run` only for a turn LoopX drives itself (its admission is the turn's receipt). */
  kind: Extract<RolloutEventKind, 'quota_should_run' | 'refresh_state' | 'quota_spend' | 'todo_complete'>;
  clock: Clock;
  status: string;
  classification?: string | null;
  deliveryOutcome?: string | null;
  summary: string;
  details?: Record<string, string | number | boolean | null | undefined>;
  lock?: LockOptions;
}

/** Appends the step's event unless one with this effect id is already there; says which. */
export async function recordStepEvent(
  step: TurnStep,
  binding: ChainBinding,
  input: StepEventInput,
): Promise<{ event: RolloutEvent; appended: boolean }> {
  return appendRolloutEventsChecked<{ event: RolloutEvent; appended: boolean }>(
    step.goalDir,
    (read) => {
      const existing = findStepEvent(read.events, input.kind, step.agentId, step.turnInstanceId, binding.effectId);
      if (existing !== null) return { append: [], result: { event: existing, appended: false } };
      const event = buildRolloutEvent({
        goalId: step.goalId,
        eventKind: input.kind,
        recordedAt: isoSeconds(input.clock.now()),
        agentId: step.agentId,
        todoId: binding.todoId,
        runId: step.turnInstanceId,
        status: input.status,
        classification: input.classification,
        deliveryOutcome: input.deliveryOutcome,
        summary: input.summary,
        details: {
          todo_id: binding.todoId ?? undefined,
          replan_obligation_id: binding.replanObligationId ?? undefined,
          settlement_effect_id: binding.effectId,
          receipt_event_id: binding.receipt?.event_id ?? undefined,
          ...input.details,
        },
      });
      return { append: [event], result: { event, appended: true } };
    },
    { keep: ofTurn(step.turnInstanceId), ...(input.lock === undefined ? {} : { lock: input.lock }) },
  );
}

/** Whether the step event of this binding is already in the log (a replay). */
export async function stepEventRecorded(
  step: TurnStep,
  binding: ChainBinding,
  kind: StepEventInput['kind'],
): Promise<boolean> {
  const read = await readRolloutEvents(rolloutEventLogOf(step.goalDir), ofTurn(step.turnInstanceId));
  return findStepEvent(read.events, kind, step.agentId, step.turnInstanceId, binding.effectId) !== null;
}
