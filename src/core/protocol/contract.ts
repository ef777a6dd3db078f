import * as path from 'node:path';
import { z } from 'zod';
import { credentialMessage } from '../privacy/refuse';
import { containsPrivateData, findCredentials } from '../privacy/scrub';
import { SettlementIdentitySchema, type SettlementIdentity } from '../quota/identity';

/**
 * The contract between LoopX and a host agent for ONE bounded turn (docs/executors.md):
 * what we send (`loopx_turn_host_request_v0`, on stdin or rendered as the turn prompt), what
 * the agent must answer (`loopx_turn_result_v0`, one JSON object of at most 12,000 bytes), and
 * the failure taxonomy a turn can end in. Agent output is data: it is validated here and never
 * interpreted as anything else.
 */

// ---------------------------------------------------------------------------------------------
// Phases, result kinds, failure taxonomy (docs/executors.md#when-a-turn-fails)

/** The transaction phases of a LoopX-driven turn, in order. */
export const TURN_PHASES = [
  'host_execute',
  'typed_result',
  'validation',
  'durable_writeback',
  'quota_spend',
  'scheduler_apply',
  'scheduler_ack',
] as const;
export type TurnPhase = (typeof TURN_PHASES)[number];

/** Material results change the goal: they must be validated, written back and settled. */
export const MATERIAL_RESULT_KINDS = [
  'validated_progress',
  'validated_completion',
  'repair_required',
  'replan_required',
] as const;
/** Stop results end the turn without validation, writeback or spend. */
export const STOP_RESULT_KINDS = ['user_action_required', 'wait'] as const;
/** The kinds a host agent may answer with. */
export const HOST_RESULT_KINDS = [...MATERIAL_RESULT_KINDS, ...STOP_RESULT_KINDS] as const;
export type HostResultKind = (typeof HOST_RESULT_KINDS)[number];
export type MaterialResultKind = (typeof MATERIAL_RESULT_KINDS)[number];

/** Failure kinds (never spend) and the phase each one fails in. */
export const FAILED_PHASE_BY_KIND = {
  host_failure: 'host_execute',
  validation_failed: 'validation',
  writeback_failed: 'durable_writeback',
  quota_spend_failed: 'quota_spend',
  terminal_closeout_failed: 'terminal_closeout',
} as const;
export type FailureResultKind = keyof typeof FAILED_PHASE_BY_KIND;
export const FAILURE_RESULT_KINDS = Object.keys(FAILED_PHASE_BY_KIND) as FailureResultKind[];
export type FailedPhase = (typeof FAILED_PHASE_BY_KIND)[FailureResultKind];

/** Every result kind a turn receipt may carry. */
export const TURN_RESULT_KINDS = [...HOST_RESULT_KINDS, ...FAILURE_RESULT_KINDS] as const;
export type TurnResultKind = HostResultKind | FailureResultKind;

/**
 * Why a host turn failed (`host_failure`, phase `host_execute`). The agent misbehaving is never
 * a crash: every such case ends as one of these.
 */
export const HOST_FAILURE_REASONS = [
  'timeout',
  'non_zero_exit',
  'malformed_result',
  'result_too_large',
  'contract_violation',
  'spawn_failed',
  'cancelled',
  /** The agent's own envelope said the run failed (Claude Code `is_error`, Codex `turn.failed`) while exiting 0. */
  'agent_reported_error',
] as const;
export type HostFailureReason = (typeof HOST_FAILURE_REASONS)[number];

export const DELIVERY_BATCH_SCALES = ['test_only', 'single_surface', 'multi_surface', 'implementation'] as const;
/** Older spellings the original accepts for `single_surface`. */
export const BATCH_SCALE_ALIASES: Readonly<Record<string, string>> = {
  single_segment: 'single_surface',
  bounded_segment: 'single_surface',
};
export const DELIVERY_OUTCOMES = ['surface_only', 'outcome_gap', 'outcome_progress', 'primary_goal_outcome'] as const;
export const TODO_DISPOSITIONS = ['done', 'in_progress', 'blocked', 'needs_user'] as const;
export type TodoDispositionKind = (typeof TODO_DISPOSITIONS)[number];

