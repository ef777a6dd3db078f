import type { Command } from 'commander';
import { registerAgent, type RegisterAgentResult } from '../../core/agents/registration';
import { isLoopxError, LoopxError } from '../../core/errors';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';

/** `loopx register-agent`: preview, or with --execute add, agent ids to a goal's registered agents. */
export const registerAgentCommand: CliHandler = {
  configure: (command: Command) => {
    command
      .requiredOption('--goal-id <id>', 'the goal to register the agent for')
      .requiredOption('--agent-id <id>', 'the agent id to register (repeatable)', collect, [])
      .option('--require-new', 'refuse when the id is already registered (a fresh agent claiming its own identity)')
      .option('--execute', 'write the registry (default: preview only)');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const goalId = usage(() => checkGoalIdSegment(String(options['goalId'])));
    const registry = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir: cliHomeDir(ctx),
      runtimeRootOverride: globals.runtimeRoot,
    });
    const result = await usageAsync(() =>
      registerAgent({
        registryPath: registry.path,
        goalId,
        agentIds: options['agentId'] as string[],
        requireNew: options['requireNew'] === true,
        execute: options['execute'] === true,
        clock: ctx.clock,
        env: ctx.env,
      }),
    );
    return { ok: result.ok, json: { ...result }, markdown: registrationMarkdown(result) };
  },
};

/** Commander collector for a repeatable option. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Re-throws the core's argument errors (and bad goal ids) as usage errors, so the CLI exits 2. */
export function usage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw asUsage(error);
  }
}

export async function usageAsync<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    throw asUsage(error);
  }
}

function asUsage(error: unknown): unknown {
  return isLoopxError(error, 'invalid_argument') || isLoopxError(error, 'invalid_goal_id')
    ? new LoopxError('usage', error.message, error.details)
    : error;
}

function registrationMarkdown(result: RegisterAgentResult): string {
  const ids = result.agent_ids.map((id) => `\`${id}\``).join(', ');
  const lines = [`# Register agent ${ids} for goal ${result.goal_id}`, ''];
  if (result.error_kind) {
    lines.push(`Refused (${result.error_kind}): ${result.error ?? ''}`, '', 'Nothing was written.');
  } else if (result.dry_run) {
    lines.push(
      result.changed
        ? `Would add ${result.added.map((id) => `\`${id}\``).join(', ')}.`
        : 'Nothing to add: every id is already registered.',
      '',
      `- Registered now: ${listOrNone(result.registered_agents_before)}`,
      `- After: ${listOrNone(result.registered_agents)}`,
      '',
      'Preview only; re-run with --execute to write the registry.',
    );
  } else {
    lines.push(
      result.written
        ? `Added ${result.added.map((id) => `\`${id}\``).join(', ')}.`
        : 'Nothing to add: every id is already registered.',
      '',
      `- Registered agents: ${listOrNone(result.registered_agents)}`,
      `- Read back and verified: ${result.verified ? 'yes' : 'NO'}`,
    );
  }
  lines.push('', `Registry: \`${result.registry}\``);
  return lines.join('\n');
}

function listOrNone(ids: readonly string[]): string {
  return ids.length === 0 ? '(none)' : ids.map((id) => `\`${id}\``).join(', ');
}
