import * as os from 'node:os';
import * as vscode from 'vscode';
import { isLoopxError, LoopxError } from '../core/errors';
import { hostClock } from '../core/ops/hostSetup';
import type { OperationEnvironment, OperationOutput } from '../core/ops/operation';
import { runOperation } from '../core/ops/run';
import { languageModelToolsApi, type PreparedToolInvocation, type ToolResult } from './hostApi';
import { LM_TOOL_SPECS, type LanguageModelToolSpec } from './toolSpecs';

/**
 * Registers LoopX's language-model tools (toolSpecs.ts) with `vscode.lm.registerTool`, on hosts that have
 * it (1.95+). Each call runs its operation on the registry of the workspace that holds the goal, as an
 * agent (not as the owner at the editor), and answers a short line plus the JSON the CLI prints
 * (`--format json`), failures included (`ok: false`, `error`, `error_code`). Writes ask first
 * (`prepareInvocation`: the goal, the todo, the amount) and are registered only in a trusted
 * workspace; read tools exist either way, except that a should-run with a turn id writes a receipt
 * and is refused while the workspace is untrusted.
 */

/** Where the editor's registries are and which goal is in which (the workspace model gives it). */
export interface GoalDirectory {
  /** The registry that holds `goalId`, else the only registry, else undefined. */
  registryOf(goalId: string): string | undefined;
}

/** The environment a tool call runs in: the goal's registry, the host clock, acting as an agent. */
function toolEnvironment(registryPath: string): OperationEnvironment {
  return {
    cwd: registryPath.replace(/[\\/]\.loopx[\\/][^\\/]+$/, ''),
    env: process.env,
    clock: hostClock(process.env),
    homeDir: os.homedir(),
    registryPath,
    actingAs: 'agent',
  };
}

type Input = Record<string, unknown>;

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The short line before the JSON: what happened, in the terms of the tool. */
export function summarize(spec: LanguageModelToolSpec, result: Record<string, unknown>): string {
  if (result['ok'] === false)
    return `LoopX refused (${String(result['error_code'] ?? 'error')}): ${String(result['error'] ?? '')}`;
  switch (spec.name) {
    case 'loopx_should_run': {
      const todo = text((result['heartbeat_receipt'] as Input | null | undefined)?.['todo_id']);
      return `should_run: ${String(result['should_run'])}; ${String(result['reason'] ?? '')}${todo === undefined ? '' : ` (turn bound to todo ${todo})`}`;
    }
    case 'loopx_spend_slot':
      return result['idempotent_replay'] === true
        ? 'The slot of this turn was already spent: replayed, nothing written.'
        : `Spent ${String(result['slots'] ?? 1)} slot(s) on ${String(result['goal_id'] ?? '')}.`;
    case 'loopx_todo_complete':
      return `Todo ${String(result['todo_id'] ?? '')} completed.`;
    case 'loopx_refresh_state':
      return `Delivery recorded on ${String(result['goal_id'] ?? '')}.`;
    default:
      return 'Done.';
  }
}

/** The CLI's JSON failure for an error a call ran into. */
function failureOf(error: unknown): Record<string, unknown> {
  if (isLoopxError(error))
    return { ok: false, error: error.message, error_code: error.code, error_details: error.details };
  return {
    ok: false,
    error: error instanceof Error ? error.message : String(error),
    error_code: 'internal_error',
    error_details: {},
  };
}

/** The confirmation of a write: names the goal, the todo and the amount. */
export function confirmationOf(spec: LanguageModelToolSpec, input: Input): { title: string; message: string } {
  const goal = String(input['goalId'] ?? '?');
  const todo = text(input['todoId']);
  const agent = text(input['agentId']);
  const turn = text(input['turnInstanceId']);
  const who = [
    agent === undefined ? null : vscode.l10n.t('agent {0}', agent),
    turn === undefined ? null : vscode.l10n.t('turn {0}', turn),
  ].filter((part) => part !== null);
  const by = who.length === 0 ? '' : ` (${who.join(', ')})`;
  switch (spec.name) {
    case 'loopx_todo_complete':
      return {
        title: vscode.l10n.t('Complete a LoopX todo?'),
        message: vscode.l10n.t(
          'Mark todo {0} of goal {1} done{2}. Evidence: {3}',
          todo ?? '?',
          goal,
          by,
          text(input['evidence']) ?? vscode.l10n.t('(none)'),
        ),
      };
    case 'loopx_refresh_state':
      return {
        title: vscode.l10n.t('Record a LoopX delivery?'),
        message: vscode.l10n.t(
          'Record a run on goal {0}{1} for todo {2}: {3}.',
          goal,
          by,
          todo ?? vscode.l10n.t('(the turn’s)'),
          text(input['classification']) ?? 'state_refreshed',
        ),
      };
    case 'loopx_spend_slot':
    default:
      return {
        title: vscode.l10n.t('Spend LoopX quota?'),
        message: vscode.l10n.t(
          'Spend {0} slot(s) of goal {1}{2} for todo {3}.',
          String(input['slots'] ?? 1),
          goal,
          by,
          todo ?? vscode.l10n.t('(the turn’s)'),
        ),
      };
  }
}

