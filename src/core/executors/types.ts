import type { HostFailureReason, HostRequest, HostResult, Usage } from '../protocol/contract';
import type { ClaimedChangesCheck } from './claimedChanges';

/**
 * What the turn driver sees of an agent: one call per bounded turn that always resolves with an
 * outcome. Agent misbehavior (a crash, garbage, silence, a huge answer, a hang) is a
 * `host_failure` outcome, never a thrown error.
 */
export interface AgentExecutor {
  /** `claude-code`, `codex`, `command`, `demo` or `vscode-lm`. */
  readonly kind: string;
  run(request: HostRequest, options: ExecutorRunOptions): Promise<ExecutorOutcome>;
}

export interface ExecutorRunOptions {
  signal: AbortSignal;
  timeoutMs: number;
  /** The project root the agent works in. */
  cwd: string;
  /** The environment to pick the allowlisted variables from (the agent never gets all of it). */
  env: NodeJS.ProcessEnv;
  /**
   * Folders outside the agent's usual write access that LoopX's own commands write during the turn
   * (the goal's state file folder and runtime folder): a sandboxed agent (Codex) gets them as
   * writable roots, so the `loopx` it runs can record the turn.
   */
  writableRoots?: readonly string[] | undefined;
  /**
   * The agent's lane, when it runs isolated in a worktree (docs/lanes.md): `cwd` is the worktree and
   * the agent gets `LOOPX_REGISTRY`, `LOOPX_PROJECT_ROOT`, `LOOPX_LANE_BRANCH` and `LOOPX_LANE_WORKTREE`.
   */
  lane?: ExecutorLane | undefined;
  /**
   * Receives the agent's output as it arrives (decoded text, whole characters), for a host that shows
   * a turn live (the editor's turn terminal). Never called after `run` resolves; a throwing observer
   * never breaks the turn.
   */
  onOutput?: OutputObserver | undefined;
}

export interface ExecutorLane {
  branch: string;
  worktree: string;
  /** The main checkout's registry, state file and project folder, which the agent's `loopx` calls use. */
  registryPath: string;
  projectRoot: string;
}

/** Where a piece of live output came from: a process stream, or a language model's streamed reply. */
export type OutputStream = 'stdout' | 'stderr' | 'model';
export type OutputObserver = (text: string, stream: OutputStream) => void;

/** Where the usage numbers came from. */
export type UsageSource = 'agent_reported' | 'claude_code' | 'codex' | 'opencode' | 'vscode_lm';

export interface OutcomeUsage extends Usage {
  source: UsageSource;
}

interface OutcomeBase {
  executor: string;
  exit_code: number | null;
  duration_ms: number;
  /** What the agent reported spending, even when the turn failed; null when it reported nothing. */
  usage: OutcomeUsage | null;
  /** The agent's session id, when its tool reports one (Claude Code, Codex thread id). */
  session_id: string | null;
  /** First bytes of stdout / stderr, scrubbed of absolute paths and credentials. */
  output_excerpt: string;
  stderr_excerpt: string;
}

export interface ExecutorSuccess extends OutcomeBase {
  ok: true;
  result_kind: HostResult['result_kind'];
  result: HostResult;
  /**
   * The claimed `changed_files` checked against the working tree and the CLI's permission denials
   * (process executors); a problem there keeps the turn from being validated.
   */
  claimed_changes?: ClaimedChangesCheck;
}

export interface ExecutorFailure extends OutcomeBase {
  ok: false;
  result_kind: 'host_failure';
  failed_phase: 'host_execute';
  reason: HostFailureReason;
  /** One sentence for people: what went wrong and, where known, how to fix it. */
  message: string;
  /** Contract problems by field, for `contract_violation`. */
  problems: string[];
}

export type ExecutorOutcome = ExecutorSuccess | ExecutorFailure;
