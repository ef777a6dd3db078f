import { z } from 'zod';
import type { HostRequest } from '../protocol/contract';
import { renderTurnPrompt } from '../protocol/prompt';
import {
  cliPresetExecutor,
  type ProcessAgentExecutor,
  sessionToResume,
  type AgentProtocol,
  type CliPresetOptions,
  type ProcessExecutorOptions,
  type ProtocolReading,
} from './command';
import type { PermissionDenial } from './claimedChanges';
import { PROVIDER_ENV } from './environment';
import { extractMachineObject, extractObjectFromMessage, jsonLines } from './extract';

/**
 * Claude Code in headless mode: `claude -p --output-format json [--resume <session>] [args…]`, the
 * turn prompt on stdin. Claude Code prints one JSON envelope when it finishes:
 * `{type:"result", subtype, is_error, result, session_id, total_cost_usd, usage{…},
 * permission_denials[{tool_name, tool_input{file_path…}}], …}` (with `--output-format stream-json`
 * the same envelope is the last of its lines, and is read the same way).
 * Our result object is read from the `result` text (see extract.ts for the rules); tokens
 * and cost come from the envelope.
 */

const NonNegative = z.number().nonnegative().catch(0);

const ClaudeEnvelope = z.looseObject({
  type: z.string().optional(),
  subtype: z.string().optional(),
  is_error: z.boolean().optional(),
  result: z.string().optional(),
  session_id: z.string().optional(),
  total_cost_usd: z.number().nonnegative().optional(),
  /** The name older Claude Code versions used. */
  cost_usd: z.number().nonnegative().optional(),
  permission_denials: z
    .array(z.looseObject({ tool_name: z.string().catch('tool'), tool_input: z.unknown().optional() }))
    .catch([])
    .optional(),
  usage: z
    .looseObject({
      input_tokens: NonNegative.optional(),
      output_tokens: NonNegative.optional(),
      cache_creation_input_tokens: NonNegative.optional(),
      cache_read_input_tokens: NonNegative.optional(),
    })
    .optional(),
});

export const CLAUDE_CODE_ENV_ALLOWLIST: readonly string[] = PROVIDER_ENV['claude-code'];

function deniedPath(input: unknown): string | null {
  if (typeof input !== 'object' || input === null) return null;
  for (const key of ['file_path', 'notebook_path', 'path']) {
    const value = (input as Record<string, unknown>)[key];
    if (typeof value === 'string' && value !== '') return value;
  }
  return null;
}

/** The result envelope: the whole output (`json`), else the last `type: "result"` line (`stream-json`). */
function resultEnvelope(stdout: string): unknown {
  const lines = jsonLines(stdout);
  for (let i = lines.length - 1; i >= 0; i--) if (lines[i]?.['type'] === 'result') return lines[i];
  return extractMachineObject(stdout);
}

export function readClaudeCodeOutput(stdout: string): ProtocolReading {
  const raw = resultEnvelope(stdout);
  const parsed = raw === null ? null : ClaudeEnvelope.safeParse(raw);
  if (parsed === null || !parsed.success || (parsed.data.type !== undefined && parsed.data.type !== 'result')) {
    return {
      candidate: null,
      missing: 'Claude Code printed no JSON result envelope; run it with -p --output-format json',
      agentError: null,
      usage: null,
      sessionId: null,
    };
  }
  const envelope = parsed.data;
  const usage =
    envelope.usage === undefined
      ? null
      : {
          // Cache reads and writes are input the model processed too; they are billed separately.
          input_tokens: Math.round(
            (envelope.usage.input_tokens ?? 0) +
              (envelope.usage.cache_creation_input_tokens ?? 0) +
              (envelope.usage.cache_read_input_tokens ?? 0),
          ),
          output_tokens: Math.round(envelope.usage.output_tokens ?? 0),
          cached_input_tokens: Math.round(envelope.usage.cache_read_input_tokens ?? 0),
          cost_usd: envelope.total_cost_usd ?? envelope.cost_usd ?? null,
          estimated: false,
          source: 'claude_code' as const,
        };
  const sessionId = envelope.session_id ?? null;
  const permissionDenials: PermissionDenial[] = (envelope.permission_denials ?? []).map((d) => ({
    tool: d.tool_name,
    path: deniedPath(d.tool_input),
  }));
  const failed = envelope.is_error === true || (envelope.subtype !== undefined && envelope.subtype.startsWith('error'));
  if (failed) {
    const detail = (envelope.result ?? '').trim().slice(0, 300);
    return {
      candidate: null,
      missing: null,
      agentError: `${envelope.subtype ?? 'error'}${detail === '' ? '' : ` (${detail})`}`,
      usage,
      sessionId,
      permissionDenials,
    };
  }
  const candidate = envelope.result === undefined ? null : extractObjectFromMessage(envelope.result);
  return {
    candidate,
    missing:
      candidate === null
        ? "Claude's final message holds no JSON result object; the prompt asks it to end with one"
        : null,
    agentError: null,
    usage,
    sessionId,
    permissionDenials,
  };
}

export function claudeCodeProtocol(options: CliPresetOptions = {}): AgentProtocol {
  const command = options.command ?? ['claude'];
  const args = options.args ?? [];
  return {
    kind: 'claude-code',
    envAllowlist: CLAUDE_CODE_ENV_ALLOWLIST,
    argv: (request) => {
      const session = sessionToResume(request, options.resume);
      return [...command, '-p', '--output-format', 'json', ...(session === null ? [] : ['--resume', session]), ...args];
    },
    stdin: (request: HostRequest) => renderTurnPrompt(request, { size: 'full', mode: 'executor' }),
    read: readClaudeCodeOutput,
  };
}

export function createClaudeCodeExecutor(
  options: CliPresetOptions & Omit<ProcessExecutorOptions, 'protocol'> = {},
): ProcessAgentExecutor {
  return cliPresetExecutor(claudeCodeProtocol, options);
}
