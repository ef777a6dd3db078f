import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import {
  createAgentExecutor,
  DEFAULT_LM_TOKENS_PER_TURN,
  estimateTokens,
  languageModelPrompt,
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
} from '../core/ops/host';

/**
 * The `vscode-lm` agent: one turn on one of VS Code's language models (`vscode.lm`). The prompt,
 * the reply format and the write-scope rules are the core's (src/core/executors/languageModel.ts);
 * this file selects the model, streams the reply (to `onOutput`, for the turn terminal), keeps the
 * turn's token budget, and applies the proposed edits with a `WorkspaceEdit`. Like every executor it
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

/** The real path of the nearest existing ancestor of `target` (a symlink inside the project is resolved). */
async function realAncestor(target: string): Promise<string> {
  let current = target;
  for (;;) {
    try {
      return path.join(await fs.realpath(current), path.relative(current, target));
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return target;
      current = parent;
    }
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

  const prompt = languageModelPrompt(request, turn.writeScope);
  const inputTokens = await countTokens(model, prompt);
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
  try {
    const response = await model.sendRequest(
      [vscode.LanguageModelChatMessage.User(prompt)],
      { justification: `LoopX runs one turn of the goal "${turn.goalId}" with this model.` },
      cancellation.token,
    );
    for await (const piece of response.text) {
      if (stop !== null) break;
      text += piece;
      notify(observer.onOutput, piece);
      if (options.onOutput !== observer.onOutput) notify(options.onOutput, piece);
      if (inputTokens + estimateTokens(text) > budget) halt('budget');
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

  const reading = readLanguageModelReply(text, request, turn.writeScope);
  if (!reading.ok) return fail(reading);
  const containment = await checkContainment(turn.projectRoot, reading.edits);
  if (containment.length > 0)
    return fail({
      reason: 'contract_violation',
      message: `the language model proposed edits LoopX refuses, so nothing was written: ${containment[0] ?? ''}`,
      problems: containment,
    });
  if (reading.edits.length > 0) {
    const edit = new vscode.WorkspaceEdit();
    for (const change of reading.edits)
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
  const result = reading.result;
  const counted = usage as ExecutorFailure['usage'];
  const evidence =
    reading.edits.length > 0 && result.evidence.length < 20
      ? [...result.evidence, `edited through VS Code: ${reading.edits.map((e) => e.path).join(', ')}`.slice(0, 500)]
      : result.evidence;
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
