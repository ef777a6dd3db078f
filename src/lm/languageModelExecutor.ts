import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  createAgentExecutor,
  DEFAULT_LM_TOKENS_PER_TURN,
  estimateTokens,
  languageModelPrompt,
  languageModelToolPrompt,
  readLanguageModelReply,
  replyExcerpt,
  type AgentExecutor,
  type ExecutorConfig,
  type ExecutorFactory,
  type ExecutorFailure,
  type ExecutorOutcome,
  type ExecutorRunOptions,
  type ExecutorTurnContext,
  type HostRequest,
  type LmEdit,
  type OutputObserver,
  realAncestor,
  runWorkspaceTool,
  WORKSPACE_TOOLS,
  type WorkspaceToolContext,
} from '../core/ops/host';

/**
 * The `vscode-lm` agent: one turn on one of VS Code's language models (`vscode.lm`). The prompt,
 * the reply format and the write-scope rules are the core's (src/core/executors/languageModel.ts);
 * this file selects the model, streams the reply (to `onOutput`, for the turn terminal), keeps the
 * turn's token budget, and applies the proposed edits with a `WorkspaceEdit`. A model that can call
 * tools (VS Code 1.95 and later, where `LanguageModelToolCallPart` exists) gets the workspace tools of
 * src/core/executors/workspaceTools.ts in a tool-calling loop; on an older host, or a model that says
 * it cannot call tools, the turn is one prompt and one reply with whole-file edits. Like every executor it
 * always resolves with an outcome: no model, a declined consent, a cancel, a malformed reply are
 * `host_failure` outcomes, and a failed turn writes no file.
 */

export interface LanguageModelTurnObserver {
  /**
   * The agent's output as it arrives: each streamed piece of a model's reply, or what a process agent
   * writes to stdout / stderr (the turn terminal shows it).
   */
  onOutput?: OutputObserver;
}

type Failure = Pick<ExecutorFailure, 'reason' | 'message'> & { problems?: string[] };

/** Rounds of tool calls one turn may take before it is stopped (a model that never answers). */
export const LM_MAX_TOOL_ROUNDS = 24;

interface ToolCallPart {
  callId: string;
  name: string;
  input?: unknown;
  /** The name of `input` in the earlier proposed API, read as a fallback. */
  parameters?: unknown;
}
/** The parts of the lm API newer than VS Code 1.90 (the oldest host): absent there, so feature-detected. */
interface ToolCallingApi {
  LanguageModelToolCallPart: new (...args: never[]) => ToolCallPart;
  LanguageModelToolResultPart: new (callId: string, content: unknown[]) => object;
  LanguageModelTextPart: new (value: string) => { value: string };
  LanguageModelChatMessage: {
    User(content: string | object[]): vscode.LanguageModelChatMessage;
    Assistant(content: string | object[]): vscode.LanguageModelChatMessage;
  };
}
interface ToolCallingModel {
  capabilities?: { supportsToolCalling?: boolean | number };
  sendRequest(
    messages: vscode.LanguageModelChatMessage[],
    options: vscode.LanguageModelChatRequestOptions & { tools?: readonly object[] },
    token?: vscode.CancellationToken,
  ): Thenable<{ stream: AsyncIterable<unknown> }>;
}

/** The tool-calling API when this host has it and the model does not say it lacks tool calling; else null. */
export function toolCallingApi(model: vscode.LanguageModelChat): ToolCallingApi | null {
  const api = vscode as unknown as Partial<ToolCallingApi>;
  if (typeof api.LanguageModelToolCallPart !== 'function' || typeof api.LanguageModelToolResultPart !== 'function')
    return null;
  if (typeof api.LanguageModelTextPart !== 'function') return null;
  const supports = (model as unknown as ToolCallingModel).capabilities?.supportsToolCalling;
  if (supports === false || supports === 0) return null;
  return api as ToolCallingApi;
}

/** The selector of the agent profile: vendor and family when set, else any model. */
export function modelSelector(config: ExecutorConfig): vscode.LanguageModelChatSelector {
  return {
    ...(config.vendor !== undefined ? { vendor: config.vendor } : {}),
    ...(config.family !== undefined ? { family: config.family } : {}),
  };
}

export function describeSelector(config: ExecutorConfig): string {
  const parts = [
    config.vendor !== undefined ? `vendor "${config.vendor}"` : null,
    config.family !== undefined ? `family "${config.family}"` : null,
  ].filter((p) => p !== null);
  return parts.length === 0 ? 'any vendor' : parts.join(', ');
}

