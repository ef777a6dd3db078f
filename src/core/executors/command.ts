import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ScrubContext } from '../privacy/scrub';
import { checkHostResult, type HostFailureReason, type HostRequest } from '../protocol/contract';
import { extractMachineObject, extractObjectFromMessage } from './extract';
import { checkClaimedChanges, type PermissionDenial } from './claimedChanges';
import { authFailureHint, envNameMatches, looksLikeAuthFailure } from './environment';
import {
  buildAgentEnv,
  DEFAULT_MAX_OUTPUT_BYTES,
  outputExcerpt,
  runBoundedProcess,
  type BoundedProcessResult,
} from './process';
import type {
  AgentExecutor,
  ExecutorFailure,
  ExecutorLane,
  ExecutorOutcome,
  ExecutorRunOptions,
  OutcomeUsage,
} from './types';

/** `auto` | `never` (see config.ts, which owns the schema). */
export type ResumePolicy = 'auto' | 'never';

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
  /** Writes the agent's CLI refused (Claude Code's `permission_denials`). */
  permissionDenials?: PermissionDenial[];
}

/** What a protocol may use from the run besides the request. */
export interface ProtocolRunContext {
  /** Folders LoopX writes the turn's state to, which a sandboxed agent must be able to write (Codex `--add-dir`). */
  writableRoots: readonly string[];
}

export interface AgentProtocol {
  readonly kind: string;
  /** Environment variables the tool needs besides PATH, HOME and LANG (e.g. its API key). */
  readonly envAllowlist: readonly string[];
  argv(request: HostRequest, run: ProtocolRunContext): string[];
  /** More names to pass, read from the environment (Codex: the `env_key` names of its config). */
  envNamesFrom?(env: NodeJS.ProcessEnv): readonly string[];
  stdin(request: HostRequest): string;
  read(stdout: string): ProtocolReading;
}

export interface ProcessExecutorOptions {
  protocol: AgentProtocol;
  /** More variable names to pass through from the parent environment. */
  envAllowlist?: readonly string[];
  maxOutputBytes?: number;
  killGraceMs?: number;
  /** How far before the turn's start a claimed file's change time may be (coarse or skewed file-system clocks). */
  changeSlackMs?: number;
}

/** How an agent CLI preset (Claude Code, Codex, opencode) is called: its argv, extra args, resume policy. */
export interface CliPresetOptions {
  command?: readonly string[];
  args?: readonly string[];
  /** `auto` (default): continue the session the plan names when it says `resume`; `never`: always a new one. */
  resume?: ResumePolicy;
}

/** An agent CLI preset's executor: its protocol (built from the preset options) run as a bounded process. */
export function cliPresetExecutor(
  protocol: (preset: CliPresetOptions) => AgentProtocol,
  options: CliPresetOptions & Omit<ProcessExecutorOptions, 'protocol'>,
): ProcessAgentExecutor {
  const { command, args, resume, ...rest } = options;
  return new ProcessAgentExecutor({
    ...rest,
    protocol: protocol({
      ...(command ? { command } : {}),
      ...(args ? { args } : {}),
      ...(resume ? { resume } : {}),
    }),
  });
}

/**
 * The reading of a CLI whose answer is its final message: the result object in it, or why there is none
 * (`noMessage` when the CLI printed no final message, `noObject` when the message holds no result object).
 */
export function readingOfFinalMessage(
  finalMessage: string | null,
  found: Pick<ProtocolReading, 'agentError' | 'usage' | 'sessionId'>,
  why: { noMessage: string; noObject: string },
): ProtocolReading {
  const { agentError, usage, sessionId } = found;
  if (agentError !== null) return { candidate: null, missing: null, agentError, usage, sessionId };
  const candidate = finalMessage === null ? null : extractObjectFromMessage(finalMessage);
  const missing = candidate !== null ? null : finalMessage === null ? why.noMessage : why.noObject;
  return { candidate, missing, agentError: null, usage, sessionId };
}

