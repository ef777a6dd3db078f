import * as os from 'node:os';
import type { ScrubContext } from '../privacy/scrub';
import { checkHostResult, type HostFailureReason, type HostRequest } from '../protocol/contract';
import { extractMachineObject } from './extract';
import {
  buildAgentEnv,
  DEFAULT_MAX_OUTPUT_BYTES,
  outputExcerpt,
  runBoundedProcess,
  type BoundedProcessResult,
} from './process';
import type { AgentExecutor, ExecutorFailure, ExecutorOutcome, ExecutorRunOptions, OutcomeUsage } from './types';

/**
 * The executor every preset is made of: it runs the agent as a real process (see process.ts)
 * and lets a protocol say how to call it and how to read what it printed. The `command`
 * protocol is LoopX's own: the host request as JSON on stdin, the result object on stdout.
 */

/** What a protocol found in the agent's stdout. */
export interface ProtocolReading {
  /** The candidate result object (not yet validated), or null. */
  candidate: unknown;
  /** Why there is no candidate, for people. */
  missing: string | null;
  /** The agent's own report that its run failed (Claude Code `is_error`, Codex `turn.failed`). */
  agentError: string | null;
  usage: OutcomeUsage | null;
  sessionId: string | null;
}

export interface AgentProtocol {
  readonly kind: string;
  /** Environment variables the tool needs besides PATH, HOME and LANG (e.g. its API key). */
  readonly envAllowlist: readonly string[];
  argv(request: HostRequest): string[];
  stdin(request: HostRequest): string;
  read(stdout: string): ProtocolReading;
}

export interface ProcessExecutorOptions {
  protocol: AgentProtocol;
  /** More variable names to pass through from the parent environment. */
  envAllowlist?: readonly string[];
  maxOutputBytes?: number;
  killGraceMs?: number;
}

/** Variables LoopX sets for every agent process, so agent-side scripts can bind their work. */
function loopxVariables(request: HostRequest): Record<string, string> {
  return {
    LOOPX_GOAL_ID: request.goal.goal_id,
    LOOPX_AGENT_ID: request.agent_id,
    LOOPX_TURN: request.identity.turn_instance_id,
    LOOPX_TURN_KEY: request.turn_key,
    ...(request.selected_todo ? { LOOPX_TODO_ID: request.selected_todo.todo_id } : {}),
  };
}

export class ProcessAgentExecutor implements AgentExecutor {
  readonly kind: string;
  constructor(private readonly options: ProcessExecutorOptions) {
    this.kind = options.protocol.kind;
  }

