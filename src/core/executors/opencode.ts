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
import { jsonLines, type JsonObject } from './extract';
import { PROVIDER_ENV } from './environment';

/**
 * opencode headless: `opencode run --format json [--session <id>] [args…]`, the turn prompt on
 * stdin (opencode appends piped stdin to the message). It prints one JSON event per line, each
 * `{type, timestamp, sessionID, …}`: `step_start`, `text {part{text, time{end}}}`, `tool_use`,
 * `step_finish {part{cost, tokens{input, output, reasoning, cache{read, write}}}}`, and
 * `error {error{name, data{message}}}` (opencode then exits 1). Our result object is read from
 * the last `text` part; tokens and cost are summed over the `step_finish` parts.
 */

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0;
}

function objectField(value: unknown, key: string): JsonObject | null {
  if (typeof value !== 'object' || value === null) return null;
  const field = (value as JsonObject)[key];
  return typeof field === 'object' && field !== null && !Array.isArray(field) ? (field as JsonObject) : null;
}

function errorText(error: JsonObject | null): string {
  if (error === null) return 'error';
  const data = objectField(error, 'data');
  const message = data?.['message'] ?? error['message'];
  const name = typeof error['name'] === 'string' ? error['name'] : 'error';
  return typeof message === 'string' && message !== '' ? `${name}: ${message}` : name;
}

export function readOpencodeOutput(stdout: string): ProtocolReading {
  let sessionId: string | null = null;
  let lastText: string | null = null;
  let agentError: string | null = null;
  let steps = 0;
  let cost = 0;
  const totals = { input: 0, cached: 0, cacheWrite: 0, output: 0 };
  for (const event of jsonLines(stdout)) {
    if (typeof event['sessionID'] === 'string' && event['sessionID'] !== '') sessionId = event['sessionID'];
    const part = objectField(event, 'part');
    switch (event['type']) {
      case 'text':
        if (typeof part?.['text'] === 'string') lastText = part['text'];
        break;
      case 'step_finish': {
        steps++;
        const tokens = objectField(part, 'tokens');
        const cache = objectField(tokens, 'cache');
        totals.input += count(tokens?.['input']);
        totals.output += count(tokens?.['output']) + count(tokens?.['reasoning']);
        totals.cached += count(cache?.['read']);
        totals.cacheWrite += count(cache?.['write']);
        cost += count(part?.['cost']);
        break;
      }
      case 'error':
        agentError = errorText(objectField(event, 'error'));
        break;
    }
  }
  const usage =
    steps === 0
      ? null
      : {
          // As for Claude Code: cache reads and writes are input the model processed too.
          input_tokens: Math.round(totals.input + totals.cached + totals.cacheWrite),
          output_tokens: Math.round(totals.output),
          cached_input_tokens: Math.round(totals.cached),
          cost_usd: Math.round(cost * 1e6) / 1e6,
          estimated: false,
          source: 'opencode' as const,
        };
  return readingOfFinalMessage(
    lastText,
    { agentError, usage, sessionId },
    {
      noMessage: 'opencode printed no text event; run it as opencode run --format json',
      noObject: "opencode's final message holds no JSON result object; the prompt asks it to end with one",
    },
  );
}

export function opencodeProtocol(options: CliPresetOptions = {}): AgentProtocol {
  const command = options.command ?? ['opencode'];
  const args = options.args ?? [];
  return {
    kind: 'opencode',
    envAllowlist: PROVIDER_ENV.opencode,
    argv: (request) => {
      const session = sessionToResume(request, options.resume);
      return [...command, 'run', '--format', 'json', ...(session === null ? [] : ['--session', session]), ...args];
    },
    stdin: (request: HostRequest) => renderTurnPrompt(request, { size: 'full', mode: 'executor' }),
    read: readOpencodeOutput,
  };
}

export function createOpencodeExecutor(
  options: CliPresetOptions & Omit<ProcessExecutorOptions, 'protocol'> = {},
): ProcessAgentExecutor {
  return cliPresetExecutor(opencodeProtocol, options);
}
