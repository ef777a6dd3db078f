import * as os from 'node:os';
import * as vscode from 'vscode';
import { agentToolFailure, checkAgentToolArguments, invokeAgentTool } from '../core/agentTools';
import { LoopxError } from '../core/errors';
import { hostClock } from '../core/ops/hostSetup';
import { OPERATIONS } from '../core/ops/index';
import type { Operation, OperationEnvironment } from '../core/ops/operation';
import { languageModelToolsApi, type PreparedToolInvocation, type ToolResult } from './hostApi';
import { LM_TOOL_SPECS, type LanguageModelToolSpec } from './toolSpecs';

/**
 * Registers LoopX's language-model tools (toolSpecs.ts: agent tools of src/core/agentTools) with
 * `vscode.lm.registerTool`, on hosts that have it (1.95+). Each call runs its agent tool on the registry of
 * the workspace that holds the goal, as an agent (not as the owner at the editor), and answers the tool's
 * short line plus the JSON the CLI prints (`--format json`), failures included (`ok: false`, `error`,
 * `error_code`). A call that writes asks first (`prepareInvocation`: the goal, the todo, the amount; a
 * spend_slot preview writes nothing and asks nothing) and write tools are registered only in a trusted
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

/** True when the call would write: a write tool, unless its operation previews without its apply switch (spend_slot without execute). */
function callWrites(spec: LanguageModelToolSpec, input: Input): boolean {
  if (!spec.writes) return false;
  const applySwitch = (OPERATIONS[spec.tool.op] as unknown as Operation).applySwitch;
  return applySwitch === undefined || input[applySwitch.argument] === applySwitch.applyWhen;
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
  switch (spec.tool.name) {
    case 'todo_complete':
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
    case 'refresh_state':
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
    case 'spend_slot':
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

/**
 * Runs one tool call as its agent tool does over MCP (src/core/agentTools: the same validation, operation
 * and answer), on the registry of the workspace that holds the goal; failures are the CLI's JSON too.
 */
export async function invokeLanguageModelTool(
  spec: LanguageModelToolSpec,
  rawInput: unknown,
  goals: GoalDirectory,
  trusted: boolean,
): Promise<{ summary: string; json: Record<string, unknown> }> {
  try {
    checkAgentToolArguments(spec.tool.name, rawInput);
    const input = (rawInput ?? {}) as Input;
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
    const result = await invokeAgentTool(spec.tool.name, input, toolEnvironment(registryPath));
    return { summary: result.text, json: result.structured };
  } catch (error) {
    const failure = agentToolFailure(spec.name, error);
    return { summary: failure.text, json: failure.structured };
  }
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
            const input = options.input ?? {};
            const confirmation = callWrites(spec, input) ? confirmationOf(spec, input) : null;
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