  async run(request: HostRequest, options: ExecutorRunOptions): Promise<ExecutorOutcome> {
    const { protocol } = this.options;
    const maxOutputBytes = this.options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT_BYTES;
    const argv = protocol.argv(request);
    const env = buildAgentEnv(
      options.env,
      [...protocol.envAllowlist, ...(this.options.envAllowlist ?? [])],
      loopxVariables(request),
    );
    const run = await runBoundedProcess({
      argv,
      cwd: options.cwd,
      env,
      stdin: protocol.stdin(request),
      timeoutMs: options.timeoutMs,
      maxOutputBytes,
      signal: options.signal,
      onOutput: options.onOutput,
      ...(this.options.killGraceMs !== undefined ? { killGraceMs: this.options.killGraceMs } : {}),
    });
    const homeDir = options.env['HOME'] ?? os.homedir();
    const scrub: ScrubContext = { projectRoots: [options.cwd], homeDir };
    const base = {
      executor: this.kind,
      exit_code: run.exitCode,
      duration_ms: run.durationMs,
      usage: null as OutcomeUsage | null,
      session_id: null as string | null,
      output_excerpt: outputExcerpt(run.stdout, run.stdoutBytes, scrub),
      stderr_excerpt: outputExcerpt(run.stderr, run.stderrBytes, scrub),
    };
    const fail = (
      reason: HostFailureReason,
      message: string,
      problems: string[] = [],
      extra: Partial<ExecutorFailure> = {},
    ): ExecutorFailure => ({
      ...base,
      ok: false,
      result_kind: 'host_failure',
      failed_phase: 'host_execute',
      reason,
      message,
      problems,
      ...extra,
    });

    const early = this.earlyFailure(run, argv, options.timeoutMs, maxOutputBytes);
    if (early !== null) return fail(early.reason, early.message);

    const reading = protocol.read(run.stdout.toString('utf8'));
    const reported = { usage: reading.usage, session_id: reading.sessionId };
    if (run.exitCode !== 0) {
      const how =
        run.exitCode === null ? `was killed by ${run.signal ?? 'a signal'}` : `exited with code ${run.exitCode}`;
      const said = reading.agentError === null ? '' : `: ${reading.agentError}`;
      return fail('non_zero_exit', `the ${this.kind} agent ${how}${said}`, [], reported);
    }
    if (reading.agentError !== null)
      return fail(
        'agent_reported_error',
        `the ${this.kind} agent reported a failed run: ${reading.agentError}`,
        [],
        reported,
      );
    if (reading.candidate === null)
      return fail('malformed_result', reading.missing ?? 'the agent printed no result object', [], reported);

    const check = checkHostResult(reading.candidate, request);
    if (!check.ok) {
      const message =
        check.reason === 'result_too_large'
          ? (check.problems[0] ?? 'the result object is too large')
          : `the agent's result breaks the ${request.result_contract.schema_version} contract: ${check.problems.slice(0, 3).join('; ')}`;
      return fail(check.reason, message, check.problems, reported);
    }
    const agentUsage = check.result.usage;
    const usage: OutcomeUsage | null =
      reading.usage ?? (agentUsage === undefined ? null : { ...agentUsage, source: 'agent_reported' });
    return {
      ...base,
      ok: true,
      result_kind: check.result.result_kind,
      result: check.result,
      usage,
      session_id: reading.sessionId,
    };
  }

  private earlyFailure(
    run: BoundedProcessResult,
    argv: readonly string[],
    timeoutMs: number,
    maxOutputBytes: number,
  ): { reason: HostFailureReason; message: string } | null {
    switch (run.end) {
      case 'spawn_failed':
        return {
          reason: 'spawn_failed',
          message: `could not start the ${this.kind} agent (${argv[0] ?? ''}): ${run.spawnError ?? 'unknown error'}; check that the command is installed and on PATH, or set executor.command in the agent profile`,
        };
      case 'timeout':
        return {
          reason: 'timeout',
          message: `the ${this.kind} agent did not finish within ${Math.round(timeoutMs / 1000)} s; it and every process it started were stopped`,
        };
      case 'cancelled':
        return {
          reason: 'cancelled',
          message: `the ${this.kind} turn was cancelled; the agent and every process it started were stopped`,
        };
      case 'output_too_large':
        return {
          reason: 'result_too_large',
          message: `the ${this.kind} agent wrote more than ${maxOutputBytes} bytes to ${run.stdoutBytes > maxOutputBytes ? 'stdout' : 'stderr'}; it was stopped`,
        };
      case 'exited':
        return null;
    }
  }
}

/** LoopX's own protocol: the host request as JSON on stdin, the result object on stdout. */
export function commandProtocol(argv: readonly string[], kind = 'command'): AgentProtocol {
  return {
    kind,
    envAllowlist: [],
    argv: () => [...argv],
    stdin: (request) => `${JSON.stringify(request)}\n`,
    read: (stdout) => {
      const candidate = extractMachineObject(stdout);
      const missing =
        candidate !== null
          ? null
          : stdout.trim() === ''
            ? 'the agent printed nothing on stdout; it must print one loopx_turn_result_v0 JSON object'
            : "no line of the agent's stdout is a JSON object; print the result object on its own line, last";
      return { candidate, missing, agentError: null, usage: null, sessionId: null };
    },
  };
}

/** An executor for a custom agent command that speaks LoopX's protocol. */
export function createCommandExecutor(
  argv: readonly string[],
  options: Omit<ProcessExecutorOptions, 'protocol'> & { kind?: string } = {},
): ProcessAgentExecutor {
  const { kind, ...rest } = options;
  return new ProcessAgentExecutor({ ...rest, protocol: commandProtocol(argv, kind) });
}
