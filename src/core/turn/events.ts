import { z } from 'zod';
import { TURN_PHASES } from '../protocol/contract';

/**
 * Typed progress events of the turn driver. `runOnce` and `runLoop` emit them through a sink the
 * caller passes (the CLI prints them, the editor shows progress); every event validates against
 * {@link TurnEventSchema}, so a subscriber in another process can check what it receives.
 */

/** Why a loop stopped (the dispositions of disposition.ts, plus the driver's own reasons). */
export const LOOP_STOP_REASONS = [
  /** Nothing to do for this agent now (quiet wait, peers hold the work, the goal waits on someone). */
  'wait',
  /** A person must act: an open gate, or the agent asked a question. */
  'user_action',
  /** The quota (slots, cost, tokens, turn minutes) is used up in the window. */
  'budget',
  /** The goal is done: no open agent todo and nothing to resume. */
  'terminal',
  /** The agent reported that the plan must change (replan_required), or the turn budget ran out. */
  'replan',
  /** The agent reported that something must be repaired first (repair_required). */
  'repair',
  /** A turn failed (host failure, validation, writeback, spend) or the plan is broken. */
  'error',
  /** The caller cancelled (Ctrl+C, editor cancel). */
  'cancelled',
  /** `--max-turns` turns ran. */
  'max_turns',
] as const;
export const LoopStopReasonSchema = z.enum(LOOP_STOP_REASONS);
export type LoopStopReason = z.infer<typeof LoopStopReasonSchema>;

/** The phases an event can report: admission (the slot is reserved) and the seven transaction phases. */
export const EVENT_PHASES = ['admission', ...TURN_PHASES] as const;

const Common = { goal_id: z.string(), agent_id: z.string(), at: z.string() };

export const TurnStartedEventSchema = z.object({
  type: z.literal('turn_started'),
  ...Common,
  turn_key: z.string(),
  turn_instance_id: z.string(),
  todo_id: z.string().nullable(),
  todo_title: z.string().nullable(),
  /** The turn continues a journal (after a crash, a cancel or a failure) instead of starting fresh. */
  resumed: z.boolean(),
});

export const PhaseDoneEventSchema = z.object({
  type: z.literal('phase_done'),
  ...Common,
  turn_key: z.string(),
  phase: z.enum(EVENT_PHASES),
  /** One line for people, e.g. "validation passed: node scripts/check-notes.js". */
  detail: z.string(),
});

export const TurnEndedEventSchema = z.object({
  type: z.literal('turn_ended'),
  ...Common,
  turn_key: z.string(),
  status: z.string(),
  result_kind: z.string().nullable(),
  summary: z.string(),
  spent: z.boolean(),
});

export const LoopStoppedEventSchema = z.object({
  type: z.literal('loop_stopped'),
  goal_id: z.string(),
  agent_ids: z.array(z.string()),
  at: z.string(),
  reason: LoopStopReasonSchema,
  /** The disposition the stop was derived from, when one was computed. */
  disposition: z.string().nullable(),
  message: z.string(),
  turns: z.number().int().nonnegative(),
  spends: z.number().int().nonnegative(),
});

export const TurnEventSchema = z.discriminatedUnion('type', [
  TurnStartedEventSchema,
  PhaseDoneEventSchema,
  TurnEndedEventSchema,
  LoopStoppedEventSchema,
]);
export type TurnEvent = z.infer<typeof TurnEventSchema>;
export type TurnStartedEvent = z.infer<typeof TurnStartedEventSchema>;
export type PhaseDoneEvent = z.infer<typeof PhaseDoneEventSchema>;
export type TurnEndedEvent = z.infer<typeof TurnEndedEventSchema>;
export type LoopStoppedEvent = z.infer<typeof LoopStoppedEventSchema>;

/** Where the driver sends its events. A throwing sink never breaks a turn. */
export type TurnEventSink = (event: TurnEvent) => void;

/** A small typed emitter: subscribe with `on`, pass `emit` as the driver's sink. */
export class TurnEventEmitter {
  private readonly listeners = new Set<TurnEventSink>();

  /** Adds a listener; the returned function removes it. */
  on(listener: TurnEventSink): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  readonly emit: TurnEventSink = (event) => {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch {
        // A subscriber's bug must not fail the turn it observes.
      }
    }
  };
}

/** Sends an event to an optional sink, shielding the driver from the sink's errors. */
export function emitTo(sink: TurnEventSink | undefined, event: TurnEvent): void {
  if (sink === undefined) return;
  try {
    sink(event);
  } catch {
    // See TurnEventEmitter.emit.
  }
}