export const HOST_REQUEST_SCHEMA_VERSION = 'loopx_turn_host_request_v0';
export const HOST_RESULT_SCHEMA_VERSION = 'loopx_turn_result_v0';
/** The largest result object an agent may answer with, in UTF-8 bytes of its JSON. */
export const RESULT_MAX_BYTES = 12_000;

export function isMaterialResultKind(kind: string): kind is MaterialResultKind {
  return (MATERIAL_RESULT_KINDS as readonly string[]).includes(kind);
}

// ---------------------------------------------------------------------------------------------
// Field rules

export const TURN_KEY_PATTERN = /^sha256:[0-9a-f]{64}$/;
const CLASSIFICATION_PATTERN = /^[a-z][a-z0-9_]{1,63}$/;

const boundedText = (max: number) => z.string().trim().min(1).max(max);
/** Text that ends up in run records others read: no absolute paths, no credentials ("public-safe"). */
const publicText = (max: number) =>
  boundedText(max).refine((text) => !containsPrivateData(text), {
    message: 'must be public-safe: no absolute paths and no credentials',
  });

/**
 * Text LoopX writes into the state file or run records (evidence, notes, questions, follow-ups):
 * a credential in it makes the whole result invalid, so the secret is never written.
 */
const durableText = (max: number) =>
  boundedText(max).superRefine((text, ctx) => {
    const kinds = findCredentials(text);
    if (kinds.length > 0) ctx.addIssue({ code: 'custom', message: credentialMessage('', kinds) });
  });

/** A project-relative path that stays inside the project. */
const relativePath = z
  .string()
  .min(1)
  .max(500)
  .refine(
    (value) => {
      if (value.includes('\0') || path.posix.isAbsolute(value) || path.win32.isAbsolute(value)) return false;
      return !value.split(/[\\/]+/).includes('..');
    },
    { message: 'must be a path relative to the project root, without ".." segments' },
  );

/** Token and cost usage of one turn. `estimated` says the numbers are not a provider's meter reading. */
export const UsageSchema = z.strictObject({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
  /** Input tokens served from a prompt cache (a subset of `input_tokens`), when known. */
  cached_input_tokens: z.number().int().nonnegative().nullable().optional(),
  /** Null when the agent does not report a cost (Codex reports tokens only). */
  cost_usd: z.number().nonnegative().nullable(),
  estimated: z.boolean(),
});
export type Usage = z.infer<typeof UsageSchema>;

// ---------------------------------------------------------------------------------------------
// Host request

export const TodoBriefSchema = z.object({
  todo_id: z.string(),
  title: z.string(),
  text: z.string(),
  priority: z.string().nullable(),
  task_class: z.string().nullable(),
  claimed_by: z.string().nullable(),
  note: z.string().nullable(),
});
export type TodoBrief = z.infer<typeof TodoBriefSchema>;

export const GateBriefSchema = z.object({
  todo_id: z.string(),
  title: z.string(),
  blocks_agent: z.string().nullable(),
  global_gate: z.boolean(),
  decision_scope: z.string().nullable(),
  /** Agent todos this gate holds back. */
  blocked_todo_ids: z.array(z.string()),
});
export type GateBrief = z.infer<typeof GateBriefSchema>;

export const EvidenceBriefSchema = z.object({
  source: z.enum(['run', 'todo']),
  at: z.string().nullable(),
  agent_id: z.string().nullable(),
  todo_id: z.string().nullable(),
  classification: z.string().nullable(),
  text: z.string(),
});
export type EvidenceBrief = z.infer<typeof EvidenceBriefSchema>;

