import { z } from 'zod';
import { heartbeatPrompt } from '../core/ops/heartbeat';
import type { Operation } from '../core/ops/operation';
import { quotaShouldRun, quotaSpendSlot } from '../core/ops/quota';
import { refreshState } from '../core/ops/refresh';
import { todoComplete } from '../core/ops/todo';

/**
 * The language-model tools LoopX offers an agent inside VS Code (Copilot's agent mode and any extension
 * that calls `vscode.lm.invokeTool`): the heartbeat turn's steps, each one operation. Their inputs are the
 * operations' own zod fields (picked: never a field that makes a human decision, such as a gate's
 * `decisionOutcome`), so the JSON schema in package.json (`npm run sync:manifest`), the validation of a
 * call and the CLI's options cannot drift apart. Human-only actions (deciding gates, merging, changing
 * quota or executors) are never tools. No `vscode` import: the manifest generator reads this file.
 */

export interface LanguageModelToolSpec {
  /** The tool's name (`^[\w-]+$`; models see it). */
  name: string;
  /** `#loopx…` in a chat prompt. */
  referenceName: string;
  /** The operation it runs. */
  operation: Operation;
  /** What the agent may pass: picked from the operation's arguments. */
  input: z.ZodObject;
  /** Arguments the tool always sets (the apply switch of a confirmed write). */
  fixed: Record<string, unknown>;
  /** False for reads: registered in an untrusted workspace too. */
  writes: boolean;
  /** For the model (stays English, like every prompt LoopX sends). */
  modelDescription: string;
  displayName: string;
  userDescription: string;
  icon: string;
}

export const LM_TOOL_TAG = 'loopx';

const shouldRunInput = quotaShouldRun.args.pick({
  goalId: true,
  agentId: true,
  turnInstanceId: true,
  todoId: true,
  availableCapability: true,
});

export const LM_TOOL_SPECS: readonly LanguageModelToolSpec[] = [
  {
    name: 'loopx_should_run',
    referenceName: 'loopxShouldRun',
    operation: quotaShouldRun as unknown as Operation,
    input: shouldRunInput,
    fixed: {},
    writes: false,
    modelDescription:
      "LoopX's guard for one heartbeat turn of a goal: whether this agent may run a turn now (quota, gates, pause, leases) and which todo it should work on. Call it first. With agentId and a turnInstanceId (one id per trigger, e.g. the current UTC time; reuse it on retries) it records the turn's heartbeat receipt, which binds the todo: pass the same turnInstanceId to the later LoopX tools of this turn. Answers the same JSON as `loopx quota should-run --format json`.",
    displayName: 'LoopX: Should Run',
    userDescription: 'Whether an agent may run a turn of a LoopX goal now, and on which todo.',
    icon: '$(pass)',
  },
  {
    name: 'loopx_heartbeat_prompt',
    referenceName: 'loopxTurnBrief',
    operation: heartbeatPrompt as unknown as Operation,
    input: heartbeatPrompt.args.pick({ goalId: true, agentId: true, brief: true }),
    fixed: {},
    writes: false,
    modelDescription:
      "The brief of this agent's turn on a LoopX goal: the objective, the todo the turn works on, open gates, the budget left, the rules and the steps that close the turn. Read-only. Answers the same JSON as `loopx heartbeat-prompt --format json`.",
    displayName: "LoopX: The Turn's Todo",
    userDescription: "The brief of an agent's turn: the goal, its todo, open gates and the budget left.",
    icon: '$(checklist)',
  },
  {
    name: 'loopx_todo_complete',
    referenceName: 'loopxCompleteTodo',
    operation: todoComplete as unknown as Operation,
    input: todoComplete.args.pick({
      goalId: true,
      todoId: true,
      evidence: true,
      agentId: true,
      turnInstanceId: true,
      noFollowUp: true,
    }),
    fixed: {},
    writes: true,
    modelDescription:
      "Marks an agent todo of a LoopX goal done, with the evidence that shows it (test run, commit, link). Inside a heartbeat turn pass agentId and the turn's turnInstanceId: the todo must be the one its receipt binds, and a retry writes nothing. Cannot decide user gates (only the user does). Answers the same JSON as `loopx todo complete --format json`.",
    displayName: 'LoopX: Complete Todo',
    userDescription: 'Mark an agent todo of a LoopX goal done, with evidence.',
    icon: '$(check)',
  },
  {
    name: 'loopx_refresh_state',
    referenceName: 'loopxRecordDelivery',
    operation: refreshState as unknown as Operation,
    input: refreshState.args.pick({
      goalId: true,
      agentId: true,
      todoId: true,
      turnInstanceId: true,
      replanObligationId: true,
      classification: true,
      nextAction: true,
      recommendedAction: true,
      progressScope: true,
      deliveryBatchScale: true,
      deliveryOutcome: true,
    }),
    fixed: {},
    writes: true,
    modelDescription:
      "Records what this turn delivered on a LoopX goal (a run record with its classification, delivery outcome and the next action). Call it after the work and before spending the slot, with the turn's agentId, todoId and turnInstanceId; a retry writes no second row. Answers the same JSON as `loopx refresh-state --format json`.",
    displayName: 'LoopX: Record the Delivery',
    userDescription: "Record what an agent's turn delivered on a LoopX goal.",
    icon: '$(history)',
  },
  {
    name: 'loopx_spend_slot',
    referenceName: 'loopxSpendSlot',
    operation: quotaSpendSlot as unknown as Operation,
    input: quotaSpendSlot.args.pick({
      goalId: true,
      agentId: true,
      todoId: true,
      replanObligationId: true,
      turnInstanceId: true,
      slots: true,
      tokens: true,
      costUsd: true,
      turnMinutes: true,
      usageEstimated: true,
      usageUnknown: true,
    }),
    fixed: { execute: true, source: 'heartbeat' },
    writes: true,
    modelDescription:
      "Spends the turn's quota slot on a LoopX goal: the last step of a heartbeat turn, after the delivery is recorded. Pass the turn's agentId, todoId and turnInstanceId (the spend is written once per turn; a retry replays it) and the usage when known. Refused over the goal's limit. Answers the same JSON as `loopx quota spend-slot --execute --format json`.",
    displayName: 'LoopX: Spend the Slot',
    userDescription: "Spend the quota slot of an agent's turn on a LoopX goal.",
    icon: '$(credit-card)',
  },
];