async function countTokens(model: vscode.LanguageModelChat, text: string): Promise<number> {
  try {
    const counted = await model.countTokens(text);
    return Number.isSafeInteger(counted) && counted >= 0 ? counted : estimateTokens(text);
  } catch {
    return estimateTokens(text);
  }
}

/** Refuses an edit whose file (or a folder on its way) is a symlink leading out of the project. */
async function checkContainment(projectRoot: string, edits: readonly LmEdit[]): Promise<string[]> {
  const root = await fs.realpath(projectRoot).catch(() => projectRoot);
  const problems: string[] = [];
  for (const edit of edits) {
    const real = await realAncestor(path.join(projectRoot, edit.path));
    const relative = path.relative(root, real);
    if (relative === '' || relative.startsWith('..') || path.isAbsolute(relative))
      problems.push(`${edit.path}: leads out of the project through a symbolic link; LoopX never writes there`);
  }
  return problems;
}

function notify(observer: OutputObserver | undefined, piece: string): void {
  try {
    observer?.(piece, 'model');
  } catch {
    // An observer's bug must not fail the turn it watches.
  }
}

export function createLanguageModelExecutor(
  config: ExecutorConfig,
  turn: ExecutorTurnContext,
  observer: LanguageModelTurnObserver = {},
): AgentExecutor {
  return {
    kind: 'vscode-lm',
    run: (request, options) => runLanguageModelTurn(config, turn, observer, request, options),
  };
}