export const BudgetBriefSchema = z.object({
  window_hours: z.number(),
  allowed_slots: z.number().int().nonnegative(),
  spent_slots: z.number().int().nonnegative(),
  remaining_slots: z.number().int().nonnegative(),
  /** Quota state (`eligible`, `throttled`, …) when the caller computed one. */
  state: z.string().nullable(),
  /** Tokens and cost of the spends in the window, as agents reported them; `usage_estimated` when any was a guess. */
  spent_tokens: z.number().nonnegative().nullable(),
  spent_cost_usd: z.number().nonnegative().nullable(),
  usage_estimated: z.boolean(),
  max_tokens: z.number().positive().nullable(),
  max_cost_usd: z.number().positive().nullable(),
  /** How long this one turn may run, when known (executor timeout). */
  turn_timeout_minutes: z.number().positive().nullable(),
});
export type BudgetBrief = z.infer<typeof BudgetBriefSchema>;

/**
 * The replan a turn is for (a replan turn: the lane's latest turns stalled and `quota should-run`
 * owes an autonomous replan). Present only on such a turn; its record discharges the obligation.
 */
export const ReplanBriefSchema = z.object({
  obligation_id: z.string(),
  /** Why: the stall the run history shows. */
  reason: z.string(),
  recommended_action: z.string(),
  /** The kinds of change a replan may make (keep, split, add, retire, ask_decision, …). */
  guidance_actions: z.array(z.string()),
  stop_condition: z.string(),
});
export type ReplanBrief = z.infer<typeof ReplanBriefSchema>;

/** Everything an agent needs to know about its goal for one turn; the driver gathers it. */
export const TurnBriefSchema = z.object({
  goal: z.object({ goal_id: z.string(), display_name: z.string().nullable(), objective: z.string().nullable() }),
  agent_id: z.string(),
  selected_todo: TodoBriefSchema.nullable(),
  next_action: z.string().nullable(),
  open_gates: z.array(GateBriefSchema),
  recent_evidence: z.array(EvidenceBriefSchema),
  user_feedback: z.array(z.string()),
  budget: BudgetBriefSchema.nullable(),
  /** The goal's independent validator (argv), run by LoopX after the turn. */
  validation_command: z.array(z.string()).nullable(),
  /** Only on a replan turn: the owed replan this turn does instead of todo work. */
  replan: ReplanBriefSchema.optional(),
});
export type TurnBrief = z.infer<typeof TurnBriefSchema>;

export const ResultContractSchema = z.object({
  schema_version: z.literal(HOST_RESULT_SCHEMA_VERSION),
  max_bytes: z.number().int().positive(),
  result_kinds: z.array(z.string()),
  material_result_kinds: z.array(z.string()),
  delivery_batch_scales: z.array(z.string()),
  delivery_outcomes: z.array(z.string()),
  todo_dispositions: z.array(z.string()),
});
export type ResultContract = z.infer<typeof ResultContractSchema>;

export const RESULT_CONTRACT: ResultContract = {
  schema_version: HOST_RESULT_SCHEMA_VERSION,
  max_bytes: RESULT_MAX_BYTES,
  result_kinds: [...HOST_RESULT_KINDS],
  material_result_kinds: [...MATERIAL_RESULT_KINDS],
  delivery_batch_scales: [...DELIVERY_BATCH_SCALES],
  delivery_outcomes: [...DELIVERY_OUTCOMES],
  todo_dispositions: [...TODO_DISPOSITIONS],
};

export const HOST_ROUTES = ['ready_for_host', 'repair_required', 'replan_required'] as const;

export const HostRequestSchema = TurnBriefSchema.extend({
  schema_version: z.literal(HOST_REQUEST_SCHEMA_VERSION),
  turn_key: z.string().regex(TURN_KEY_PATTERN),
  route: z.enum(HOST_ROUTES),
  session: z.object({ action: z.enum(['start_new', 'resume']), session_id: z.string().nullable() }),
  identity: SettlementIdentitySchema,
  result_contract: ResultContractSchema,
  /** The agent's lane when it works isolated in a git worktree (docs/lanes.md); set when the turn runs. */
  lane: z
    .object({ branch: z.string(), worktree: z.string(), main_checkout: z.string(), registry: z.string() })
    .optional(),
});
export type HostRequest = z.infer<typeof HostRequestSchema>;