/** Keys of our `.meta()` that are not JSON Schema (the CLI's flag, placeholder, …). */
const CLI_META_KEYS = new Set(['flag', 'split', 'hidden', 'placeholder']);

function withoutCliMeta(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCliMeta);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !CLI_META_KEYS.has(key) && key !== '$schema')
      .map(([key, inner]) => [key, withoutCliMeta(inner)]),
  );
}

/** The tool's input as JSON Schema (what the caller sends, before defaults). */
export function toolInputSchema(spec: LanguageModelToolSpec): Record<string, unknown> {
  return withoutCliMeta(z.toJSONSchema(spec.input, { io: 'input', unrepresentable: 'any' })) as Record<string, unknown>;
}

/** `contributes.languageModelTools` of package.json (written by `npm run sync:manifest`). */
export function manifestLanguageModelTools(): Record<string, unknown>[] {
  return LM_TOOL_SPECS.map((spec) => ({
    name: spec.name,
    tags: [LM_TOOL_TAG, spec.writes ? 'loopx-writes' : 'loopx-reads'],
    toolReferenceName: spec.referenceName,
    displayName: `%lmTool.${spec.name}.displayName%`,
    userDescription: `%lmTool.${spec.name}.userDescription%`,
    modelDescription: spec.modelDescription,
    canBeReferencedInPrompt: true,
    icon: spec.icon,
    // Writes exist only in a trusted workspace (the extension registers them only there, too).
    ...(spec.writes ? { when: 'isWorkspaceTrusted' } : {}),
    inputSchema: toolInputSchema(spec),
  }));
}

/** The English texts of the tools' `%keys%` in package.nls.json. */
export function languageModelToolsNls(): Record<string, string> {
  return Object.fromEntries(
    LM_TOOL_SPECS.flatMap((spec) => [
      [`lmTool.${spec.name}.displayName`, spec.displayName],
      [`lmTool.${spec.name}.userDescription`, spec.userDescription],
    ]),
  );
}
