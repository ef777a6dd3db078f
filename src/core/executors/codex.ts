import type { HostRequest } from '../protocol/contract';
import { renderTurnPrompt } from '../protocol/prompt';
import { ProcessAgentExecutor, type AgentProtocol, type ProcessExecutorOptions, type ProtocolReading } from './command';
import { extractObjectFromMessage, jsonLines, type JsonObject } from './extract';

/**
 * Codex CLI non-interactively: `codex exec --json [args…] -`, the turn prompt on stdin (`-`).
 * Codex prints JSONL events: `thread.started {thread_id}`, `turn.started`, `item.*` events
 * (the final answer is an `item.completed` whose item has type `agent_message` and a `text`),
 * `turn.completed {usage{input_tokens, cached_input_tokens, output_tokens}}`, or
 * `turn.failed {error{message}}` / `error {message}`. Codex reports tokens, not cost.
 */

export const CODEX_ENV_ALLOWLIST: readonly string[] = ['OPENAI_API_KEY', 'CODEX_HOME'];

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.round(value) : 0;
}

function objectField(value: unknown, key: string): JsonObject | null {
  if (typeof value !== 'object' || value === null) return null;
  const field = (value as JsonObject)[key];
  return typeof field === 'object' && field !== null && !Array.isArray(field) ? (field as JsonObject) : null;
}

function stringField(value: JsonObject | null, key: string): string | null {
  const field = value?.[key];
  return typeof field === 'string' ? field : null;
}

export function readCodexOutput(stdout: string): ProtocolReading {
  let sessionId: string | null = null;
  let lastMessage: string | null = null;
  let agentError: string | null = null;
  let turns = 0;
  const totals = { input: 0, cached: 0, output: 0 };
  for (const event of jsonLines(stdout)) {
    const type = event['type'];
    if (type === 'thread.started') {
      sessionId = stringField(event, 'thread_id') ?? sessionId;
    } else if (type === 'item.completed') {
      const item = objectField(event, 'item');
      const itemType = stringField(item, 'type') ?? stringField(item, 'item_type');
      const text = stringField(item, 'text');
      if ((itemType === 'agent_message' || itemType === 'assistant_message') && text !== null) lastMessage = text;
    } else if (type === 'turn.completed') {
      const usage = objectField(event, 'usage');
      turns++;
      totals.input += count(usage?.['input_tokens']);
      totals.cached += count(usage?.['cached_input_tokens']);
      totals.output += count(usage?.['output_tokens']);
    } else if (type === 'turn.failed') {
      agentError = stringField(objectField(event, 'error'), 'message') ?? 'turn.failed';
    } else if (type === 'error') {
      agentError = stringField(event, 'message') ?? 'error';
    }
  }
  const usage =
    turns === 0
      ? null
      : {
          input_tokens: totals.input,
          output_tokens: totals.output,
          cached_input_tokens: totals.cached,
          cost_usd: null,
          estimated: false,
          source: 'codex' as const,
        };
  if (agentError !== null) return { candidate: null, missing: null, agentError, usage, sessionId };
  const candidate = lastMessage === null ? null : extractObjectFromMessage(lastMessage);
  const missing =
    candidate !== null
      ? null
      : lastMessage === null
        ? 'Codex printed no agent_message event; run it as codex exec --json'
        : "Codex's final message holds no JSON result object; the prompt asks it to end with one";
  return { candidate, missing, agentError: null, usage, sessionId };
}

export function codexProtocol(command: readonly string[] = ['codex'], args: readonly string[] = []): AgentProtocol {
  return {
    kind: 'codex',
    envAllowlist: CODEX_ENV_ALLOWLIST,
    argv: () => [...command, 'exec', '--json', ...args, '-'],
    stdin: (request: HostRequest) => renderTurnPrompt(request, { size: 'full', mode: 'executor' }),
    read: readCodexOutput,
  };
}

export function createCodexExecutor(
  options: { command?: readonly string[]; args?: readonly string[] } & Omit<ProcessExecutorOptions, 'protocol'> = {},
): ProcessAgentExecutor {
  const { command, args, ...rest } = options;
  return new ProcessAgentExecutor({ ...rest, protocol: codexProtocol(command, args) });
}