export interface HostRequestInput {
  brief: TurnBrief;
  turnKey: string;
  route: HostRequest['route'];
  identity: SettlementIdentity;
  session?: HostRequest['session'];
}

/** Assembles and validates a host request (throws a ZodError on a programming mistake). */
export function buildHostRequest(input: HostRequestInput): HostRequest {
  return HostRequestSchema.parse({
    schema_version: HOST_REQUEST_SCHEMA_VERSION,
    ...input.brief,
    turn_key: input.turnKey,
    route: input.route,
    session: input.session ?? { action: 'start_new', session_id: null },
    identity: input.identity,
    result_contract: RESULT_CONTRACT,
  });
}

// ---------------------------------------------------------------------------------------------
// Host result

const SuccessorSchema = z.strictObject({
  text: durableText(500),
  priority: z.enum(['P0', 'P1', 'P2', 'P3', 'P4']).optional(),
});

export const TodoDispositionSchema = z.discriminatedUnion('disposition', [
  z.strictObject({
    todo_id: z.string().min(1),
    disposition: z.literal('done'),
    evidence: durableText(1000),
    /** The follow-up agent todo; give this or `no_follow_up: true`, not both. */
    successor: SuccessorSchema.optional(),
    no_follow_up: z.boolean().optional(),
  }),
  z.strictObject({
    todo_id: z.string().min(1),
    disposition: z.literal('in_progress'),
    note: durableText(1000).optional(),
  }),
  z.strictObject({ todo_id: z.string().min(1), disposition: z.literal('blocked'), question: durableText(1000) }),
  z.strictObject({ todo_id: z.string().min(1), disposition: z.literal('needs_user'), question: durableText(1000) }),
]);
export type TodoDisposition = z.infer<typeof TodoDispositionSchema>;

const HostResultObject = z.strictObject({
  schema_version: z.literal(HOST_RESULT_SCHEMA_VERSION),
  turn_key: z.string().optional(),
  result_kind: z.enum(HOST_RESULT_KINDS),
  /** What the host completed; it can never claim validation or later phases. */
  completed_phases: z.array(z.enum(TURN_PHASES)).optional(),
  summary: durableText(2000),
  classification: z.string().regex(CLASSIFICATION_PATTERN, 'must be a lowercase token such as notes_linked').optional(),
  recommended_action: publicText(500).optional(),
  next_action: publicText(500),
  delivery_batch_scale: z
    .preprocess((v) => (typeof v === 'string' ? (BATCH_SCALE_ALIASES[v] ?? v) : v), z.enum(DELIVERY_BATCH_SCALES))
    .optional(),
  delivery_outcome: z.enum(DELIVERY_OUTCOMES).optional(),
  path_delta: z.enum(['unchanged', 'material_replan']).optional(),
  vision_unchanged_reason: durableText(500).optional(),
  vision: z.strictObject({ outcome: z.literal('replan'), summary: durableText(1000) }).optional(),
  evidence: z.array(durableText(500)).max(20).default([]),
  todo: TodoDispositionSchema.optional(),
  changed_files: z.array(relativePath).max(200).default([]),
  usage: UsageSchema.optional(),
});

