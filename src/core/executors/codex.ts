import type { HostRequest } from '../protocol/contract';
import { renderTurnPrompt } from '../protocol/prompt';
import {
  cliPresetExecutor,
  readingOfFinalMessage,
  type ProcessAgentExecutor,
  sessionToResume,
  type AgentProtocol,
  type CliPresetOptions,
  type ProcessExecutorOptions,
  type ProtocolReading,
} from './command';
import { codexConfigEnvKeys, PROVIDER_ENV } from './environment';
import { jsonLines, type JsonObject } from './extract';

/**
 * Codex CLI non-interactively: `codex exec --json [--add-dir <dir>…] [args…] -`, the turn prompt
 * on stdin (`-`); a resumed session is `codex exec --json … resume <session id> -` (the exec
 * options stay before the subcommand). Codex prints JSONL events: `thread.started {thread_id}`,
 * `turn.started`, `item.*` events (the final answer is an `item.completed` whose item has type
 * `agent_message` and a `text`), `turn.completed {usage{input_tokens, cached_input_tokens,
 * output_tokens}}`, or `turn.failed {error{message}}` / `error {message}`. Codex reports tokens, not cost.
 *
 * An `error` event is not always fatal: Codex reports a dropped stream it retries as
 * `{"type":"error","message":"Reconnecting… 1/5"}` and then goes on. Only `turn.failed`, or an
 * `error` that no later `turn.completed` follows, fails the turn.
 *
 * Under `--sandbox workspace-write` the project's `.codex/` (where a goal's state file lives by
 * default) is read-only to the agent's commands, so the `loopx` it runs could not record the turn:
 * every folder LoopX writes the turn's state to is passed as `--add-dir` (a writable root).
 */

export const CODEX_ENV_ALLOWLIST: readonly string[] = PROVIDER_ENV.codex;

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
  /** An `error` event not (yet) followed by a completed turn: a retry Codex recovered from is not a failure. */
  let pendingError: string | null = null;
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
      pendingError = null;
      totals.input += count(usage?.['input_tokens']);
      totals.cached += count(usage?.['cached_input_tokens']);
      totals.output += count(usage?.['output_tokens']);
    } else if (type === 'turn.failed') {
      agentError = stringField(objectField(event, 'error'), 'message') ?? 'turn.failed';
    } else if (type === 'error') {
      pendingError = stringField(event, 'message') ?? 'error';
    }
  }
  agentError ??= pendingError;
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
  return readingOfFinalMessage(
    lastMessage,
    { agentError, usage, sessionId },
    {
      noMessage: 'Codex printed no agent_message event; run it as codex exec --json',
      noObject: "Codex's final message holds no JSON result object; the prompt asks it to end with one",
    },
  );
}

export function codexProtocol(options: CliPresetOptions = {}): AgentProtocol {
  const command = options.command ?? ['codex'];
  const args = options.args ?? [];
  return {
    kind: 'codex',
    envAllowlist: CODEX_ENV_ALLOWLIST,
    envNamesFrom: codexConfigEnvKeys,
    argv: (request, run) => {
      const session = sessionToResume(request, options.resume);
      const writable = [...new Set(run.writableRoots)].flatMap((dir) => ['--add-dir', dir]);
      return [
        ...command,
        'exec',
        '--json',
        ...writable,
        ...args,
        ...(session === null ? [] : ['resume', session]),
        '-',
      ];
    },
    stdin: (request: HostRequest) => renderTurnPrompt(request, { size: 'full', mode: 'executor' }),
    read: readCodexOutput,
  };
}

export function createCodexExecutor(
  options: CliPresetOptions & Omit<ProcessExecutorOptions, 'protocol'> = {},
): ProcessAgentExecutor {
  return cliPresetExecutor(codexProtocol, options);
}
