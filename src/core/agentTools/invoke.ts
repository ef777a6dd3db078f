import { parseArguments } from '../ops/arguments';
import { errorMessage, isLoopxError, LoopxError, withReadOnlyHint } from '../errors';
import type { LoopxErrorCode } from '../errorCodes';
import { OPERATIONS } from '../ops/index';
import type { Operation, OperationEnvironment, OperationOutput } from '../ops/operation';
import { runOperation } from '../ops/run';
import { agentToolByName, toolArgumentSchema, type AgentTool } from './catalog';

/**
 * A tool call that ran its operation: the operation's JSON (as `loopx --format json` prints it) and a
 * line for people. `ok` is the result's own: false when the operation answered but did not do what
 * was asked (a spend refused by the quota), where the CLI exits 1; a host reports that as an error too.
 */
export interface AgentToolSuccess {
  ok: boolean;
  structured: Record<string, unknown>;
  text: string;
}

/** A tool call that failed: the CLI's JSON failure (`ok: false`, `error`, `error_code`, `error_details`) and its text. */
export interface AgentToolFailure {
  code: LoopxErrorCode | 'internal_error';
  structured: Record<string, unknown>;
  text: string;
}

/**
 * Runs one agent tool: checks the arguments against the tool's schema (an unknown tool, an unknown
 * argument, a withheld one such as `decisionOutcome` or a bad value is `invalid_argument` naming the
 * field, before anything is read or written), then runs its operation as the CLI does. Throws a
 * `LoopxError` on failure; `agentToolFailure` turns anything thrown into the failure a host returns.
 */
export async function invokeAgentTool(
  name: string,
  args: unknown,
  env: OperationEnvironment,
): Promise<AgentToolSuccess> {
  const tool = checkAgentToolArguments(name, args);
  const input = args ?? {};
  const operation = OPERATIONS[tool.op] as unknown as Operation;
  const result: OperationOutput = await runOperation(operation, input as Record<string, unknown>, env);
  const structured = result as unknown as Record<string, unknown>;
  return { ok: result.ok, structured, text: summaryOf(tool, structured) };
}

/**
 * Checks a call's arguments against the tool's schema without running it: an unknown tool, an unknown
 * or withheld argument or a bad value throws `invalid_argument` naming the field. Returns the tool.
 */
export function checkAgentToolArguments(name: string, args: unknown): AgentTool {
  const tool = agentToolByName(name);
  if (tool === undefined)
    throw new LoopxError('invalid_argument', `unknown tool ${JSON.stringify(name)}; tools/list names the tools`, {
      argument: 'name',
      received: name,
    });
  parseArguments(toolArgumentSchema(name), args ?? {}, { functionName: name });
  return tool;
}

/** The failure of a tool call, from whatever it threw (LoopX's typed errors keep their code and details). */
export function agentToolFailure(name: string, thrown: unknown): AgentToolFailure {
  const error = withReadOnlyHint(thrown);
  const message = errorMessage(error);
  const code = isLoopxError(error) ? error.code : 'internal_error';
  const details = isLoopxError(error) ? error.details : {};
  return {
    code,
    structured: { ok: false, error: message, error_code: code, error_details: details },
    text: `${name} failed: ${code}: ${message}`,
  };
}

/** One line saying what happened, beside the JSON (which stays the contract). */
function summaryOf(tool: AgentTool, result: Record<string, unknown>): string {
  const facts: string[] = [];
  const add = (label: string, value: unknown): void => {
    if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
      if (value !== '') facts.push(`${label}=${String(value)}`);
  };
  add('ok', result['ok']);
  add('should_run', result['should_run']);
  add('decision', result['decision']);
  const selected = result['selected_todo'] as { todo_id?: unknown } | null | undefined;
  add('selected_todo', selected?.todo_id);
  add('todo_id', result['todo_id']);
  add('status', result['status']);
  add('dry_run', result['dry_run']);
  add('written', result['written']);
  add('idempotent_replay', result['idempotent_replay']);
  add('reason', result['reason']);
  const head = `${tool.name}: ${facts.join(', ')}`;
  // The heartbeat prompt is text an agent reads: give it whole.
  if (typeof result['prompt'] === 'string') return `${head}\n\n${result['prompt']}`;
  return `${head} (the full result is the structured content)`;
}