export const HostResultSchema = HostResultObject.superRefine((result, ctx) => {
  const issue = (pathKey: string, message: string): void => {
    ctx.addIssue({ code: 'custom', path: [pathKey], message });
  };
  const material = isMaterialResultKind(result.result_kind);
  if (material) {
    for (const field of ['classification', 'recommended_action', 'delivery_batch_scale', 'delivery_outcome'] as const) {
      if (result[field] === undefined) issue(field, `is required for the material result kind ${result.result_kind}`);
    }
  } else {
    if (result.path_delta !== undefined)
      issue('path_delta', `a stop result (${result.result_kind}) may not declare a path delta`);
    if (result.vision !== undefined)
      issue('vision', `a stop result (${result.result_kind}) may not carry a vision packet`);
  }
  if (result.path_delta === 'unchanged' && result.vision_unchanged_reason === undefined) {
    issue('vision_unchanged_reason', 'is required when path_delta is unchanged');
  }
  if (result.path_delta === 'material_replan') {
    if (result.result_kind !== 'replan_required')
      issue('path_delta', 'material_replan needs result_kind replan_required');
    if (result.vision === undefined) issue('vision', 'material_replan needs a vision packet with outcome replan');
  }
  if (result.completed_phases !== undefined) {
    const allowed = TURN_PHASES.slice(0, 2);
    const ok =
      result.completed_phases.length <= allowed.length &&
      result.completed_phases.every((phase, i) => phase === allowed[i]);
    if (!ok)
      issue(
        'completed_phases',
        "a host may only report [host_execute, typed_result]; validation and later phases are LoopX's",
      );
  }
  const todo = result.todo;
  if (todo !== undefined) {
    if (todo.disposition === 'done') {
      const successor = todo.successor !== undefined;
      const final = todo.no_follow_up === true;
      if (successor === final) issue('todo', 'a done todo needs exactly one of successor {text} or no_follow_up: true');
      if (result.result_kind !== 'validated_completion')
        issue('todo', 'disposition done needs result_kind validated_completion');
    }
    if (result.result_kind === 'validated_completion' && todo.disposition !== 'done')
      issue('todo', 'validated_completion needs disposition done');
    if (
      result.result_kind === 'user_action_required' &&
      todo.disposition !== 'needs_user' &&
      todo.disposition !== 'blocked'
    ) {
      issue('todo', 'user_action_required needs disposition needs_user or blocked, with the question for the user');
    }
  } else if (result.result_kind === 'validated_completion') {
    issue('todo', 'validated_completion needs the todo disposition done, with evidence');
  }
});
export type HostResult = z.infer<typeof HostResultSchema>;

/** Who expects the result: its turn key and selected todo must match. */
export interface ResultExpectation {
  turn_key?: string | undefined;
  selected_todo?: { todo_id: string } | null | undefined;
}

export type HostResultCheck =
  | { ok: true; result: HostResult }
  | { ok: false; reason: 'result_too_large' | 'contract_violation'; problems: string[] };