async function runLanguageModelTurn(
  config: ExecutorConfig,
  turn: ExecutorTurnContext,
  observer: LanguageModelTurnObserver,
  request: HostRequest,
  options: ExecutorRunOptions,
): Promise<ExecutorOutcome> {
  const startedAt = Date.now();
  const budget = config.max_tokens_per_turn ?? DEFAULT_LM_TOKENS_PER_TURN;
  const homeDir = options.env['HOME'] ?? os.homedir();
  let text = '';
  let usage: ExecutorFailure['usage'] = null;
  const base = () => ({
    executor: 'vscode-lm',
    exit_code: null,
    duration_ms: Date.now() - startedAt,
    usage,
    session_id: null,
    output_excerpt: replyExcerpt(text, options.cwd, homeDir),
    stderr_excerpt: '',
  });
  const fail = (failure: Failure): ExecutorFailure => ({
    ...base(),
    ok: false,
    result_kind: 'host_failure',
    failed_phase: 'host_execute',
    reason: failure.reason,
    message: failure.message,
    problems: failure.problems ?? [],
  });

  if (options.signal.aborted) return fail({ reason: 'cancelled', message: 'the vscode-lm turn was cancelled' });
  const models = await vscode.lm.selectChatModels(modelSelector(config));
  const model = models[0];
  if (model === undefined)
    return fail({
      reason: 'spawn_failed',
      message: `no VS Code language model matches ${describeSelector(config)}: install or sign in to a chat model provider, or change executor.vendor / executor.family in the agent profile; nothing was run`,
    });

  const tools = toolCallingApi(model);
  const prompt =
    tools === null ? languageModelPrompt(request, turn.writeScope) : languageModelToolPrompt(request, turn.writeScope);
  let inputTokens = await countTokens(model, prompt);
  const setUsage = (outputTokens: number): void => {
    // The API reports no usage: the model's own tokenizer counts both sides, still an estimate.
    usage = {
      input_tokens: inputTokens,
      output_tokens: outputTokens,
      cost_usd: null,
      estimated: true,
      source: 'vscode_lm',
    };
  };
  if (inputTokens >= budget)
    return fail({
      reason: 'result_too_large',
      message: `the turn prompt is ${inputTokens} tokens, over this agent's budget of ${budget} per turn (executor.max_tokens_per_turn); nothing was sent`,
    });

  const cancellation = new vscode.CancellationTokenSource();
  let stop: 'cancelled' | 'timeout' | 'budget' | null = null;
  const halt = (why: 'cancelled' | 'timeout' | 'budget'): void => {
    stop ??= why;
    cancellation.cancel();
  };
  const onAbort = (): void => halt('cancelled');
  options.signal.addEventListener('abort', onAbort);
  const timer = setTimeout(() => halt('timeout'), options.timeoutMs);
  const show = (piece: string): void => {
    notify(observer.onOutput, piece);
    if (options.onOutput !== observer.onOutput) notify(options.onOutput, piece);
  };
  const justification = `LoopX runs one turn of the goal "${turn.goalId}" with this model.`;
  // The edits the model's tool calls staged, written only once its final result validates.
  const workspace: WorkspaceToolContext = {
    projectRoot: turn.projectRoot,
    writeScope: turn.writeScope,
    trusted: vscode.workspace.isTrusted,
    staged: new Map(),
  };
  const toolCalls: string[] = [];
  // The final answer: the whole reply in one-shot mode, the last round's text with tools.
  let answer = '';
  let unfinished = false;
  try {
    if (tools === null) {
      const response = await model.sendRequest(
        [vscode.LanguageModelChatMessage.User(prompt)],
        { justification },
        cancellation.token,
      );
      for await (const piece of response.text) {
        if (stop !== null) break;
        text += piece;
        show(piece);
        if (inputTokens + estimateTokens(text) > budget) halt('budget');
      }
      answer = text;
    } else {
      const messages = [tools.LanguageModelChatMessage.User(prompt)];
      const offered = WORKSPACE_TOOLS.map((tool) => ({ ...tool }));
      unfinished = true;
      for (let round = 0; round < LM_MAX_TOOL_ROUNDS && stop === null; round++) {
        const response = await (model as unknown as ToolCallingModel).sendRequest(
          messages,
          { justification, tools: offered },
          cancellation.token,
        );
        const calls: ToolCallPart[] = [];
        let said = '';
        for await (const part of response.stream) {
          if (stop !== null) break;
          if (part instanceof tools.LanguageModelToolCallPart) calls.push(part);
          else if (part instanceof tools.LanguageModelTextPart) {
            said += part.value;
            text += part.value;
            show(part.value);
          }
          if (inputTokens + estimateTokens(text) > budget) halt('budget');
        }
        if (stop !== null) break;
        if (calls.length === 0) {
          answer = said;
          unfinished = false;
          break;
        }
        messages.push(
          tools.LanguageModelChatMessage.Assistant([
            ...(said === '' ? [] : [new tools.LanguageModelTextPart(said)]),
            ...calls,
          ]),
        );
        const results: object[] = [];
        for (const call of calls) {
          const outcome = await runWorkspaceTool(call.name, call.input ?? call.parameters, workspace);
          toolCalls.push(call.name);
          show(
            `\n[tool] ${call.name} ${JSON.stringify(call.input ?? call.parameters ?? {}).slice(0, 200)} → ${outcome.ok ? 'ok' : outcome.text.slice(0, 300)}\n`,
          );
          inputTokens += estimateTokens(outcome.text);
          results.push(
            new tools.LanguageModelToolResultPart(call.callId, [new tools.LanguageModelTextPart(outcome.text)]),
          );
        }
        messages.push(tools.LanguageModelChatMessage.User(results));
        if (inputTokens + estimateTokens(text) > budget) halt('budget');
      }
    }
  } catch (error) {
    if (stop === null) {
      setUsage(estimateTokens(text));
      if (error instanceof vscode.LanguageModelError && error.code === vscode.LanguageModelError.NoPermissions.name)
        return fail({
          reason: 'cancelled',
          message: `LoopX may not use the language model "${model.name}": the consent was declined. Allow it and run the turn again; nothing was written`,
        });
      const message = error instanceof Error ? error.message : String(error);
      return fail({ reason: 'agent_reported_error', message: `the language model "${model.name}" failed: ${message}` });
    }
  } finally {
    clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
    cancellation.dispose();
  }
  setUsage(await countTokens(model, text));
  switch (stop as 'cancelled' | 'timeout' | 'budget' | null) {
    case 'cancelled':
      return fail({ reason: 'cancelled', message: 'the vscode-lm turn was cancelled; nothing was written' });
    case 'timeout':
      return fail({
        reason: 'timeout',
        message: `the language model did not finish within ${Math.round(options.timeoutMs / 1000)} s; nothing was written`,
      });
    case 'budget':
      return fail({
        reason: 'result_too_large',
        message: `the reply passed this agent's budget of ${budget} tokens per turn (executor.max_tokens_per_turn) and was stopped; nothing was written`,
      });
    case null:
      break;
  }

  if (unfinished)
    return fail({
      reason: 'malformed_result',
      message: `the language model was still calling tools after ${LM_MAX_TOOL_ROUNDS} rounds and gave no final result; nothing was written`,
    });
  const reading = readLanguageModelReply(answer, request, turn.writeScope);
  if (!reading.ok) return fail(reading);
  // The tool calls' staged edits, then any the final reply still carries (the one-shot format).
  const edits = new Map<string, string>(workspace.staged);
  for (const change of reading.edits) edits.set(change.path, change.content);
  const written: LmEdit[] = [...edits].map(([file, content]) => ({ path: file, content }));
  const containment = await checkContainment(turn.projectRoot, written);
  if (containment.length > 0)
    return fail({
      reason: 'contract_violation',
      message: `the language model proposed edits LoopX refuses, so nothing was written: ${containment[0] ?? ''}`,
      problems: containment,
    });
  if (written.length > 0) {
    const edit = new vscode.WorkspaceEdit();
    for (const change of written)
      edit.createFile(vscode.Uri.file(path.join(turn.projectRoot, change.path)), {
        overwrite: true,
        contents: Buffer.from(change.content, 'utf8'),
      });
    if (!(await vscode.workspace.applyEdit(edit)))
      return fail({
        reason: 'agent_reported_error',
        message: 'VS Code refused the workspace edit; nothing was written',
      });
  }
  // The files the turn changed are the ones its edits wrote, whatever the model listed besides.
  const result = {
    ...reading.result,
    changed_files: [...new Set([...reading.result.changed_files, ...written.map((e) => e.path)])],
  };
  const counted = usage as ExecutorFailure['usage'];
  const notes = [
    written.length > 0 ? `edited through VS Code: ${written.map((e) => e.path).join(', ')}`.slice(0, 500) : null,
    toolCalls.length > 0 ? `workspace tool calls: ${toolCalls.join(', ')}`.slice(0, 500) : null,
  ].filter((note) => note !== null);
  const evidence = [...result.evidence, ...notes].slice(0, Math.max(result.evidence.length, 20));
  return {
    ...base(),
    ok: true,
    result_kind: result.result_kind,
    result: {
      ...result,
      evidence,
      ...(counted === null
        ? {}
        : {
            usage: {
              input_tokens: counted.input_tokens,
              output_tokens: counted.output_tokens,
              cost_usd: null,
              estimated: true,
            },
          }),
    },
    usage,
  };
}