/** Runs one tool call: validate the input, find the goal's registry, run the operation; failures are JSON too. */
export async function invokeLanguageModelTool(
  spec: LanguageModelToolSpec,
  rawInput: unknown,
  goals: GoalDirectory,
  trusted: boolean,
): Promise<{ summary: string; json: Record<string, unknown> }> {
  let json: Record<string, unknown>;
  try {
    const parsed = spec.input.safeParse(rawInput ?? {});
    if (!parsed.success)
      throw new LoopxError(
        'invalid_argument',
        `${spec.name}: ${parsed.error.issues.map((issue) => `${issue.path.join('.') || 'input'}: ${issue.message}`).join('; ')}`,
        { fields: parsed.error.issues.map((issue) => issue.path.join('.')) },
      );
    const input = rawInput as Input;
    if (spec.writes && !trusted)
      throw new LoopxError('usage', `${spec.name} changes files, and this workspace is not trusted`);
    if (!trusted && text(input['turnInstanceId']) !== undefined)
      throw new LoopxError(
        'usage',
        'a turnInstanceId records a heartbeat receipt (a write), and this workspace is not trusted: call without it',
      );
    const goalId = String(input['goalId'] ?? '');
    const registryPath = goals.registryOf(goalId);
    if (registryPath === undefined)
      throw new LoopxError('goal_not_found', `no LoopX registry in this workspace holds goal "${goalId}"`, { goalId });
    const result: OperationOutput = await runOperation(
      spec.operation,
      { ...input, ...spec.fixed },
      toolEnvironment(registryPath),
    );
    json = result as unknown as Record<string, unknown>;
  } catch (error) {
    json = failureOf(error);
  }
  return { summary: summarize(spec, json), json };
}

/**
 * Registers the tools this workspace may have now: the read tools always, the writes once it is trusted
 * (also when trust is granted later). Returns nothing to dispose on a host without the tools API.
 */
/** What a tool went through (the hidden test command reports it): asked to confirm, then run. */
export type ToolEvent =
  | { tool: string; phase: 'prepare'; confirmation: { title: string; message: string } | null }
  | { tool: string; phase: 'invoke' };

export function registerLanguageModelTools(
  goals: GoalDirectory,
  onEvent: (event: ToolEvent) => void = () => undefined,
): vscode.Disposable {
  const api = languageModelToolsApi();
  if (api === undefined) return new vscode.Disposable(() => undefined);
  const registered = new Map<string, vscode.Disposable>();
  const register = (): void => {
    const trusted = vscode.workspace.isTrusted;
    for (const spec of LM_TOOL_SPECS) {
      if (registered.has(spec.name) || (spec.writes && !trusted)) continue;
      registered.set(
        spec.name,
        api.registerTool<Input>(spec.name, {
          prepareInvocation: (options): PreparedToolInvocation => {
            const confirmation = spec.writes ? confirmationOf(spec, options.input ?? {}) : null;
            onEvent({ tool: spec.name, phase: 'prepare', confirmation });
            return {
              invocationMessage: vscode.l10n.t('Running {0}', spec.displayName),
              ...(confirmation === null ? {} : { confirmationMessages: confirmation }),
            };
          },
          invoke: async (options): Promise<ToolResult> => {
            onEvent({ tool: spec.name, phase: 'invoke' });
            const { summary, json } = await invokeLanguageModelTool(
              spec,
              options.input,
              goals,
              vscode.workspace.isTrusted,
            );
            return api.result([summary, JSON.stringify(json, null, 2)]);
          },
        }),
      );
    }
  };
  register();
  const trust = vscode.workspace.onDidGrantWorkspaceTrust(register);
  return new vscode.Disposable(() => {
    trust.dispose();
    for (const disposable of registered.values()) disposable.dispose();
    registered.clear();
  });
}