/** UTF-8 size of the JSON text of a value. */
export function jsonByteLength(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * Validates a candidate result object against the contract and against the request it answers.
 * Problems name the field (`todo.question: …`) so the agent's author can fix them.
 */
export function checkHostResult(value: unknown, expected: ResultExpectation = {}): HostResultCheck {
  const size = jsonByteLength(value);
  if (size > RESULT_MAX_BYTES) {
    return {
      ok: false,
      reason: 'result_too_large',
      problems: [`the result object is ${size} bytes; the contract allows at most ${RESULT_MAX_BYTES}`],
    };
  }
  const parsed = HostResultSchema.safeParse(value);
  if (!parsed.success) {
    return {
      ok: false,
      reason: 'contract_violation',
      problems: parsed.error.issues.map((i) => `${i.path.length > 0 ? i.path.join('.') : '(result)'}: ${i.message}`),
    };
  }
  const result = parsed.data;
  const problems: string[] = [];
  if (expected.turn_key !== undefined && result.turn_key !== expected.turn_key) {
    problems.push(
      result.turn_key === undefined
        ? `turn_key: missing; answer with the request's turn_key ${expected.turn_key}`
        : `turn_key: ${result.turn_key} does not match the request's ${expected.turn_key}`,
    );
  }
  const selected = expected.selected_todo ?? null;
  if (selected !== null && result.todo === undefined)
    problems.push(`todo: missing; say what became of todo ${selected.todo_id}`);
  if (result.todo !== undefined && result.todo.todo_id !== selected?.todo_id) {
    problems.push(
      selected === null
        ? `todo.todo_id: ${result.todo.todo_id} was not selected for this turn (no todo was)`
        : `todo.todo_id: ${result.todo.todo_id} is not the selected todo ${selected.todo_id}`,
    );
  }
  return problems.length > 0 ? { ok: false, reason: 'contract_violation', problems } : { ok: true, result };
}

// ---------------------------------------------------------------------------------------------
// Receipt validation (docs/executors.md)

export const TURN_STATUSES = ['invalid', 'failed', 'stopped', 'committed', 'validated', 'in_progress'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

export interface TurnReceiptInput {
  turn_key: string;
  result_kind: string;
  completed_phases: readonly string[];
  failed_phase?: string | null;
}

export interface TurnReceiptCheck {
  ok: boolean;
  status: TurnStatus;
  problems: string[];
}

function isFailureKind(kind: string): kind is FailureResultKind {
  return Object.hasOwn(FAILED_PHASE_BY_KIND, kind);
}

/**
 * Checks a turn receipt: completed phases form an ordered prefix of the seven phases; a failed
 * phase appears only on failure kinds and is the next phase not completed (terminal closeout
 * fails after five); material kinds need validation; no-spend kinds never include quota_spend.
 * Status precedence: invalid > failed > stopped > committed (all seven) > validated > in_progress.
 */
export function checkTurnReceipt(receipt: TurnReceiptInput, expectedTurnKey: string): TurnReceiptCheck {
  const problems: string[] = [];
  if (receipt.turn_key !== expectedTurnKey)
    problems.push(`turn_key ${receipt.turn_key} does not match ${expectedTurnKey}`);
  const kind = receipt.result_kind;
  const known = (TURN_RESULT_KINDS as readonly string[]).includes(kind);
  if (!known) problems.push(`unknown result_kind ${kind}`);
  const phases = receipt.completed_phases;
  const prefix = phases.length <= TURN_PHASES.length && phases.every((phase, i) => phase === TURN_PHASES[i]);
  if (!prefix) problems.push(`completed_phases must be an ordered prefix of ${TURN_PHASES.join(', ')}`);
  const failed = receipt.failed_phase ?? null;
  if (isFailureKind(kind)) {
    const expectedPhase = FAILED_PHASE_BY_KIND[kind];
    if (failed !== expectedPhase) problems.push(`${kind} must name failed_phase ${expectedPhase}`);
    const nextPhase =
      kind === 'terminal_closeout_failed'
        ? phases.length === 5
          ? 'terminal_closeout'
          : null
        : TURN_PHASES[phases.length];
    if (failed !== null && failed !== nextPhase)
      problems.push(`failed_phase ${failed} is not the next uncompleted phase`);
  } else if (failed !== null) {
    problems.push(`failed_phase is only allowed on failure kinds, not ${kind}`);
  }
  if (isMaterialResultKind(kind) && !phases.includes('validation'))
    problems.push(`material result ${kind} needs the validation phase completed`);
  // Terminal closeout runs after the spend, so its failure is the one no-spend kind that follows quota_spend.
  const noSpend = known && !isMaterialResultKind(kind) && kind !== 'terminal_closeout_failed';
  if (noSpend && phases.includes('quota_spend')) problems.push(`no-spend result ${kind} may not include quota_spend`);

  let status: TurnStatus;
  if (problems.length > 0) status = 'invalid';
  else if (isFailureKind(kind)) status = 'failed';
  else if (!isMaterialResultKind(kind)) status = 'stopped';
  else if (phases.length === TURN_PHASES.length) status = 'committed';
  else if (phases.includes('validation')) status = 'validated';
  else status = 'in_progress';
  return { ok: problems.length === 0, status, problems };
}
