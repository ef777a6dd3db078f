import type { ExecutorConfig } from '../executors/config';
import { writeScopeForGoal } from '../registry/agentIds';
import { loadTurnGoal } from '../turn/context';
import { resolveGoal } from './goalHandle';
import type { OperationEnvironment } from './operation';

// The composition root's set-up (where the demo agent is installed) lives in hostSetup.ts, which
// loads nothing else; it is re-exported here for hosts that take everything from this module.
export { installDemoAgentFrom } from './hostSetup';

// What an editor host needs to run agents in-process (the vscode-lm preset): the executor factory
// contract, the default factory for the process presets, and the surface-neutral rules of a
// language-model turn (prompt, reply, write scope).
export { createAgentExecutor, DEFAULT_TIMEOUT_MINUTES, type ExecutorConfig } from '../executors/config';
export type {
  AgentExecutor,
  ExecutorFailure,
  ExecutorOutcome,
  ExecutorRunOptions,
  OutputObserver,
  OutputStream,
} from '../executors/types';
export type { ExecutorFactory, ExecutorTurnContext } from '../turn/runOnce';
export type { HostRequest, HostResult } from '../protocol/contract';
export {
  DEFAULT_LM_TOKENS_PER_TURN,
  estimateTokens,
  inWriteScope,
  languageModelPrompt,
  languageModelToolPrompt,
  readLanguageModelReply,
  replyExcerpt,
  type LmEdit,
} from '../executors/languageModel';
export {
  realAncestor,
  runWorkspaceTool,
  WORKSPACE_TOOLS,
  type WorkspaceToolContext,
  type WorkspaceToolResult,
} from '../executors/workspaceTools';

/** What an editor host checks before a turn starts: where the agent works, what it may write, how it runs. */
export interface AgentTurnSetup {
  /** The folder the agent runs in (the goal's `repo`, else the registry's project). */
  projectRoot: string;
  /** The goal's `coordination.write_scope` globs; empty when it sets none. */
  writeScope: string[];
  /** The agent's executor, or null with `executorProblem` saying why there is none. */
  executor: ExecutorConfig | null;
  executorProblem: string | null;
}

/**
 * Reads (never writes) how `agentId` would run a turn of `goalId`: the editor uses it to refuse a
 * language-model turn with no model before any slot is reserved, and to snapshot the files a turn may change.
 */
export async function agentTurnSetup(
  env: OperationEnvironment,
  goalId: string,
  agentId: string,
): Promise<AgentTurnSetup> {
  const goal = await resolveGoal(env, goalId);
  const turnGoal = loadTurnGoal({
    agentId,
    clock: env.clock,
    homeDir: goal.homeDir,
    runtimeRootOverride: env.runtimeRootOverride,
    goal,
  });
  return {
    projectRoot: turnGoal.projectRoot,
    writeScope: writeScopeForGoal(turnGoal.goal.rawEntry),
    executor: turnGoal.executorConfig,
    executorProblem: turnGoal.executorProblem,
  };
}
