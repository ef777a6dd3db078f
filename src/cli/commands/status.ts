import { normalizeAgentId, AGENT_ID_RULE } from '../../core/agents/identity';
import { LoopxError } from '../../core/errors';
import { redactCredentials } from '../../core/privacy/scrub';
import { statusMarkdown } from '../../core/readModel/statusMarkdown';
import { loadStatus } from '../../core/readModel/statusPayload';
import { statusQuotaSummaries } from '../../core/readModel/statusQuota';
import { checkGoalIdSegment } from '../../core/registry/goalId';
import { locateRegistry } from '../../core/registry/locate';
import type { CommandOutput } from '../context';
import type { CliHandler } from './index';
import { cliHomeDir } from './registry';
import { numericOption } from '../numbers';

/**
 * `loopx status`: per goal the durable Next Action, what the latest run recommends, drift
 * warnings with the command that resolves each, todo counts, open gates and the latest run.
 * Exits 0 even with warnings; fails only when the registry cannot be read.
 */
export const statusCommand: CliHandler = {
  configure: (command) => {
    command
      .option('--goal-id <id>', 'only this goal')
      .option(
        '--agent-id <agent>',
        'look at the goals as this agent: its lane runs win, its own and unclaimed todos are listed',
      )
      .option('--limit <n>', 'latest runs listed per goal (default 5)');
  },
  run: async ({ options, globals, ctx }): Promise<CommandOutput> => {
    const goalId =
      typeof options['goalId'] === 'string' ? usage(() => checkGoalIdSegment(options['goalId'] as string)) : null;
    const rawAgent = typeof options['agentId'] === 'string' ? options['agentId'] : null;
    const agentId = rawAgent === null ? null : normalizeAgentId(rawAgent);
    if (rawAgent !== null && agentId === null)
      throw new LoopxError('usage', `--agent-id ${JSON.stringify(rawAgent)} is not valid: ${AGENT_ID_RULE}`);
    const limit = numericOption(options, 'limit', '--limit', { integer: true, min: 1, max: 1000 });
    const homeDir = cliHomeDir(ctx);
    const registry = locateRegistry({
      flag: globals.registry,
      env: ctx.env,
      cwd: ctx.cwd,
      homeDir,
      runtimeRootOverride: globals.runtimeRoot,
    });
    const loaded = await usageOnUnknownGoal(() =>
      loadStatus({
        registryPath: registry.path,
        homeDir,
        runtimeRootOverride: globals.runtimeRoot ?? null,
        goalId,
        agentId,
        ...(limit !== undefined ? { limit } : {}),
        quotaSummary: statusQuotaSummaries({
          registryPath: registry.path,
          clock: ctx.clock,
          runtimeRootOverride: globals.runtimeRoot,
          homeDir,
        }),
      }),
    );
    // A state file may hold a secret someone else wrote; the local display keeps paths but not secrets.
    const payload = redactCredentials(loaded);
    // Rendered only when printed as Markdown: `--format json` over many goals need not build it.
    return {
      ok: true,
      json: payload,
      get markdown() {
        return statusMarkdown(payload);
      },
    };
  },
};

function usage<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new LoopxError('usage', error instanceof Error ? error.message : String(error));
  }
}

async function usageOnUnknownGoal<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof LoopxError && error.code === 'goal_not_found')
      throw new LoopxError('usage', error.message, error.details);
    throw error;
  }
}
