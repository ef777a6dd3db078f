import * as fs from 'node:fs';
import * as path from 'node:path';
import { installDemoAgent } from '../executors/config';
import { DEMO_AGENT_BUNDLE, demoAgentArgv } from '../executors/demoAgent';

/**
 * What a host's composition root (the CLI's main, the extension's activation) sets up once before
 * any operation runs: where the built-in demo agent is installed. Operations never take it as an
 * argument.
 */

/**
 * The demo agent is the bundle `demoAgent.js` in `bundleDir`; when that bundle is absent (run from
 * source), `fallback` says how to start it instead, or nothing when the demo agent is unavailable.
 */
export function installDemoAgentFrom(bundleDir: string, fallback?: () => readonly string[] | undefined): void {
  installDemoAgent(fs.existsSync(path.join(bundleDir, DEMO_AGENT_BUNDLE)) ? demoAgentArgv(bundleDir) : fallback?.());
}

// What an editor host needs to run agents in-process (the vscode-lm preset): the executor factory
// contract, the default factory for the process presets, and the surface-neutral rules of a
// language-model turn (prompt, reply, write scope).
export { createAgentExecutor, DEFAULT_TIMEOUT_MINUTES, type ExecutorConfig } from '../executors/config';
export type { AgentExecutor, ExecutorFailure, ExecutorOutcome, ExecutorRunOptions } from '../executors/types';
export type { ExecutorFactory, ExecutorTurnContext } from '../turn/runOnce';
export type { HostRequest, HostResult } from '../protocol/contract';
export {
  DEFAULT_LM_TOKENS_PER_TURN,
  estimateTokens,
  inWriteScope,
  languageModelPrompt,
  readLanguageModelReply,
  replyExcerpt,
  type LmEdit,
} from '../executors/languageModel';