/**
 * The editor's executor factory: `vscode-lm` agents run here, every other preset as the core builds it.
 * The observer receives the model's streamed reply (the turn terminal shows it).
 */
export function editorExecutorFactory(observer: LanguageModelTurnObserver = {}): ExecutorFactory {
  return (config, _agentId, turn) => {
    if (config.preset === 'vscode-lm') return createLanguageModelExecutor(config, turn, observer);
    const inner = createAgentExecutor(config);
    const onOutput = observer.onOutput;
    if (onOutput === undefined) return inner;
    // A process agent's stdout / stderr, live, as well.
    return { kind: inner.kind, run: (request, options) => inner.run(request, { ...options, onOutput }) };
  };
}

/** Why a language-model turn cannot start; the loop stops with this status instead of running a failing turn. */
export interface LanguageModelUnavailable {
  reason: 'no_model' | 'no_consent';
  message: string;
}

/**
 * Checked before a `vscode-lm` turn reserves anything: is there a model matching the agent profile,
 * and did the user not decline LoopX's use of it? Undefined when the turn can run (or the agent is
 * not a language-model agent). `access` is the extension's `languageModelAccessInformation`.
 */
export async function languageModelUnavailable(
  config: ExecutorConfig | null,
  agentId: string,
  access?: vscode.LanguageModelAccessInformation,
): Promise<LanguageModelUnavailable | undefined> {
  if (config === null || config.preset !== 'vscode-lm') return undefined;
  const model = (await vscode.lm.selectChatModels(modelSelector(config)))[0];
  if (model === undefined)
    return {
      reason: 'no_model',
      message: vscode.l10n.t(
        'No VS Code language model matches the agent "{0}" ({1}), so no turn ran and nothing was reserved or written. Install or sign in to a chat model provider, or change executor.vendor / executor.family in its profile.',
        agentId,
        describeSelector(config),
      ),
    };
  if (access?.canSendRequest(model) === false)
    return {
      reason: 'no_consent',
      message: vscode.l10n.t(
        'LoopX may not use the language model "{0}" (the consent was declined), so no turn ran for the agent "{1}" and nothing was reserved or written. Allow LoopX to use it and run again.',
        model.name,
        agentId,
      ),
    };
  return undefined;
}