/** The session to continue, when the plan says `resume` and the policy allows it. */
export function sessionToResume(request: HostRequest, policy: ResumePolicy = 'auto'): string | null {
  if (policy === 'never' || request.session.action !== 'resume') return null;
  const id = request.session.session_id;
  return id === null || id === '' ? null : id;
}

/**
 * LoopX's CLI as an absolute path, for `LOOPX_CLI`: the host's own `LOOPX_CLI` when it names a file,
 * else the `loopx` on its PATH. An agent's shell may reset PATH (Codex runs `bash -lc`, whose
 * /etc/profile does), so the prompts call `"${LOOPX_CLI:-loopx}"` and this keeps it absolute.
 */
export function loopxCliPath(env: NodeJS.ProcessEnv): string | null {
  const named = env['LOOPX_CLI'];
  if (named !== undefined && path.isAbsolute(named) && fs.existsSync(named)) return named;
  const names = process.platform === 'win32' ? ['loopx.cmd', 'loopx.exe', 'loopx'] : ['loopx'];
  for (const dir of (env['PATH'] ?? '').split(path.delimiter)) {
    if (dir === '' || !path.isAbsolute(dir)) continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return null;
}

/** Variables LoopX sets for every agent process, so agent-side scripts can bind their work. */
function loopxVariables(request: HostRequest, source: NodeJS.ProcessEnv, lane?: ExecutorLane): Record<string, string> {
  const cli = loopxCliPath(source);
  return {
    ...(lane === undefined
      ? {}
      : {
          LOOPX_REGISTRY: lane.registryPath,
          LOOPX_PROJECT_ROOT: lane.projectRoot,
          LOOPX_LANE_BRANCH: lane.branch,
          LOOPX_LANE_WORKTREE: lane.worktree,
        }),
    ...(cli === null ? {} : { LOOPX_CLI: cli }),
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
    const argv = protocol.argv(request, { writableRoots: options.writableRoots ?? [] });
    const allowlist = [
      ...protocol.envAllowlist,
      ...(protocol.envNamesFrom?.(options.env) ?? []),
      ...(this.options.envAllowlist ?? []),
    ];
    const env = buildAgentEnv(options.env, allowlist, loopxVariables(request, options.env, options.lane));
    const startedAtMs = Date.now();
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

    const stdoutText = run.stdout.toString('utf8');
    const reading = protocol.read(stdoutText);
    const reported = { usage: reading.usage, session_id: reading.sessionId };
    // An authentication failure names the variables the agent got and the way to add one.
    const authHint = (): string => {
      const said = `${reading.agentError ?? ''}\n${stdoutText}\n${run.stderr.toString('utf8')}`;
      if (protocol.envAllowlist.length === 0 || !looksLikeAuthFailure(said)) return '';
      const passed = Object.keys(env).filter((name) => envNameMatches(name, allowlist) && !name.startsWith('LOOPX_'));
      return `; ${authFailureHint(this.kind, allowlist, passed)}`;
    };
    if (run.exitCode !== 0) {
      const how =
        run.exitCode === null ? `was killed by ${run.signal ?? 'a signal'}` : `exited with code ${run.exitCode}`;
      const said = reading.agentError === null ? '' : `: ${reading.agentError}`;
      return fail('non_zero_exit', `the ${this.kind} agent ${how}${said}${authHint()}`, [], reported);
    }
    if (reading.agentError !== null)
      return fail(
        'agent_reported_error',
        `the ${this.kind} agent reported a failed run: ${reading.agentError}${authHint()}`,
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
    const claimed = await checkClaimedChanges({
      root: options.cwd,
      changedFiles: check.result.changed_files ?? [],
      denials: reading.permissionDenials ?? [],
      startedAtMs,
      ...(this.options.changeSlackMs !== undefined ? { slackMs: this.options.changeSlackMs } : {}),
    });
    return {
      ...base,
      ok: true,
      result_kind: check.result.result_kind,
      result: check.result,
      usage,
      session_id: reading.sessionId,
      claimed_changes: claimed,
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
